"""The RMA unit's HTAX transmit arbiter: several packet sources share the unit's one HTAX port
(dissertation ch. 7.5.6, fig. 7-12: requester, completer and responder sit behind one port)."""

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxLinkSignature, HtaxPacketSignature
from rtl.common.params import check_int
from rtl.common.rr import one_hot_index, past_mask, round_robin_mask

__all__ = ["RmaTxArbiter", "HtaxPacketSignature"]


class RmaTxArbiter(wiring.Component):
    """Round-robin, packet by packet, over ``sources`` HTAX packet streams onto one HTAX link.

    A packet starts only when the link is ready for its VC, so its header moves in the cycle ``tx.valid``
    rises (a blocked non-posted read never holds the link for the posted writes behind it: the ordering
    rule of fig. 6-7); the grant then stays with the source until its ``last`` beat moves.

    The source is chosen a cycle ahead, into a register (``sel``): as a packet's last beat moves, the
    first source after it that can start (a header offered on a ready VC) is chosen; an idle arbiter
    whose choice cannot start chooses again for the next cycle (a packet of another source waits a
    cycle).  ``tx.payload`` is thus a multiplexer on registers, and no source's ``ready`` follows
    another source's ``valid``: the round robin reaches neither the link nor the sources.

    Parameters
    ----------
    sources : int
        Number of inputs, 1..8.

    Members
    -------
    i : In(HtaxPacketSignature()) x sources
        ``i[k].ready`` is the link's ``ready`` of the beat's VC while ``k`` is chosen (for a header, and
        within its packet).
    tx : Out(HtaxLinkSignature)
        Obeys the HTAX link rules if every source obeys the stream rules.
    """

    def __init__(self, *, sources):
        self.n = check_int("sources", sources, 1, 8)
        super().__init__({"i": In(HtaxPacketSignature()).array(sources), "tx": Out(HtaxLinkSignature())})

    def elaborate(self, platform):
        m = Module()
        n, tx = self.n, self.tx
        busy = Signal()                   # inside a packet: its header moved, its last beat has not
        sel = Signal(range(n))            # the source chosen (held while busy)

        def ready(k):
            return tx.ready.bit_select(self.i[k].payload.vc.as_value(), 1)

        # a source may start: a header offered on a VC the link is ready for
        startable = Cat(s.valid & s.payload.first & ready(k) for k, s in enumerate(self.i))
        for k, src in enumerate(self.i):
            m.d.comb += src.ready.eq((sel == k) & (busy | src.payload.first) & ready(k))
        valid = Cat(s.valid for s in self.i)
        m.d.comb += [tx.payload.eq(Array(s.payload for s in self.i)[sel]),
                     tx.valid.eq(valid.bit_select(sel, 1) & (busy | startable.bit_select(sel, 1)))]

        # the next choice: the first source after the chosen one that can start now
        grant = round_robin_mask(m, startable, past_mask(Cat(sel == k for k in range(n))), name="pick")
        pick = one_hot_index(m, grant, name="pick_idx")
        with m.If(tx.transfer()):
            m.d.sync += busy.eq(~tx.payload.last)
            with m.If(tx.payload.last & startable.any()):
                m.d.sync += sel.eq(pick)
        with m.Elif(~busy & startable.any()):
            m.d.sync += sel.eq(pick)
        return m
