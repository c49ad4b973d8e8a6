"""System top for NIC tests and benchmarks: N NICs whose links are wired in HDL.  Not a unit (no
``UNITS`` entry).

Each node is a :class:`~rtl.nic.Nic` with its host port exposed as ``htax<n>`` (for a
:class:`sim.host.HostModel` and the driver :class:`sim.driver.nic.Nic`).  The nodes are one design,
converted to Verilog once and instantiated ``nodes`` times (:class:`sim.shared.SharedModule`, in
``modules``): only :func:`sim.runner.run_cocotb` simulates the system.  Every cable of the topology
(:class:`sim.routing.Topology`: node ``k``'s link port ``p`` to ``topology.peer(k, p)``) runs through
two :class:`~sim.tops.link.LfsrChannel` (one per direction: ``latency`` cycles, bit errors at the
``flip`` threshold), as in ``sim/tops/fabric.py``, so no Python runs per cycle on a link.  Link ports
without a cable see an idle line.  Routes are not built in: the driver writes every node's route table.

With ``phy=True`` a cable is instead two SerDes PHYs (:class:`rtl.phy.SerdesPhy`, one per end, in the
node's core clock) and two DCU models (:mod:`sim.tops.dcu_model`): the links of the board
(``docs/board.md``).  Every model transmits and receives in one word clock, ``line`` (a top-level
clock port the testbench drives at 100 MHz): the ends share one oscillator, no ppm between them.
"""

import math

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, Signature

from rtl.common.htax import HtaxPortSignature
from rtl.common.params import check_int
from rtl.link.params import PhitCtl
from rtl.nic import Nic, NicAxi
from rtl.phy import SerdesPhy
from sim.shared import SharedModule
from sim.tops.dcu_model import DcuModel
from sim.tops.link import LfsrChannel

__all__ = ["NicSystem", "topology", "flip_threshold"]


def flip_threshold(flit_error, flit_phits):
    """The ``flip`` threshold for a flit error rate ``flit_error`` on flits of ``flit_phits`` phits.

    :class:`~sim.tops.link.LfsrChannel` flips one bit of a phit (data or control) when its 32-bit
    xorshift value, uniform over ``1 .. 2**32 - 1``, is below ``flip`` (``drop`` and ``burst`` are 0
    here): a phit is hit with probability ``p = flip / 2**32``, independently of every other phit, so a
    flit of ``n`` phits arrives damaged with probability ``1 - (1 - p)**n``.  The threshold solves that
    for ``n = flit_phits``; shorter flits (control flits, short data flits) see a lower rate.
    """
    if not 0 <= flit_error < 1:
        raise ValueError(f"flit_error must be in [0, 1), not {flit_error}")
    check_int("flit_phits", flit_phits, 1)
    return min(0xFFFF_FFFF, round((1 - (1 - flit_error) ** (1 / flit_phits)) * 2 ** 32))


def topology(name, nodes, *, shape=None):
    """The :mod:`sim.routing` topology ``name`` of ``nodes`` nodes.

    ``"b2b"``: 2 nodes, the cable on link port 0 of both, so one link port suffices.  ``"ring"``: a
    ring of ``nodes`` (link ports ``+x`` 0, ``-x`` 1).  ``"torus"``: a 2-D or 3-D torus of ``shape``
    (nodes per dimension, their product ``nodes``), the default port numbering (``+x`` 0 .. ``-z`` 5),
    so a 2 x 2 x 2 torus needs six link ports (a dimension of 2 has two parallel cables).
    """
    from sim import routing
    if name != "torus" and shape is not None:
        raise ValueError(f"only a torus takes a shape, not {name!r}")
    if name == "b2b":
        if nodes != 2:
            raise ValueError(f"a back-to-back topology has 2 nodes, not {nodes}")
        return routing.back_to_back(ports={1: (1, 0)})
    if name == "ring":
        return routing.ring(k=nodes)
    if name == "torus":
        shape = tuple(shape or ())
        if len(shape) not in (2, 3):
            raise ValueError(f"a torus shape has 2 or 3 dimensions, not {shape!r}")
        if math.prod(shape) != nodes:
            raise ValueError(f"a torus of shape {shape!r} has {math.prod(shape)} nodes, not {nodes}")
        return routing.torus_2d(kx=shape[0], ky=shape[1]) if len(shape) == 2 else \
            routing.torus_3d(kx=shape[0], ky=shape[1], kz=shape[2])
    raise ValueError(f"topology must be 'b2b', 'ring' or 'torus', not {name!r}")


