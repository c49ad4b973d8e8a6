"""Small stream blocks of the RMA unit: a packet splitter by destination unit, a merge of
single-beat streams and a register slice."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_int

__all__ = ["RmaNetSplit", "RmaMerge", "RmaSlice"]


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


class RmaSlice(wiring.Component):
    """A register slice: one stream in, the same stream out one cycle later, with ``i.ready`` and
    ``o.valid``/``o.payload`` driven from flip-flops only, so no combinational path crosses it in
    either direction.  It breaks long ready/valid chains between blocks (``docs/rma.md``, "Figures").

    An output register with a skid register behind it: ``i.ready`` is "the skid register is empty",
    and a beat taken while the output register stalls waits in the skid register.  Full throughput
    (one beat a cycle), one cycle of latency, two items of storage.

    Parameters
    ----------
    shape : shape-castable
        The payload.

    Members
    -------
    i : In(stream.Signature(shape)) ; o : Out(stream.Signature(shape))
    """

    def __init__(self, *, shape):
        self._shape = shape
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        skid = Signal.like(self.i.payload)
        skid_valid = Signal()
        m.d.comb += self.i.ready.eq(~skid_valid)
        with m.If(~self.o.valid | self.o.ready):        # the output register is free this cycle
            with m.If(skid_valid):
                m.d.sync += [self.o.payload.eq(skid), self.o.valid.eq(1), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid)]
        with m.Elif(self.i.valid & ~skid_valid):
            m.d.sync += [skid.eq(self.i.payload), skid_valid.eq(1)]
        return m
