"""The ATU's translation request FIFO with a bypass (dissertation ch. 5.4, fig. 5-12 "request FIFO")."""

from amaranth.hdl import Assert, Module, Mux, Shape, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.blockfifo import BlockRamFIFO
from rtl.common.params import check_pow2

from .formats import OfferSignature

__all__ = ["AtuRequestQueue"]


class AtuRequestQueue(wiring.Component):
    """Request FIFO (block RAM, :class:`~rtl.common.blockfifo.BlockRamFIFO`) with a bypass.

    When the FIFO holds nothing (read pipeline included), an arriving request is offered on ``o`` in
    the cycle it arrives; if the lookup does not take it then, it is written into the FIFO and offered
    from there (two cycles later, the FIFO's read latency), and requests keep going through the FIFO
    until it is empty again.  Order is kept: the FIFO never holds anything older than a bypassing
    request.  Its occupancy is counted beside it so that ``i.ready`` (not full), ``i_ready2`` (room for
    two) and "empty" are registers.

    Deviation from fig. 5-12: the bypass (the prototype always went through its FIFO) saves the FIFO's
    two cycles of latency for a TLB hit at an idle ATU.

    Parameters
    ----------
    shape : shape-like
        The request layout.
    depth : int
        FIFO entries (power of two, 4..4096).

    Members
    -------
    i : In(stream.Signature(shape))
        Requests in; ``ready`` is a register and never depends on ``valid``.
    i_ready2 : Out(1)
        At least two entries are free.
    o : Out(OfferSignature(shape))
        Requests out.  An offer from the FIFO holds until taken; a bypass offer that is not taken is
        withdrawn (it went into the FIFO).
    """

    def __init__(self, *, shape, depth):
        self._shape = shape
        self._depth = check_pow2("depth", depth, 4, 4096)
        super().__init__({
            "i": In(stream.Signature(shape)),
            "i_ready2": Out(1),
            "o": Out(OfferSignature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        m.submodules.fifo = fifo = BlockRamFIFO(width=Shape.cast(self._shape).width, depth=depth)
        count = Signal(range(depth + 1))
        ready = Signal(init=1)
        ready2 = Signal(init=1)
        empty = Signal(init=1)
        put = self.i.valid & self.i.ready
        bypass = empty & put & self.o.ready         # empty implies ~fifo.r_rdy
        pop = fifo.r_rdy & self.o.ready
        m.d.comb += [
            self.i.ready.eq(ready),
            self.i_ready2.eq(ready2),
            fifo.w_data.eq(self.i.payload),
            fifo.w_en.eq(put & ~bypass),
            fifo.r_en.eq(pop),
            self.o.valid.eq(fifo.r_rdy | (empty & put)),
            self.o.payload.eq(Mux(empty, Value.cast(self.i.payload), fifo.r_data)),
        ]
        with m.If(fifo.w_en & ~fifo.r_en):
            m.d.sync += [count.eq(count + 1), empty.eq(0), ready.eq(count != depth - 1),
                         ready2.eq(count < depth - 2)]
        with m.Elif(fifo.r_en & ~fifo.w_en):
            m.d.sync += [count.eq(count - 1), empty.eq(count == 1), ready.eq(1),
                         ready2.eq(count <= depth - 1)]

        if platform == "formal":
            m.d.comb += [
                Assert(count == fifo.level),
                Assert(ready == (count != depth)),
                Assert(ready2 == (count <= depth - 2)),
                Assert(empty == (count == 0)),
                Assert(~fifo.w_en | fifo.w_rdy),
            ]
            # an offer from the FIFO holds until taken (only a bypass offer is withdrawn)
            from_fifo = Signal()
            prev = Signal.like(fifo.r_data)
            m.d.sync += [from_fifo.eq(fifo.r_rdy & ~self.o.ready), prev.eq(fifo.r_data)]
            with m.If(from_fifo):
                m.d.comb += [Assert(self.o.valid & ~empty), Assert(Value.cast(self.o.payload) == prev)]
        return m
