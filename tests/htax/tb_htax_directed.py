"""cocotb: directed HTAX tests (latency, fig. 6-7, bad headers, arbitration, the fresh-ready rule, the
reserved response slot, packets whose last comes early or late)."""

import random

import cocotb

from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxStatus, HtaxVC
from sim.htax_packet import HtaxPacket, beat_field, beat_replace
from sim.layout import pack
from sim.runner import tb_params, tb_seed
from tests.htax.harness import Harness, beat_vc, hdr_src, random_packet

ALL = 0xF


def _rng(salt):
    seed = tb_seed()
    return random.Random(seed * 7919 + salt), seed


def _refuses_until_released(port, vc):
    """Sink readiness: ``port`` refuses ``vc`` until ``release[0]`` is set; all else always ready."""
    release = [False]

    def ready(o, c):
        return ALL if o != port or release[0] else ALL & ~(1 << vc.value)
    return release, ready


async def _port_1_refusing(dut, salt, vc):
    """A started harness whose port 1 refuses ``vc`` until ``release[0]`` is set: the testbench
    parameters, the random generator and seed of ``salt``, ``release`` and the harness."""
    p = tb_params()
    rng, seed = _rng(salt)
    release, refusing = _refuses_until_released(1, vc)
    h = Harness(dut, p["ports"], rng, sink_ready=refusing)
    await h.start()
    return p, rng, seed, release, h


@cocotb.test()
async def zero_load_latency(dut):
    """Idle switch: header out ``latency`` cycles after header in (2 for ``Htax``: <= 2 is the goal),
    data back to back."""
    n = tb_params()["ports"]
    latency = tb_params().get("latency", 2)
    rng, seed = _rng(1)
    h = Harness(dut, n, rng)
    await h.start()
    for src in range(n):
        for dst in range(n):
            for pkt in (random_packet(rng, src, dst, cmd=HtaxCmd.WRITE, length=8),
                        random_packet(rng, src, dst, cmd=HtaxCmd.ATS)):
                tag = h.send(src, pkt)
                await h.run(until=h.drained, limit=100)
                await h.run(3)
                (hc, beats, t, lc), = [d for d in h.delivered[dst] if d[2] == tag]
                assert hc - h.hdr_in[tag] == latency, (
                    f"seed {seed}: {src}->{dst} latency {hc - h.hdr_in[tag]}")
                assert lc - hc == len(beats) - 1, f"seed {seed}: {src}->{dst} bubbles inside the packet"
    h.check()


@cocotb.test()
async def fig_6_7_nonposted_blocked(dut):
    """Non-posted requests stall at a target that refuses them; posted writes and responses pass."""
    # port 1 refuses the non-posted VC until released; everybody else is always ready
    p, rng, seed, release, h = await _port_1_refusing(dut, 2, HtaxVC.NONPOSTED)
    n, slots = p["ports"], p["slots"]
    # more reads than input 0 and the switch's buffers behind it (``buffered`` one-beat packets) hold
    np_to_1 = [h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.READ))
               for _ in range(3 * slots + 4 + p.get("buffered", 0))]
    c = 3 if n > 3 else 2
    if slots > 1:
        # with spare slots, reads to a free target pass reads stuck at the blocked one (VOQ)
        np_to_1 += [h.send(c, random_packet(rng, c, 1, cmd=HtaxCmd.READ)) for _ in range(slots - 1)]
    flowing = []
    for _ in range(12):
        flowing.append(h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.WRITE)))
        flowing.append(h.send(0, random_packet(rng, 0, 2, cmd=HtaxCmd.WRITE)))
        flowing.append(h.send(2, random_packet(rng, 2, 1, cmd=HtaxCmd.RESPONSE)))
        flowing.append(h.send(c, random_packet(rng, c, 2, cmd=HtaxCmd.READ)))
        flowing.append(h.send(c, random_packet(rng, c, 1, cmd=HtaxCmd.ATS)))
    done = {d[2] for ds in h.delivered for d in ds}

    def flowed():
        done.update(d[2] for ds in h.delivered for d in ds)
        return all(t in done for t in flowing)

    await h.run(until=flowed, limit=3000)
    # The other traffic may be through before the reads have filled the switch (they enter one per
    # booking at the blocked output, ``booking_gap`` cycles apart): give them the time to.
    await h.run(50 + len(np_to_1) * p.get("booking_gap", 1))
    done.update(d[2] for ds in h.delivered for d in ds)
    assert not any(t in done for t in np_to_1), f"seed {seed}: a read passed a target refusing reads"
    # input 0 is full of reads: its non-posted VC is not ready, its posted VC is
    ready0 = h.ready(0)
    assert not (ready0 >> HtaxVC.NONPOSTED.value) & 1, f"seed {seed}: ready {ready0:04b}"
    assert (ready0 >> HtaxVC.POSTED.value) & 1, f"seed {seed}: ready {ready0:04b}"
    release[0] = True
    await h.run(until=h.drained, limit=3000)
    h.check()


