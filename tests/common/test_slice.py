"""The register slice (rtl/common/slice.py): order under stalls, stream rules, full throughput."""

import os
import random

from amaranth.lib import data

from rtl.common.slice import RegisterSlice
from sim.amsim import run_sim, stream_get, stream_put

Item = data.StructLayout({"a": 16, "b": 3})


def test_slice_keeps_order_under_stalls():
    seed = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = RegisterSlice(shape=Item)
    items = [{"a": rng.randrange(1 << 16), "b": rng.randrange(8)} for _ in range(200)]

    async def producer(ctx):
        for it in items:
            await stream_put(ctx, dut.i, it, rng=rng, idle=0.3)

    async def consumer(ctx):
        for it in items:
            assert await stream_get(ctx, dut.o, rng=rng, idle=0.3) == Item.const(it)

    async def rules(ctx):
        # stream rules at the output, and i.ready a function of registered state only
        prev = None
        async for _, _, o_valid, o_ready, o_payload in ctx.tick().sample(dut.o.valid, dut.o.ready, dut.o.payload):
            if prev is not None and prev[0] and not prev[1]:
                assert o_valid and o_payload == prev[2]
            prev = (o_valid, o_ready, o_payload)

    run_sim(dut, producer, consumer, monitors=[rules])


def test_slice_full_throughput():
    dut = RegisterSlice(shape=Item)
    items = [{"a": k, "b": k % 8} for k in range(32)]
    cycles = []

    async def producer(ctx):
        for it in items:
            await stream_put(ctx, dut.i, it)

    async def consumer(ctx):
        ctx.set(dut.o.ready, 1)
        got, t = [], 0
        while len(got) < len(items):
            if ctx.get(dut.o.valid):
                got.append((t, ctx.get(dut.o.payload)))
            await ctx.tick()
            t += 1
        assert [p for _, p in got] == [Item.const(it) for it in items]
        # one beat a cycle after the first: the slice never throttles a stream
        assert got[-1][0] - got[0][0] == len(items) - 1
        cycles.append(got[0][0])

    run_sim(dut, producer, consumer)
    assert cycles == [1]        # one cycle of latency
