# amaranth: UnusedElaboratable=no
"""The board blocks' AXI ports fit NicAxi's: wire_axi (rtl/common/axi.py) joins the real NicAxi of the
default configuration to HostMemory and to the UART bridge, and refuses ports that do not fit."""

import pytest
from amaranth.hdl import Fragment, Module
from amaranth.lib import wiring

from rtl.board import HostMemory, UartBridge, UartRx, UartTx, wire_axi
from rtl.config import load
from rtl.nic import NicAxi


def _ports(component, prefix):
    return {n[len(prefix):]: (v.flow, v.shape) for n, v in component.signature.members.items() if n.startswith(prefix)}


def test_nic_axi_ports_fit_the_board_blocks():
    nic = NicAxi(load())
    memory, bridge = HostMemory(), UartBridge()
    flip = {"In": "Out", "Out": "In"}
    m_axi = {k: (flip[f.name], s) for k, (f, s) in _ports(nic, "m_axi_").items()}
    assert m_axi == {k: (f.name, s) for k, (f, s) in _ports(memory, "s_axi_").items()}
    s_axi = {k: (flip[f.name], s) for k, (f, s) in _ports(nic, "s_axi_").items()}
    assert s_axi == {k: (f.name, s) for k, (f, s) in _ports(bridge, "m_axi_").items()}
    # a board top's composition elaborates (every port driven once)
    m = Module()
    m.submodules.nic, m.submodules.memory, m.submodules.bridge = nic, memory, bridge
    m.submodules.rx, m.submodules.tx = rx, tx = UartRx(divisor=52), UartTx(divisor=52)
    wire_axi(m, nic, "m_axi", memory, "s_axi")
    wire_axi(m, bridge, "m_axi", nic, "s_axi")
    wiring.connect(m, bridge.mem_req, memory.word_req)
    wiring.connect(m, memory.word_rsp, bridge.mem_rsp)
    wiring.connect(m, rx.o, bridge.i)
    wiring.connect(m, bridge.o, tx.i)
    Fragment.get(m, None)


def test_wire_axi_refuses_ports_that_do_not_fit():
    m = Module()
    with pytest.raises(ValueError, match=r"^m_axi_\* and s_axi_\* do not have the same signals$"):
        wire_axi(m, UartBridge(), "m_axi", UartRx(divisor=4), "s_axi")
    with pytest.raises(ValueError, match=r"^m_axi_awid is 4 bits wide, s_axi_awid 5$"):
        wire_axi(m, UartBridge(), "m_axi", HostMemory(), "s_axi")
    with pytest.raises(ValueError, match=r"^s_axi_awid and s_axi_awid are both In ports$"):
        wire_axi(m, HostMemory(), "s_axi", HostMemory(), "s_axi")
