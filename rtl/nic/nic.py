"""The EXTOLL NIC (dissertation ch. 7, fig. 7-1): host interface, register file, ATU, VELO, RMA and the
network layer, joined by the on-chip HTAX switch.

::

    host (HTAX port) ──> HTAX switch ──┬── register file (1) ── every unit's registers
                         (port 0)      ├── ATU (2) ── translations for RMA, ATS flushes to RMA
                                       ├── RMA (3) ──┐ requests, responses
                                       └── VELO (6) ─┤ requests
                                                     network port ── crossbar ── link port 0..L-1 ── PHY

Ports per ``configs/default.toml``; every unit reads its own section (``[htax]``, ``[regs]``, ``[atu]``,
``[velo]``, ``[rma]``, ``[xbar]``, ``[link]``, ``[system]``).  Switch ports no unit uses are idle (no
packets sent, every VC ready).

Deviations from the dissertation: the host interface is the HTAX port itself (the seed's HyperTransport
or PCIe core and its bridge, ch. 7.1, are outside ``nic.v``); the crossbar has one network port
(``[xbar] net_ports`` = 1; the register file's crossbar counter blocks follow it); the SMFU and the ATU's other FUs
are not built.
"""

from functools import cached_property

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.atu import atu_from_config
from rtl.atu import connect_regs as connect_atu_regs
from rtl.common.htax import HtaxPortSignature, expose_port
from rtl.common.params import check_int
from rtl.common.portplan import HtaxPortPlan
from rtl.htax import from_config as htax_from_config
from rtl.netlayer import NetworkLayer, PhySignature
from rtl.netport import NIC_SINKS, NIC_SOURCES
from rtl.regs.generate import build as build_regs
from rtl.rma import connect_regs as connect_rma_regs
from rtl.rma import rma_from_config
from rtl.velo import connect_regs as connect_velo_regs
from rtl.velo import velo_from_config

from .netregs import connect_network_regs

__all__ = ["Nic", "nic_ports"]


def nic_ports(cfg):
    """``{unit: HTAX port}`` of the NIC's host, register file, ATU, RMA and VELO, checked.

    Raises
    ------
    ValueError
        The ports are not distinct switch ports (:class:`~rtl.common.portplan.HtaxPortPlan`), the units
        disagree on the host port, or ``[atu] fu_ports`` is not ``[rma htax_port]`` (an ATS flush waits
        for every FU listed).
    """
    host = cfg["rma"]["host_port"]
    ports = {"host": host, "regs": cfg["regs"]["htax_port"], "atu": cfg["atu"]["htax_port"],
             "rma": cfg["rma"]["htax_port"], "velo": cfg["velo"]["htax_port"]}
    if max(ports.values()) >= cfg["htax"]["ports"]:
        raise ValueError(f"[htax] ports must be more than the highest HTAX port the NIC uses "
                         f"({sorted(ports.values())}), not {cfg['htax']['ports']}")
    HtaxPortPlan(ports=cfg["htax"]["ports"], units=ports)
    for unit in ("regs", "atu", "velo"):
        if cfg[unit]["host_port"] != host:
            raise ValueError(f"[{unit}] host_port must be the host's port {host} ([rma] host_port), "
                             f"not {cfg[unit]['host_port']}")
    if list(cfg["atu"]["fu_ports"]) != [ports["rma"]]:
        raise ValueError(f"[atu] fu_ports must be [{ports['rma']}] (the RMA port) in the NIC, "
                         f"not {list(cfg['atu']['fu_ports'])}")
    return ports


class Nic(wiring.Component):
    """One EXTOLL NIC.

    Parameters
    ----------
    cfg : rtl.config.Config
    revision : (int, bool), optional
        The version register (:func:`rtl.regs.generate.build`); default from the configuration or git.

    Members
    -------
    htax : Out(HtaxPortSignature())
        The host's HTAX port (switch port ``[rma] host_port``), in the orientation a unit has:
        ``htax.tx`` carries packets to the host, ``htax.rx`` packets from it.
    phy : Out(PhySignature([link] phit_bits)).array([xbar] link_ports)
        Link port ``k``'s phits to and from its PHY (SERDES or cable model).
    irq : Out(1)
        The register file's interrupt level: an enabled interrupt status bit is set (the MSI write is
        sent as well).

    Raises
    ------
    ValueError
        As :func:`nic_ports`; ``[xbar] link_ports`` out of 1..7 or above ``[regs] link_ports``.
    """

    def __init__(self, cfg, *, revision=None):
        self.cfg, self.revision = cfg, revision
        self.ports = nic_ports(cfg)
        self.link_ports = check_int("[xbar] link_ports", cfg["xbar"]["link_ports"], 1, 7)
        if self.link_ports > cfg["regs"]["link_ports"]:
            raise ValueError(f"[regs] link_ports must be at least [xbar] link_ports {self.link_ports}, "
                             f"not {cfg['regs']['link_ports']}")
        super().__init__({"htax": Out(HtaxPortSignature()),
                          "phy": Out(PhySignature(cfg["link"]["phit_bits"])).array(self.link_ports),
                          "irq": Out(1)})

    @cached_property
    def regfile(self):
        """The NIC's register file, built on first use (by :meth:`elaborate`, or by a top around the NIC
        that wires more counters into it, :class:`rtl.nic.NicAxi`), so that a NIC never elaborated leaves
        no register file behind."""
        return build_regs(self.cfg, revision=self.revision)

    def elaborate(self, platform):
        m = Module()
        cfg, ports = self.cfg, self.ports
        m.submodules.switch = sw = htax_from_config(cfg)
        m.submodules.regs = rf = self.regfile
        m.submodules.atu = atu = atu_from_config(cfg)
        m.submodules.rma = rma = rma_from_config(cfg)
        m.submodules.velo = velo = velo_from_config(cfg)
        m.submodules.net = net = NetworkLayer(
            link_ports=self.link_ports, entries=cfg["system"]["nodes"], sources=NIC_SOURCES, sinks=NIC_SINKS,
            link=dict(cfg["link"]), depth=cfg["xbar"]["depth"])

        for unit, sub in (("regs", rf), ("atu", atu), ("rma", rma), ("velo", velo)):
            wiring.connect(m, sub.htax, sw.ports[ports[unit]])
        expose_port(m, self.htax, sw.ports[ports["host"]])
        HtaxPortPlan(ports=cfg["htax"]["ports"], units=ports).tie_off(m, sw.ports)

        # the network port's unit streams, in the order of NIC_SOURCES and NIC_SINKS
        for k, src in enumerate((velo.net_tx, rma.req_tx, rma.rsp_tx)):
            wiring.connect(m, src, net.fu_tx[k])
        for k, dst in enumerate((velo.net_rx, rma.req_rx, rma.rsp_rx)):
            wiring.connect(m, net.fu_rx[k], dst)
        for k in range(self.link_ports):
            wiring.connect(m, net.phy[k], wiring.flipped(self.phy[k]))

        m.d.comb += self.irq.eq(rf.irq)
        connect_atu_regs(m, atu, rf)
        connect_rma_regs(m, rma, rf)
        connect_velo_regs(m, velo, rf)
        connect_network_regs(m, net, rf)
        return m
