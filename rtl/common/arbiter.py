"""Round-robin packet arbiter: several streams of network packets onto one, whole packets at a time.

Used by the network port (dissertation ch. 7.3) to merge the functional units' streams of one message
class, and the two classes' streams for one unit.  A packet is granted at its first beat and keeps the
output until its last beat has moved; the pointer then moves past it, so every requesting stream
waits for at most ``count - 1`` other packets.
"""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature
from rtl.common.params import check_int
from rtl.common.rr import one_hot_index, past_mask, round_robin_mask

__all__ = ["PacketArbiter"]


class PacketArbiter(wiring.Component):
    """``count`` packet streams onto one.

    Parameters
    ----------
    count : int
        Input streams, 1..16.

    Members
    -------
    i : In(NetStreamSignature()).array(count)
    o : Out(NetStreamSignature())
    """

    def __init__(self, *, count):
        self._count = check_int("count", count, 1, 16)
        super().__init__({"i": In(NetStreamSignature()).array(count), "o": Out(NetStreamSignature())})

    def elaborate(self, platform):
        m = Module()
        n = self._count
        if n == 1:
            wiring.connect(m, wiring.flipped(self.i[0]), wiring.flipped(self.o))
            return m
        locked = Signal()                   # a packet is selected (offered, or between its first and last beat)
        sel = Signal(range(n))
        mask = Signal(n, init=(1 << n) - 1)
        grant = round_robin_mask(m, Cat(s.valid for s in self.i), mask, name="pick")
        pick = one_hot_index(m, grant, name="pick_idx")
        cur = Signal(range(n))
        m.d.comb += cur.eq(Mux(locked, sel, pick))
        m.d.comb += [
            self.o.valid.eq(Array(s.valid for s in self.i)[cur]),
            self.o.payload.eq(Array(s.payload for s in self.i)[cur]),
        ]
        for k in range(n):
            m.d.comb += self.i[k].ready.eq(self.o.ready & (cur == k))
        with m.If(self.o.valid):
            # an offered beat holds the choice (the stream rules: valid and payload hold until ready)
            m.d.sync += [locked.eq(~(self.o.ready & self.o.payload.last)), sel.eq(cur)]
            with m.If(~locked):
                m.d.sync += mask.eq(past_mask(grant))
        return m