def _bad_cases(rng, src, n):
    """(description, beats, counter, error status or None) for every way a header can be bad."""
    good_w = dict(cmd=HtaxCmd.WRITE, src=src, dst=(src + 1) % n, addr=0x1000, length=2, first_be=0xFF,
                  last_be=0x0F, data=[1, 2])
    good_r = dict(cmd=HtaxCmd.READ, src=src, dst=(src + 1) % n, addr=0x2000, length=4)

    def pkt(base, **kw):
        d = dict(base)
        d.update(kw)
        d["tag"] = rng.randrange(32)
        d["data"] = []
        packet = HtaxPacket(**d)
        # as many data beats as the (bad) header announces, so the framing stays consistent
        packet.data = [rng.getrandbits(64) for _ in range(packet.data_beats)]
        return packet

    cases = [
        ("reserved command 5", pkt(good_w, cmd=5, vc=HtaxVC.POSTED, data=[]), "mal", None),
        ("reserved command 7", pkt(good_w, cmd=7, vc=HtaxVC.NONPOSTED, data=[]), "mal", None),
        ("write on the non-posted VC", pkt(good_w, vc=HtaxVC.NONPOSTED), "mal", None),
        ("read on the posted VC", pkt(good_r, vc=HtaxVC.POSTED), "mal", None),
        ("write length 0", pkt(good_w, length=0, data=[]), "mal", None),
        ("write length 12", pkt(good_w, addr=0, length=12), "mal", None),
        ("write first_be 0", pkt(good_w, first_be=0), "mal", None),
        ("write last_be 0", pkt(good_w, last_be=0), "mal", None),
        ("write with status", pkt(good_w, status=HtaxStatus.TARGET_ERROR), "mal", None),
        ("write unaligned", pkt(good_w, addr=0x1004), "mal", None),
        ("write crossing a line", pkt(good_w, addr=0x1030, length=3), "mal", None),
        ("read length 0", pkt(good_r, length=0), "mal", HtaxStatus.MALFORMED),
        ("read length 9", pkt(good_r, addr=0, length=9), "mal", HtaxStatus.MALFORMED),
        ("read unaligned", pkt(good_r, addr=0x2001), "mal", HtaxStatus.MALFORMED),
        ("read crossing a line", pkt(good_r, addr=0x2028, length=4), "mal", HtaxStatus.MALFORMED),
        ("read with status", pkt(good_r, status=HtaxStatus.NO_TARGET), "mal", HtaxStatus.MALFORMED),
        ("response length 9", pkt(good_w, cmd=HtaxCmd.RESPONSE, addr=0, length=9), "mal", None),
        ("error response with data", pkt(good_w, cmd=HtaxCmd.RESPONSE, status=HtaxStatus.NO_TARGET,
                                         length=2), "mal", None),
        ("ATS with status", HtaxPacket(HtaxCmd.ATS, src=src, dst=0, tag=3, ats=5,
                                       status=HtaxStatus.MALFORMED), "mal", None),
    ]
    # a beat VC that differs from the header's VC
    w = pkt(good_w)
    beats = [beat_replace(b, {"vc": HtaxVC.RESPONSE}) for b in w.beats()]
    cases.append(("beat VC differs from header VC", beats, "mal", None))
    if n < 16:
        for dst in (n, 15):
            cases += [
                (f"write to port {dst}", pkt(good_w, dst=dst), "nt", None),
                (f"read to port {dst}", pkt(good_r, dst=dst), "nt", HtaxStatus.NO_TARGET),
                (f"response to port {dst}", pkt(good_w, cmd=HtaxCmd.RESPONSE, dst=dst), "nt", None),
                (f"ATS to port {dst}", HtaxPacket(HtaxCmd.ATS, src=src, dst=dst, tag=1, ats=9), "nt", None),
            ]
    return cases


