# amaranth: UnusedElaboratable=no
"""The Amaranth-simulator bus models (sim/amsim) on their own: sources into sinks through a FIFO and a
wire with random stalls (every item arrives once, in order, with the cycles the handshakes say), the
rule checks of the sinks against deliberately broken sources, and the host responder against a Python
memory."""

import os
import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxLinkSignature, HtaxPacketSignature, HtaxStatus, HtaxVC
from sim.amsim import (
    Clock,
    HtaxHost,
    HtaxSink,
    HtaxSource,
    StreamSink,
    StreamSource,
    beat_view,
    lane,
    run_sim,
)
from sim.htax_packet import HtaxPacket, beat_field, beat_replace, line_write_packet
from sim.memory import HostMemory


def _seeded():
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (replay with SEED={seed})")
    return seed, random.Random(seed)


def random_packet(rng, src, dst):
    """A well-formed random packet of any command (so any VC), 0..8 data beats."""
    cmd = rng.choice(list(HtaxCmd))
    tag = rng.randrange(32)
    if cmd == HtaxCmd.ATS:
        return HtaxPacket(cmd, src=src, dst=dst, tag=tag, ats=rng.getrandbits(64))
    length = rng.randint(0 if cmd == HtaxCmd.RESPONSE else 1, 8)
    addr = (rng.getrandbits(40) << 6) | (rng.randint(0, 8 - max(length, 1)) << 3)
    nwords = 0 if cmd == HtaxCmd.READ else length
    pkt = HtaxPacket(cmd, src=src, dst=dst, tag=tag, addr=addr, length=length, first_be=rng.randint(1, 255),
                     last_be=rng.randint(1, 255) if length > 1 else 0,
                     data=[rng.getrandbits(64) for _ in range(nwords)])
    assert pkt.malformed_reason() is None, pkt
    return pkt


class Queue(wiring.Component):
    """A FIFO between two streams of ``signature`` (the STYLE.md ``Queue``), counting what went in."""

    def __init__(self, signature, *, depth):
        self._depth = depth
        super().__init__({"i": In(signature), "o": Out(signature), "taken": Out(16)})

    def elaborate(self, platform):
        m = Module()
        width = len(self.i.payload.as_value()) if hasattr(self.i.payload, "as_value") else len(self.i.payload)
        m.submodules.inner = inner = fifo.SyncFIFOBuffered(width=width, depth=self._depth)
        m.d.comb += [inner.w_data.eq(self.i.payload), inner.w_en.eq(self.i.valid), self.i.ready.eq(inner.w_rdy),
                     self.o.payload.eq(inner.r_data), self.o.valid.eq(inner.r_rdy), inner.r_en.eq(self.o.ready)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += self.taken.eq(self.taken + 1)
        return m


class Wire(wiring.Component):
    """An HTAX link passed through (``ready`` per VC back to the source), counting the beats."""

    i: In(HtaxLinkSignature())
    o: Out(HtaxLinkSignature())
    moved: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload),
                     self.i.ready.eq(self.o.ready), self.i.ready2.eq(self.o.ready2)]
        with m.If(self.i.transfer()):
            m.d.sync += self.moved.eq(self.moved + 1)
        return m


def test_stream_source_sink_through_fifo():
    """300 items through a 4-deep FIFO, idle source and stalling sink: all arrive, once, in order,
    and the sink never takes an item in a cycle before the source's handshake of it."""
    seed, rng = _seeded()
    dut = Queue(stream.Signature(16), depth=4)
    items = [rng.getrandbits(16) for _ in range(300)]
    src = StreamSource(dut.i, rng=rng, idle=0.4)
    snk = StreamSink(dut.o, rng=rng, stall=0.5)

    async def bench(ctx):
        clock = Clock(src, snk, limit=5000)
        for x in items:
            src.put(x)
        while len(snk.items) < len(items):
            await clock.tick(ctx)
        assert ctx.get(dut.taken) == len(items)

    run_sim(dut, bench)
    assert [p for _, p in snk.items] == items, f"seed {seed}"
    assert [p for _, p in src.sent] == items
    # a buffered FIFO: an item leaves at least one cycle after it entered; idle and stall did happen
    assert all(t_out > t_in for (t_in, _), (t_out, _) in zip(src.sent, snk.items, strict=True)), f"seed {seed}"
    # (without idles and stalls the last item would leave near cycle 300; with them about 600: the
    # source offers in 60 % of the cycles, the sink takes in 50 %)
    assert snk.items[-1][0] > 1.3 * len(items), f"seed {seed}: no stalls"


