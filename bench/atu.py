"""ATU benchmark: latencies, throughputs, outstanding misses and flush time, measured at the ATU's HTAX
port in the ATU system (HTAX + register file + ATU) on Verilator with the host model (t_dm = 44 cycles),
and the hit and miss latencies as a FU sees them through each switch (``fu_*_latency_cycles_<switch>_htax``:
FU request header into the switch to response header out of it, memory included for a miss).

The ATU-port figures come from the system with HtaxPipelined (the default switch); the one with the
direct switch (Htax) runs only for the two FU latencies.  Writes ``build/bench/atu.json`` and
``docs/atu_throughput_vs_hit_ratio.png``.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import DOCS_DIR, write_bench  # noqa: E402

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
