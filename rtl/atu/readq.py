"""The queue of GATE reads waiting for the ATU's output (dissertation ch. 5.4, fig. 5-12 "DMA read")."""

from amaranth.hdl import Assert, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_pow2

from .util import count_step, stream_rules

__all__ = ["AtuReadQueue"]


class AtuReadQueue(wiring.Component):
    """A FIFO of ``depth`` entries (LUT RAM) whose write side separates storing from pushing.

    The entry at the write pointer is written whenever ``w_en`` is high and becomes part of the queue
    only with ``push``: the caller writes whenever a request leaves the lookup, before it knows whether
    the request is a miss, and pushes only a miss (``push`` needs ``w_en``).  The caller guarantees that
    the entry is free whenever ``w_en`` is high (the queue holds only misses that own a reorder-buffer
    slot, and ``w_en`` needs a free slot).  Its occupancy is counted so that ``o.valid`` is a register.

    Parameters
    ----------
    shape : shape-like
    depth : int
        Entries (power of two, 2..32: the reorder buffer's slots).

    Members
    -------
    w_data : In(shape)
    w_en : In(1)
        Write ``w_data`` into the entry at the write pointer.
    push : In(1)
        The entry written in this cycle joins the queue.
    o : Out(stream.Signature(shape))
        The oldest entry; obeys the stream rules.
    """

    def __init__(self, *, shape, depth):
        self._shape = shape
        self._depth = check_pow2("depth", depth, 2, 32)
        super().__init__({
            "w_data": In(shape), "w_en": In(1), "push": In(1),
            "o": Out(stream.Signature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        m.submodules.mem = mem = Memory(shape=self._shape, depth=depth, init=[])
        w, r = mem.write_port(), mem.read_port(domain="comb")
        wptr = Signal(range(depth))
        rptr = Signal(range(depth))
        count = Signal(range(depth + 1))
        valid = Signal()                    # count != 0, as a register
        pop = self.o.valid & self.o.ready
        m.d.comb += [
            w.addr.eq(wptr), w.en.eq(self.w_en), w.data.eq(self.w_data),
            r.addr.eq(rptr), self.o.payload.eq(r.data), self.o.valid.eq(valid),
        ]
        with m.If(pop):
            m.d.sync += rptr.eq(rptr + 1)
        with m.If(self.push):
            m.d.sync += wptr.eq(wptr + 1)
        count_step(m, count, self.push, pop)
        # the next (count != 0) without the adder's carry chain
        m.d.sync += valid.eq(self.push | (valid & ~(pop & (count == 1))))

        if platform == "formal":
            stream_rules(m, self.o, Assert, name="o")
            m.d.comb += [
                Assert(valid == (count != 0)),
                Assert((wptr - rptr)[:len(wptr)] == count[:len(wptr)]),
                Assert(~self.push | self.w_en),
                Assert(~self.w_en | (count != depth)),
            ]
        return m
