"""Two board designs on DCU models, driven through their UARTs (tests/boards/tb_evn_pair.py)."""

import pytest

from boards.ecp5_5g_evn import EvnCore
from sim.runner import run_cocotb
from sim.tops.configs import board_config
from sim.tops.evn_pair import EvnPair

PHY = dict(reset_pulse=8, lock_stable=64, lock_timeout=1 << 12)


@pytest.mark.cocotb
def test_bring_up_over_uart():
    pair = EvnPair(EvnCore(variant="bringup", divisor=8, phy_params=PHY))
    run_cocotb(pair, name="evn_pair_bringup", test_module="tests.boards.tb_evn_pair",
               testcase="bring_up", params=dict(divisor=8))


@pytest.mark.soak
@pytest.mark.cocotb
def test_nic_demo_over_uart():
    """Two board tops with the NIC (``board_config``), the demo through the driver on each board's
    UART, and VELO traffic across a lane that is cut for a while.

    ``make soak`` (and ``make bench``'s bench/board.py, the same testbench): about four minutes of one
    core (a NIC's elaboration, the model's build, 100 s of simulation), which the default suite's 20
    minutes cannot pay.  The default suite has each of its parts: the scenario through the driver
    (tests/nic test_demo), the board pair's PHYs, bridge and registers (test_bring_up_over_uart), the
    board host and its allocator (test_board_host.py), the bridge against its models (tests/board)."""
    cfg = board_config()
    pair = EvnPair(EvnCore(variant="nic", cfg=cfg, divisor=4, phy_params=PHY, revision=(0, False)))
    run_cocotb(pair, name="evn_pair_nic", test_module="tests.boards.tb_evn_pair",
               testcase="nic_demo", params=dict(divisor=4, latency_runs=2, messages=8))
