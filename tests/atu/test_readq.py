# amaranth: UnusedElaboratable=no
"""AtuReadQueue: entries written without ``push`` never leave; pushed entries leave once, in order."""

import random

import pytest
from amaranth.lib import data

from rtl.atu import AtuReadQueue
from sim.amsim import run_sim, stream_get

ITEM = data.StructLayout({"slot": 5, "word": 11})


def test_depth_message():
    with pytest.raises(ValueError, match=r"^depth must be a power of two, not 12$"):
        AtuReadQueue(shape=ITEM, depth=12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_only_pushed_entries_leave_in_order(seed):
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = AtuReadQueue(shape=ITEM, depth=4)
    pushed = []
    got = []
    n = 120

    async def writer(ctx):
        # the caller's rule: write only while an entry is free (fewer than depth queued)
        i = 0
        while len(pushed) < n:
            queued = len(pushed) - len(got)
            w_en = queued < 4 and rng.random() < 0.8
            push = w_en and rng.random() < 0.5
            ctx.set(dut.w_en, w_en)
            ctx.set(dut.push, push)
            ctx.set(dut.w_data, {"slot": i % 32, "word": rng.getrandbits(11)})
            if push:
                pushed.append((i % 32, ctx.get(dut.w_data.word)))
            i += 1
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        ctx.set(dut.push, 0)

    async def reader(ctx):
        while len(got) < n:
            p = await stream_get(ctx, dut.o, rng=rng, idle=0.4)
            got.append((p.slot, p.word))

    run_sim(dut, writer, reader)
    assert got == pushed
