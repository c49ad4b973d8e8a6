# amaranth: UnusedElaboratable=no
"""The PHY's clock-domain crossings (rtl/phy/crossing.py) in two clocks of different periods: phits
arrive whole and in order, a flit is held until its prefill is there, gaps and drops are counted."""

import os
import random

import pytest
from amaranth.sim import Simulator

from rtl.common.phit import PhitCtl
from rtl.phy.crossing import PhitCrossing, Snapshot

SEED = int(os.environ.get("PHY_SEED", random.randrange(1 << 32)))


def _flits(rng, count):
    out = []
    for _ in range(count):
        n = rng.randrange(3, 30)
        out.append([(rng.randrange(1 << 16), PhitCtl.SOF.value if i == 0 else PhitCtl.EOF.value
                     if i == n - 1 else PhitCtl.BODY.value) for i in range(n)])
    return out


@pytest.mark.parametrize("kwargs, message", [
    (dict(depth=24), "depth must be a power of two, not 24"),
    (dict(depth=2), "depth must be between 4 and 1024, not 2"),
    (dict(prefill=17), "prefill must be between 0 and 16, not 17"),
    (dict(wait=0), "wait must be between 1 and 255, not 0"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        PhitCrossing(w_domain="w", r_domain="r", **kwargs)


def _run(dut, w_period, r_period, writer, reader, cycles):
    sim = Simulator(dut)
    sim.add_clock(w_period, domain="w")
    sim.add_clock(r_period, domain="r")
    sim.add_testbench(writer, background=True)
    sim.add_testbench(reader)
    sim.run()


@pytest.mark.parametrize("w_period, r_period, prefill, rate", [
    (10e-9, 12.5e-9, 4, 0.8),       # receive side: line words (with SKIPs) into the core clock
    (12.5e-9, 10e-9, 0, 1.0),       # transmit side: core phits into the faster line word clock
])
def test_flits_cross_whole(w_period, r_period, prefill, rate):
    """Flits written at ``rate`` phits per write cycle (gaps inside flits as the far transmitter's
    SKIPs make them) arrive whole, in order; on the receive side (prefill 4) never with a gap."""
    print(f"PHY_SEED={SEED}")
    rng = random.Random(SEED)
    flits = _flits(rng, 120)
    phits = [p for f in flits for p in f]
    dut = PhitCrossing(w_domain="w", r_domain="r", depth=32, prefill=prefill, wait=16)
    got, gaps, underflows = [], [0], [0]

    async def writer(ctx):
        acc = 0.0
        for f in flits:
            for _ in range(rng.randrange(0, 4)):
                await ctx.tick("w")
            for p in f:
                acc += rate
                while acc < 1.0:        # a SKIP's worth of delay inside the flit
                    await ctx.tick("w")
                    acc += rate
                acc -= 1.0
                ctx.set(dut.i.valid, 1)
                ctx.set(dut.i.payload, {"data": p[0], "ctl": p[1]})
                await ctx.tick("w")
                ctx.set(dut.i.valid, 0)
                assert not ctx.get(dut.overflow)

    async def reader(ctx):
        ctx.set(dut.o.ready, 1)
        in_flit = False
        for _ in range(int(len(phits) * 2.5) + 200):
            *_, valid, payload = await ctx.tick("r").sample(dut.o.valid, dut.o.payload)
            if valid:
                got.append((payload.data, payload.ctl.value))
                in_flit = payload.ctl != PhitCtl.EOF
            elif in_flit:
                gaps[0] += 1
            underflows[0] += ctx.get(dut.underflow)

    _run(dut, w_period, r_period, writer, reader, 0)
    assert got == phits
    assert gaps[0] == underflows[0]
    if prefill:
        assert gaps[0] == 0


def test_prefill_hold_and_wait():
    """A flit's SOF waits until ``prefill`` phits are there; a flit shorter than that goes after
    ``wait`` cycles; a gap in a flit whose end never comes is counted once per cycle."""
    dut = PhitCrossing(w_domain="w", r_domain="r", depth=32, prefill=8, wait=20)
    seen = []

    async def writer(ctx):
        for d, c in [(1, PhitCtl.SOF), (2, PhitCtl.BODY), (3, PhitCtl.EOF)]:
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, {"data": d, "ctl": c})
            await ctx.tick("w")
        ctx.set(dut.i.valid, 0)

    async def reader(ctx):
        ctx.set(dut.o.ready, 1)
        for cycle in range(60):
            *_, valid, payload, under = await ctx.tick("r").sample(dut.o.valid, dut.o.payload,
                                                                      dut.underflow)
            if valid:
                seen.append((cycle, payload.data))
            assert not under

    _run(dut, 10e-9, 10e-9, writer, reader, 0)
    assert [d for _, d in seen] == [1, 2, 3]
    first = seen[0][0]
    assert first >= 20 and [c - first for c, _ in seen] == [0, 1, 2]


def test_overflow_counted():
    """Writes into a full FIFO (reader stopped) are dropped and strobe ``overflow`` each."""
    dut = PhitCrossing(w_domain="w", r_domain="r", depth=8)
    drops = [0]

    async def writer(ctx):
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.i.payload, {"data": 5, "ctl": PhitCtl.BODY})
        for _ in range(20):
            await ctx.tick("w")
            drops[0] += ctx.get(dut.overflow)
        ctx.set(dut.i.valid, 0)
        await ctx.tick("w")
        drops[0] += ctx.get(dut.overflow)

    async def reader(ctx):
        await ctx.tick("r").repeat(60)

    _run(dut, 10e-9, 10e-9, writer, reader, 0)
    assert drops[0] == 20 - 8


def test_snapshot_whole_values():
    """A counter of the fast domain seen in the slow one: never a mix of two values, never going
    back, and close to the current value."""
    dut = Snapshot(32, w_domain="w", r_domain="r")
    seen = []

    async def writer(ctx):
        for v in range(1, 1 << 16):
            ctx.set(dut.i, v | v << 16)
            await ctx.tick("w")

    async def reader(ctx):
        for _ in range(300):
            *_, value = await ctx.tick("r").sample(dut.o)
            seen.append(value)

    _run(dut, 7e-9, 11e-9, writer, reader, 0)
    values = [v for v in seen if v]
    assert values and all(v >> 16 == v & 0xffff for v in values)
    steps = [v & 0xffff for v in values]
    assert steps == sorted(steps) and steps[-1] > 400
