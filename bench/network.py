"""``make bench`` for the network layer (issue 34): crossbar and fabric figures -> build/bench/network.json.

Crossbar (tests/xbar/tb_xbar_bench.py on the 8-port crossbar of the 3-D torus node: 6 link ports and 2
network ports): ``hop_latency_cycles``, ``crossbar_saturation_uniform`` (packets on all VCs) and
``crossbar_saturation_uniform_one_vc``.  Definitions are in that testbench's docstring and in
docs/network.md.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_bench  # noqa: E402

from sim.runner import run_cocotb  # noqa: E402
from tests.xbar.tops import CountingCrossbar  # noqa: E402

LINKS, NETS = 6, 2


def crossbar(seed=1, **params):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run_cocotb(CountingCrossbar(link_ports=LINKS, net_ports=NETS, **params), name="xbar_6_2",
                   test_module="tests.xbar.tb_xbar_bench", testcase="measure",
                   params={"links": LINKS, "nets": NETS, "out": f.name}, seed=seed)
        with open(f.name) as g:
            return json.load(g)


def main():
    r = crossbar(**{k: int(v) for k, v in (a.split("=") for a in sys.argv[1:])})
    metrics = {k: r[k] for k in ("hop_latency_cycles", "crossbar_saturation_uniform",
                                 "crossbar_saturation_uniform_one_vc")}
    write_bench("network", metrics, {"crossbar_link_ports": LINKS, "crossbar_net_ports": NETS,
                                     "packet_beats": 8, "seed": r["seed"]})


if __name__ == "__main__":
    main()
