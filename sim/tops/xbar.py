"""Simulation tops for the crossbar tests: the crossbar with counters of its event strobes, its route
table's write port and its dateline rules on the top's ports."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import PortRoute, RouteEntry
from rtl.xbar import Crossbar
from rtl.xbar.crossbar import XbarPortSignature

__all__ = ["CountingCrossbar"]

_IN = ("packet", "missing", "malformed", "no_route", "loop")


class CountingCrossbar(wiring.Component):
    """A :class:`Crossbar` whose ports appear unchanged and whose event strobes are counted.

    Members
    -------
    ports : Out(XbarPortSignature(vcs)).array(ports)
        The crossbar's ports (``ports__P__i__V__valid`` ...).
    in_<event> : Out(32).array(ports)
        Input event counters (``in_packet``, ``in_missing``, ...).
    out_packet : Out(32).array(ports)
        Packets each output sent.
    table_w_en, table_w_addr, table_w_data : In
        The route table's write port (a write takes effect in the next cycle).
    port_routes : In(PortRoute).array(link_ports)
        The link ports' dateline rules.
    """

    def __init__(self, **params):
        self.xbar = Crossbar(**params)
        P = self.xbar.link_ports + self.xbar.net_ports
        members = {"ports": Out(XbarPortSignature(self.xbar.vcs)).array(P)}
        members.update({f"in_{e}": Out(32).array(P) for e in _IN})
        members["out_packet"] = Out(32).array(P)
        members.update({"table_w_en": In(1), "table_w_addr": In(range(self.xbar.nodes)),
                        "table_w_data": In(RouteEntry), "port_routes": In(PortRoute).array(self.xbar.link_ports)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.xbar = x = self.xbar
        m.d.comb += [x.table_w_en.eq(self.table_w_en), x.table_w_addr.eq(self.table_w_addr),
                     x.table_w_data.eq(self.table_w_data), x.table_w_be.eq(0xFF)]
        m.d.comb += [x.port_routes[k].eq(self.port_routes[k]) for k in range(x.link_ports)]
        for p in range(len(self.ports)):
            for v in range(x.vcs):
                wiring.connect(m, wiring.flipped(self.ports[p].i[v]), x.ports[p].i[v])
                wiring.connect(m, x.ports[p].o[v], wiring.flipped(self.ports[p].o[v]))
            for e in _IN:
                counter = getattr(self, f"in_{e}")[p]
                with m.If(getattr(x.in_events[p], e)):
                    m.d.sync += counter.eq(counter + 1)
            with m.If(x.out_events[p].packet):
                m.d.sync += self.out_packet[p].eq(self.out_packet[p] + 1)
        return m
