# amaranth: UnusedElaboratable=no
"""The crossbar output's VC queues in one memory (Amaranth simulator): order per VC against a deque
per VC under random writes and random backpressure, latency of an empty queue, rate from memory, and
independence of the VCs."""

import os
import random
from collections import deque
from itertools import pairwise

import pytest
from amaranth.sim import Simulator

from rtl.common.net import NetBeat
from rtl.xbar.queues import VcQueues


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(vcs=5, depth=16), ValueError, "vcs must be between 1 and 4, not 5"),
    (dict(vcs=4, depth=65), ValueError, "depth must be between 2 and 64, not 65"),
    (dict(vcs=4, depth=16, prefetch=3), ValueError, "prefetch must be 1 or 2, not 3"),
    (dict(vcs=4, depth=16.0), TypeError, "depth must be an integer, not 16.0"),
])
def test_parameter_errors(kwargs, exc, msg):
    with pytest.raises(exc) as e:
        VcQueues(**kwargs)
    assert str(e.value) == msg


def _beat(n):
    return {"data": n, "kind": n % 3, "first": n & 1, "last": (n >> 1) & 1}


def _run(dut, bench, cycles=4000):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run_until(cycles * 1e-8)


@pytest.mark.parametrize("vcs, depth, prefetch", [(4, 16, 2), (4, 16, 1), (2, 12, 2), (3, 5, 1)])
def test_random_order_per_vc(vcs, depth, prefetch):
    """Every beat leaves its VC's stream once, in order, whatever the writes and the backpressure;
    ``level`` counts the beats held; a writer that respects ``level`` never finds a queue full."""
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = VcQueues(vcs=vcs, depth=depth, prefetch=prefetch)
    ready_p = [rng.choice((0.1, 0.5, 0.9, 1.0)) for _ in range(vcs)]
    model = [deque() for _ in range(vcs)]
    counts = {"out": 0}

    async def bench(ctx):
        n = 0
        for cycle in range(3000):
            # a writer that keeps each queue's level below depth, as the crossbar output's reservation does
            u = rng.randrange(vcs)
            write = (cycle < 2500 and rng.random() < 0.7 and ctx.get(dut.level[u]) < depth
                     and len(model[u]) < depth)
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_vc, u)
            ctx.set(dut.w_data, _beat(n))
            for v in range(vcs):
                ctx.set(dut.o[v].ready, rng.random() < ready_p[v] if cycle < 2500 else 1)
                assert ctx.get(dut.level[v]) == len(model[v]), (cycle, v)
            popped = [ctx.get(dut.o[v].valid) and ctx.get(dut.o[v].ready) for v in range(vcs)]
            got = [ctx.get(dut.o[v].payload) for v in range(vcs)]
            for v in range(vcs):
                if popped[v]:
                    want = model[v].popleft()
                    assert got[v] == NetBeat.const(_beat(want)), (cycle, v, want)
                    counts["out"] += 1
            if write:
                model[u].append(n)
                n += 1
            await ctx.tick()
        assert all(not q for q in model), "beats left in the queues"
        # traffic flowed: at least 80 % of the expected count.  The writer offers each queue 0.7 / vcs
        # beats per cycle (a pick of a full queue is lost), so each queue carries what the smaller of
        # that and its sink's ready probability lets through.
        expected = 2500 * sum(min(0.7 / vcs, p) for p in ready_p)
        assert counts["out"] == n and n > 0.8 * expected, (n, expected, ready_p)

    _run(dut, bench)


def _stream(dut, vc, writes, ready=lambda cycle: True, cycles=60):
    """Write ``writes`` beats to ``vc`` (one per cycle from cycle 0, or at the cycles given) and return
    the cycles at which each left."""
    out = []

    async def bench(ctx):
        at = list(writes)
        n = 0
        for cycle in range(cycles):
            write = bool(at) and at[0] <= cycle
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_vc, vc)
            ctx.set(dut.w_data, _beat(n))
            ctx.set(dut.o[vc].ready, ready(cycle))
            if ctx.get(dut.o[vc].valid) and ctx.get(dut.o[vc].ready):
                assert ctx.get(dut.o[vc].payload) == NetBeat.const(_beat(len(out)))
                out.append(cycle)
            if write:
                at.pop(0)
                n += 1
            await ctx.tick()

    _run(dut, bench, cycles + 2)
    return out


@pytest.mark.parametrize("prefetch", [1, 2])
def test_empty_queue_passes_a_beat_in_one_cycle(prefetch):
    dut = VcQueues(vcs=4, depth=16, prefetch=prefetch)
    assert _stream(dut, 2, [5]) == [6]
    # a stream whose sink keeps up stays in the registers: one cycle each
    assert _stream(VcQueues(vcs=4, depth=16, prefetch=prefetch), 1, range(8)) == list(range(1, 9))


@pytest.mark.parametrize("prefetch, gap", [(2, 1), (1, 2)])
def test_rate_from_memory(prefetch, gap):
    """Eight beats written while the sink stops go to the memory; the sink then takes them at one
    beat per cycle with two registers, every second cycle with one."""
    dut = VcQueues(vcs=4, depth=16, prefetch=prefetch)
    out = _stream(dut, 3, range(8), ready=lambda cycle: cycle >= 20)
    assert out[0] == 20
    assert [b - a for a, b in pairwise(out[prefetch:])] == [gap] * (7 - prefetch)


@pytest.mark.parametrize("prefetch", [1, 2])
def test_a_stopped_vc_does_not_delay_another(prefetch):
    """VC 0's sink never takes; VC 0's queue fills; VC 1's beats, written after, still stream out."""
    dut = VcQueues(vcs=2, depth=8, prefetch=prefetch)
    out = []

    async def bench(ctx):
        n = 0
        ctx.set(dut.o[0].ready, 0)
        ctx.set(dut.o[1].ready, 1)
        for cycle in range(80):
            u = 0 if cycle < 8 else 1
            write = cycle < 8 + 12
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_vc, u)
            ctx.set(dut.w_data, _beat(n))
            if ctx.get(dut.o[1].valid):
                out.append(ctx.get(dut.o[1].payload).data)
            n += write
            await ctx.tick()
        assert ctx.get(dut.level[0]) == 8 and ctx.get(dut.o[0].valid)
        assert ctx.get(dut.o[0].payload) == NetBeat.const(_beat(0))

    _run(dut, bench, 82)
    assert out == list(range(8, 20))
