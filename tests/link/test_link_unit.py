# amaranth: UnusedElaboratable=no
"""Unit tests of the link port in the Amaranth simulator: parameters, wire format, CRC standard."""

import os
import random

import crc
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from rtl.common.net import MAX_PAYLOAD_WORDS
from rtl.config import DEFAULT_PATH, load
from rtl.link import LinkParams, LinkPort, LinkRx, LinkTx, PacketRestorer, PacketShaper, RxBuffer
from rtl.link.params import PhitCtl
from sim.link_model import beats_of, crc_bytes, flit_phits, random_packet, shape
from sim.netroute import header_fields

CRC_REFERENCE = {16: crc.Calculator(crc.Crc16.IBM_3740), 32: crc.Calculator(crc.Crc32.CRC32),
                 64: crc.Calculator(crc.Crc32.CRC32)}


@pytest.mark.parametrize("kwargs, message", [
    (dict(phit_bits=24), "phit_bits must be 16, 32 or 64, not 24"),
    (dict(phit_bits="16"), "phit_bits must be an integer, not '16'"),
    (dict(replay_flits=48), "replay_flits must be a power of two, not 48"),
    (dict(replay_flits=512), "replay_flits must be between 2 and 256, not 512"),
    (dict(flit_phits=65), r"flit_phits must be between 6 \(header, one beat, CRC\) and 64, not 65"),
    (dict(flit_phits=5), r"flit_phits must be between 6 \(header, one beat, CRC\) and 64, not 5"),
    (dict(seq_bits=5), r"seq_bits must be between log2\(replay_flits\) \+ 1 = 6 and 12, not 5"),
    (dict(vcs=3), "vcs must be 2 or 4, not 3"),
    (dict(vcs=8), "vcs must be 2 or 4, not 8"),
    (dict(vcs="4"), "vcs must be an integer, not '4'"),
    (dict(rx_buffer_beats=8), r"rx_buffer_beats must hold one full flit \(15 beats\), not 8"),
    (dict(rx_buffer_beats=100), "rx_buffer_beats must be a power of two, not 100"),
    (dict(rx_buffer_beats=2), "rx_buffer_beats must be at least 4, not 2"),
    (dict(counter_bits=0), "counter_bits must be between 1 and 32, not 0"),
    (dict(idle_gap=16), "idle_gap must be between 0 and 15, not 16"),
    (dict(replay_timeout=0), "replay_timeout must be between 1 and 65535, not 0"),
    (dict(max_replays=16), "max_replays must be between 1 and 15, not 16"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=f"^{message}$"):
        LinkPort(**kwargs)


def test_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        LinkPort(16)


def test_sequence_bits_cover_twice_the_replay_window():
    for depth in (2, 8, 64, 256):
        p = LinkParams(replay_flits=depth, rx_buffer_beats=256)
        assert 2 ** p.seq_bits >= 2 * depth


def test_default_data_header_is_one_phit():
    """With four VCs the 16-bit data flit header holds type 1 + vc 2 + seq 6 + ack 6 only with the
    32-flit replay buffer: the default and the configuration file's [link] keep it one phit."""
    for p in (LinkParams(), LinkPort(**load(DEFAULT_PATH)["link"]).params):
        assert (p.vcs, p.vc_bits, p.replay_flits, p.seq_bits) == (4, 2, 32, 6)
        assert p.data_header.size == 15 and p.data_header_phits == 1
        assert p.ctrl_header.size == 2 + 6 + 4 * 8 and p.ctrl_header_phits == 3
    assert LinkParams(replay_flits=64).data_header_phits == 2
    assert LinkParams(replay_flits=64, vcs=2).data_header_phits == 1


@pytest.mark.parametrize("kwargs", [dict(), dict(vcs=2), dict(phit_bits=32, flit_phits=24),
                                    dict(phit_bits=64, flit_phits=16, vcs=2), dict(replay_flits=64),
                                    dict(rx_buffer_beats=32, replay_flits=8)])
def test_flit_lengths_match_the_documented_format(kwargs):
    """LinkParams' flit lengths against sim.link_model.flit_phits, derived from docs/link.md."""
    p = LinkParams(**kwargs)
    for beats in (1, 2, p.max_beats):
        assert p.data_flit_phits(beats) == flit_phits(beats, phit_bits=p.phit_bits, seq_bits=p.seq_bits,
                                                      vcs=p.vcs)
    assert p.ctrl_flit_phits == flit_phits(0, phit_bits=p.phit_bits, seq_bits=p.seq_bits, ctrl=True,
                                           credit_bits=p.credit_bits, vcs=p.vcs)
    assert p.data_flit_phits(p.max_beats) <= p.flit_phits < p.data_flit_phits(p.max_beats + 1)


def _first_flit(phit_bits, seed, vc):
    """Run one port, send one packet on ``vc``, return (params, packet, phits of the first data flit)."""
    dut = LinkPort(phit_bits=phit_bits, flit_phits=64 if phit_bits == 16 else 24, rx_buffer_beats=64)
    rng = random.Random(seed)
    words = random_packet(rng)
    flit = []

    async def tb(ctx):
        beats = beats_of(words)
        i = 0
        started = False
        for _ in range(200):
            if i < len(beats):
                d, k, f, last = beats[i]
                ctx.set(dut.tx[vc].valid, 1)
                ctx.set(dut.tx[vc].payload, {"data": d, "kind": k, "first": f, "last": last})
            else:
                ctx.set(dut.tx[vc].valid, 0)
            _, _, ready, ctl, phit = await ctx.tick().sample(dut.tx[vc].ready, dut.tx_ctl, dut.tx_phit)
            if ready and i < len(beats):
                i += 1
            ctl = ctl.value if hasattr(ctl, "value") else int(ctl)
            if ctl == 1 and not (phit & 1):     # SOF of a data flit
                started = True
            if started:
                flit.append((ctl, phit))
                if ctl == 3:
                    return

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    return dut.params, words, flit


@pytest.mark.parametrize("phit_bits, vc", [(16, 3), (16, 2), (32, 1), (64, 3)])
def test_flit_format_and_crc_standard(phit_bits, vc):
    """The first data flit: header fields at the documented bit positions (type 0, vc 2:1, seq, ack),
    the packet's words as beats (header first; first phit = low bits), and a CRC equal to the
    published algorithm's (``crc`` package)."""
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    p, words, flit = _first_flit(phit_bits, seed, vc)
    assert flit and flit[-1][0] == 3, "no complete data flit seen"
    ctls = [c for c, _ in flit]
    assert ctls == [1] + [2] * (len(flit) - 2) + [3]
    phits = [d for _, d in flit[:-1]]
    S = p.seq_bits
    hdr = phits[0]
    assert hdr & 1 == 0                       # type DATA
    assert hdr >> 1 & 3 == vc                 # the VC, two bits
    assert hdr >> 3 & (2 ** S - 1) == 0       # first sequence number
    assert hdr >> (3 + S) & (2 ** S - 1) == 0  # nothing received yet
    if phit_bits == 16:
        assert hdr < 1 << 15 and p.data_header_phits == 1
    per_beat = 64 // phit_bits
    body = phits[1:]
    beats = [sum(body[i + k] << (k * phit_bits) for k in range(per_beat))
             for i in range(0, len(body), per_beat)]
    assert beats == words[:len(beats)] and len(beats) >= 1
    expected = CRC_REFERENCE[phit_bits].checksum(crc_bytes(phits, phit_bits))
    assert flit[-1][1] & (2 ** p.crc_bits - 1) == expected


def test_framing_round_trip_matches_model():
    """PacketShaper -> PacketRestorer (the link's framing without the link) on random packets with
    every header length (header only, 0..3 command words, 0..8 payload words) and malformed ones:
    ``last`` early (also on the header) or late, ``payload_words`` 9..15 (cut
    to 8 payload words, whether ``last`` comes at the header's length or at the clamped one).  The
    output equals sim.link_model.shape, beat kinds and first/last included, and every malformed packet
    counts once, in the RTL and in the model."""
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    beats = []
    bad_packets = 0
    for _ in range(80):
        r = rng.random()
        if r < 0.15:                                                    # payload_words above 8
            words = random_packet(rng, payload_words=rng.randint(9, 15))
            clamped = 1 + header_fields(words[0])["command_words"] + MAX_PAYLOAD_WORDS
            beats += beats_of(words if rng.random() < 0.5 else words[:clamped])
            bad_packets += 1
            continue
        words = random_packet(rng, payload_words=rng.choice([0, 0, 1, 7, 8, rng.randint(0, 8)]))
        if r < 0.3 and len(words) > 1:
            cut = rng.randrange(len(words) - 1)                         # last too early
            beats += beats_of(words[:cut + 1], last=cut)
            bad_packets += 1
        elif r < 0.45:
            beats += beats_of(words + [rng.getrandbits(64)])            # last too late
            bad_packets += 1
        else:
            beats += beats_of(words)
    packets, model_malformed = shape(beats)
    assert model_malformed == bad_packets
    expected = [b for p in packets for b in beats_of(p)]
    malformed = 0

    m = Module()
    m.submodules.shaper = shaper = PacketShaper()
    m.submodules.restorer = restorer = PacketRestorer()
    wiring.connect(m, shaper.o, restorer.i)
    got = []

    async def tb(ctx):
        nonlocal malformed
        i = 0
        for _ in range(4 * len(beats) + 50):
            if i < len(beats) and rng.random() < 0.8:
                d, k, f, last = beats[i]
                ctx.set(shaper.i.valid, 1)
                ctx.set(shaper.i.payload, {"data": d, "kind": k, "first": f, "last": last})
            else:
                ctx.set(shaper.i.valid, 0)
            ctx.set(restorer.o.ready, int(rng.random() < 0.8))
            _, _, iv, ir, ov, orr, op, bad = await ctx.tick().sample(
                shaper.i.valid, shaper.i.ready, restorer.o.valid, restorer.o.ready, restorer.o.payload,
                shaper.malformed)
            if iv and ir:
                i += 1
            if ov and orr:
                got.append((op.data, op.kind.value, op.first, op.last))
            malformed += bad

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    assert got == expected
    assert malformed == bad_packets


@pytest.mark.parametrize("cls", [LinkTx, LinkRx, RxBuffer])
def test_components_require_link_params(cls):
    with pytest.raises(TypeError, match=r"^params must be a LinkParams, not \{'phit_bits': 16\}$"):
        cls({"phit_bits": 16})
    assert cls(LinkParams()).params.phit_bits == 16


def test_replay_attempts_count_progress_and_ignore_stale_naks():
    """Failed-replay accounting of LinkTx (docs/link.md "Replay timer and link-error state"), with
    ``max_replays`` = 1 so a single miscount shows as a link error:

    - a NAK that arrives while the first flit of a replay is still being sent was asked for by a flit
      sent before the replay: it neither restarts the replay nor counts as a failed attempt;
    - a NAK that carries acknowledgement progress starts a new series of attempts;
    - a NAK without progress after the replayed flit was sent is a failed attempt: link error, irq.
    """
    p = LinkParams()
    dut = LinkTx(p)
    rng = random.Random(1)
    packets = [random_packet(rng, payload_words=8, command_words=0) for _ in range(4)]
    S = p.seq_bits
    seq_lsb = p.data_header["seq"].offset
    flits = []          # [seq, ended] of every data flit, in order
    irqs = 0

    async def tick(ctx):
        nonlocal irqs
        _, _, ctl, phit, irq = await ctx.tick().sample(dut.ctl, dut.phit, dut.irq)
        irqs += irq
        if ctl == PhitCtl.SOF and not phit & 1:     # SOF of a data flit
            flits.append([(phit >> seq_lsb) & (2 ** S - 1), False])
        elif ctl == PhitCtl.EOF and flits and not flits[-1][1]:
            flits[-1][1] = True

    async def nak(ctx, ack):
        ctx.set(dut.ack_valid, 1)
        ctx.set(dut.ack, ack)
        ctx.set(dut.ack_nak, 1)
        await tick(ctx)
        ctx.set(dut.ack_valid, 0)
        ctx.set(dut.ack_nak, 0)

    async def until(ctx, cond, limit=400):
        for _ in range(limit):
            if cond():
                return
            await tick(ctx)
        raise AssertionError(f"timed out; flits {flits}")

    async def tb(ctx):
        ctx.set(dut.replay_timeout, 60000)
        ctx.set(dut.max_replays, 1)
        for words in packets:                       # one flit per packet: the source pauses after each
            for b in beats_of(words):
                ctx.set(dut.tx[0].valid, 1)
                ctx.set(dut.tx[0].payload, {"data": b[0], "kind": b[1], "first": b[2], "last": b[3]})
                while True:
                    ready = ctx.get(dut.tx[0].ready)
                    await tick(ctx)
                    if ready:
                        break
            ctx.set(dut.tx[0].valid, 0)
            await until(ctx, lambda: len(flits) and flits[-1][1])
            for _ in range(8):
                await tick(ctx)
        await until(ctx, lambda: len(flits) == 4 and flits[-1][1])
        assert [f[0] for f in flits] == [0, 1, 2, 3]
        # attempt 1: replay from 0
        await nak(ctx, 0)
        await until(ctx, lambda: len(flits) == 5)
        assert flits[4][0] == 0 and not flits[4][1]
        # a stale NAK during the first replayed flit: ignored
        await nak(ctx, 0)
        await until(ctx, lambda: flits[4][1])
        await until(ctx, lambda: len(flits) == 6)
        assert flits[5][0] == 1, "the stale NAK restarted the replay"
        assert not ctx.get(dut.link_error), "the stale NAK counted as a failed attempt"
        # a NAK with progress (flit 0 acknowledged): a new series, attempt 1 again -> replay from 1
        await nak(ctx, 1)
        await until(ctx, lambda: flits[-1][1] and len(flits) >= 6)
        await until(ctx, lambda: flits[-1][0] == 1 and len(flits) >= 7)
        assert not ctx.get(dut.link_error), "progress did not reset the failed attempts"
        await until(ctx, lambda: flits[-1][1])
        assert irqs == 0
        # no progress since that replay: failed attempt 2 > max_replays -> link-error state
        await nak(ctx, 1)
        await until(ctx, lambda: ctx.get(dut.link_error), limit=10)
        await tick(ctx)
        assert irqs == 1

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()


@pytest.mark.parametrize("vcs, active", [(4, (0, 1, 2, 3)), (4, (0, 2, 3)), (4, (3, 0)), (4, (1,)),
                                         (2, (0, 1))])
def test_new_flits_take_the_vcs_round_robin(vcs, active):
    """LinkTx with saturated sources on the ``active`` VCs (full credits, no acknowledgements): the
    data flits go to the VCs in turn, each VC's next flit after every other active VC's, and idle VCs
    are skipped."""
    p = LinkParams(vcs=vcs)
    dut = LinkTx(p)
    vc_lsb, vc_mask = p.data_header["vc"].offset, vcs - 1
    seen = []

    def producer(v):
        async def run(ctx):
            rng = random.Random(v)
            while True:
                for d, k, f, last in beats_of(random_packet(rng, payload_words=8, command_words=3)):
                    ctx.set(dut.tx[v].valid, 1)
                    ctx.set(dut.tx[v].payload, {"data": d, "kind": k, "first": f, "last": last})
                    ready = 0
                    while not ready:
                        _, _, ready = await ctx.tick().sample(dut.tx[v].ready)
        return run

    async def monitor(ctx):
        ctx.set(dut.replay_timeout, 60000)
        while len(seen) < 3 * len(active) + 1:
            _, _, ctl, phit = await ctx.tick().sample(dut.ctl, dut.phit)
            if ctl == PhitCtl.SOF and not phit & 1:     # SOF of a data flit
                seen.append(phit >> vc_lsb & vc_mask)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for v in active:
        sim.add_testbench(producer(v), background=True)
    sim.add_testbench(monitor)
    sim.run()
    order = sorted(active)
    assert seen == [order[i % len(order)] for i in range(len(seen))], seen


@pytest.mark.parametrize("idle_gap", [0, 1, 3])
def test_idle_control_flits_keep_their_gap(idle_gap):
    """An idle port sends control flits back to back, or with ``idle_gap`` IDLE phits before each
    (a PHY with framing words needs the room, docs/phy.md); each flit is whole (SOF .. EOF)."""
    dut = LinkPort(idle_gap=idle_gap)
    ctls = []

    async def bench(ctx):
        ctx.set(dut.replay_timeout, 512)
        for _ in range(120):
            await ctx.tick()
            ctls.append(ctx.get(dut.tx_ctl))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    text = "".join("ISBE"[c.value] for c in ctls[20:])
    body = text[text.index("S"):text.rindex("E") + 1]
    gaps = body.split("SBBE")
    assert gaps[0] == "" and len(gaps) > 10 and set(gaps[1:-1]) == {"I" * idle_gap}, text
