"""The generated register file on Verilator, driven by the host model (``tb_regs.py``)."""

import pytest

from rtl.config import load
from rtl.regs.generate import build
from sim.runner import run_cocotb

# A fixed revision keeps the simulated design (and its Verilator build) the same across commits;
# test_generate.py checks that the default revision is the git HEAD.
REVISION = (0x0123456789ABCD, True)


@pytest.mark.cocotb
def test_regs_host_model():
    cfg = load()
    run_cocotb(build(cfg, revision=REVISION), name="regs", test_module="tests.regs.tb_regs",
               params={"revision": list(REVISION)})
