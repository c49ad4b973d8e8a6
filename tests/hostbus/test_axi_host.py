# amaranth: UnusedElaboratable=no
"""The AXI host model (``sim/axi_host.py``) on the AXI loop-back top (cocotb: ``tb_axi_host.py``)."""

import pytest

from rtl.config import load
from sim.runner import run_cocotb
from sim.tops.axi_loop import AxiLoop

CFG = load()


@pytest.mark.parametrize("kw,msg", [
    (dict(addr_width=8), "addr_width must be between 12 and 64, not 8"),
    (dict(s_id_width=0), "s_id_width must be between 1 and 16, not 0"),
    (dict(s_id_width=6, m_id_width=5), "m_id_width must be between 6 and 16, not 5"),
])
def test_loop_parameter_errors(kw, msg):
    with pytest.raises(ValueError, match=f"^{msg}$"):
        AxiLoop(**kw)


@pytest.mark.cocotb
def test_axi_host():
    """Every testbench of ``tb_axi_host.py`` in one simulation, with random stalls on all ten channels
    (except where a test measures latency) and DMA read jitter."""
    run_cocotb(AxiLoop(addr_width=CFG["system"]["phys_addr_bits"]), name="axi_loop",
               test_module="tests.hostbus.tb_axi_host", params={"stall": 0.3, "jitter": 16})
