"""Directed HTAX tests on Verilator (cocotb: tb_htax_directed.py): latency, fig. 6-7, bad headers, RR."""

import pytest

from rtl.htax import Htax, HtaxPipelined
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


@pytest.mark.cocotb
def test_directed_pipelined():
    """The pipelined switch with the same slots: 9 cycles zero-load latency, its output buffers (32
    beats per VC: room for two 9-beat bookings) hold up to 32 more one-beat packets per VC and
    output, one-beat packets from one input to one output every 6 cycles (one booking at a time; the
    output opens for the next booking once the booked header has arrived)."""
    run_cocotb(HtaxPipelined(ports=4, slots_per_vc=1, shared_slots=3, out_depth=32),
               name="htaxp_p4_s1_sh3_d32", test_module="tests.htax.tb_htax_directed",
               params={"ports": 4, "slots": 4, "latency": 9, "buffered": 32, "booking_gap": 6})
