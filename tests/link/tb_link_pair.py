"""cocotb: two link ports through the Python channel model, random packets, random backpressure.

Parameters (``sim.runner.tb_params``): ``vcs`` (the ports' VC count), ``packets`` per VC and direction,
``latency``, ``errors``
(rates for :class:`sim.channel.Channel`, applied to both directions), ``src_stall`` / ``dst_stall``
(probabilities of an idle source cycle / a not-ready sink cycle), ``max_cycles``, ``scenario``
(``"plain"``, ``"link_error"``, ``"malformed"``), ``expect`` (counters that must be non-zero).
Every packet must arrive exactly once, in order, intact, on its VC, with the framing
(HEADER, COMMAND..., PAYLOAD..., ``first``/``last``) of :func:`sim.link_model.beats_of`.  The
streams at the ports are driven and watched by the bus models of :mod:`sim.net_stream`.
"""

import collections
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from rtl.common.net import MAX_PAYLOAD_WORDS
from sim.channel import Channel
from sim.clock import start_clock
from sim.link_model import beats_of, random_packet, shape
from sim.net_stream import NetStreamSink, NetStreamSource, beat_tuple, net_beat
from sim.netroute import header_fields
from sim.runner import tb_params, tb_seed

COUNTERS = ("crc_errors", "retransmissions", "naks_sent", "naks_received", "replay_timeouts",
            "link_errors", "malformed_packets", "protocol_errors")


def malformed_stream(rng, n):
    """Packets, every one but every fourth malformed: ``last`` early (on the header too), ``last``
    late, ``payload_words`` 9..15 with ``last`` where the header puts it or at the
    clamped length (8 payload words).  Returns the input beats."""
    beats = []
    for i in range(n):
        if i % 4 == 0:
            beats += beats_of(random_packet(rng))
        elif i % 4 == 1:
            words = random_packet(rng, payload_words=rng.randint(1, 8))
            cut = rng.randrange(len(words) - 1)         # last too early
            beats += beats_of(words[:cut + 1], last=cut)
        elif i % 4 == 2:
            extra = [rng.getrandbits(64) for _ in range(rng.randint(1, 3))]   # last too late
            beats += beats_of(random_packet(rng) + extra)
        else:
            words = random_packet(rng, payload_words=rng.randint(9, 15))
            clamped = 1 + header_fields(words[0])["command_words"] + MAX_PAYLOAD_WORDS
            beats += beats_of(words if i % 8 == 3 else words[:clamped])
    return beats


