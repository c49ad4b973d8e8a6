"""Directed HTAX tests on Verilator (cocotb: tb_htax_directed.py): latency, fig. 6-7, bad headers, RR."""

import pytest

from rtl.htax import Htax
from sim.runner import run_cocotb


@pytest.mark.cocotb
def test_directed():
    run_cocotb(Htax(ports=4, slots_per_vc=4), name="htax_p4_s4", test_module="tests.htax.tb_htax_directed",
               params={"ports": 4, "slots": 4})


@pytest.mark.cocotb
def test_directed_one_slot():
    """Three ports (dst 3..15 unroutable), one slot per VC: an input waits for a slot before each packet."""
    run_cocotb(Htax(ports=3, slots_per_vc=1), name="htax_p3_s1", test_module="tests.htax.tb_htax_directed",
               params={"ports": 3, "slots": 1})
