"""Small stream blocks of the RMA unit: a packet splitter by destination unit, a merge of
single-beat streams (the register slice is :class:`rtl.common.slice.RegisterSlice`)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_int

__all__ = ["RmaNetSplit", "RmaMerge"]


class RmaNetSplit(wiring.Component):
    """Network packets -> ``responder`` (header ``unit`` is ``RMA_RESPONDER``: get and lock requests,
    the request class) or ``completer`` (everything else: the response class, docs/network.md).  The
    choice is made at the header and held to the packet's ``last`` beat.

    Members
    -------
    i : In(NetStreamSignature()) ; responder, completer : Out(NetStreamSignature())
    """

    i: In(NetStreamSignature())
    responder: Out(NetStreamSignature())
    completer: Out(NetStreamSignature())

    def elaborate(self, platform):
        m = Module()
        held = Signal()                 # inside a packet whose header went to the responder
        to_rsp = Mux(self.i.payload.first, NetHeader(self.i.payload.data).unit == NetUnit.RMA_RESPONDER, held)
        for o, sel in ((self.responder, to_rsp), (self.completer, ~to_rsp)):
            m.d.comb += [o.payload.eq(self.i.payload), o.valid.eq(self.i.valid & sel)]
        m.d.comb += self.i.ready.eq(Mux(to_rsp, self.responder.ready, self.completer.ready))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += held.eq(to_rsp & ~self.i.payload.last)
        return m


class RmaMerge(wiring.Component):
    """``count`` streams of single items onto one, round robin; an offered item stays offered until
    taken.

    Members
    -------
    i : In(stream.Signature(shape)).array(count) ; o : Out(stream.Signature(shape))
    """

    def __init__(self, *, shape, count):
        self.count = check_int("count", count, 1, 8)
        super().__init__({"i": In(stream.Signature(shape)).array(count), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        n = self.count
        last = Signal(range(n))
        pick = Signal(range(n))
        with m.Switch(last):
            for k in range(n):
                with m.Case(k):
                    for j in range(n):
                        cand = (k + 1 + j) % n
                        with (m.If(self.i[cand].valid) if j == 0 else m.Elif(self.i[cand].valid)):
                            m.d.comb += pick.eq(cand)
        # an offered item stays selected until taken (stream rules: the payload holds)
        hold = Signal()
        held = Signal(range(n))
        sel = Mux(hold, held, pick)
        with m.Switch(sel):
            for k in range(n):
                with m.Case(k):
                    m.d.comb += [self.o.valid.eq(self.i[k].valid), self.o.payload.eq(self.i[k].payload),
                                 self.i[k].ready.eq(self.o.ready)]
        with m.If(self.o.valid & ~self.o.ready):
            m.d.sync += [hold.eq(1), held.eq(sel)]
        with m.Elif(self.o.valid):
            m.d.sync += [hold.eq(0), last.eq(sel)]
        return m