@cocotb.test()
async def link_pair(dut):
    prm = tb_params()
    seed = tb_seed()
    rng = random.Random(seed)
    dut._log.info(f"seed {seed}, params {prm}")
    phit_bits = len(dut.a_tx_phit)
    vcs = prm.get("vcs", 4)
    n = prm.get("packets", 40)
    scenario = prm.get("scenario", "plain")
    errors = prm.get("errors", {})
    chans = {d: Channel(phit_bits=phit_bits, latency=prm.get("latency", 8),
                        rng=random.Random(rng.getrandbits(32)), **prm.get(f"errors_{d}", errors))
             for d in ("ab", "ba")}

    sent = {}
    malformed = {"a": 0, "b": 0}
    sources, sinks = [], {}
    clk = dut.clk
    for src, dst in (("a", "b"), ("b", "a")):
        for vc in range(vcs):
            source = NetStreamSource(dut, f"{src}_tx__{vc}", clk, dut.rst, period_ns=10,
                                     pause=prm.get("src_stall", 0.2) or None, rng=rng)
            if scenario == "malformed":
                beats = malformed_stream(rng, n)
                expected, bad = shape(beats)
                malformed[src] += bad
            else:
                expected = [random_packet(rng) for _ in range(n if src == "a" or not prm.get("one_way")
                                                               else 0)]
                beats = [b for p in expected for b in beats_of(p)]
            if beats:
                source.send_raw([net_beat(*b) for b in beats])
            sent[(src, vc)] = expected
            sources.append(source)
            sinks[(src, vc)] = NetStreamSink(dut, f"{dst}_rx__{vc}", clk, dut.rst, period_ns=10,
                                             ready=1 - prm.get("dst_stall", 0.2), rng=rng)

    dut.a_retrain.value = 0
    dut.b_retrain.value = 0
    for side in "ab":
        getattr(dut, f"{side}_replay_timeout").value = prm.get("replay_timeout", 512)
        getattr(dut, f"{side}_max_replays").value = prm.get("max_replays", 4)
        getattr(dut, f"{side}_rx_phit").value = 0
        getattr(dut, f"{side}_rx_ctl").value = 0
    start_clock(clk, 10, start_high=False)
    dut.rst.value = 1
    for m in sources + list(sinks.values()):
        m.start()
    for _ in range(3):
        await RisingEdge(clk)
    dut.rst.value = 0

    irqs = 0
    link_error_seen = False
    dead_until = None
    if scenario == "link_error":
        chans["ab"].dead = True
    cycle = 0
    max_cycles = prm.get("max_cycles", 60000)
    pending_ab = pending_ba = (0, 0)
    stop_at = None
    final_armed = final_seen = 0
    debug = prm.get("debug", 0)
    hist = collections.deque(maxlen=max(debug, 1))
    while True:
        await RisingEdge(clk)
        cycle += 1
        dut.b_rx_phit.value, dut.b_rx_ctl.value = pending_ab
        dut.a_rx_phit.value, dut.a_rx_ctl.value = pending_ba
        dut.a_retrain.value = 0
        dut.b_retrain.value = 0
        if scenario == "link_error" and link_error_seen and dead_until is None:
            dead_until = cycle + 200
        if dead_until is not None and cycle == dead_until:
            chans["ab"].dead = False
            dut.a_retrain.value = 1
            dut.b_retrain.value = 1
        await ReadOnly()
        pending_ab = chans["ab"].step(int(dut.a_tx_phit.value), int(dut.a_tx_ctl.value))
        pending_ba = chans["ba"].step(int(dut.b_tx_phit.value), int(dut.b_tx_ctl.value))
        if debug:
            hist.append((cycle, int(dut.a_tx_ctl.value), hex(int(dut.a_tx_phit.value)), pending_ab,
                         int(dut.b_tx_ctl.value), hex(int(dut.b_tx_phit.value)), pending_ba,
                         int(dut.a_protocol_errors.value), int(dut.b_protocol_errors.value),
                         int(dut.a_crc_errors.value), int(dut.b_crc_errors.value),
                         int(dut.a.rx.overflow.value), int(dut.a.tx.ev_protocol.value),
                         int(dut.a.tx.credit_valid.value), int(dut.a.tx.ack_valid.value),
                         "ack", int(dut.a.tx.ack.value), int(dut.a.tx.replay.ack_seq.value),
                         int(dut.a.tx.replay.next_seq.value)))
            if hist[-1][7] or hist[-1][8]:
                for h in list(hist)[-debug:]:
                    dut._log.info(str(h))
                raise AssertionError("protocol error")
        ab = chans["ab"]
        if prm.get("drop_final") and not final_armed and all(x.idle() for x in sources[:vcs]):
            # the last a->b data flit of the run has nothing behind it: only the replay timer helps.
            # Armed as soon as the a-side sources are done (not when both directions are): if b->a
            # finished later, a->b's final flit would already have passed the channel undropped.
            ab.rates["drop_last"] = 1.0
            final_armed = ab.stats["drop_last"] + 1
        if final_armed and ab.rates["drop_last"] and ab.stats["drop_last"] >= final_armed:
            ab.rates["drop_last"] = 0.0
            final_seen = ab.stats["data_flits"]          # the dropped flit included
        if (final_armed and not ab.rates["drop_last"] and ab.stats["data_flits"] > final_seen
                and int(dut.a_replay_timeouts.value) == 0):
            # a new data flit followed the dropped one (the transmitter still had beats buffered, and
            # a control flit ended the burst early): that was not the final flit, drop the next burst end
            ab.rates["drop_last"] = 1.0
            final_armed = ab.stats["drop_last"] + 1
        if int(dut.a_irq.value):
            irqs += 1
        if int(dut.a_link_error.value):
            link_error_seen = True
        if stop_at is None and (cycle % 256 == 0 or cycle >= max_cycles):
            done = all(sinks[k].packets >= len(sent[k]) for k in sinks)
            # after the last packet, let anything still in flight (a duplicate, say) arrive too
            if done or cycle >= max_cycles:
                stop_at = cycle + (1000 if done else 0)
        if stop_at is not None and cycle >= stop_at:
            break
    await Timer(1, "ns")

    counters = {side: {c: int(getattr(dut, f"{side}_{c}").value) for c in COUNTERS} for side in "ab"}
    dut._log.info(f"{cycle} cycles; injected ab {chans['ab'].stats} ba {chans['ba'].stats}")
    dut._log.info(f"counters {counters}")

    for key, expected in sent.items():
        sink = sinks[key]
        assert sink.errors == [], sink.errors[:10]
        got = [r.packet for r in sink.queue]
        for i, (g, e) in enumerate(zip(got, expected, strict=False)):
            assert g == e, f"{key}: packet {i} differs:\n got {g}\n expected {e}"
            framing = [beat_tuple(b) for b in sink.queue[i].beats]
            assert framing == beats_of(e), f"{key}: packet {i} framed as {framing}"
        assert not sink.in_packet, f"{key}: trailing partial packet after {len(got)} packets"
        assert len(got) == len(expected), f"{key}: {len(got)} packets delivered, {len(expected)} sent"

    for side in "ab":
        assert counters[side]["protocol_errors"] == 0, counters
    for name in prm.get("expect", []):
        side, counter = name.split(".")
        value = sum(counters[x][counter] for x in ("ab" if side == "any" else side))
        assert value > 0, f"{name} is 0: {counters}"
    for name in prm.get("expect_zero", []):
        side, counter = name.split(".")
        assert counters[side][counter] == 0, f"{name} is not 0: {counters}"
    if scenario == "link_error":
        assert link_error_seen and irqs == 1, (link_error_seen, irqs)
        assert counters["a"]["link_errors"] == 1, counters
        assert int(dut.a_link_error.value) == 0 and int(dut.b_link_error.value) == 0
    if scenario == "malformed":
        for side in "ab":
            assert malformed[side] >= 3 * vcs * (n // 4), malformed
            assert counters[side]["malformed_packets"] == malformed[side], (counters, malformed)
