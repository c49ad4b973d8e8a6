"""Host bus bridge benchmark (``docs/hostbus.md``): the cycles the AXI4 bridge adds and its DMA read
rate, measured on the bridge alone (:class:`sim.tops.hostbus.HostbusTop`, the default configuration)
with :class:`sim.axi_host.AxiHostModel` as host memory and CPU (t_dm = 44 cycles, no stalls) and
the HTAX bus models as the NIC.  Writes ``build/bench/hostbus.json``.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import write_bench  # noqa: E402

from rtl.config import load  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.hostbus import HostbusTop  # noqa: E402


def measure(reads=512):
    """The bench's figures (``tests.hostbus.tb_bridge.bench``)."""
    cfg = load()
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "hostbus.json"
        run_cocotb(HostbusTop(cfg), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="bench",
                   params={"out": str(out), "reads": reads}, seed=1)
        return cfg, json.loads(out.read_text())


def main():
    cfg, res = measure()
    write_bench("hostbus", res, dict(cfg["hostbus"], measured_at="the bridge alone (HostbusTop): AXI ports "
                                     "to the HTAX host port", memory_latency_cycles=res["dma_read_latency_cycles"]),
                notes={"dma_read_words_per_cycle": "8-word reads: the HTAX link carries a header beat per 8 "
                                                   "words, so 8/9 = 0.889 is the bound"})
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