def test_stream_get_and_send_own_clock():
    """``send`` and ``get`` step a model of their own when no clock is given."""
    dut = Queue(stream.Signature(8), depth=4)
    src, snk = StreamSource(dut.i), StreamSink(dut.o)

    async def producer(ctx):
        await src.send(ctx, [1, 2, 3])

    async def consumer(ctx):
        assert [await snk.get(ctx) for _ in range(3)] == [1, 2, 3]

    run_sim(dut, producer, consumer)
    assert [t for t, _ in src.sent] == [0, 1, 2]


class _DropValid(StreamSource):
    """Broken on purpose: withdraws ``valid`` one cycle after raising it, moved or not."""

    def drive(self, ctx, now):
        super().drive(ctx, now)
        if now % 2:
            ctx.set(self.stream.valid, 0)


class _ChangePayload(StreamSource):
    """Broken on purpose: changes the payload of an offered item that has not moved."""

    def drive(self, ctx, now):
        super().drive(ctx, now)
        ctx.set(self.stream.payload, now & 0xFF)


@pytest.mark.parametrize("broken, message", [(_DropValid, "valid dropped before the item moved"),
                                             (_ChangePayload, "payload changed from")])
def test_stream_sink_catches_broken_source(broken, message):
    """A source that breaks the stream rules fails the sink at once (a sink that always stalls every
    other cycle, so that offered items wait)."""
    dut = Queue(stream.Signature(8), depth=2)
    src = broken(dut.i)
    snk = StreamSink(dut.i, stall=0.0)      # watch the FIFO's input; the FIFO drives its ready
    snk.drive = lambda ctx, now: setattr(snk, "_ready", ctx.get(dut.i.ready) and now % 3 == 0)

    async def bench(ctx):
        ctx.set(dut.o.ready, 0)                 # the FIFO fills, its ready falls
        clock = Clock(src, snk)
        for x in range(20):
            src.put(x + 1)
        await clock.repeat(ctx, 40)

    with pytest.raises(AssertionError, match=message):
        run_sim(dut, bench)


def test_htax_source_sink_per_vc_stalls():
    """Random packets on all four VCs through a wire, a source with idle cycles and a sink that
    refuses each VC at random: every packet arrives whole and in order, beats counted by the wire,
    header and last cycles agreeing between source and sink."""
    seed, rng = _seeded()
    dut = Wire()
    pkts = [random_packet(rng, 0, 1) for _ in range(60)]
    src = HtaxSource(dut.i, rng=rng, idle=0.3)
    snk = HtaxSink(dut.o, rng=rng, stall=0.5, per_vc=True)

    async def bench(ctx):
        clock = Clock(src, snk, limit=20_000)
        for p in pkts:
            src.send(p)
        await snk.wait_packets(ctx, len(pkts), clock=clock, limit=20_000)
        assert ctx.get(dut.moved) == sum(len(p.beats()) for p in pkts)

    run_sim(dut, bench)
    assert [r.beats for r in snk.packets] == [p.beats() for p in pkts], f"seed {seed}"
    assert [(h, t) for h, t, _ in src.sent] == [(r.header_cycle, r.last_cycle) for r in snk.packets]
    assert [r.packet.beats() for r in snk.packets] == [p.beats() for p in pkts]


def test_htax_source_waits_for_ready():
    """With ``wait_ready`` the source raises ``valid`` only when its VC is ready."""
    dut = Wire()
    src = HtaxSource(dut.i, wait_ready=True)
    snk = HtaxSink(dut.o, ready=lambda: 1 << HtaxVC.POSTED.value)    # posted only
    offered = []

    async def bench(ctx):
        clock = Clock(src, snk)
        src.send(HtaxPacket(HtaxCmd.READ, src=0, dst=1, addr=0x40, length=1))
        src.send(line_write_packet(0x80, b"12345678", src=0, dst=1))
        for _ in range(10):
            clock.drive(ctx)
            offered.append(ctx.get(dut.o.valid))
            await clock.tick(ctx)

    run_sim(dut, bench)
    # the read (non-posted) is never offered and blocks the write queued behind it
    assert offered == [0] * 10 and snk.packets == []


def test_htax_packets_through_a_packet_stream_fifo():
    """An HtaxPacketSignature stream (one ready) through a FIFO: the same packets come out."""
    seed, rng = _seeded()
    dut = Queue(HtaxPacketSignature(), depth=3)
    pkts = [random_packet(rng, 2, 3) for _ in range(40)]
    src = HtaxSource(dut.i, rng=rng, idle=0.2)
    snk = HtaxSink(dut.o, rng=rng, stall=0.4)

    async def bench(ctx):
        clock = Clock(src, snk, limit=20_000)
        for p in pkts:
            src.send(p)
        await snk.wait_packets(ctx, len(pkts), clock=clock, limit=20_000)

    run_sim(dut, bench)
    assert [r.beats for r in snk.packets] == [p.beats() for p in pkts], f"seed {seed}"


