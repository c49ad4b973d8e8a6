"""ATU benchmark: latencies, throughputs, outstanding misses and flush time, measured at the ATU's HTAX
port in the ATU system (HTAX + register file + ATU) on Verilator with the host model (t_dm = 44 cycles),
and the hit and miss latencies as a FU sees them through each switch (``fu_*_latency_cycles_<switch>_htax``:
FU request header into the switch to response header out of it, memory included for a miss).

The ATU-port figures come from the system with HtaxPipelined (the default switch); the one with the
direct switch (Htax) runs only for the two FU latencies.  ``stream_64k_*``: 64 KiB from a cold TLB as
an RMA engine translates it (16 pages, one translation at a time) with 4 KB pages without and with
look-ahead and with one 2 MB page, and warm; ``flush_cycles_range_1g``: a range flush of 1 GiB of 4 KB
pages.  ``register_1g_*``/``deregister_1g_*``: what the driver's registration and deregistration of
1 GiB cost (table bytes, CPU stores, flushes), counted against the ATU model without a simulator, and
with bulk jobs the CPU's stores and jobs (model) and the cycles of each (``*_job_cycles``, the system).
Writes ``build/bench/atu.json`` and ``docs/atu_throughput_vs_hit_ratio.png``.
"""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import DOCS_DIR, write_bench  # noqa: E402

from rtl.atu.layout import GATE_INDEX_BITS  # noqa: E402
from sim.atu_host import AtuModelHost  # noqa: E402
from sim.driver.atu import TABLES, AtuDriver  # noqa: E402
from sim.memory import HostMemory  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.atu import SWITCHES, AtuSystem, with_switch  # noqa: E402
from sim.tops.configs import atu_config  # noqa: E402

# the system's name per switch, as the tests name it (Verilator builds are cached by name and design)
SYSTEM_NAMES = {"pipelined": "atu_system", "direct": "atu_system_htaxd"}


def _run(cfg, switch, params):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "atu.json"
        run_cocotb(AtuSystem(with_switch(cfg, switch)), name=SYSTEM_NAMES[switch],
                   test_module="tests.atu.tb_atu_bench", params=dict(params, out=str(out)), seed=1)
        return json.loads(out.read_text())


async def _register_1g(cfg, mode, large, out):
    memory = HostMemory()
    host = AtuModelHost(memory, cfg)
    driver = AtuDriver(host, cfg, jobs=False, first_level=False)
    region = await driver.register(1, 1 << 30, large=large)
    out[f"register_1g_{mode}_table_bytes"] = memory.bytes_owned(TABLES)
    out[f"register_1g_{mode}_cpu_stores"] = host.mem_writes + len(host.gat_writes)
    w0, f0 = host.mem_writes, len(host.flushes)
    await driver.deregister(region)
    out[f"deregister_1g_{mode}_gate_stores"] = host.mem_writes - w0
    out[f"deregister_1g_{mode}_flushes"] = len(host.flushes) - f0


async def _register_1g_jobs(cfg, mode, large, out):
    """The same with bulk jobs, the 4 KiB-page region aligned to a GAT (one job each way)."""
    host = AtuModelHost(HostMemory(), cfg)
    driver = AtuDriver(host, cfg, jobs=True, first_level=False, first_page=1 << GATE_INDEX_BITS)
    region = await driver.register(1, 1 << 30, large=large)
    out[f"register_1g_{mode}_job_cpu_stores"] = host.mem_writes + host.reg_writes
    out[f"register_1g_{mode}_jobs"] = len(host.jobs)
    w0, r0, j0, f0 = host.mem_writes, host.reg_writes, len(host.jobs), len(host.flushes)
    await driver.deregister(region)
    out[f"deregister_1g_{mode}_job_cpu_stores"] = host.mem_writes - w0 + host.reg_writes - r0
    out[f"deregister_1g_{mode}_jobs"] = len(host.jobs) - j0
    out[f"deregister_1g_{mode}_job_gate_stores"] = host.job_stores - (1 << 30) // (4096 << (9 * large))
    assert len(host.flushes) - f0 == 1 and all(r.status.name == "OK" for r in host.jobs)


def registration_1g(cfg):
    """Register and deregister 1 GiB with the driver (:mod:`sim.driver.atu`) against the ATU model
    (:class:`sim.atu_host.AtuModelHost`), with 4 KiB and with 2 MiB pages: bytes of GAT tables, CPU
    stores (GATEs and registers) and range flushes; with bulk jobs, the CPU's stores (descriptor words
    and registers) and the jobs."""
    out = {}
    for mode, large in (("4k", False), ("2m", True)):
        asyncio.run(_register_1g(cfg, mode, large, out))
        asyncio.run(_register_1g_jobs(cfg, mode, large, out))
    return out


def main():
    cfg = atu_config()
    latency = cfg.ns_to_cycles(cfg["host"]["dma_read_latency_ns"])
    res = _run(cfg, "pipelined", {"latency": latency})
    for switch in SWITCHES:
        fu = res if switch == "pipelined" else _run(cfg, switch, {"latency": latency, "fu_only": True})
        for k in ("fu_hit_latency_cycles", "fu_miss_latency_cycles"):
            res[f"{k}_{switch}_htax"] = fu[k]
    for k in ("fu_hit_latency_cycles", "fu_miss_latency_cycles"):
        del res[k]
    res.update(registration_1g(cfg))
    curve = res.pop("throughput_vs_hit_ratio")
    for k, v in curve.items():
        res[f"throughput_at_hit_ratio_{float(k):.2f}"] = v
    a = cfg["atu"]
    write_bench("atu", res, dict(a, vpids=cfg["system"]["vpids"], memory_latency_cycles=latency,
                                 measured_at="ATU HTAX port (probe), HTAX + regs + ATU system; fu_*: "
                                             "the first FU's HTAX port, through each switch",
                                 switch="pipelined"))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return 0
    xs = sorted(float(k) for k in curve)
    ys = [curve[k] for k in sorted(curve, key=float)]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(xs, ys, "o-")
    ax.set_xlabel("TLB hit ratio")
    ax.set_ylabel("translations / cycle")
    ax.set_title(f"ATU throughput, 3 FUs, memory latency {latency} cycles")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(DOCS_DIR / "atu_throughput_vs_hit_ratio.png", dpi=100)
    print("wrote docs/atu_throughput_vs_hit_ratio.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
