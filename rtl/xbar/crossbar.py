"""The network crossbar: link ports and network ports, four VCs, cut-through, table routing.

Dissertation ch. 7.3 ("the EXTOLL crossbar finally implements the switching and routing resources of
the EXTOLL network"; cut-through switching, two VCs for the torus dateline) and 7.4 (the routing
look-up table).  Every port has one stream per VC in each direction; an input port
(:class:`~rtl.xbar.input.XbarInput`) routes the head packet of each VC with the route table
(:class:`~rtl.xbar.table.RouteTable`) and its dateline rule, chooses one that can go and
requests its output; an output port (:class:`~rtl.xbar.output.XbarOutput`) grants the requesting input
it served least recently, takes one packet at a time into the queue of its VC, with room for the whole
packet reserved at the grant.
``docs/network.md`` states the formats, the routing rules and the deadlock argument.

Deviations from the dissertation: the crossbar switches 64-bit beats, not 16-bit phits (the link
ports convert); there are four VCs (two message classes, each with the two dateline VCs) instead of
two, so protocol deadlock is excluded in the network too; every crossbar looks the route up in its
own table (the prototype's source path, a route word in the packet, would cost a beat per packet).
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import MAX_PACKET_BEATS, NUM_NET_VCS, NetStreamSignature, PortRoute, RouteEntry
from rtl.common.params import check_choice, check_int, check_pow2

from .input import InputEvents, XbarInput
from .output import OutputEvents, XbarOutput
from .table import RouteTable

__all__ = ["Crossbar", "XbarPortSignature"]


class XbarPortSignature(wiring.Signature):
    """One crossbar port as the crossbar sees it: ``i`` carries packets into the crossbar, ``o`` out of
    it, one stream per VC.  (A unit attached to the port connects its streams element by element:
    Amaranth 0.5 cannot flip a signature whose members are arrays of interfaces.)

    Members
    -------
    i : In(NetStreamSignature()).array(vcs)
    o : Out(NetStreamSignature()).array(vcs)
    """

    def __init__(self, vcs=NUM_NET_VCS):
        self._vcs = vcs
        super().__init__({"i": In(NetStreamSignature()).array(vcs),
                          "o": Out(NetStreamSignature()).array(vcs)})

    def __eq__(self, other):
        return type(other) is XbarPortSignature and other._vcs == self._vcs

    def __hash__(self):
        return hash((XbarPortSignature, self._vcs))

    def __repr__(self):
        return f"XbarPortSignature({self._vcs})"


class Crossbar(wiring.Component):
    """The network crossbar.

    Parameters
    ----------
    link_ports : int
        Link ports, 1..7: crossbar ports ``0 .. link_ports - 1``.
    net_ports : int
        Network ports, 1..4: crossbar ports ``link_ports ..``; a route table entry names them
        ``EJECT ..``.
    nodes : int
        Route table entries (power of two: the configuration's ``[system] nodes``).
    table_init : sequence of int
        The route table's initial packed entries (simulation tops; default empty).
    vcs : int
        VCs per port: 4 (requests and responses, each on two dateline VCs) or 2 (one class).
    depth : int
        Beats per (output port, VC) queue, 12..64 (a grant reserves 12: the largest packet).
    dateline : bool
        ``False`` keeps every packet on dateline VC 0 (test only: shows the deadlock of a ring).
    link_prefetch : int
        Registers per VC in front of a link port's output stream (:class:`~rtl.xbar.queues.VcQueues`):
        1 (a beat every second cycle from the queue's memory: enough for 16- and 32-bit phits, which
        take a beat in four or two cycles) or 2 (a beat per cycle, for 64-bit phits).  The network
        port's outputs always have 2.

    Members
    -------
    ports : Out(XbarPortSignature(vcs)).array(link_ports + net_ports)
        ``ports[p].i[v]`` carries packets of VC ``v`` into the crossbar from the unit at port ``p``,
        ``ports[p].o[v]`` out of it (Verilog ``ports__3__i__0__valid`` ...).
    in_events : Out(InputEvents).array(ports)
        Per input port, one-cycle strobes: a packet granted an output, a packet dropped (by cause).
    out_events : Out(OutputEvents).array(ports)
        Per output port: a packet's first beat left.
    port_routes : In(PortRoute).array(link_ports)
        The link ports' dateline rules (registers).
    table_r_addr, table_r_en : In ; table_r_data : Out(RouteEntry)
    table_w_addr, table_w_en, table_w_data, table_w_be : In
        The route table's register-file ports (:class:`~rtl.xbar.table.RouteTable`'s ``sw_*``).

    Raises
    ------
    TypeError, ValueError
        A parameter is not an integer or out of range.
    """

    def __init__(self, *, link_ports, net_ports, nodes=64, vcs=NUM_NET_VCS, depth=16, dateline=True, table_init=(),
                 link_prefetch=1):
        check_int("link_ports", link_ports, 1, 7)
        self.nodes = check_pow2("nodes", nodes, 1, 1 << 15)
        self.table_init = tuple(table_init)
        check_int("net_ports", net_ports, 1, 4)
        check_choice("vcs", vcs, (2, 4))
        check_int("depth", depth, MAX_PACKET_BEATS, 64)
        self.link_prefetch = check_choice("link_prefetch", link_prefetch, (1, 2))
        self.link_ports, self.net_ports, self.vcs, self.depth = link_ports, net_ports, vcs, depth
        self.dateline = bool(dateline)
        ports = link_ports + net_ports
        super().__init__({
            "ports": Out(XbarPortSignature(vcs)).array(ports),
            "in_events": Out(InputEvents).array(ports),
            "out_events": Out(OutputEvents).array(ports),
            "port_routes": In(PortRoute).array(link_ports),
            "table_r_addr": In(range(nodes)), "table_r_en": In(1), "table_r_data": Out(RouteEntry),
            "table_w_addr": In(range(nodes)), "table_w_en": In(1), "table_w_data": In(RouteEntry),
            "table_w_be": In(8),
        })

    def elaborate(self, platform):
        m = Module()
        P = self.link_ports + self.net_ports
        ins, outs = [], []
        for p in range(P):
            ins.append(XbarInput(link_ports=self.link_ports, net_ports=self.net_ports,
                                 from_link=p < self.link_ports, nodes=self.nodes, vcs=self.vcs,
                                 dateline=self.dateline))
        reads = [(x, v) for x in ins for v in x.routed_vcs]
        m.submodules.table = table = RouteTable(nodes=self.nodes, reads=len(reads), init=self.table_init)
        for name in ("r_addr", "r_en", "w_addr", "w_en", "w_data", "w_be"):
            m.d.comb += getattr(table, f"sw_{name}").eq(getattr(self, f"table_{name}"))
        m.d.comb += self.table_r_data.eq(table.sw_r_data)
        for k, (x, v) in enumerate(reads):
            m.d.comb += [table.addr[k].eq(x.lookup[v]), x.entries[v].eq(table.data[k])]
        for p, x in enumerate(ins):
            m.submodules[f"in{p}"] = x
            if p < self.link_ports:
                m.d.comb += x.port_route.eq(self.port_routes[p])
            m.submodules[f"out{p}"] = y = XbarOutput(index=p, ports=P, vcs=self.vcs, depth=self.depth,
                                                     prefetch=self.link_prefetch if p < self.link_ports else 2)
            outs.append(y)
            for v in range(self.vcs):
                wiring.connect(m, wiring.flipped(self.ports[p].i[v]), x.i[v])
                wiring.connect(m, y.o[v], wiring.flipped(self.ports[p].o[v]))
            m.d.comb += [self.in_events[p].eq(x.events), self.out_events[p].eq(y.events)]
        for x in ins:
            m.d.comb += [x.avail[o].eq(y.avail) for o, y in enumerate(outs)]
        for i, x in enumerate(ins):
            # an input's grant from its own register (any output's grant register holds it as well):
            # no OR over the outputs in front of the input's packet state
            granted = Signal(name=f"in{i}_granted")
            m.d.sync += granted.eq(Cat(y.granting[i] for y in outs).any())
            m.d.comb += x.grant.eq(granted)
            for o, y in enumerate(outs):
                m.d.comb += [y.reqs[i].valid.eq(x.req.valid), y.reqs[i].port.eq(x.req.port),
                             y.reqs[i].vc.eq(x.req.vc),
                             y.beats[i].valid.eq(x.beat.valid & x.dest_onehot[o]),
                             y.beats[i].payload.eq(x.beat.payload)]
            m.d.comb += x.beat.ready.eq(Cat(y.taking[i] & x.dest_onehot[o] for o, y in enumerate(outs)).any())
            m.d.comb += [y.beat_vcs[i].eq(x.dest_vc) for y in outs]
        if platform == "formal":
            self._properties(m, ins, outs)
        return m

    def _properties(self, m, ins, outs):
        """Between the blocks: an input's grant register agrees with the outputs' grant registers; an
        input is taken by at most two outputs, and when by two, one of them is
        the output of the packet it sends (``dest_port``; the other granted its next packet).  That a
        beat reaches only its packet's output holds by the wiring, not by an assertion: an output sees
        an input's beats, and gives it ``ready``, only while the input's ``dest_onehot`` names it."""
        from amaranth.hdl import Assert
        for i, x in enumerate(ins):
            m.d.comb += Assert(x.grant == Cat(y.grant[i] for y in outs).any())     # the input's own register
            m.d.comb += Assert(sum(y.taking[i] for y in outs) <= 2)
            with m.If(sum(y.taking[i] for y in outs) == 2):
                m.d.comb += Assert(Cat(y.taking[i] & (x.dest_port == o) for o, y in enumerate(outs)).any())
