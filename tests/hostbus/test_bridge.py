"""The host bus bridge (:mod:`rtl.hostbus`) on its own, against cocotbext-axi and the HTAX bus models."""

# amaranth: UnusedElaboratable=no

import pytest

from rtl.config import load
from sim.runner import run_cocotb
from sim.tops.hostbus import HostbusTop

pytestmark = pytest.mark.cocotb


@pytest.mark.parametrize("stall", [0.0, 0.3, 0.8])
def test_dma(stall):
    run_cocotb(HostbusTop(load()), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="dma_random",
               params=dict(stall=stall, ops=400))


@pytest.mark.parametrize("stall", [0.0, 0.5])
def test_cpu(stall):
    run_cocotb(HostbusTop(load()), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="cpu_access",
               params=dict(stall=stall, ops=80))
