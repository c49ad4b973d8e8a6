# amaranth: UnusedElaboratable=no
"""The NIC top: configuration checks with their messages."""

import copy
import json

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


@pytest.mark.soak
def test_nic_system_bench_quick(tmp_path):
    """The system bench's testbench (``bench/system.py --quick``'s sizes): every measurement runs, every
    payload is checked, and a DMA read's round trip at the host port is table 3-1's t_dm (280 ns at
    156.25 MHz: 44 cycles)."""
    out = tmp_path / "bench.json"
    run_cocotb(NicSystem(small_config()), name="nic_system2", test_module="tests.nic.tb_nic_bench",
               params={"out": str(out), "velo_sizes": [8], "rma_sizes": [8, 512], "stream_velo_sizes": [8],
                       "ops": ["velo", "put", "get"], "idle_cycles": 1000})
    res = json.loads(out.read_text())
    assert res["dma_read_port_cycles"] == round(280 * 156.25 / 1000)
    # table 9-1's composition of the three operations measured
    assert [res[f"put_{s}"] for s in ("dma_reads", "atu_translations", "net_trips", "dma_writes", "pio_writes")] \
        == [1, 2, 1, 1, 1]
    assert [res[f"get_{s}"] for s in ("dma_reads", "atu_translations", "net_trips", "dma_writes", "pio_writes")] \
        == [1, 2, 2, 2, 1]
    assert [res[f"velo_{s}"] for s in ("dma_reads", "atu_translations", "net_trips", "dma_writes", "pio_writes")] \
        == [0, 0, 1, 1, 1]


@pytest.mark.soak
def test_demo(tmp_path):
    """``make demo``'s cocotb side (``sim/demo.py``): every step's result is checked inside."""
    out = tmp_path / "demo.json"
    run_cocotb(NicSystem(small_config()), name="nic_system2", test_module="sim.demo", testcase="demo",
               params={"out": str(out)})
    steps = json.loads(out.read_text())["steps"]
    assert [s["step"] for s in steps][:4] == ["node 0: init", "node 1: init", "VELO send 0 -> 1 (32 B)",
                                              "VELO send 1 -> 0 (16 B)"]
