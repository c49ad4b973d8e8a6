"""The host bus functional model's self-test on Verilator and Icarus (issue: foundation)."""

import pytest

from rtl.config import load
from sim.runner import run_cocotb
from sim.toolchain import have_icarus
from sim.tops.scratch import UNITS

CFG = load()

SIMS = ["verilator", pytest.param("icarus", marks=pytest.mark.skipif(
    not have_icarus(), reason="Icarus Verilog not installed (apt-get install iverilog)"))]


@pytest.mark.parametrize("sim", SIMS)
def test_selftest(sim):
    run_cocotb(UNITS["scratch"](CFG), name="scratch", test_module="tests.sim.tb_host_selftest", sim=sim)


@pytest.mark.parametrize("params", [
    {"ready_p": 0.4, "gap_p": 0.3, "jitter": 60},
    {"ready_p": 1.0, "gap_p": 0.0, "jitter": 120},
])
def test_selftest_backpressure_and_reordering(params):
    run_cocotb(UNITS["scratch"](CFG), name="scratch", test_module="tests.sim.tb_host_selftest",
               testcase="dma_read_reordered_and_write", params=params)