@cocotb.test()
async def bad_headers(dut):
    """Malformed and unroutable packets are dropped and counted; bad reads get an error response."""
    n = tb_params()["ports"]
    rng, seed = _rng(3)
    h = Harness(dut, n, rng, gap=0.2)
    await h.start()
    counts = {"mal": 0, "nt": 0}
    for src in range(n):
        for desc, bad, counter, status in _bad_cases(rng, src, n):
            if isinstance(bad, HtaxPacket):
                # the test's own reference says the case is really bad
                reason = bad.malformed_reason()
                assert (reason is not None) == (counter == "mal"), f"{desc}: reason {reason}"
                req = bad
                bad = bad.beats()
            else:
                req = HtaxPacket.from_header_beat(bad[0])
            h.send(src, bad, expect=False)
            counts[counter] += 1
            if status is not None:
                rsp = HtaxPacket(HtaxCmd.RESPONSE, src=req.dst, dst=src, tag=req.tag, status=status,
                                 addr=0, length=0, first_be=0, last_be=0)
                h.expect(rsp.beats())
            # a good packet right behind the bad one: the bad one's beats must all be consumed.  No
            # responses: the scoreboard keys on the header's src, which an error response sets to the
            # requested port, so only error responses may travel on the response VC here.
            cmd = rng.choice([HtaxCmd.WRITE, HtaxCmd.READ, HtaxCmd.ATS])
            h.send(src, random_packet(rng, src, rng.randrange(n), cmd=cmd))
    await h.run(until=h.drained, limit=20000)
    await h.run(5)
    h.check()
    got = (dut.dropped_malformed.value.to_unsigned(), dut.dropped_no_target.value.to_unsigned())
    assert got == (counts["mal"], counts["nt"]), f"seed {seed}: counters {got}, expected {counts}"


@cocotb.test()
async def round_robin_bound(dut):
    """All inputs saturate one output: no input waits for more than N-1 other packets, shares equal."""
    n = tb_params()["ports"]
    rng, seed = _rng(4)
    h = Harness(dut, n, rng)
    await h.start()
    target = min(2, n - 1)
    for _ in range(40):
        for src in range(n):
            cmd = rng.choice([HtaxCmd.WRITE, HtaxCmd.RESPONSE])
            h.send(src, random_packet(rng, src, target, cmd=cmd, length=rng.randint(1, 8)))
    await h.run(until=h.drained, limit=20000)
    h.check()
    order = [hdr_src(d[1][0]) for d in h.delivered[target]]
    # all inputs have packets queued until the last few rounds
    steady = order[: 30 * n]
    for src in range(n):
        idx = [k for k, s in enumerate(steady) if s == src]
        gaps = [b - a - 1 for a, b in zip(idx, idx[1:], strict=False)]
        assert idx and idx[0] < n, (
            f"seed {seed}: input {src} first served at position {idx[:1]}: {order}")
        assert max(gaps) <= n - 1, f"seed {seed}: input {src} waited {max(gaps)} packets: {order}"
    vcs = {beat_vc(d[1][0]) for d in h.delivered[target]}
    assert vcs == {HtaxVC.POSTED.value, HtaxVC.RESPONSE.value}


