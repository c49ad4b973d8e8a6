"""One crossbar's routing step under table routing (dissertation ch. 7.3, 7.4; ``docs/network.md``).

Combinational: the route table's entry for the packet's destination (:class:`~rtl.common.net.RouteEntry`),
the input port's dateline rule (:class:`~rtl.common.net.PortRoute`) and the packet's hop count decide the
output (a link port on dateline VC 0 or 1, or a network port), or a :class:`~rtl.common.net.RouteError`,
and the hop count the packet leaves with.  :func:`sim.netroute.table_step` is the Python reference;
``tests/xbar/test_route.py`` compares the two exhaustively over the fields.
"""

from amaranth.hdl import Cat, Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import EJECT, MAX_HOPS, NetClass, PortRoute, RouteEntry, RouteError

__all__ = ["RouteStep"]


class RouteStep(wiring.Component):
    """The routing step of a crossbar with ``link_ports`` link ports and ``net_ports`` network ports, at
    an input that is a link port (``from_link``) or a network port.

    Parameters
    ----------
    link_ports, net_ports : int
        The crossbar's ports: link ports ``0 .. link_ports - 1``, network ports after them.
    from_link : bool
        The input is a link port: its :class:`PortRoute` and the packet's dateline VC apply.
    dateline : bool
        ``False`` keeps every packet on dateline VC 0 (test only: the deadlock the dateline prevents).

    Members
    -------
    entry : In(RouteEntry)
        The route table's entry for the packet's ``dst_node``.
    in_table : In(1)
        ``dst_node`` is within the table (else ``NO_ROUTE``).
    hops : In(6)
        The packet's hop count.
    port_route : In(PortRoute)
        The input's dateline rule (ignored at a network port).
    in_dateline : In(1)
        The dateline VC the packet arrived on.
    cls : In(NetClass)
        The packet's message class.
    port : Out(range(link_ports + net_ports))
        The output port (valid when ``error`` is ``NONE``).
    vc : Out(2)
        The output VC, ``2 * cls + dateline`` (``2 * cls`` at a network port).
    error : Out(RouteError)
    next_hops : Out(6)
        The hop count the packet leaves with (one more over a link).
    """

    def __init__(self, *, link_ports, net_ports, from_link=True, dateline=True):
        self._links, self._nets, self._from_link, self._dateline = link_ports, net_ports, from_link, dateline
        super().__init__({
            "entry": In(RouteEntry), "in_table": In(1), "hops": In(6), "port_route": In(PortRoute),
            "in_dateline": In(1), "cls": In(NetClass),
            "port": Out(range(link_ports + net_ports)), "vc": Out(2), "error": Out(RouteError),
            "next_hops": Out(6),
        })

    def elaborate(self, platform):
        m = Module()
        e, r = self.entry, self.port_route
        eject = e.port >= EJECT
        net = e.port - EJECT
        straight = Const(0)
        if self._from_link:
            straight = r.has_straight & (r.straight == e.port) & (self.in_dateline | r.wrapped)
        dateline = Const(0) if not self._dateline else (~eject & (e.dateline | straight))
        m.d.comb += [self.vc.eq(Cat(dateline, self.cls)), self.next_hops.eq(self.hops)]
        with m.If(~self.in_table | ~e.valid):
            m.d.comb += self.error.eq(RouteError.NO_ROUTE)
        with m.Elif(eject):
            m.d.comb += self.port.eq(self._links + net)
            with m.If(net >= self._nets):
                m.d.comb += self.error.eq(RouteError.MISSING_PORT)
        with m.Else():
            m.d.comb += [self.port.eq(e.port), self.next_hops.eq(self.hops + 1)]
            with m.If(e.port >= self._links):
                m.d.comb += self.error.eq(RouteError.MISSING_PORT)
            with m.Elif(self.hops >= MAX_HOPS):
                m.d.comb += self.error.eq(RouteError.LOOP)
        return m