def _raw(beats, **change):
    """Beats with fields of the first one replaced (a framing error made on purpose)."""
    return [beat_replace(b, change) if i == 0 else b for i, b in enumerate(beats)]


@pytest.mark.parametrize("beats, message", [
    (lambda: _raw(line_write_packet(0, b"x" * 16, src=0, dst=1).beats(), first=0),
     "does not start with a first beat"),
    (lambda: line_write_packet(0, b"x" * 16, src=0, dst=1).beats()[:2]
     + line_write_packet(0, b"x" * 8, src=0, dst=1).beats(), "first set inside a packet"),
    (lambda: [line_write_packet(0, b"x" * 16, src=0, dst=1).beats()[0]]
     + [b for b in HtaxPacket(HtaxCmd.RESPONSE, src=0, dst=1, length=2, data=[1, 2]).beats()[1:]],
     "the VC changed inside a packet"),
])
def test_htax_sink_catches_framing_errors(beats, message):
    """Beats that break the framing (sent raw) fail the sink."""
    dut = Wire()
    src, snk = HtaxSource(dut.i), HtaxSink(dut.o)

    async def bench(ctx):
        clock = Clock(src, snk)
        src.send(beats())
        await clock.repeat(ctx, 10)

    with pytest.raises(AssertionError, match=message):
        run_sim(dut, bench)


def test_htax_source_refuses_an_empty_packet():
    dut = Wire()
    src = HtaxSource(dut.i)

    async def bench(ctx):
        src.send([])
        await Clock(src).tick(ctx)

    with pytest.raises(ValueError, match=r"^a packet has at least one beat, not \[\]$"):
        run_sim(dut, bench)


class _WithdrawHtax(HtaxSource):
    """Broken on purpose: drops ``valid`` every other cycle, moved or not."""

    def drive(self, ctx, now):
        super().drive(ctx, now)
        if now % 2:
            ctx.set(self.link.valid, 0)


class _ChangeHtax(HtaxSource):
    """Broken on purpose: changes the tag of an offered header that has not moved."""

    def drive(self, ctx, now):
        super().drive(ctx, now)
        ctx.set(self.link.payload.word.header.tag, now & 0x1F)


@pytest.mark.parametrize("broken, message", [(_WithdrawHtax, "valid dropped before the beat moved"),
                                             (_ChangeHtax, "payload changed from")])
def test_htax_sink_catches_broken_source(broken, message):
    """A source that withdraws or changes an offered beat fails the sink."""
    dut = Wire()
    src = broken(dut.i)
    snk = HtaxSink(dut.o, ready=lambda: 0)      # nothing moves: the offered beat must stay

    async def bench(ctx):
        clock = Clock(src, snk)
        src.send(line_write_packet(0, b"x" * 8, src=0, dst=1))
        await clock.repeat(ctx, 4)

    with pytest.raises(AssertionError, match=message):
        run_sim(dut, bench)


def test_beat_fields_through_the_view():
    """``beat_view`` and ``lane`` read what :func:`sim.htax_packet.beat_field` reads."""
    rng = random.Random(1)
    for _ in range(50):
        for b in random_packet(rng, 1, 2).beats():
            v = beat_view(b)
            assert (int(v.vc.value), v.first, v.last) == tuple(beat_field(b, f) for f in ("vc", "first", "last"))
    assert [lane(0b0101, vc) for vc in HtaxVC] == [1, 0, 1, 0]


class Port(wiring.Component):
    """Two wires: a unit's HTAX port, its two directions driven by the test and the host."""

    unit_tx: In(HtaxLinkSignature())            # the "unit" sends here ...
    host_tx: Out(HtaxLinkSignature())           # ... and the host takes it here
    host_rx: In(HtaxLinkSignature())            # the host sends here ...
    unit_rx: Out(HtaxLinkSignature())           # ... and the "unit" takes it here

    def elaborate(self, platform):
        m = Module()
        for a, b in ((self.unit_tx, self.host_tx), (self.host_rx, self.unit_rx)):
            m.d.comb += [b.valid.eq(a.valid), b.payload.eq(a.payload), a.ready.eq(b.ready), a.ready2.eq(b.ready2)]
        m.d.sync += Signal().eq(1)              # a sync domain for the clock
        return m


