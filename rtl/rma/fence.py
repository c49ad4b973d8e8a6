"""The RMA unit's ordering fence: holds a stream until the packets issued on another path have reached
the unit's transmit arbiter (dissertation ch. 7.5.4, 7.5.6; ``docs/rma.md``, "Ordering")."""

from amaranth.hdl import Assert, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["RmaFence"]


class RmaFence(wiring.Component):
    """Rule: an item of ``i`` is offered on ``o`` only when every packet issued on the fenced path in an
    earlier cycle has arrived at its ordering point.

    The fenced path runs from an engine's HTAX packet output (``issued``: a packet's last beat leaves
    the engine) to the transmit arbiter's input (``arrived``: that packet's last beat enters the
    arbiter, after which the unit's HTAX packets keep their order).  Buffers may sit anywhere on the
    path; what follows the item (it is offered later than every packet counted) leaves the unit after
    those packets.  Once offered, an item stays offered until taken (stream rules), also if a packet is
    issued meanwhile: such a packet is ordered after it.

    :class:`~rtl.rma.rma.Rma` uses two: the completer's notifications wait for its payload writes (a
    put's data before its notification), and the responder's DMA reads wait for its lock write-backs
    (a lock's write-back before the next read of the same word: FCAA atomicity).

    ``issued`` and ``arrived`` are registered where they enter, so neither the engine's logic nor the
    arbiter's grant reaches the counter or ``o``: an issue holds ``o`` from the next cycle on through
    its register, then through the count; an arrival frees it a cycle late.  Where the path has no
    buffer ``o`` is free again two cycles after the last beat.

    Parameters
    ----------
    shape : shape-castable
        The payload of ``i`` and ``o``.
    depth : int
        The most packets that may be on the fenced path at once (1..15); the count saturates there,
        and a formal assumption states the environment never exceeds it.

    Members
    -------
    i : In(stream.Signature(shape)) ; o : Out(stream.Signature(shape))
    issued, arrived : In(1)
        A packet of the fenced path leaves the engine; one arrives at the ordering point.
    """

    def __init__(self, *, shape, depth=4):
        self._shape = shape
        self.depth = check_int("depth", depth, 1, 15)
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape)),
                          "issued": In(1), "arrived": In(1)})

    def elaborate(self, platform):
        m = Module()
        issued, arrived = Signal(), Signal()     # the strobes of the last cycle
        m.d.sync += [issued.eq(self.issued), arrived.eq(self.arrived)]
        count = Signal(range(self.depth + 1))     # packets issued and not yet arrived, as registered
        offered = Signal()                        # o was valid and not taken in the last cycle
        clear = ((count == 0) & ~issued) | offered
        m.d.comb += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid & clear),
                     self.i.ready.eq(self.o.ready & clear)]
        m.d.sync += offered.eq(self.o.valid & ~self.o.ready)
        nxt = count + issued - arrived
        m.d.sync += count.eq(Mux(nxt > self.depth, self.depth, Mux(nxt < 0, 0, nxt)))
        if platform == "formal":
            m.d.comb += Assert(~self.o.valid | offered | ((count == 0) & ~issued))
        return m
