"""A node's network layer: crossbar, link ports and network port (dissertation ch. 7.3, fig. 7-1).

The block between the functional units and the cables: the network port (:mod:`rtl.netport`) takes
the units' packets into the network and hands them out again, the crossbar (:mod:`rtl.xbar`) routes
and switches them, and one link port (:mod:`rtl.link`) per cable carries them to the neighbour, with
retransmission.  Link port ``k`` is crossbar port ``k``; the network port is the crossbar's network
port 0 (a route table entry ``EJECT + 0``).  Every link and crossbar port carries the four VCs of
``docs/network.md``.  A register slice (:class:`~rtl.common.slice.RegisterSlice`, one cycle) sits on
every stream between the units and the network port and from the network port into the crossbar; the
network port's ejectors begin with their own (it registers the header check with the beat), so no
combinational path crosses the network port (``docs/nic.md``, "FPGA").
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NODE_BITS, NUM_NET_VCS, NetBeat, NetStreamSignature, PortRoute, RouteEntry, injection_vcs
from rtl.common.params import check_int
from rtl.common.phit import PhySignature
from rtl.common.slice import RegisterSlice
from rtl.link import COUNTERS, LinkPort
from rtl.netport import NetworkPort
from rtl.netport.ejector import EjectorEvents
from rtl.netport.injector import InjectorEvents
from rtl.xbar import Crossbar
from rtl.xbar.input import InputEvents
from rtl.xbar.output import OutputEvents

__all__ = ["NetworkLayer", "PhySignature"]


class NetworkLayer(wiring.Component):
    """The network layer of one node.

    Parameters
    ----------
    link_ports : int
        Link ports (cables), 1..7.
    entries : int
        Route table entries (nodes; a power of two).
    sources, sinks
        The network port's unit streams (:class:`~rtl.netport.NetworkPort`).
    link : dict
        :class:`~rtl.link.LinkPort` parameters (``vcs`` is set to 4).
    depth : int
        The crossbar's VC queue depth.
    dateline, table_init
        As :class:`~rtl.xbar.Crossbar` (test and simulation tops).

    Members
    -------
    fu_tx, fu_rx
        The network port's unit streams.
    phy : Out(PhySignature(phit_bits)).array(link_ports)
    node_id : In(NODE_BITS)
    port_routes, table_r_addr, table_r_en, table_r_data, table_w_addr, table_w_en, table_w_data, table_w_be
        The crossbar's dateline rules and route table ports (:class:`~rtl.xbar.Crossbar`).
    replay_timeout : In(16), max_replays : In(4)
        Every link port's retransmission settings.
    link_error : Out(link_ports)
    link_counters : Out(counter_bits).array(link_ports, len(COUNTERS))
        Every link port's counters, in the order of :data:`rtl.link.COUNTERS`.
    xbar_in_events, xbar_out_events, tx_events, rx_events
        The crossbar's and the network port's event strobes.
    """

    def __init__(self, *, link_ports, entries, sources, sinks, link=None, depth=16, dateline=True, table_init=()):
        check_int("link_ports", link_ports, 1, 7)
        self.link_params = dict(link or {}, vcs=NUM_NET_VCS)
        self.links = [LinkPort(**self.link_params) for _ in range(link_ports)]
        # a link port of 64-bit phits takes a beat per cycle: two registers per VC at its crossbar output
        self.xbar = Crossbar(link_ports=link_ports, net_ports=1, nodes=entries, depth=depth, dateline=dateline,
                             table_init=table_init, link_prefetch=2 if self.links[0].params.phit_bits == 64 else 1)
        self.np = NetworkPort(sources=sources, sinks=sinks, entries=entries)
        p = self.links[0].params
        ports = link_ports + 1
        super().__init__({
            "fu_tx": In(NetStreamSignature()).array(len(self.np.sources)),
            "fu_rx": Out(NetStreamSignature()).array(len(self.np.sinks)),
            "phy": Out(PhySignature(p.phit_bits)).array(link_ports),
            "node_id": In(NODE_BITS),
            "port_routes": In(PortRoute).array(link_ports),
            "table_r_addr": In(range(entries)), "table_r_en": In(1), "table_r_data": Out(RouteEntry),
            "table_w_addr": In(range(entries)), "table_w_en": In(1), "table_w_data": In(RouteEntry),
            "table_w_be": In(8),
            "replay_timeout": In(16, init=self.links[0].replay_timeout_init),
            "max_replays": In(4, init=self.links[0].max_replays_init),
            "link_error": Out(link_ports),
            "link_counters": Out(p.counter_bits).array(link_ports, len(COUNTERS)),
            "xbar_in_events": Out(InputEvents).array(ports),
            "xbar_out_events": Out(OutputEvents).array(ports),
            "tx_events": Out(InjectorEvents).array(2),
            "rx_events": Out(EjectorEvents).array(2),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.xbar = x = self.xbar
        m.submodules.np = n = self.np
        for k, link in enumerate(self.links):
            m.submodules[f"link{k}"] = link
            for v in range(NUM_NET_VCS):
                wiring.connect(m, link.rx[v], x.ports[k].i[v])
                wiring.connect(m, x.ports[k].o[v], link.tx[v])
            phy = self.phy[k]
            m.d.comb += [phy.tx_phit.eq(link.tx_phit), phy.tx_ctl.eq(link.tx_ctl),
                         link.rx_phit.eq(phy.rx_phit), link.rx_ctl.eq(phy.rx_ctl),
                         link.replay_timeout.eq(self.replay_timeout), link.max_replays.eq(self.max_replays),
                         self.link_error[k].eq(link.link_error)]
            m.d.comb += [self.link_counters[k][j].eq(getattr(link, name)) for j, name in enumerate(COUNTERS)]
        # A register slice on every stream between the units and the network port and from the
        # network port into the crossbar (the ejectors start with their own): no combinational path
        # crosses the network port (timing, docs/nic.md "FPGA"); a slice keeps order, so every rule of
        # the streams holds across it.
        L = len(self.links)
        for v in range(NUM_NET_VCS):
            if v in injection_vcs():
                _sliced(m, f"inject{v}", n.xbar_o[v], x.ports[L].i[v])
            else:
                wiring.connect(m, n.xbar_o[v], x.ports[L].i[v])
            wiring.connect(m, x.ports[L].o[v], n.xbar_i[v])
        for k in range(len(n.sources)):
            _sliced(m, f"fu_tx{k}", wiring.flipped(self.fu_tx[k]), n.fu_tx[k])
        for k in range(len(n.sinks)):
            _sliced(m, f"fu_rx{k}", n.fu_rx[k], wiring.flipped(self.fu_rx[k]))
        m.d.comb += [n.node_id.eq(self.node_id), self.table_r_data.eq(x.table_r_data)]
        for name in ("r_addr", "r_en", "w_addr", "w_en", "w_data", "w_be"):
            m.d.comb += getattr(x, f"table_{name}").eq(getattr(self, f"table_{name}"))
        m.d.comb += [x.port_routes[k].eq(self.port_routes[k]) for k in range(L)]
        for p in range(L + 1):
            m.d.comb += [self.xbar_in_events[p].eq(x.in_events[p]), self.xbar_out_events[p].eq(x.out_events[p])]
        m.d.comb += [self.tx_events[c].eq(n.tx_events[c]) for c in range(2)]
        m.d.comb += [self.rx_events[c].eq(n.rx_events[c]) for c in range(2)]
        return m


def _sliced(m, name, source, sink):
    """``source`` to ``sink`` through a :class:`~rtl.common.slice.RegisterSlice` named ``name``."""
    m.submodules[name] = stage = RegisterSlice(shape=NetBeat)
    wiring.connect(m, source, stage.i)
    wiring.connect(m, stage.o, sink)