class _Poisoned(HostMemory):
    """A host memory whose page at 0x20_0000 fails every read."""

    def read(self, addr, size):
        return None if 0x20_0000 <= addr < 0x20_1000 else super().read(addr, size)


@pytest.mark.parametrize("reorder", [False, True])
def test_host_answers_reads_and_applies_writes(reorder):
    """Random writes (byte enables) and reads from a "unit": the host's memory ends as a Python copy
    of it, each read is answered with the memory's bytes at the time (the error status on the poisoned
    page), in request order unless ``reorder``; the host's posted packets arrive too; an ATS packet
    goes to ``on_packet``."""
    seed, rng = _seeded()
    dut = Port()
    mem = _Poisoned()
    base = mem.alloc(0x2000)
    ref = bytearray(mem.read(base, 0x2000))
    ats = []
    host = HtaxHost(dut.host_tx, dut.host_rx, mem, port=0, rng=rng, latency=(2, 20), reorder=reorder,
                    stall=0.3, post=0.5, on_packet=lambda h, p: ats.append(p))
    unit = HtaxSource(dut.unit_tx, rng=rng, idle=0.2)
    got = HtaxSink(dut.unit_rx, rng=rng, stall=0.2, per_vc=True)
    expect = {}                             # tag -> expected response data (None: error)
    for tag in range(24):
        off = 8 * rng.randrange(0x2000 // 8 - 8)
        if rng.random() < 0.5:
            n = rng.randint(1, 64 - off % 64)
            data = rng.randbytes(n)
            unit.send(line_write_packet(base + off, data, src=3, dst=0, tag=tag))
            ref[off:off + n] = data
        else:
            words = rng.randint(1, 8 - (off % 64) // 8)
            poisoned = rng.random() < 0.2
            addr = 0x20_0000 + off % 0x1000 if poisoned else base + off
            unit.send(HtaxPacket(HtaxCmd.READ, src=3, dst=0, tag=tag, addr=addr, length=words))
            expect[tag] = None if poisoned else [int.from_bytes(ref[off + 8 * i:off + 8 * i + 8], "little")
                                                 for i in range(words)]
    unit.send(HtaxPacket(HtaxCmd.ATS, src=3, dst=0, ats=0x1234))
    notes = [line_write_packet(0x40 * k, bytes([k]) * 8, src=0, dst=3) for k in range(5)]
    for p in notes:
        host.post(p)

    async def bench(ctx):
        clock = Clock(unit, host, got, limit=20_000)
        while unit.busy or host.busy or got.busy or len(got.packets) < len(expect) + len(notes):
            await clock.tick(ctx)

    run_sim(dut, bench)
    assert bytes(mem.read(base, 0x2000)) == bytes(ref), f"seed {seed}"
    rsps = [r.packet for r in got.packets if r.packet.cmd == HtaxCmd.RESPONSE]
    assert sorted(p.tag for p in rsps) == sorted(expect), f"seed {seed}"
    for p in rsps:
        assert (p.src, p.dst) == (0, 3)
        if expect[p.tag] is None:
            assert (p.status, p.length, p.data) == (HtaxStatus.TARGET_ERROR, 0, []), p
        else:
            assert (p.status, p.data) == (HtaxStatus.OK, expect[p.tag]), f"seed {seed}: {p}"
    if not reorder:
        assert [p.tag for p in rsps] == sorted(expect), f"seed {seed}: responses out of order"
    assert [r.packet for r in got.packets if r.packet.cmd == HtaxCmd.WRITE] == notes
    assert [p.ats for p in ats] == [0x1234]
    assert [a[1] for a in host.accesses].count(HtaxCmd.READ) == len(expect)


def _queue():
    return Queue(stream.Signature(8), depth=2)


@pytest.mark.parametrize("dut, make, message", [
    (_queue, lambda d: StreamSource(d.i, idle=1.0), "idle must be in [0, 1), not 1.0"),
    (_queue, lambda d: StreamSink(d.o, stall=-0.1), "stall must be in [0, 1), not -0.1"),
    (Wire, lambda d: HtaxSink(d.o, stall=1), "stall must be in [0, 1), not 1"),
    (Wire, lambda d: HtaxHost(d.o, d.i, None, port=0, latency=(5, 2)),
     "latency must be a range (low, high) with 0 <= low <= high, not (5, 2)"),
    (Wire, lambda d: HtaxHost(d.o, d.i, None, port=0, post=0), "post must be in (0, 1], not 0"),
])
def test_model_parameter_errors(dut, make, message):
    with pytest.raises(ValueError) as e:
        make(dut())
    assert str(e.value) == message
