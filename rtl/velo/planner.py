"""VELO completer, front half: a packet's header -> a slot plan (dissertation ch. 7.4)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_pow2

from .formats import SLOT_WORDS, VeloNetFields, VeloStatus

__all__ = ["VeloSlotPlan", "VeloSlotPlanner"]


class VeloSlotPlan(data.Struct):
    """What the slot writer needs for one packet: one slot, or two for an 8-word packet."""
    addr: data.ArrayLayout(52, 2)       # slot addresses (the second: the next slot modulo the ring)
    status: data.ArrayLayout(VeloStatus, 2)
    words: 4                            # payload words of the first slot, 1..7
    two: 1                              # 8 payload words: a second slot with one word
    vpid: 5


class VeloSlotPlanner(wiring.Component):
    """VELO completer, front half: one network packet -> a slot plan and its payload words (dissertation
    ch. 7.4, fig. 7-5, table 7-1).

    The header is taken in ``IDLE``; its destination VPID addresses every per-VPID look-up (MSLT, BALT,
    RPLT, WPLT), whose data is there in ``LOOKUP``, the next cycle.  There the packet is judged:

    * malformed (another unit, command words, no or more than eight payload words, a fragment beyond the
      message length) or a destination VPID beyond ``vpids``: ``rejected_incr``, the packet is drained;
    * mailbox disabled: ``rejected_incr``, drained;
    * fewer free slots than it needs (a ring of ``S`` slots holds ``S - 1``; an 8-word packet needs two):
      ``discarded_incr``, drained;
    * otherwise, as soon as the plan register is free (or freed in this cycle), the write pointer advances
      (modulo the ring, mask ``{mslt, 6'b111111}``) and the plan -- slot addresses, status words, VPID --
      goes to ``plan``; the payload words follow into ``words``.

    Because the plan and the payload words are handed on, the next packet's header is judged while the
    :class:`~rtl.velo.writer.VeloSlotWriter` still sends the current slots.

    Timing: the free-slot check (WPLT read register -> 32-bit subtraction -> zero test of its bits) is the
    longest path, so its result drives only ``plan.valid``, the FSM and ``wp_we``; the plan register,
    ``count`` and ``wp_next`` do not wait for it.  The check stays in one cycle: a second one would make the
    planner take ``n + 3`` cycles per packet of ``n`` payload words, one more than the writer's ``n + 2``.

    Parameters
    ----------
    vpids : int
        Mailboxes (power of two, 2..32).

    Members
    -------
    net_rx : In(stream.Signature(NetBeat))
        FU-side packets from the network port.
    plan : Out(stream.Signature(VeloSlotPlan))
    words : Out(stream.Signature(64))
        The payload words of every planned packet, in order.
    vpid : Out(range(vpids))
        Address of every per-VPID look-up; data one cycle later.
    enable : In(vpids) ; mslt : In(64) ; balt : In(40) ; rp : In(32) ; wp : In(32)
        Mailbox enables and the look-up data of ``vpid`` (one cycle after it).
    wp_we : Out(1) ; wp_next : Out(32)
        Write-pointer update for ``vpid``.
    discarded_incr, rejected_incr : Out(1)
        One-cycle strobes: a packet was discarded (ring full) / rejected.
    """

    def __init__(self, *, vpids):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        super().__init__({
            "net_rx": In(NetStreamSignature()), "plan": Out(stream.Signature(VeloSlotPlan)),
            "words": Out(stream.Signature(64)),
            "vpid": Out(range(vpids)), "enable": In(vpids), "mslt": In(64), "balt": In(40), "rp": In(32),
            "wp": In(32), "wp_we": Out(1), "wp_next": Out(32), "discarded_incr": Out(1), "rejected_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rx, plan = self.net_rx, self.plan
        in_hdr = NetHeader(rx.payload.data)
        hdr = Signal(NetHeader)                 # the packet's header, held from IDLE on
        spec = VeloNetFields(hdr.specific)
        hdr_last = Signal()                     # the header was the packet's last beat
        vpid = Signal(range(self.vpids))
        in_vpid = VeloNetFields(in_hdr.specific).dst_vpid
        m.d.comb += self.vpid.eq(vpid)

        # slot arithmetic (LOOKUP cycle): pointers are slot indices, the ring mask is {mslt, 6'b111111}
        mask = Signal(32)
        free = Signal(32)
        two = Signal()
        fits = Signal()                         # at least the slots the packet needs are free
        wp1 = Signal(32)
        m.d.comb += [mask.eq(Cat(Const(0x3F, 6), self.mslt[:26])),
                     free.eq((self.rp - self.wp - 1) & mask),
                     two.eq(hdr.payload_words == SLOT_WORDS),
                     # `free >= 1` / `free >= 2` as zero tests of the bits: a LUT tree, where `<` would
                     # be a second carry chain behind the subtraction (the critical path)
                     fits.eq(Mux(two, free[1:].any(), free.any())),
                     wp1.eq((self.wp + 1) & mask),
                     # offered every cycle, taken with `wp_we`: the WPLT's write register needs no reset
                     # term from the decision
                     self.wp_next.eq(Mux(two, (wp1 + 1) & mask, wp1))]
        malformed = ((hdr.unit != NetUnit.VELO) | (hdr.command_words != 0) | (hdr.payload_words == 0)
                     | (hdr.payload_words > SLOT_WORDS) | (spec.offset + hdr.payload_words > spec.words_m1 + 1)
                     | (spec.dst_vpid >= self.vpids))
        count = Signal(range(SLOT_WORDS))       # payload words left, minus one

        # the plan register: free when empty or taken in this cycle
        room = ~plan.valid | plan.ready
        with m.If(plan.ready):
            m.d.sync += plan.valid.eq(0)
        st = dict(src_node=hdr.src_node, src_vpid=spec.src_vpid, msg_words=spec.words_m1 + 1, mtt=spec.mtt,
                  split=hdr.payload_words <= spec.words_m1)
        p = plan.payload
        m.d.comb += self.words.payload.eq(rx.payload.data)

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid):
                    m.d.comb += self.vpid.eq(in_vpid)
                    with m.If(rx.payload.first & (rx.payload.kind == NetBeatKind.HEADER)):
                        m.d.sync += [hdr.eq(in_hdr), hdr_last.eq(rx.payload.last), vpid.eq(in_vpid)]
                        m.next = "LOOKUP"
                    with m.Else():
                        m.d.comb += self.rejected_incr.eq(1)   # a beat outside a packet: drain to its end
                        with m.If(~rx.payload.last):
                            m.next = "DRAIN"
            with m.State("LOOKUP"):
                # The plan register and `count` are loaded whenever the plan register has room, whatever
                # the judgement: `plan.valid` stays low for a packet that is not planned.  Only
                # `plan.valid`, the WPLT write enable, the FSM and the counters wait for the free-slot
                # check, so its result drives a handful of flip-flops, not the ~250 of the plan.
                with m.If(room):
                    m.d.sync += [
                        p.two.eq(two), p.vpid.eq(vpid),
                        p.words.eq(Mux(two, SLOT_WORDS - 1, hdr.payload_words)),
                        p.addr[0].eq(Cat(Const(0, 6), self.wp) + (self.balt << 12)),
                        p.addr[1].eq(Cat(Const(0, 6), wp1) + (self.balt << 12)),
                        *[getattr(p.status[i], k).eq(v) for i in range(2) for k, v in st.items()],
                        p.status[0].offset.eq(spec.offset),
                        p.status[0].words.eq(Mux(two, SLOT_WORDS - 1, hdr.payload_words)),
                        p.status[1].offset.eq(SLOT_WORDS - 1), p.status[1].words.eq(1), p.status[1].second.eq(1),
                        count.eq(hdr.payload_words - 1),
                    ]
                with m.If(malformed | ~self.enable.bit_select(spec.dst_vpid, 1)):
                    m.d.comb += self.rejected_incr.eq(1)
                    m.next = "DRAIN_OR_IDLE"
                with m.Elif(~fits):
                    m.d.comb += self.discarded_incr.eq(1)
                    m.next = "DRAIN_OR_IDLE"
                with m.Elif(room):
                    m.d.comb += self.wp_we.eq(1)
                    m.d.sync += plan.valid.eq(1)
                    m.next = "PAYLOAD"
            with m.State("PAYLOAD"):
                m.d.comb += [self.words.valid.eq(rx.valid), rx.ready.eq(self.words.ready)]
                with m.If(rx.valid & self.words.ready):
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 0):
                        m.next = "IDLE"
            with m.State("DRAIN_OR_IDLE"):
                # the header was consumed in IDLE; drain the payload unless the header ended the packet
                m.d.comb += rx.ready.eq(~hdr_last)
                with m.If(hdr_last | rx.valid & rx.payload.last):
                    m.next = "IDLE"
                with m.Else():
                    m.next = "DRAIN"
            with m.State("DRAIN"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid & rx.payload.last):
                    m.next = "IDLE"
        return m
