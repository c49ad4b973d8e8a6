"""``make bench``: simulation speed of the host bus functional model -> build/bench/host.json.

Runs tests/sim/tb_host_speed.py (DMA-heavy: whole-RAM DMA jobs both ways at t_dm latency, then an
idle stretch) on Verilator and, if installed, Icarus, and records simulated cycles per wall-clock
second for each phase.
"""

import json
import tempfile

from _common import write_bench

from rtl.config import load
from sim.runner import run_cocotb
from sim.toolchain import have_icarus
from sim.tops.scratch import UNITS


def measure(sim, jobs, idle):
    cfg = load()
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run_cocotb(UNITS["scratch"](cfg), name="scratch", test_module="tests.sim.tb_host_speed", sim=sim,
                   params={"out": out.name, "jobs": jobs, "idle_cycles": idle}, seed=1)
        r = json.load(open(out.name))
    return {
        f"{sim}_dma_cycles_per_s": round(r["dma_cycles"] / r["dma_seconds"]),
        f"{sim}_dma_beats_per_s": round(r["dma_beats"] / r["dma_seconds"]),
        f"{sim}_idle_cycles_per_s": round(r["idle_cycles"] / r["idle_seconds"]),
        f"{sim}_dma_cycles": r["dma_cycles"],
    }


def main():
    cfg = load()
    metrics = measure("verilator", jobs=10, idle=2_000_000)
    sims = ["verilator"]
    if have_icarus():
        metrics.update(measure("icarus", jobs=4, idle=200_000))
        sims.append("icarus")
    metrics["dma_read_latency_cycles"] = cfg.ns_to_cycles(cfg.host.dma_read_latency_ns)
    write_bench("host", metrics, {"simulators": sims, "scratch_words": cfg.scratch.words,
                                  "max_outstanding": cfg.scratch.max_outstanding,
                                  "clock_mhz": cfg.system.clock_mhz})


if __name__ == "__main__":
    main()
