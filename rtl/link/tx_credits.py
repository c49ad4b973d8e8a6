"""Credit accounting of the link port's transmit side (dissertation ch. 7.3)."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .params import require_params

__all__ = ["LinkTxCreditSignature", "LinkTxCredits"]


class LinkTxCreditSignature(wiring.Signature):
    """The flit sequencer's side of the credit accounting.

    Members
    -------
    sent_incr : Out(vcs)
        Bit ``v``: a beat of VC ``v`` is sent for the first time in this cycle.
    ctrl_sent : Out(1)
        A control flit starts in this cycle; it carries the receiver's ``freed`` counters.
    credit_ok : In(vcs)
        Bit ``v``: the peer has at least one beat of receive buffer free for VC ``v``.
    credit_dirty : In(1)
        A counter of ``freed`` differs from the one the last control flit carried.
    """

    def __init__(self, vcs):
        self.vcs = vcs
        super().__init__({"sent_incr": Out(vcs), "ctrl_sent": Out(1), "credit_ok": In(vcs),
                          "credit_dirty": In(1)})

    def __eq__(self, other):
        return type(other) is LinkTxCreditSignature and other.vcs == self.vcs

    def __hash__(self):
        return hash((LinkTxCreditSignature, self.vcs))

    def __repr__(self):
        return f"LinkTxCreditSignature({self.vcs})"


class LinkTxCredits(wiring.Component):
    """Credit accounting of :class:`~rtl.link.LinkTx`, per VC (``docs/link.md``, "Credits").

    The peer's receive buffer of ``rx_buffer_beats`` beats per VC is the credit pool.  ``sent`` counts
    the beats sent for the first time, ``peer_freed`` the peer's cumulative freed count from its last
    control flit; a VC may send while ``rx_buffer_beats - (sent - peer_freed)`` is at least one.  A
    credit update that would free more beats than were sent is a protocol error and ignored.

    Timing: ``credit_ok`` is registered from the previous cycle's count.  At most one beat per cycle is
    sent, so ">= 2 then" means ">= 1 now"; one credit of the pool goes unused.  Credit updates are
    checked in one cycle and applied in the next (``peer_freed`` changes only through them and
    ``sent`` only grows, so the check stays valid).

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    flits : In(LinkTxCreditSignature(vcs))
        From the flit sequencer.
    credit_valid : In(1) ; credit : In(credit_bits).array(vcs)
        The peer's cumulative freed counters, from a control flit (:class:`~rtl.link.link_rx.LinkRx`).
    freed : In(credit_bits).array(vcs)
        This port's receiver's cumulative freed counters, which the next control flit carries.
    protocol : Out(1)
        Strobe: a credit update outside the possible range.
    """

    def __init__(self, params):
        self.params = p = require_params(params)
        super().__init__({"flits": In(LinkTxCreditSignature(p.vcs)),
                          "credit_valid": In(1), "credit": In(p.credit_bits).array(p.vcs),
                          "freed": In(p.credit_bits).array(p.vcs), "protocol": Out(1)})

    def elaborate(self, platform):
        m = Module()
        p = self.params
        C = p.credit_bits
        sent = [Signal(C, name=f"sent{v}") for v in range(p.vcs)]
        peer_freed = [Signal(C, name=f"peer_freed{v}") for v in range(p.vcs)]
        credit_sent = [Signal(C, name=f"credit_sent{v}") for v in range(p.vcs)]
        avail = [Signal(C + 1, name=f"avail{v}") for v in range(p.vcs)]
        credit_ok = [Signal(name=f"credit_ok{v}", init=1) for v in range(p.vcs)]
        for v in range(p.vcs):
            m.d.comb += avail[v].eq(p.rx_buffer_beats - (sent[v] - peer_freed[v])[:C])
            m.d.sync += credit_ok[v].eq(avail[v] >= 2)
            with m.If(self.flits.sent_incr[v]):
                m.d.sync += sent[v].eq(sent[v] + 1)
        m.d.comb += self.flits.credit_ok.eq(Cat(*credit_ok))

        credit_dirty = Signal()     # registered (timing): an update may wait one more cycle
        m.d.sync += credit_dirty.eq(Cat(*(self.freed[v] != credit_sent[v] for v in range(p.vcs))).any())
        m.d.comb += self.flits.credit_dirty.eq(credit_dirty)
        with m.If(self.flits.ctrl_sent):
            m.d.sync += [credit_sent[v].eq(self.freed[v]) for v in range(p.vcs)]

        c_valid = Signal()
        c_credit = [Signal(C, name=f"c_credit{v}") for v in range(p.vcs)]
        c_ok = [Signal(name=f"c_ok{v}") for v in range(p.vcs)]
        m.d.sync += c_valid.eq(self.credit_valid)
        for v in range(p.vcs):
            m.d.sync += [c_credit[v].eq(self.credit[v]),
                         c_ok[v].eq((self.credit[v] - peer_freed[v])[:C] <= (sent[v] - peer_freed[v])[:C])]
        with m.If(c_valid):
            for v in range(p.vcs):
                with m.If(c_ok[v]):
                    m.d.sync += peer_freed[v].eq(c_credit[v])
                with m.Else():
                    m.d.comb += self.protocol.eq(1)
        return m
