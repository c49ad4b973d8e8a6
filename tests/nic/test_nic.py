# amaranth: UnusedElaboratable=no
"""The NIC top: configuration checks with their messages."""

import copy

import pytest

from rtl.config import load
from rtl.nic import Nic, nic_ports
from rtl.nic.system import NicSystem
from sim.runner import run_cocotb
from tests.nic.config import small_config


def _cfg(**sections):
    cfg = copy.deepcopy(load())
    for section, values in sections.items():
        cfg[section].update(values)
    return cfg


def test_default_ports():
    assert nic_ports(load()) == {"host": 0, "regs": 1, "atu": 2, "rma": 3, "velo": 6}
    nic = Nic(load())
    assert len(nic.phy) == load()["xbar"]["link_ports"]


@pytest.mark.parametrize("sections, message", [
    (dict(atu={"fu_ports": [3, 4, 5]}),
     r"^\[atu\] fu_ports must be \[3\] \(the RMA port\) in the NIC, not \[3, 4, 5\]$"),
    (dict(velo={"htax_port": 3}), r"^host, register file, ATU, RMA and VELO HTAX ports must be distinct, "
                                  r"not \[0, 1, 2, 3, 3\]$"),
    (dict(velo={"host_port": 5}), r"^\[velo\] host_port must be the host's port 0 \(\[rma\] host_port\), not 5$"),
    (dict(htax={"ports": 6}), r"^the HTAX has 6 ports, the NIC uses \[0, 1, 2, 3, 6\]$"),
    (dict(xbar={"link_ports": 0}), r"^\[xbar\] link_ports must be between 1 and 7, not 0$"),
    (dict(regs={"link_ports": 4}), r"^\[regs\] link_ports must be at least \[xbar\] link_ports 6, not 4$"),
])
def test_config_errors(sections, message):
    with pytest.raises(ValueError, match=message):
        Nic(_cfg(**sections))


@pytest.mark.soak
def test_nic_system_b2b_cocotb():
    """Two NICs back to back: VELO each way, RMA put, get and lock through the drivers.  Soak: about
    200 s with the Verilator build on a busy two-core machine (30 s with the build cached)."""
    run_cocotb(NicSystem(small_config()), name="nic_system2", test_module="tests.nic.tb_nic", testcase="smoke")
