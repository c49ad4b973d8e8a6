"""Two board tops (``docs/board.md``): :class:`sim.tops.evn_pair.EvnPair` with the NIC variant of
:class:`boards.ecp5_5g_evn.EvnCore` on DCU models, the NIC of record with only its tables shrunk
(``sim.tops.configs.board_config(record=True)``: the board's datapath, 80 MHz core, idle gap), driven
through the simulated UARTs (8 core cycles a bit) by the unchanged driver (``tests.boards.tb_evn_pair``
``nic_demo``).  Writes ``build/bench/board.json``:

* ``velo_8B_nic_to_nic_ns``: VELO 8 B, the store entering board a's NIC (AW on its ``s_axi``) to board
  b's NIC writing the slot (AW on its ``m_axi``), min and median of 8: the half round trip between two
  board tops with the PHYs and the DCU models' latency, without the host (UART) share;
* ``demo_<step>_us``: the demo's steps end to end through the simulated UART (10 Mbaud: a real board's
  3 Mbaud UART takes about 3.3 times as long).
"""

import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import write_bench  # noqa: E402

from boards.ecp5_5g_evn import EvnCore  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.configs import board_config  # noqa: E402
from sim.tops.evn_pair import EvnPair  # noqa: E402

PHY = dict(reset_pulse=8, lock_stable=64, lock_timeout=1 << 12)
RUNS = 8


def measure():
    cfg = board_config(record=True)
    pair = EvnPair(EvnCore(variant="nic", cfg=cfg, divisor=8, phy_params=PHY, revision=(0, False)))
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "board.json"
        run_cocotb(pair, name="evn_pair_record", test_module="tests.boards.tb_evn_pair",
                   testcase="nic_demo", seed=1,
                   params={"divisor": 8, "config": "record", "latency_runs": RUNS, "out": str(out)})
        return cfg, json.loads(out.read_text())


def main():
    cfg, res = measure()
    halves = res["velo_8B_nic_to_nic_ns"]
    metrics = {"velo_8B_nic_to_nic_ns": {"min": round(min(halves), 1), "median": round(statistics.median(halves), 1)}}
    for r in res["steps"]:
        if r["ns"] is not None:
            key = r["step"].split("(")[0].strip().replace(" ", "_").replace("->", "to").replace("<-", "from")
            metrics[f"demo_{key.replace(':', '').lower()}_us"] = round(r["ns"] / 1000, 1)
    write_bench("board", metrics, {
        "config": "configs/test_record.toml + configs/test_phy.toml, 2 link ports (board_config(record=True))",
        "system": "sim.tops.evn_pair.EvnPair: two EvnCore (NIC variant), four DCU models, cores at 12.5 / 12.52 ns, "
                  "word clocks 10 / 10.01 ns, UART 8 core cycles a bit",
        "measured_at": "tests/boards/tb_evn_pair.py nic_demo"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