@cocotb.test()
async def sink_drains_via_other_vc(dut):
    """A sink takes one packet on VC v, then refuses v until a packet on another VC w has arrived.

    This is the ATU (docs/architecture.md, "Fresh `ready` rule"): its ATS request queue drains only as the
    GATE read responses come back on the response VC.  Here every v packet the sink takes makes a third
    port send it one w packet a few cycles later.  The switch must not start a v packet on the
    ``ready[v]`` of the cycle in which the previous v packet's last beat took the sink's last slot:
    that packet would wait with ``valid`` high and block the w packets behind it forever.
    """
    n = tb_params()["ports"]
    rng, seed = _rng(5)
    sink, v_srcs, w_src = 1, (0, 2), (3 if n > 3 else 0)
    cases = [(HtaxCmd.ATS, HtaxVC.ATS, HtaxCmd.RESPONSE, HtaxVC.RESPONSE),
             (HtaxCmd.WRITE, HtaxVC.POSTED, HtaxCmd.RESPONSE, HtaxVC.RESPONSE),
             (HtaxCmd.READ, HtaxVC.NONPOSTED, HtaxCmd.ATS, HtaxVC.ATS)]
    # each case twice: a sink with room for one v packet and no ready2 promise, and a sink with room
    # for two that promises (ready2) while it has room for both
    for k, ((v_cmd, v, w_cmd, w), cap) in enumerate((c, cap) for c in cases for cap in (1, 2)):
        h = Harness(dut, n, rng)
        h.sink_ready, h.sink_ready2 = _drains_via(h, sink, v, w, cap)
        await h.start(clock=k == 0)
        per_src = 6
        for _ in range(per_src):
            for src in v_srcs:
                h.send(src, random_packet(rng, src, sink, cmd=v_cmd))
        due, answered = [], 0
        for _ in range(3000):
            if h.drained() and not due:
                break
            await h.run(1)
            taken = _count(h, sink, v)
            due += [h.cycle + rng.randint(0, 6) for _ in range(taken - answered)]
            answered = taken
            for d in [d for d in due if d <= h.cycle]:
                due.remove(d)
                h.send(w_src, random_packet(rng, w_src, sink, cmd=w_cmd))
        h.check()
        assert h.drained() and not due, (
            f"seed {seed}: hung with {v.name} packets at a sink that drains {v.name} via {w.name} "
            f"(room for {cap}): "
            f"{_count(h, sink, v)} of {per_src * len(v_srcs)} {v.name} and {_count(h, sink, w)} {w.name} "
            f"packets delivered; output {sink} offers a beat on VC "
            f"{beat_vc(h.output(sink)[1])} (valid {h.output(sink)[0]})")
        assert _count(h, sink, v) == per_src * len(v_srcs) == _count(h, sink, w)


def _count(h, o, vc):
    """Packets on ``vc`` that output ``o`` has delivered so far."""
    return sum(beat_vc(d[1][0]) == vc.value for d in h.delivered[o])


def _drains_via(h, sink, v, w, cap):
    """Sink readiness (ready, ready2): ``sink`` has room for ``cap`` ``v`` packets, and each ``w`` packet
    frees one; with ``cap`` 2 it promises room for a second ``v`` packet (ready2) while both fit."""
    def room(o):
        return cap - (_count(h, o, v) - _count(h, o, w)) if o == sink else 2

    def ready(o, c):
        return ALL if room(o) > 0 else ALL & ~(1 << v.value)

    def ready2(o, c, r):
        if o != sink:
            return 0
        return ALL if cap > 1 and room(o) > 1 else ALL & ~(1 << v.value)
    return ready, ready2


@cocotb.test()
async def back_to_back_with_ready2(dut):
    """One-beat packets of one VC from one input to one output: one per cycle when the sink promises
    room for two (ready2), one every other cycle when it does not (the fresh-ready rule).  With one slot
    per VC the input itself takes a packet only every other cycle (its slot frees as the packet leaves).
    A switch that books one packet per input at a time (``HtaxPipelined``) gives ``booking_gap``."""
    p = tb_params()
    n = p["ports"]
    rng, seed = _rng(7)
    gaps = ((True, 1 if p["slots"] > 1 else 2), (False, 2))
    if "booking_gap" in p:
        gaps = ((True, p["booking_gap"]), (False, p["booking_gap"]))
    for promise, gap in gaps:
        h = Harness(dut, n, rng, sink_ready2=(lambda o, c, r: ALL) if promise else None)
        await h.start(clock=promise)
        for _ in range(12):
            h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.ATS))
        await h.run(until=h.drained, limit=200)
        h.check()
        cycles = [d[0] for d in h.delivered[1]]
        assert len(cycles) == 12
        gaps = {b - a for a, b in zip(cycles, cycles[1:], strict=False)}
        assert gaps == {gap}, f"seed {seed}: ready2 {promise}: headers {gap} cycles apart expected, got {gaps}"


