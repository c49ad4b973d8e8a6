"""Round-robin packet arbiter: several streams of network packets onto one, whole packets at a time.

Used by the network port (dissertation ch. 7.3) to merge the functional units' streams of one message
class, and the two classes' streams for one unit, and by the RMA unit to merge its two sources of
response-class packets.  A packet is granted at its first beat and keeps the output until its last
beat has moved; the round robin then moves past it, so every requesting stream waits for at most
``count - 1`` other packets.

The choice is a register made a cycle ahead (``sel``): as a packet's last beat moves, the round robin
picks the next stream among those offering a beat, so back-to-back packets of different streams leave
without a gap.  When the chosen stream offers nothing in a cycle in which no packet is under way,
either the lowest stream that offers a beat goes instead (``fallback=True``: the inputs' ``ready``
depends on the register, the inputs' ``valid`` and the output's ``ready``), or the round robin picks
again for the next cycle (``fallback=False``: such a packet waits a cycle, and the inputs' ``ready``
depends on the register and the output's ``ready`` only, so no path runs from an input's ``valid``
back to its ``ready``).  Neither depends on the round robin's priority logic.
"""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature
from rtl.common.params import check_int
from rtl.common.rr import lowest, one_hot_index, past_mask, round_robin_mask

__all__ = ["PacketArbiter"]


class PacketArbiter(wiring.Component):
    """``count`` packet streams onto one.

    Parameters
    ----------
    count : int
        Input streams, 1..16.
    fallback : bool
        An idle arbiter whose chosen stream offers nothing takes the lowest offering stream at once
        (``True``) or picks again for the next cycle (``False``).

    Members
    -------
    i : In(NetStreamSignature()).array(count)
    o : Out(NetStreamSignature())
    """

    def __init__(self, *, count, fallback=True):
        self._count = check_int("count", count, 1, 16)
        self._fallback = bool(fallback)
        super().__init__({"i": In(NetStreamSignature()).array(count), "o": Out(NetStreamSignature())})

    def elaborate(self, platform):
        m = Module()
        n = self._count
        if n == 1:
            wiring.connect(m, wiring.flipped(self.i[0]), wiring.flipped(self.o))
            return m
        valid = Cat(s.valid for s in self.i)
        locked = Signal()                   # inside a packet: its first beat was offered, its last has not moved
        sel = Signal(range(n))              # the stream chosen a cycle ahead (held while locked)
        cur = Signal(range(n))
        if self._fallback:
            fallback = one_hot_index(m, lowest(valid), name="fallback")
            m.d.comb += cur.eq(Mux(locked | valid.bit_select(sel, 1), sel, fallback))
        else:
            m.d.comb += cur.eq(sel)
        m.d.comb += [
            self.o.valid.eq(valid.bit_select(cur, 1)),
            self.o.payload.eq(Array(s.payload for s in self.i)[cur]),
        ]
        for k in range(n):
            m.d.comb += self.i[k].ready.eq(self.o.ready & (cur == k))
        # the next choice: the first stream offering now after the current one (which comes last: it
        # may offer again behind its last beat)
        grant = round_robin_mask(m, valid, past_mask(Cat(cur == k for k in range(n))), name="pick")
        pick = one_hot_index(m, grant, name="pick_idx")
        with m.If(self.o.valid & self.o.ready & self.o.payload.last):
            m.d.sync += [locked.eq(0), sel.eq(pick)]
        with m.Elif(self.o.valid):
            # an offered beat holds the choice until its packet's last beat moves (the stream rules:
            # valid and payload hold until ready; a packet's beats are never interleaved)
            m.d.sync += [locked.eq(1), sel.eq(cur)]
        with m.Elif(~locked & valid.any()):
            # idle, the chosen stream offers nothing (only without the fallback): choose again
            m.d.sync += sel.eq(pick)
        return m
