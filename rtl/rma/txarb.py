"""The RMA unit's HTAX transmit arbiter: several packet sources share the unit's one HTAX port
(dissertation ch. 7.5.6, fig. 7-12: requester, completer and responder sit behind one port)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxLinkSignature, HtaxPacketSignature
from rtl.common.params import check_int

__all__ = ["RmaTxArbiter", "HtaxPacketSignature"]


class RmaTxArbiter(wiring.Component):
    """Round-robin, packet by packet, over ``sources`` HTAX packet streams onto one HTAX link.

    A packet starts only when the link is ready for its VC, so its header moves in the cycle ``tx.valid``
    rises (a blocked non-posted read never holds the link for the posted writes behind it: the ordering
    rule of fig. 6-7); the grant then stays with the source until its ``last`` beat moves.

    Parameters
    ----------
    sources : int
        Number of inputs, 1..8.

    Members
    -------
    i : In(HtaxPacketSignature()) x sources
        ``i[k].ready`` is the link's ``ready`` of the beat's VC while ``k`` holds or may take the grant.
    tx : Out(HtaxLinkSignature)
        Obeys the HTAX link rules if every source obeys the stream rules.
    """

    def __init__(self, *, sources):
        self.n = check_int("sources", sources, 1, 8)
        super().__init__({"i": In(HtaxPacketSignature()).array(sources), "tx": Out(HtaxLinkSignature())})

    def elaborate(self, platform):
        m = Module()
        n, tx = self.n, self.tx
        busy = Signal()
        grant = Signal(range(n))
        last = Signal(range(n))           # the source served last: lowest priority next
        pick = Signal(range(n))
        can = Signal()

        def ready(k):
            return tx.ready.bit_select(self.i[k].payload.vc.as_value(), 1)

        # round robin: the first startable source after `last`
        with m.Switch(last):
            for k in range(n):
                with m.Case(k):
                    for j in range(n):
                        cand = (k + 1 + j) % n
                        src = self.i[cand]
                        cond = src.valid & src.payload.first & ready(cand)
                        with (m.If(cond) if j == 0 else m.Elif(cond)):
                            m.d.comb += [can.eq(1), pick.eq(cand)]
        sel = Signal(range(n))
        m.d.comb += sel.eq(grant)
        with m.If(~busy):
            m.d.comb += sel.eq(pick)
        with m.Switch(sel):
            for k in range(n):
                with m.Case(k):
                    src = self.i[k]
                    m.d.comb += [tx.payload.eq(src.payload), tx.valid.eq(src.valid & (busy | can)),
                                 src.ready.eq((busy | can) & ready(k))]
        with m.If(tx.transfer()):
            m.d.sync += [busy.eq(~tx.payload.last), grant.eq(sel), last.eq(sel)]
        return m
