"""``make bench``: HTAX latency, saturated throughput, fairness and latency versus offered load.

Runs ``tests/htax/tb_htax_bench.py`` (cocotb on Verilator) on 8 ports (issue 3's scale, the switch's
largest use; the NIC's configuration uses 5) and on 4 ports, with the configuration's slot counts, for
both switches: ``Htax`` into
``build/bench/htax.json`` and ``docs/htax_latency_vs_load.png``, ``HtaxPipelined`` into
``build/bench/htax_pipelined.json`` and ``docs/htax_pipelined_latency_vs_load.png``.  The traffic is
random from fixed seeds (1 for 8 ports, 2 for 4 ports), so a figure of record is
reproducible; ``SEED=<n>`` measures with seed ``n`` instead (both runs).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import DOCS_DIR, write_bench  # noqa: E402

from rtl.config import load  # noqa: E402
from rtl.htax import from_config  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402

#: the port counts measured: the figures of record and a small switch
PORTS, SMALL_PORTS = 8, 4
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0]


def measure(cfg, ports, slots, shared, pipelined, seed=None, loads=LOADS):
    switch = from_config(cfg, ports=ports, slots_per_vc=slots, shared_slots=shared,
                         variant="pipelined" if pipelined else "direct")
    name = f"htax_p{ports}_s{slots}_sh{shared}"
    if pipelined:
        name = f"htaxp_p{ports}_s{slots}_sh{shared}_d{cfg['htax']['out_depth']}"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "res.json"
        _, seed = run_cocotb(switch, name=name,
                             test_module="tests.htax.tb_htax_bench", seed=seed,
                             params={"ports": ports, "out": str(out), "loads": loads,
                                     "warmup": 1000, "window": 20000,
                                     "sweep_warmup": 400, "sweep_window": 3000})
        return json.loads(out.read_text())


def plot(curves, path, design):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for ports, curve in curves.items():
        x = [p["offered"] for p in curve]
        ax.plot(x, [p["mean_latency"] for p in curve], marker="o", label=f"{ports} ports, mean")
        ax.plot(x, [p["p99_latency"] for p in curve], linestyle="--", label=f"{ports} ports, p99")
    ax.set_xlabel("offered load (beats per cycle per input, uniform destinations, 9-beat writes)")
    ax.set_ylabel("latency (cycles, generation to header out)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"{'HtaxPipelined' if design == 'htax_pipelined' else 'Htax'}: latency versus offered load")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--try-slots", type=int, nargs=2, metavar=("S", "SHARED"),
                    help="only print latency/throughput/fairness at 8 ports with "
                         "slots_per_vc=S and shared_slots=SHARED (no load sweep; build/bench/htax.json "
                         "is not written)")
    ap.add_argument("--design", choices=["htax", "htax_pipelined"],
                    help="measure only this switch (default: both, Htax into build/bench/htax.json, "
                         "HtaxPipelined into build/bench/htax_pipelined.json)")
    args = ap.parse_args()
    cfg = load()
    designs = [args.design] if args.design else ["htax", "htax_pipelined"]
    if args.try_slots:
        for design in designs:
            res = measure(cfg, PORTS, *args.try_slots, design == "htax_pipelined", loads=[])
            print(design, {k: v for k, v in res.items() if not isinstance(v, list)})
        return
    for design in designs:
        run(cfg, design)


def _seed(default):
    return int(os.environ.get("SEED", default))


def run(cfg, design):
    pipelined = design == "htax_pipelined"
    ports, slots, shared = PORTS, cfg["htax"]["slots_per_vc"], cfg["htax"]["shared_slots"]
    main_res = measure(cfg, ports, slots, shared, pipelined, seed=_seed(1))
    small = measure(cfg, SMALL_PORTS, slots, shared, pipelined, seed=_seed(2))
    metrics = {
        "zero_load_latency_cycles": main_res["zero_load_latency_cycles"],
        "throughput_per_port_saturated": round(main_res["throughput_per_port_saturated"], 4),
        "throughput_per_port_saturated_no_ready2": round(main_res["throughput_per_port_saturated_no_ready2"], 4),
        "fairness_min_share": round(main_res["fairness_min_share"], 4),
        "fairness_min_share_times_ports": round(main_res["fairness_min_share"] * ports, 4),
        "contended_output_beats_per_cycle": round(main_res["contended_output_beats_per_cycle"], 4),
        "single_beat_one_input_per_cycle": round(main_res["single_beat_one_input_per_cycle"], 4),
        "single_beat_one_input_all_outputs_per_cycle":
            round(main_res["single_beat_one_input_all_outputs_per_cycle"], 4),
        "throughput_per_port_saturated_4ports": round(small["throughput_per_port_saturated"], 4),
        "zero_load_latency_cycles_4ports": small["zero_load_latency_cycles"],
    }
    for res, tag in ((main_res, f"{ports}ports"), (small, "4ports")):
        for point in res["latency_vs_load"]:
            load_pct = int(round(point["offered"] * 100))
            metrics[f"mean_latency_{tag}_load{load_pct}"] = round(point["mean_latency"], 2)
    params = {"ports": ports, "slots_per_vc": slots, "shared_slots": shared}
    if pipelined:
        params["out_depth"] = cfg["htax"]["out_depth"]
    write_bench(design, metrics, {**params, "seed": main_res["seed"],
                                  "seed_4ports": small["seed"], "packet_beats": 9,
                                  "traffic": "uniform random destinations incl. own port, 8-word writes"})
    plot({ports: main_res["latency_vs_load"], SMALL_PORTS: small["latency_vs_load"]},
         DOCS_DIR / f"{design}_latency_vs_load.png", design)


if __name__ == "__main__":
    main()
