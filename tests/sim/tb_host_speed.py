"""cocotb benchmark testbench (run by bench/host.py): simulation speed of the host model.

A DMA-heavy workload on the scratch target (host -> scratch and scratch -> host jobs of the whole RAM,
line-sized packets, 16 reads in flight, t_dm latency), then an idle stretch.  Writes the simulated
cycles and the wall-clock seconds of each phase to the JSON file named in the parameters.
"""

import json
import time

import cocotb

from sim.runner import tb_params
from tests.sim.tb_host_selftest import WORDS, run_dma, setup


@cocotb.test()
async def speed(dut):
    p = tb_params()
    host, rng = await setup(dut)
    mem = host.memory
    src = mem.alloc(8 * WORDS, owner=1)
    dst = mem.alloc(8 * WORDS, owner=1)
    mem.write(src, bytes(rng.randrange(256) for _ in range(8 * WORDS)))

    c0, t0 = host.now(), time.perf_counter()
    for _ in range(p.get("jobs", 10)):
        assert await run_dma(host, to_host=False, host_addr=src, local=0, length=WORDS) >> 32 == 0
        assert await run_dma(host, to_host=True, host_addr=dst, local=0, length=WORDS) >> 32 == 0
    c1, t1 = host.now(), time.perf_counter()
    assert mem.read(dst, 8 * WORDS) == mem.read(src, 8 * WORDS)
    beats = host.stats["beats_in"] + host.stats["beats_out"]

    idle = p.get("idle_cycles", 200000)
    await host.cycles(idle)
    c2, t2 = host.now(), time.perf_counter()
    assert host.errors == []
    with open(p["out"], "w") as f:
        json.dump({"dma_cycles": c1 - c0, "dma_seconds": t1 - t0, "dma_beats": beats,
                   "idle_cycles": c2 - c1, "idle_seconds": t2 - t1}, f)