@cocotb.test()
async def responses_never_hold_back_requests(dut):
    """A unit whose responses wait at a congested port still gets its reads (and their errors) through.

    Port 1 refuses the response VC.  Port 0 queues more responses to port 1 than its input can hold,
    then reads from port 2 and reads from a port that does not exist.  Responses from a unit never
    take the input's last free response slot (kept for error responses), so the reads pass and the bad
    read's error response comes back while port 1 still refuses responses (the ATU's flush storm
    starved the host's register read this way before).  Released, everything drains.
    """
    p, rng, seed, release, h = await _port_1_refusing(dut, 6, HtaxVC.RESPONSE)
    n, slots = p["ports"], p["slots"]
    # more responses than input 0 and the switch's buffers behind it (``buffered`` one-beat packets) hold
    count = slots + 3 + p.get("buffered", 0)
    stuck = [h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.RESPONSE)) for _ in range(count)]
    await h.run(10 * count)             # every response that fits has moved in (at most 9 beats each)
    ready0 = h.ready(0)
    assert not (ready0 >> HtaxVC.RESPONSE.value) & 1, f"seed {seed}: response VC ready {ready0:04b}"
    assert (ready0 >> HtaxVC.NONPOSTED.value) & 1, (
        f"seed {seed}: input 0's non-posted VC waits for its responses: ready {ready0:04b}")
    reads = [h.send(0, random_packet(rng, 0, 2, cmd=HtaxCmd.READ)) for _ in range(2 * slots + 2)]
    errors = []
    if n < 16:
        for _ in range(3):
            bad = HtaxPacket(HtaxCmd.READ, src=0, dst=n, tag=rng.randrange(32), addr=0x40, length=2)
            h.send(0, bad.beats(), expect=False)
            errors.append(h.expect(HtaxPacket(HtaxCmd.RESPONSE, src=n, dst=0, tag=bad.tag,
                                              status=HtaxStatus.NO_TARGET, addr=0, length=0,
                                              first_be=0, last_be=0).beats()))
    done = set()

    def passed():
        done.update(d[2] for ds in h.delivered for d in ds)
        return all(t in done for t in reads + errors)

    await h.run(until=passed, limit=2000)
    assert not any(t in done for t in stuck), f"seed {seed}: a response passed a sink refusing them"
    release[0] = True
    await h.run(until=h.drained, limit=3000)
    h.check()


@cocotb.test()
async def nonposted_behind_posted(dut):
    """A read does not pass an older posted write of its input to its output (HyperTransport's rule
    across VCs; the AXI host bridge holds posted writes back while a read may go).

    Port 1 refuses the posted VC.  Port 0 sends it a write and then reads: the reads wait (in the input
    with ``Htax``, at the output with ``HtaxPipelined``'s VC buffers) while a read of another port to
    port 1 sent before the write flows, and with spare slots a write and a read of port 0 to port 2.
    Released, the write leaves before the reads (the harness checks the rule for every packet of every
    test).
    """
    p, rng, seed, release, h = await _port_1_refusing(dut, 9, HtaxVC.POSTED)
    n, slots = p["ports"], p["slots"]
    other = 3 if n > 3 else 2
    early = h.send(other, random_packet(rng, other, 1, cmd=HtaxCmd.READ))
    await h.run(until=lambda: h.hdr_in.get(early) is not None, limit=50)
    write = h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.WRITE))
    await h.run(until=lambda: h.hdr_in.get(write) is not None, limit=50)
    reads = [h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.READ)) for _ in range(min(3, slots))]
    flowing = [early]
    if slots > 1:       # (with one slot per VC the stuck write and read fill input 0's posted and non-posted VCs)
        flowing += [h.send(0, random_packet(rng, 0, 2, cmd=HtaxCmd.WRITE)),
                    h.send(0, random_packet(rng, 0, 2, cmd=HtaxCmd.READ))]
    done = set()

    def flowed():
        done.update(d[2] for ds in h.delivered for d in ds)
        return all(t in done for t in flowing)

    await h.run(until=flowed, limit=500)
    await h.run(100)
    done.update(d[2] for ds in h.delivered for d in ds)
    assert not any(t in done for t in reads + [write]), (
        f"seed {seed}: a read passed an older write waiting at a sink that refuses writes")
    release[0] = True
    await h.run(until=h.drained, limit=1000)
    h.check()
    order = [d[2] for d in h.delivered[1]]
    assert order.index(write) < min(order.index(r) for r in reads), f"seed {seed}: order {order}"


