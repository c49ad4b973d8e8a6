"""Simulation tops for the crossbar tests: the crossbar with counters of its event strobes."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.xbar import Crossbar
from rtl.xbar.crossbar import XbarPortSignature

__all__ = ["CountingCrossbar"]

_IN = ("packet", "missing", "exhausted", "malformed")


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
    """

    def __init__(self, **params):
        self.xbar = Crossbar(**params)
        P = self.xbar.link_ports + self.xbar.net_ports
        members = {"ports": Out(XbarPortSignature(self.xbar.vcs)).array(P)}
        members.update({f"in_{e}": Out(32).array(P) for e in _IN})
        members["out_packet"] = Out(32).array(P)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.xbar = x = self.xbar
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
