"""Two board designs on DCU models, driven through their UARTs (tests/boards/tb_evn_pair.py)."""

import pytest

from boards.ecp5_5g_evn import EvnCore
from sim.runner import run_cocotb
from sim.tops.evn_pair import EvnPair

PHY = dict(reset_pulse=8, lock_stable=64, lock_timeout=1 << 12)


@pytest.mark.cocotb
def test_bring_up_over_uart():
    pair = EvnPair(lambda: EvnCore(variant="bringup", divisor=8, phy_params=PHY))
    run_cocotb(pair, name="evn_pair_bringup", test_module="tests.boards.tb_evn_pair", params=dict(divisor=8))
