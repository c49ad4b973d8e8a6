"""RmaMerge (rtl/rma/streams.py): every item once, in its stream's order, the stream rules at the
output under random stalls, and strict turns when every stream offers."""

import os
import random

import pytest
from amaranth.lib import data

from rtl.rma.streams import RmaMerge
from sim.amsim import run_sim
from sim.amsim.clock import Clock
from sim.amsim.stream import StreamSink, StreamSource

Item = data.StructLayout({"stream": 3, "n": 10})


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_merge_order_under_stalls(count):
    seed = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = RmaMerge(shape=Item, count=count)
    sources = [StreamSource(dut.i[k], rng=rng, idle=rng.choice([0.0, 0.4, 0.8])) for k in range(count)]
    sink = StreamSink(dut.o, rng=rng, stall=rng.choice([0.0, 0.3]))
    per = 80

    async def bench(ctx):
        clock = Clock(*sources, sink, limit=20_000)
        for k, src in enumerate(sources):
            for n in range(per):
                src.put({"stream": k, "n": n})
        while len(sink.items) < count * per:
            await clock.tick(ctx)
        for _ in range(10):
            await clock.tick(ctx)

    run_sim(dut, bench)
    got = [(int(p.stream), int(p.n)) for _, p in sink.items]
    assert len(got) == count * per
    for k in range(count):
        assert [n for s, n in got if s == k] == list(range(per)), f"stream {k}"


def test_merge_turns_and_full_rate():
    dut = RmaMerge(shape=Item, count=3)
    sources = [StreamSource(dut.i[k]) for k in range(3)]
    sink = StreamSink(dut.o)

    async def bench(ctx):
        clock = Clock(*sources, sink, limit=2_000)
        for k, src in enumerate(sources):
            for n in range(20):
                src.put({"stream": k, "n": n})
        while len(sink.items) < 60:
            await clock.tick(ctx)

    run_sim(dut, bench)
    order = [int(p.stream) for _, p in sink.items]
    assert order == [order[0], (order[0] + 1) % 3, (order[0] + 2) % 3] * 20
    cycles = [t for t, _ in sink.items]
    assert cycles[-1] - cycles[0] == 59, "a cycle without an item"
