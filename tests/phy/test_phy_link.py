"""Two link ports over the SerDes PHY and the DCU model, in cocotb on Verilator
(tests/phy/tb_phy_link.py): PRBS bring-up, link traffic, line errors and a cut line."""

import pytest

from sim.runner import run_cocotb
from sim.tops.phy_link import PhyLinkLoop


@pytest.mark.cocotb
def test_phy_link():
    run_cocotb(PhyLinkLoop(), name="phy_link", test_module="tests.phy.tb_phy_link",
               params=dict(packets=200, error_rate=2e-4))
