"""Small stream blocks of the RMA unit: a packet splitter by destination unit, a merge of
single-beat streams (the register slice is :class:`rtl.common.slice.RegisterSlice`)."""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_int
from rtl.common.rr import lowest, one_hot_index, past_mask, round_robin_mask

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

    As :class:`~rtl.common.arbiter.PacketArbiter` with its fallback: the next stream is chosen a cycle
    ahead into a register (the first offering after the one served), and when that stream offers
    nothing the lowest offering one goes at once, so the round robin's priority logic reaches neither
    ``o`` nor the inputs' ``ready``.

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
        valid = Cat(s.valid for s in self.i)
        sel = Signal(range(n))              # the stream chosen a cycle ahead
        hold = Signal()                     # an item was offered and not taken: its stream keeps o
        cur = Signal(range(n))
        fallback = one_hot_index(m, lowest(valid), name="fallback")
        m.d.comb += cur.eq(Mux(hold | valid.bit_select(sel, 1), sel, fallback))
        m.d.comb += [self.o.valid.eq(valid.bit_select(cur, 1)),
                     self.o.payload.eq(Array(s.payload for s in self.i)[cur])]
        for k in range(n):
            m.d.comb += self.i[k].ready.eq(self.o.ready & (cur == k))
        grant = round_robin_mask(m, valid, past_mask(Cat(cur == k for k in range(n))), name="pick")
        pick = one_hot_index(m, grant, name="pick_idx")
        m.d.sync += hold.eq(self.o.valid & ~self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += sel.eq(pick)
        with m.Elif(self.o.valid):
            m.d.sync += sel.eq(cur)
        return m