class NicSystem(wiring.Component):
    """``nodes`` NICs of ``cfg`` cabled as ``topology``.

    Parameters
    ----------
    cfg : rtl.config.Config
    nodes : int
        2..16.
    topology : str or sim.routing.Topology
        A name for :func:`topology`, or the topology itself (``nodes`` nodes).
    shape : tuple of int, optional
        The shape of a ``"torus"``.
    latency : int
        Cable latency in cycles, each direction (1..).
    revision : (int, bool)
        Every node's version register; pinned by default, so the test design does not change per commit.
    phy : bool
        Cables through SerDes PHYs and DCU models instead of :class:`~sim.tops.link.LfsrChannel`.
    bus : str
        The host side of every node: ``"htax"`` (:class:`~rtl.nic.Nic`, for :class:`sim.host.HostModel`)
        or ``"axi"`` (:class:`~rtl.nic.NicAxi`, for :class:`sim.axi_host.AxiHostModel`).

    Members
    -------
    htax<n> : Out(HtaxPortSignature())
        Node ``n``'s host port, in the orientation :class:`sim.host.HostModel` expects (``bus="htax"``).
    n<n>_m_axi_*, n<n>_s_axi_*, n<n>_irq
        Node ``n``'s AXI4 ports and interrupt (``bus="axi"``, :class:`~rtl.nic.NicAxi` with prefix
        ``n<n>_``).
    flip : In(32)
        Bit-error threshold of every channel (0: none).
    probe : Out(ProbeSignature)
        The cable of node 0's link port 0 (``tx_*``: what node 0 sends, ``rx_*``: what its peer
        receives, ``latency`` cycles later): the breakdown of ``bench/system.py`` reads it, so that the
        testbench needs no signal inside a NIC; IDLE and 0 when that port has no cable.
    """

    def __init__(self, cfg, *, nodes=2, topology="b2b", shape=None, latency=2, revision=(0, False), bus="htax",
                 phy=False):
        check_int("nodes", nodes, 2, 16)
        check_int("latency", latency, 1)
        self.topo = (globals()["topology"](topology, nodes, shape=shape) if isinstance(topology, str)
                     else topology)
        if self.topo.nodes != nodes:
            raise ValueError(f"the topology has {self.topo.nodes} nodes, not {nodes}")
        links = cfg["xbar"]["link_ports"]          # checked before any Nic exists: none is left unused
        for k in range(nodes):
            if self.topo.link_ports(k) > links:
                raise ValueError(f"node {k} needs {self.topo.link_ports(k)} link ports, [xbar] link_ports is {links}")
        if bus not in ("htax", "axi"):
            raise ValueError(f"bus must be 'htax' or 'axi', not {bus!r}")
        if phy and cfg["link"]["idle_gap"] < 1:
            raise ValueError("phy=True needs [link] idle_gap >= 1 (docs/phy.md), not 0")
        self.bus, self.phy = bus, phy
        # every node is one design, converted once (sim.shared; run_cocotb finds it in modules)
        shared = SharedModule(NicAxi(cfg, revision=revision) if bus == "axi" else Nic(cfg, revision=revision),
                              f"nic_node_{bus}")
        self.modules = (shared,)
        self.nics = [shared.instance() for _ in range(nodes)]
        if bus == "axi":
            members = {f"n{n}_{name}": member for n in range(nodes)
                       for name, member in shared.signature.members.items() if name != "phy"}
        else:
            members = {f"htax{n}": Out(HtaxPortSignature()) for n in range(nodes)}
        self.latency = latency
        members["flip"] = In(32)
        bits = cfg["link"]["phit_bits"]
        members["probe"] = Out(Signature({"tx_ctl": Out(PhitCtl), "tx_phit": Out(bits),
                                          "rx_ctl": Out(PhitCtl), "rx_phit": Out(bits)}))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for k, nic in enumerate(self.nics):
            m.submodules[f"nic{k}"] = nic
            if self.bus == "htax":
                wiring.connect(m, nic.htax, wiring.flipped(getattr(self, f"htax{k}")))
                continue
            for name, member in nic.signature.members.items():
                if name != "phy":
                    outer, inner = getattr(self, f"n{k}_{name}"), getattr(nic, name)
                    m.d.comb += outer.eq(inner) if member.flow == Out else inner.eq(outer)
        for k, nic in enumerate(self.nics):
            for p, phy in enumerate(nic.phy):
                peer = self.topo.peer(k, p)
                if peer is None:
                    m.d.comb += [phy.rx_phit.eq(0), phy.rx_ctl.eq(PhitCtl.IDLE)]
                    continue
                if self.phy:
                    self._serdes(m, k, p, phy)
                    continue
                other = self.nics[peer[0]].phy[peer[1]]
                m.submodules[f"ch{k}_{p}"] = ch = LfsrChannel(phit_bits=len(phy.tx_phit), latency=self.latency,
                                                             seed=1 + 97 * k + p)
                m.d.comb += [ch.i_phit.eq(phy.tx_phit), ch.i_ctl.eq(phy.tx_ctl),
                             other.rx_phit.eq(ch.o_phit), other.rx_ctl.eq(ch.o_ctl),
                             ch.flip.eq(self.flip), ch.drop.eq(0), ch.burst.eq(0)]
                if (k, p) == (0, 0):
                    m.d.comb += [self.probe.tx_ctl.eq(phy.tx_ctl), self.probe.tx_phit.eq(phy.tx_phit),
                                 self.probe.rx_ctl.eq(ch.o_ctl), self.probe.rx_phit.eq(ch.o_phit)]
        if self.phy:
            for k, nic in enumerate(self.nics):
                for p in range(len(nic.phy)):
                    peer = self.topo.peer(k, p)
                    if peer is not None:
                        m.d.comb += self._dcus[k, p].line_rx.eq(self._dcus[peer].line_tx)
        return m

    def _serdes(self, m, k, p, link):
        """Node ``k``'s link port ``p`` behind a SerdesPhy on a DCU model (cabled in ``elaborate``)."""
        self._dcus = getattr(self, "_dcus", {})
        m.submodules[f"phy{k}_{p}"] = phy = SerdesPhy(reset_pulse=8, lock_stable=64, lock_timeout=1 << 12)
        m.submodules[f"dcu{k}_{p}"] = dcu = DcuModel(tx_domain="line", rx_domain="line", seed=1 + 97 * k + p)
        self._dcus[k, p] = dcu
        wiring.connect(m, link, phy.link)
        wiring.connect(m, dcu.lane, phy.lane)
        if (k, p) == (0, 0):
            m.d.comb += [self.probe.tx_ctl.eq(link.tx_ctl), self.probe.tx_phit.eq(link.tx_phit)]
        peer = self.topo.peer(k, p)
        if peer == (0, 0):
            m.d.comb += [self.probe.rx_ctl.eq(link.rx_ctl), self.probe.rx_phit.eq(link.rx_phit)]
