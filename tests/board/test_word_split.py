# amaranth: UnusedElaboratable=no
"""The word port split (rtl/board/word_split.py): each request reaches the port its address names,
with the address less the low region's size above it, and the responses come back in order, under
random stalls on every stream."""

import os
import random

import pytest
from amaranth.sim import Simulator

from rtl.board import WordSplit

SEED = int(os.environ.get("SEED", random.randrange(1 << 32)))


@pytest.mark.parametrize("kwargs, message", [
    (dict(word_bits=14, low_bits=14, high_bits=13), "low_bits must be between 1 and 13, not 14"),
    (dict(word_bits=14, low_bits=10, high_bits=11), "high_bits must be between 1 and 10, not 11"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        WordSplit(**kwargs)


def test_requests_reach_their_port_in_order():
    print(f"SEED={SEED}")
    rng = random.Random(SEED)
    dut = WordSplit(word_bits=6, low_bits=5, high_bits=5)
    mems = {"low": [rng.randrange(1 << 64) for _ in range(32)], "high": [rng.randrange(1 << 64) for _ in range(32)]}
    reqs = [(rng.random() < 0.5, rng.randrange(64), rng.randrange(1 << 64), rng.randrange(256))
            for _ in range(300)]
    want, model = [], {k: list(v) for k, v in mems.items()}
    for write, addr, data, strb in reqs:
        side, a = ("high", addr - 32) if addr >= 32 else ("low", addr)
        if write:
            mask = sum(0xff << 8 * b for b in range(8) if strb >> b & 1)
            model[side][a] = model[side][a] & ~mask | data & mask
            want.append(None)
        else:
            want.append(model[side][a])
    got = []

    async def source(ctx):
        for write, addr, data, strb in reqs:
            while rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.i_req.valid, 1)
            ctx.set(dut.i_req.payload, {"write": write, "addr": addr, "data": data, "strb": strb})
            await ctx.tick().until(dut.i_req.ready)
            ctx.set(dut.i_req.valid, 0)

    def target(side):
        req, rsp = getattr(dut, f"{side}_req"), getattr(dut, f"{side}_rsp")

        async def run(ctx):
            while True:
                ctx.set(req.ready, rng.random() < 0.7)
                *_, valid, ready, p = await ctx.tick().sample(req.valid, req.ready, req.payload)
                if not (valid and ready):
                    continue
                ctx.set(req.ready, 0)
                if p.write:
                    mask = sum(0xff << 8 * b for b in range(8) if p.strb >> b & 1)
                    mems[side][p.addr] = mems[side][p.addr] & ~mask | p.data & mask
                value = mems[side][p.addr]
                while rng.random() < 0.3:
                    await ctx.tick()
                ctx.set(rsp.valid, 1)
                ctx.set(rsp.payload, value)
                await ctx.tick().until(rsp.ready)
                ctx.set(rsp.valid, 0)
        return run

    async def sink(ctx):
        while len(got) < len(reqs):
            ctx.set(dut.i_rsp.ready, rng.random() < 0.7)
            *_, valid, ready, p = await ctx.tick().sample(dut.i_rsp.valid, dut.i_rsp.ready, dut.i_rsp.payload)
            if valid and ready:
                got.append(p)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source, background=True)
    sim.add_testbench(target("low"), background=True)
    sim.add_testbench(target("high"), background=True)
    sim.add_testbench(sink)
    sim.run()
    assert [g for g, w in zip(got, want, strict=True) if w is not None] == [w for w in want if w is not None]
    assert mems == model
