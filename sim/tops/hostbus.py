"""Test top of the host bus bridge: :class:`~rtl.hostbus.HtaxAxiBridge` with flat AXI ports.  Not a unit.

The testbench plays the NIC on ``nic`` (``nic__tx``: packets the NIC sends to the host, driven by an
:class:`~sim.htax_bus.HtaxSource`; ``nic__rx``: packets to the NIC, taken by an
:class:`~sim.htax_bus.HtaxSink`), host memory on ``m_axi_*`` and the CPU on ``s_axi_*`` (cocotbext-axi).
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxPortSignature
from rtl.hostbus import bridge_events, bridge_from_config, connect_flat, flat_members

__all__ = ["HostbusTop"]


class HostbusTop(wiring.Component):
    """The bridge of ``cfg`` (:func:`rtl.hostbus.bridge_from_config`) with flat AXI ports.

    Members
    -------
    nic : In(HtaxPortSignature())
        The bridge's HTAX host port: ``nic.tx`` into the bridge (what the NIC sends to the host),
        ``nic.rx`` out of it.
    events : Out(bridge_events())
    m_axi_*, s_axi_*
        The AXI4 manager and subordinate (:func:`rtl.hostbus.flat_members`).
    """

    def __init__(self, cfg):
        self.bridge = bridge_from_config(cfg)
        sig = self.bridge.signature.members
        members = {"nic": In(HtaxPortSignature()), "events": Out(bridge_events())}
        members.update(flat_members("m_axi", sig["m_axi"].signature, manager=True))
        members.update(flat_members("s_axi", sig["s_axi"].signature.flip(), manager=False))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.bridge = bridge = self.bridge
        # the NIC side: the testbench drives nic.tx into the bridge and takes nic.rx from it
        for a, b in ((self.nic.tx, bridge.htax.tx), (bridge.htax.rx, self.nic.rx)):
            m.d.comb += [b.valid.eq(a.valid), b.payload.eq(a.payload), a.ready.eq(b.ready), a.ready2.eq(b.ready2)]
        connect_flat(m, self, "m_axi", bridge.m_axi, manager=True)
        connect_flat(m, self, "s_axi", bridge.s_axi, manager=False)
        wiring.connect(m, bridge.events, wiring.flipped(self.events))
        return m
