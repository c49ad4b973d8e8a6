"""Directed HTAX tests on Verilator (cocotb: tb_htax_directed.py): latency, fig. 6-7, bad headers, RR."""

import pytest

from rtl.htax import Htax
from sim.runner import run_cocotb


@pytest.mark.cocotb
def test_directed():
    """Four ports, one reserved slot per VC and three shared: a VC holds at most four packets."""
    run_cocotb(Htax(ports=4, slots_per_vc=1, shared_slots=3), name="htax_p4_s1_sh3",
               test_module="tests.htax.tb_htax_directed", params={"ports": 4, "slots": 4})


@pytest.mark.cocotb
def test_directed_one_slot():
    """Three ports (dst 3..15 unroutable), one slot per VC, none shared: an input waits for a slot before
    each packet."""
    run_cocotb(Htax(ports=3, slots_per_vc=1, shared_slots=0), name="htax_p3_s1_sh0",
               test_module="tests.htax.tb_htax_directed", params={"ports": 3, "slots": 1})
