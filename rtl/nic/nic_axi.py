"""The EXTOLL NIC behind AXI4: :class:`~rtl.nic.Nic` and the host bus bridge (``docs/hostbus.md``)."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.common.regview import connect_regs
from rtl.hostbus import bridge_from_config, connect_flat, flat_members
from rtl.netlayer import PhySignature

from .nic import Nic

__all__ = ["NicAxi"]


class NicAxi(wiring.Component):
    """One EXTOLL NIC whose host side is AXI4 (``nic_axi.v``): the :class:`~rtl.nic.Nic` of the
    configuration with an :class:`~rtl.hostbus.HtaxAxiBridge` on its host port, the bridge's counters in
    the NIC's register file (``hostbus``).

    The AXI ports are flat and named as FPGA tools infer them: ``m_axi_*`` (the NIC's DMA into host
    memory, ID width ``log2([hostbus] read_ids)``), ``s_axi_*`` (the CPU's device window, ID width
    ``[hostbus] s_id_bits``); address width 52 (the HTAX address), data width 64.

    Parameters
    ----------
    cfg : rtl.config.Config
    prefix : str
        Prepended to every AXI and ``irq`` port name (a system top with several NICs).
    revision : (int, bool), optional
        As :class:`~rtl.nic.Nic`.

    Members
    -------
    m_axi_* , s_axi_*
        The AXI4 manager and subordinate, one member per AXI signal.
    irq : Out(1)
        The register file's interrupt level (:attr:`rtl.nic.Nic.irq`).
    phy : Out(PhySignature([link] phit_bits)).array([xbar] link_ports)
        As :class:`~rtl.nic.Nic`.
    """

    def __init__(self, cfg, *, prefix="", revision=None):
        self.cfg, self.prefix = cfg, prefix
        self.nic = Nic(cfg, revision=revision)
        self.bridge = bridge_from_config(cfg)
        bsig = self.bridge.signature.members
        members = {}
        members.update(flat_members(f"{prefix}m_axi", bsig["m_axi"].signature, manager=True))
        members.update(flat_members(f"{prefix}s_axi", bsig["s_axi"].signature.flip(), manager=False))
        members[f"{prefix}irq"] = Out(1)
        members["phy"] = Out(PhySignature(cfg["link"]["phit_bits"])).array(self.nic.link_ports)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.nic = nic = self.nic
        m.submodules.bridge = bridge = self.bridge
        wiring.connect(m, nic.htax, bridge.htax)
        connect_flat(m, self, f"{self.prefix}m_axi", bridge.m_axi, manager=True)
        connect_flat(m, self, f"{self.prefix}s_axi", bridge.s_axi, manager=False)
        m.d.comb += getattr(self, f"{self.prefix}irq").eq(nic.irq)
        connect_regs(m, bridge, nic.regfile)        # the bridge's counters in the NIC's register file
        for k in range(self.nic.link_ports):
            wiring.connect(m, nic.phy[k], wiring.flipped(self.phy[k]))
        return m
