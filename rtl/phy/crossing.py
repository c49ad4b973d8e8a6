"""Clock-domain crossings of the PHY: phits between the core clock and the SerDes word clocks, and
snapshots of the SerDes-side counters into the core clock (issue 47).  Only
:class:`amaranth.lib.fifo.AsyncFIFO` crosses; nothing else is sampled across domains.
"""

from amaranth.hdl import Module, Shape, Signal
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int
from rtl.common.phit import PhitCtl

from .lane import Phit

__all__ = ["PhitCrossing", "Snapshot"]


class PhitCrossing(wiring.Component):
    """Phits from domain ``w_domain`` to ``r_domain`` through an :class:`~amaranth.lib.fifo.AsyncFIFO`.

    The link port's receiver rejects a flit with a gap (an IDLE phit) inside, so the read side may
    hold a flit back until enough of it is there: a SOF at the head waits until the FIFO holds
    ``prefill`` phits or it has waited ``wait`` cycles, whichever comes first.  ``prefill`` covers the
    jitter of the phits' arrival (the far core's clock seen through two word clocks); ``wait`` lets a
    flit shorter than ``prefill``, or one whose end was lost, go.

    Parameters
    ----------
    w_domain, r_domain : str
    depth : int
        FIFO depth in phits, a power of two.
    prefill : int
        Phits a flit waits for before it starts on the read side (0: it starts at once).
    wait : int
        Longest wait of a flit for ``prefill`` phits, in read-side cycles.

    Members
    -------
    i : In(stream.Signature(Phit, always_ready=True))
        Write side.  A phit that finds the FIFO full is dropped and counted by ``overflow``.
    overflow : Out(1)
        Write-side strobe: a phit was dropped.
    o : Out(stream.Signature(Phit))
        Read side.  An IDLE phit (the receiver's mark of a broken flit) ends a flit as an EOF does.
    underflow : Out(1)
        Read-side strobe: inside a flit and no phit to give (the consumer sees a gap).
    """

    def __init__(self, *, w_domain, r_domain, depth=32, prefill=0, wait=16):
        self._w, self._r = w_domain, r_domain
        self._depth = check_int("depth", depth, 4, 1024)
        if depth & (depth - 1):
            raise ValueError(f"depth must be a power of two, not {depth}")
        self._prefill = check_int("prefill", prefill, 0, depth // 2)
        self._wait = check_int("wait", wait, 1, 255)
        super().__init__({"i": In(stream.Signature(Phit, always_ready=True)), "overflow": Out(1),
                          "o": Out(stream.Signature(Phit)), "underflow": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = q = fifo.AsyncFIFO(width=Shape.cast(Phit).width, depth=self._depth,
                                               w_domain=self._w, r_domain=self._r)
        m.d.comb += [q.w_data.eq(self.i.payload), q.w_en.eq(self.i.valid)]
        m.d[self._w] += self.overflow.eq(self.i.valid & ~q.w_rdy)

        head = Phit(q.r_data)
        in_flit = Signal()
        waited = Signal(range(self._wait + 1))
        hold = Signal()
        if self._prefill:
            m.d.comb += hold.eq(~in_flit & q.r_rdy & (head.ctl == PhitCtl.SOF)
                                & (q.r_level < self._prefill) & (waited != self._wait))
        rd = m.d[self._r]
        rd += [waited.eq(0), self.underflow.eq(in_flit & ~q.r_rdy)]
        with m.If(hold):
            rd += waited.eq(waited + 1)
        m.d.comb += [self.o.payload.eq(head), self.o.valid.eq(q.r_rdy & ~hold), q.r_en.eq(self.o.ready & ~hold)]
        with m.If(self.o.valid & self.o.ready):
            rd += in_flit.eq((head.ctl != PhitCtl.EOF) & (head.ctl != PhitCtl.IDLE))
        return m


class Snapshot(wiring.Component):
    """A value of domain ``w_domain`` seen in ``r_domain``, a few cycles late and always whole (never
    a mix of an old and a new value's bits, as sampling a counter across would give).

    Parameters
    ----------
    shape : shape-like
    w_domain, r_domain : str

    Members
    -------
    i : In(shape)
        Written every ``w_domain`` cycle the FIFO has room.
    o : Out(shape)
        The latest value through (registered in ``r_domain``; the shape's initial value before).
    """

    def __init__(self, shape, *, w_domain, r_domain):
        self._shape, self._w, self._r = shape, w_domain, r_domain
        super().__init__({"i": In(shape), "o": Out(shape)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = q = fifo.AsyncFIFO(width=Shape.cast(self._shape).width, depth=4,
                                               w_domain=self._w, r_domain=self._r)
        m.d.comb += [q.w_data.eq(self.i), q.w_en.eq(1), q.r_en.eq(1)]
        with m.If(q.r_rdy):
            m.d[self._r] += self.o.eq(q.r_data)
        return m
