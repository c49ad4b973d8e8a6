"""One crossbar's routing step on a route word (dissertation ch. 7.3; ``docs/network.md``).

Combinational: the current routing character of the packet's route word decides the output (a link
port on dateline VC 0 or 1, or a network port), or a :class:`~rtl.common.net.RouteError`, and the
route word the packet leaves with (the running hop count decremented, a finished character shifted
out).  :func:`sim.netroute.route_step` is the Python reference; ``tests/xbar/test_route.py`` compares
the two exhaustively over the character fields.
"""

from amaranth.hdl import Cat, Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import EJECT, ROUTE_CHARS, NetClass, NetRoute, RouteError

__all__ = ["RouteStep"]


class RouteStep(wiring.Component):
    """The routing step of a crossbar with ``link_ports`` link ports and ``net_ports`` network ports.

    Parameters
    ----------
    link_ports, net_ports : int
        The crossbar's ports: link ports ``0 .. link_ports - 1``, network ports after them.
    dateline : bool
        ``False`` keeps every packet on dateline VC 0 (test only: the deadlock the dateline prevents).

    Members
    -------
    route : In(NetRoute)
        The packet's route word.
    cls : In(NetClass)
        The packet's message class.
    port : Out(range(link_ports + net_ports))
        The output port (valid when ``error`` is ``NONE``).
    vc : Out(2)
        The output VC, ``2 * cls + dateline`` (``2 * cls`` at a network port).
    error : Out(RouteError)
    next : Out(NetRoute)
        The route word the packet leaves with.
    consume : Out(1)
        ``next`` is the route word shifted right by one character; otherwise it is the route word with
        ``next.chars[0]``'s hop counts in place of the current character's (so a crossbar that keeps
        only ``consume`` and those 12 bits can rebuild ``next`` from the route beat as it leaves).
    """

    def __init__(self, *, link_ports, net_ports, dateline=True):
        self._links, self._nets, self._dateline = link_ports, net_ports, dateline
        super().__init__({
            "route": In(NetRoute), "cls": In(NetClass),
            "port": Out(range(link_ports + net_ports)), "vc": Out(2), "error": Out(RouteError),
            "next": Out(NetRoute), "consume": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self.route.chars[0]
        eject = c.port >= EJECT
        net = c.port - EJECT
        on_vc1 = c.hops0 == 0
        hops0 = Mux(on_vc1, c.hops0, c.hops0 - 1)
        hops1 = Mux(on_vc1, c.hops1 - 1, c.hops1)
        done = (hops0 == 0) & (hops1 == 0)
        with m.If(eject):
            m.d.comb += [self.port.eq(self._links + net), self.next.eq(self.route)]
            with m.If(net >= self._nets):
                m.d.comb += self.error.eq(RouteError.MISSING_PORT)
        with m.Else():
            m.d.comb += self.port.eq(c.port)
            with m.If(c.port >= self._links):
                m.d.comb += self.error.eq(RouteError.MISSING_PORT)
            with m.Elif((c.hops0 == 0) & (c.hops1 == 0)):
                m.d.comb += self.error.eq(RouteError.EXHAUSTED)
            m.d.comb += self.consume.eq(done)
            with m.If(done):                # the character is consumed: the next one is current
                m.d.comb += [self.next.chars[k].eq(self.route.chars[k + 1]) for k in range(ROUTE_CHARS - 1)]
            with m.Else():
                m.d.comb += [self.next.eq(self.route),
                             self.next.chars[0].hops0.eq(hops0), self.next.chars[0].hops1.eq(hops1)]
        dateline = Const(0) if not self._dateline else (on_vc1 & ~eject)
        m.d.comb += self.vc.eq(Cat(dateline, self.cls))
        return m
