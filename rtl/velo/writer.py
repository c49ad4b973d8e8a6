"""VELO completer, back half: a slot plan and its payload -> posted HTAX WRITEs (dissertation ch. 7.4)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxHeader, HtaxLinkSignature, HtaxVC
from rtl.common.params import check_port, check_pow2

from .formats import SLOT_WORDS
from .planner import VeloSlotPlan

__all__ = ["VeloSlotWriter"]


class VeloSlotWriter(wiring.Component):
    """VELO completer, back half: a slot plan and its payload words -> posted HTAX WRITEs (dissertation
    ch. 7.4, fig. 7-5).

    Each slot is one WRITE to the plan's slot address: header, status word (:class:`~rtl.velo.formats.
    VeloStatus`), payload words.  An 8-word packet takes two slots, status + 7 words and status + 1 word.
    After the last beat of the last slot the plan is released (``plan.ready``), ``done`` strobes and the
    plan's VPID bit of ``irq`` pulses.  Beats go out back to back: a slot of ``n`` payload words takes
    ``n + 2`` cycles of the HTAX link, the bound of the completer's message rate.

    Rule (ch. 7.4: "a slot is always written using one HT packet, writing of one slot is thus
    atomic"): a slot's status word and its payload words leave in one posted WRITE, the status word
    first.  This block joins them: the status word comes with the plan, the words from ``words``,
    each in the cycle it leaves on ``tx``; the words of a plan are the next ``words`` of ``words``, so
    the pairing holds whatever buffers keep the order of ``plan``, ``words`` and ``tx``.  Checked by
    ``formal/velo.py`` (``writer``).

    Parameters
    ----------
    vpids : int
        Mailboxes (power of two, 2..32).
    htax_port, host_port : int
        ``src`` and ``dst`` of the slot writes.

    Members
    -------
    plan : In(stream.Signature(VeloSlotPlan))
    words : In(stream.Signature(64))
    tx : Out(HtaxLinkSignature)
        Slot writes into the HTAX (posted VC).
    done : Out(1)
    irq : Out(vpids)
    """

    def __init__(self, *, vpids, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({"plan": In(stream.Signature(VeloSlotPlan)), "words": In(stream.Signature(64)),
                          "tx": Out(HtaxLinkSignature()), "done": Out(1), "irq": Out(vpids)})

    def elaborate(self, platform):
        m = Module()
        tx, p = self.tx, self.plan.payload
        second = Signal()                       # emitting the second slot of an 8-word packet
        count = Signal(range(SLOT_WORDS))       # payload words left in this slot, minus one
        slot_words = Signal(4)
        m.d.comb += slot_words.eq(Mux(second, 1, p.words))

        beat = Signal(HtaxBeat)
        m.d.comb += [tx.payload.eq(beat), beat.vc.eq(HtaxVC.POSTED)]
        h = Signal(HtaxHeader)
        m.d.comb += [h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED), h.src.eq(self.htax_port),
                     h.dst.eq(self.host_port), h.body.mem.addr.eq(Mux(second, p.addr[1], p.addr[0])),
                     h.body.mem.length.eq(slot_words + 1), h.body.mem.first_be.eq(0xFF),
                     h.body.mem.last_be.eq(0xFF)]
        m.d.comb += [self.irq.eq(self.done << p.vpid), self.words.ready.eq(0)]

        with m.FSM():
            with m.State("HEADER"):
                m.d.comb += [tx.valid.eq(self.plan.valid), beat.first.eq(1), beat.word.header.eq(h)]
                with m.If(tx.transfer()):
                    m.d.sync += count.eq(slot_words - 1)
                    m.next = "STATUS"
            with m.State("STATUS"):
                m.d.comb += [tx.valid.eq(1),
                             beat.word.data.eq(Mux(second, p.status[1].as_value(), p.status[0].as_value()))]
                with m.If(tx.transfer()):
                    m.next = "PAYLOAD"
            with m.State("PAYLOAD"):
                m.d.comb += [tx.valid.eq(self.words.valid), beat.word.data.eq(self.words.payload),
                             beat.last.eq(count == 0), self.words.ready.eq(tx.transfer())]
                with m.If(tx.transfer()):
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 0):
                        m.next = "HEADER"
                        with m.If(p.two & ~second):
                            m.d.sync += second.eq(1)
                        with m.Else():
                            m.d.sync += second.eq(0)
                            m.d.comb += [self.done.eq(1), self.plan.ready.eq(1)]
        return m
