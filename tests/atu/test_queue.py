# amaranth: UnusedElaboratable=no
"""AtuRequestQueue: order, no loss, the bypass and the registered ready flags (Amaranth simulator)."""

import random

import pytest
from amaranth.lib import data

from rtl.atu import AtuRequestQueue
from sim.amsim import run_sim, stream_get, stream_put

ITEM = data.StructLayout({"value": 12, "flag": 1})


@pytest.mark.parametrize("depth, msg", [(6, "depth must be a power of two, not 6"),
                                        (2, "depth must be between 4 and 4096, not 2")])
def test_depth_message(depth, msg):
    with pytest.raises(ValueError, match=f"^{msg}$"):
        AtuRequestQueue(shape=ITEM, depth=depth)


@pytest.mark.parametrize("seed, idle_in, idle_out", [(1, 0.0, 0.0), (2, 0.5, 0.0), (3, 0.0, 0.6), (4, 0.3, 0.3)])
def test_order_kept_under_stalls(seed, idle_in, idle_out):
    """Random producer and consumer stalls: every item arrives once, in order; the ready flags are the
    occupancy's (ready2 only with room for two)."""
    print(f"seed {seed}")
    rng_in, rng_out = random.Random(seed), random.Random(seed + 100)
    dut = AtuRequestQueue(shape=ITEM, depth=4)
    items = [{"value": i, "flag": i & 1} for i in range(200)]
    got = []
    level = {"n": 0}

    async def producer(ctx):
        for it in items:
            await stream_put(ctx, dut.i, it, rng=rng_in, idle=idle_in)

    async def consumer(ctx):
        for _ in items:
            got.append(await stream_get(ctx, dut.o, rng=rng_out, idle=idle_out))

    async def flags(ctx):
        # the queue's occupancy, counted from the handshakes, against i.ready and i_ready2
        async for _clk, _rst, iv, ir, ov, orr in ctx.tick().sample(
                dut.i.valid, dut.i.ready, dut.o.valid, dut.o.ready):
            bypass = level["n"] == 0 and iv and ir and orr
            if iv and ir and not bypass:
                level["n"] += 1
            if ov and orr and not bypass:
                level["n"] -= 1
            assert 0 <= level["n"] <= 4
            assert ctx.get(dut.i.ready) == (level["n"] < 4)
            assert ctx.get(dut.i_ready2) == (level["n"] <= 2)

    run_sim(dut, producer, consumer, monitors=[flags])
    assert [(g.value, g.flag) for g in got] == [(i["value"], i["flag"]) for i in items]


def test_bypass_latency():
    """Empty queue, consumer ready: an item is taken in the cycle it arrives (0 cycles); a consumer that
    is not ready sees it again two cycles later, from the FIFO."""
    dut = AtuRequestQueue(shape=ITEM, depth=8)
    seen = []

    async def tb(ctx):
        ctx.set(dut.o.ready, 1)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.i.payload, {"value": 7, "flag": 1})
        assert ctx.get(dut.o.valid) and ctx.get(dut.o.payload.value) == 7      # offered at once
        await ctx.tick()
        ctx.set(dut.i.payload, {"value": 8, "flag": 0})
        ctx.set(dut.o.ready, 0)                                                  # not taken: into the FIFO
        assert ctx.get(dut.o.valid)
        await ctx.tick()
        ctx.set(dut.i.valid, 0)
        for _ in range(4):
            seen.append(ctx.get(dut.o.valid))
            await ctx.tick()
        ctx.set(dut.o.ready, 1)
        assert ctx.get(dut.o.valid) and ctx.get(dut.o.payload.value) == 8
        await ctx.tick()
        assert not ctx.get(dut.o.valid)

    run_sim(dut, tb)
    assert seen == [0, 1, 1, 1]     # withdrawn for one cycle, then held until taken
