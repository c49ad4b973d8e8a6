"""``make bench`` for the network layer (issue 34): crossbar and fabric figures -> build/bench/network.json.

Crossbar (tests/xbar/tb_xbar_bench.py on the 8-port crossbar of the 3-D torus node: 6 link ports and 2
network ports): ``hop_latency_cycles``, ``crossbar_saturation_uniform`` (packets on all VCs) and
``crossbar_saturation_uniform_one_vc``.  Definitions are in that testbench's docstring.

Fabric (tests/fabric/tb_fabric.py on sim/tops/fabric.py, default link ports):

* ``node_to_node_latency_cycles``: two nodes back to back, cables wired directly (no channel latency),
  idle: a header alone offered by node 0's unit to node 1's unit taking it, through both network ports,
  both crossbars and both link ports; ``..._56B`` for a packet of 7 payload words.
* ``fabric_saturation_packets_per_node`` / ``..._beats_per_node``: the 2 x 2 x 2 torus, every node
  requesting uniformly random destinations as fast as it can (requests of a header, a time stamp and
  0..7 payload words), requests received per cycle per node and their unit-side beats, after a warm-up.
* ``fabric_latency_vs_load``: mean and maximum latency (header offered at the source unit to header
  taken at the destination unit) at a sweep of offered loads, plotted into
  ``docs/network_latency_vs_load.png``.
* ``sim_cycles_per_s``: simulated cycles per wall-clock second of the saturated 2 x 2 x 2 torus
  (Verilator, models compiled at ``EXTOLL_CXX_OPT``, ``-O2`` unless set; recorded as ``cxx_opt``).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS_DIR, write_bench  # noqa: E402

from sim.routing import back_to_back, torus_3d  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.fabric import Fabric  # noqa: E402
from sim.tops.xbar import CountingCrossbar  # noqa: E402

RATES = (0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 1.0)   # request starts per cycle per node

LINKS, NETS = 6, 2


def cxx_opt():
    return os.environ.get("EXTOLL_CXX_OPT", "-O2")


def crossbar(seed=1, **params):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run_cocotb(CountingCrossbar(link_ports=LINKS, net_ports=NETS, **params), name="xbar_6_2",
                   test_module="tests.xbar.tb_xbar_bench", testcase="measure",
                   params={"links": LINKS, "nets": NETS, "out": f.name}, seed=seed, cxx_opt=cxx_opt())
        with open(f.name) as g:
            return json.load(g)


def fabric(topo, name, testcase, **params):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run_cocotb(Fabric(topo, traffic=testcase == "hdl_traffic", latency=0 if testcase == "latency" else 1),
                   name=name, test_module="tests.fabric.tb_fabric", testcase=testcase,
                   params=dict(params, nodes=topo.nodes, shape=list(topo.shape), wrap=topo.wrap, out=f.name), seed=1,
                   cxx_opt=cxx_opt())
        with open(f.name) as g:
            return json.load(g)


def load_sweep(topo, cycles=20000):
    """The torus at each rate of :data:`RATES`: accepted requests and latency per node."""
    points = []
    for rate in RATES:
        r = fabric(topo, "fabric_torus2x2x2_traffic", "hdl_traffic", rate=rate, phases=1, cycles=cycles,
                   drain=4000)
        f = r["final"]
        received = sum(f["received"])
        points.append({"rate": rate, "offered": round(sum(f["sent"]) / cycles / topo.nodes, 5),
                       "accepted": round(received / cycles / topo.nodes, 5),
                       "beats": round(sum(f["beats"]) / cycles / topo.nodes, 4),
                       "mean_latency": round(sum(f["latency_sum"]) / max(received, 1), 1),
                       "max_latency": max(f["latency_max"]), "cycles_per_s": round(r["cycles"] / r["seconds"])})
    return points


def plot(points, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = [p for p in points if p["rate"] < 1.0]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([p["offered"] for p in pts], [p["mean_latency"] for p in pts], "o-", label="mean")
    ax.plot([p["offered"] for p in pts], [p["max_latency"] for p in pts], "s--", label="maximum")
    ax.set_xlabel("offered load (requests per cycle per node)")
    ax.set_ylabel("latency (cycles, unit to unit)")
    ax.set_title("2 x 2 x 2 torus, uniform random destinations")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    r = crossbar(**{k: int(v) for k, v in (a.split("=") for a in sys.argv[1:])})
    metrics = {k: r[k] for k in ("hop_latency_cycles", "crossbar_saturation_uniform",
                                 "crossbar_saturation_uniform_one_vc")}
    metrics.update(fabric(back_to_back(), "fabric_b2b_direct", "latency"))
    points = load_sweep(torus_3d(kx=2, ky=2, kz=2))
    sat = points[-1]
    metrics["fabric_saturation_packets_per_node"] = sat["accepted"]
    metrics["fabric_saturation_beats_per_node"] = sat["beats"]
    metrics["sim_cycles_per_s"] = sat["cycles_per_s"]
    plot(points, DOCS_DIR / "network_latency_vs_load.png")
    write_bench("network", metrics, {"crossbar_link_ports": LINKS, "crossbar_net_ports": NETS,
                                     "crossbar_packet_beats": 8, "seed": r["seed"], "cxx_opt": cxx_opt(),
                                     "fabric_latency_vs_load": points})


if __name__ == "__main__":
    main()
