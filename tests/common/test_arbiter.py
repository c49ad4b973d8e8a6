"""The packet arbiter (rtl/common/arbiter.py) against a model of its contract: every packet out
whole and in its stream's order, the stream rules at the output, the round-robin wait bound, and no
gap between back-to-back packets of different streams."""

import os
import random

import pytest

from rtl.common.arbiter import PacketArbiter
from rtl.common.net import NetBeat
from sim.amsim import run_sim
from sim.amsim.clock import Clock
from sim.amsim.stream import StreamSink, StreamSource


def _packets(rng, stream, count):
    """``count`` packets of 1..4 beats; each beat's data names its stream, packet and beat."""
    out = []
    for p in range(count):
        n = rng.randrange(1, 5)
        out.append([{"data": (stream << 32) | (p << 8) | b, "kind": 0, "first": b == 0, "last": b == n - 1}
                    for b in range(n)])
    return out


def _split(items):
    """The output's beats as packets: (stream, packet, beats), checking no interleaving."""
    packets, cur = [], None
    for _, beat in items:
        beat = NetBeat.const(beat) if not isinstance(beat, NetBeat.const(0).__class__) else beat
        s, p, b = beat.data >> 32, (beat.data >> 8) & 0xFFFFFF, beat.data & 0xFF
        if cur is None:
            assert beat.first and b == 0, f"packet starts with beat {b} of stream {s}"
            cur = [s, p, 0]
        assert (s, p, b) == (cur[0], cur[1], cur[2]), f"beat {s}/{p}/{b} inside packet {cur[0]}/{cur[1]}"
        cur[2] += 1
        if beat.last:
            packets.append(tuple(cur))
            cur = None
    assert cur is None
    return packets


def _run(dut, sources, sink, want, *, limit):
    """Queue ``want`` (per stream, its packets) on ``sources`` and run until ``sink`` took every beat
    and ten cycles more (no beat may come out of nothing)."""
    total = sum(len(p) for v in want.values() for p in v)

    async def bench(ctx):
        clock = Clock(*sources, sink, limit=limit)
        for k, src in enumerate(sources):
            for pkt in want[k]:
                for beat in pkt:
                    src.put(beat)
        while len(sink.items) < total:
            await clock.tick(ctx)
        for _ in range(10):
            await clock.tick(ctx)
        assert len(sink.items) == total, "beats out of nothing"

    run_sim(dut, bench)
    return _split(sink.items)


@pytest.mark.parametrize("fallback", [True, False])
@pytest.mark.parametrize("count", [2, 3, 5])
def test_arbiter_whole_packets_in_order(count, fallback):
    seed = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = PacketArbiter(count=count, fallback=fallback)
    idle = [rng.choice([0.0, 0.3, 0.8]) for _ in range(count)]
    sources = [StreamSource(dut.i[k], rng=rng, idle=idle[k]) for k in range(count)]
    sink = StreamSink(dut.o, rng=rng, stall=rng.choice([0.0, 0.3]))
    want = {k: _packets(rng, k, 60) for k in range(count)}
    got = _run(dut, sources, sink, want, limit=20_000)
    for k in range(count):
        mine = [(p, n) for s, p, n in got if s == k]
        assert mine == [(p, len(pkt)) for p, pkt in enumerate(want[k])], f"stream {k} out of order"


@pytest.mark.parametrize("fallback", [True, False])
def test_arbiter_round_robin_bound_and_no_gap(fallback):
    """Every stream always offering, output always ready: the streams take turns packet by packet
    (each waits for exactly count - 1 others) and the packets leave back to back."""
    count = 3
    rng = random.Random(1)
    dut = PacketArbiter(count=count, fallback=fallback)
    sources = [StreamSource(dut.i[k]) for k in range(count)]
    sink = StreamSink(dut.o)
    want = {k: _packets(rng, k, 20) for k in range(count)}
    got = _run(dut, sources, sink, want, limit=5_000)
    order = [s for s, _, _ in got]
    assert order[:3 * 20] == [order[0], (order[0] + 1) % 3, (order[0] + 2) % 3] * 20
    cycles = [t for t, _ in sink.items]
    assert cycles[-1] - cycles[0] == len(cycles) - 1, "a gap between packets"


def test_arbiter_idle_start_takes_no_cycle():
    """A packet offered to an idle arbiter leaves in the cycle it is offered, on any stream (the
    registered choice falls back to the lowest offering stream)."""
    dut = PacketArbiter(count=3)
    seen = []

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for k in (2, 0, 1, 1, 2):
            for _ in range(3):
                await ctx.tick()
            ctx.set(dut.i[k].valid, 1)
            ctx.set(dut.i[k].payload, {"data": k, "first": 1, "last": 1})
            assert ctx.get(dut.o.valid) and ctx.get(dut.i[k].ready), f"stream {k} waits"
            seen.append(ctx.get(dut.o.payload.data))
            await ctx.tick()
            ctx.set(dut.i[k].valid, 0)

    run_sim(dut, bench)
    assert seen == [2, 0, 1, 1, 2]


def test_arbiter_without_fallback_ready_from_registers():
    """Without the fallback, an idle arbiter whose choice offers nothing takes the offering stream a
    cycle later, and no input's ready follows any input's valid in the same cycle."""
    dut = PacketArbiter(count=3, fallback=False)
    waits = []

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for k in (2, 0, 0, 1):
            for _ in range(3):
                await ctx.tick()
            readies = [ctx.get(dut.i[j].ready) for j in range(3)]
            ctx.set(dut.i[k].valid, 1)
            ctx.set(dut.i[k].payload, {"data": k, "first": 1, "last": 1})
            assert [ctx.get(dut.i[j].ready) for j in range(3)] == readies, "ready follows valid"
            t = 0
            while not ctx.get(dut.i[k].ready):
                await ctx.tick()
                t += 1
            assert ctx.get(dut.o.valid) and ctx.get(dut.o.payload.data) == k
            waits.append(t)
            await ctx.tick()
            ctx.set(dut.i[k].valid, 0)

    run_sim(dut, bench)
    # the choice parks on the stream served last: a new stream waits a cycle, the same one none
    assert waits == [1, 1, 0, 1]