@cocotb.test()
async def read_passed_by_many_writes(dut):
    """A read that a sink refuses, passed by many newer writes of another input, leaves as soon as the
    sink takes reads again: ``HtaxPostedOrder`` counts posted packets modulo a power of two, and a
    read's stamp that newer writes have long passed must not look like older writes pending."""
    p, rng, seed, release, h = await _port_1_refusing(dut, 10, HtaxVC.NONPOSTED)
    read = h.send(0, random_packet(rng, 0, 1, cmd=HtaxCmd.READ))
    await h.run(30)
    writes = [h.send(2, random_packet(rng, 2, 1, cmd=HtaxCmd.WRITE, length=1)) for _ in range(100)]
    done = set()

    def delivered(tags):
        done.update(d[2] for d in h.delivered[1])
        return all(t in done for t in tags)

    await h.run(until=lambda: delivered(writes), limit=5000)
    assert not delivered([read]), f"seed {seed}: the read passed a sink refusing reads"
    release[0] = True
    waited = await h.run(until=lambda: delivered([read]), limit=100)
    h.check()
    assert waited <= p.get("latency", 2) + 10, f"seed {seed}: the read left {waited} cycles after the release"


def _set_last(beat, last):
    return beat_replace(beat, {"last": int(last)})


@cocotb.test()
async def framing_errors(dut):
    """A packet whose ``last`` comes early is forwarded as its header announces, the missing data words
    as zeros, never as what the input's slot memory held (the words of an earlier packet on that port:
    here another node's, relayed through the same unit, and packets of another input went by in between);
    a packet whose ``last`` comes late is forwarded as its header announces, its extra beats dropped.
    The packets behind either arrive intact."""
    n = tb_params()["ports"]
    rng, seed = _rng(8)
    h = Harness(dut, n, rng)
    await h.start()
    relay, other, dst = 0, 1, 2 % n
    secret = [0x5EC0_0000_0000_0000 | k for k in range(8)]
    # another node's write relayed through port 0 (src 15: where it came from), and traffic of another
    # input to the same output
    h.send(relay, HtaxPacket(HtaxCmd.WRITE, src=15, dst=1, tag=1, addr=0x1000, length=8, first_be=0xFF,
                             last_be=0xFF, data=secret), expect_key=(15, 1, HtaxVC.POSTED.value))
    for _ in range(3):
        h.send(other, random_packet(rng, other, dst, cmd=HtaxCmd.WRITE, length=8))
    await h.run(until=h.drained, limit=500)
    for words, sent in ((8, 3), (8, 0), (4, 1)):
        # a write announcing `words` data words of which only `sent` arrive (0: last on the header)
        pkt = HtaxPacket(HtaxCmd.WRITE, src=relay, dst=dst, tag=2, addr=0x2000, length=words, first_be=0xFF,
                         last_be=0xFF, data=[0xD0 + k for k in range(words)])
        full = pkt.beats()
        short = full[:1 + sent]
        short = [_set_last(b, k == len(short) - 1) for k, b in enumerate(short)]
        h.send(relay, short, expect=False)
        h.expect(full[:1 + sent] + [beat_replace(b, {"word.data": 0}) for b in full[1 + sent:]])
        h.send(relay, random_packet(rng, relay, dst, cmd=HtaxCmd.WRITE))
    for words, sent in ((2, 4), (0, 2)):
        # a packet announcing `words` data words followed by `sent` data beats: the extra ones are dropped
        cmd = HtaxCmd.WRITE if words else HtaxCmd.READ
        pkt = HtaxPacket(cmd, src=relay, dst=dst, tag=3, addr=0x3000, length=words or 1, first_be=0xFF,
                         last_be=0xFF, data=[0xE0 + k for k in range(words)])
        full = pkt.beats()
        extra = [pack(HtaxBeat, {"vc": beat_vc(full[0]), "word.data": 0xEE00 + k}) for k in range(sent - words)]
        long = [_set_last(b, False) for b in full] + extra
        long[-1] = _set_last(long[-1], True)
        h.send(relay, long, expect=False)
        h.expect(full)
        h.send(relay, random_packet(rng, relay, dst, cmd=HtaxCmd.WRITE))
    await h.run(until=h.drained, limit=2000)
    await h.run(5)
    h.check()
    leaked = [hex(b) for ds in h.delivered for d in ds if hdr_src(d[1][0]) == relay
              for b in d[1][1:] if beat_field(b, "word.data") in secret]
    assert not leaked, f"seed {seed}: another packet's words delivered: {leaked}"
    assert dut.dropped_malformed.value.to_unsigned() == 0 and dut.dropped_no_target.value.to_unsigned() == 0
