"""The link engine of an output port of :class:`rtl.htax.HtaxPipelined`: whole packets from the VC
buffers onto the output link."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS, HtaxBeat, HtaxLinkSignature
from rtl.common.rr import one_hot_index, one_hot_select, past_one_hot, round_robin

from .layouts import BufferEntry

__all__ = ["HtaxLinkEngine"]


class HtaxLinkEngine(wiring.Component):
    """Sends whole packets from an output's VC buffers, round-robin over the VCs (``docs/htax.md``,
    "Pipelined switch").

    It starts a packet on VC *v* only when *v* has a beat, the sink is ready for *v* and no *v* beat
    whose packet ends moves in the same cycle without the sink's ``ready2`` promise (the fresh-``ready``
    rule), and never interleaves packets.  The choice between packets is a register (``pick``, the
    round robin's choice among the VCs with a beat whose sink is ready, made one cycle ahead) that the
    cycle of the start only confirms, so no path runs from the buffers' state through the round robin
    into the output register; without a choice (no VC had a beat for a ready sink in the last cycle)
    it starts on the VC of the beat that has just arrived in ``ow``, so a beat into an idle output does
    not wait for a choice.  A sink that refuses a VC fills that VC's buffer only: the other VCs keep
    moving (fig. 6-7).

    Members
    -------
    rx : Out(HtaxLinkSignature())
        The output link.
    head : In(BufferEntry).array(NUM_VCS)
        The beat at each VC buffer's read pointer.
    buffered : In(NUM_VCS)
        Bit ``v``: VC ``v``'s buffer holds a beat.
    ow : In(HtaxBeat)
    ow_vc : In(NUM_VCS)
        The beat that has just arrived, its VC one-hot (0: none); when its VC's buffer is empty it is
        that buffer's head.
    hold : In(NUM_VCS)
        VC ``v``'s next packet may not start now (:class:`~rtl.htax.posted_order.HtaxPostedOrder`).
    leave : Out(NUM_VCS)
        A beat of VC ``v`` leaves its buffer (or ``ow``) now.
    start : Out(NUM_VCS)
        A packet of VC ``v`` starts now (its first beat leaves).
    """

    rx: Out(HtaxLinkSignature())
    head: In(BufferEntry).array(NUM_VCS)
    buffered: In(NUM_VCS)
    ow: In(HtaxBeat)
    ow_vc: In(NUM_VCS)
    hold: In(NUM_VCS)
    leave: Out(NUM_VCS)
    start: Out(NUM_VCS)

    def elaborate(self, platform):
        m = Module()
        port, ow, ow_vc = self.rx, self.ow, self.ow_vc
        o_valid = Signal(name="valid")
        o_beat = Signal(HtaxBeat, name="beat")
        in_pkt = Signal(name="in_pkt")
        cur_vc = Signal(NUM_VCS, name="cur_vc")                # one-hot
        vptr = Signal(2, name="vc_ptr")
        m.d.comb += [port.valid.eq(o_valid), port.payload.eq(o_beat)]
        moved = Signal(name="move")
        m.d.comb += moved.eq(port.transfer())
        o_free = Signal(name="free")
        m.d.comb += o_free.eq(~o_valid | moved)
        nonempty = Signal(NUM_VCS, name="nonempty")
        m.d.comb += nonempty.eq(self.buffered | ow_vc)
        startable = Signal(NUM_VCS, name="startable")         # a packet may start on the VC
        m.d.comb += startable.eq(nonempty & ~self.hold)
        # Fresh-ready rule: no packet on the VC whose last beat moves now, unless the sink promised.  A
        # beat is taken only when o_free, so "o_valid" stands for "moved" here; last_vc (one-hot, set
        # with o_beat and o_valid) is the VC of the beat in o_beat when it is a packet's last.
        last_vc = Signal(NUM_VCS, name="last_vc")
        start_ok = Signal(NUM_VCS, name="start_ok")
        m.d.comb += start_ok.eq(startable & port.ready & ~(last_vc & ~port.ready2))
        # pick: registered; a packet starts on it in the next cycle if that VC may start then (start_ok,
        # with the fresh-ready rule of that cycle).  (The pointer moves one cycle after a start, so a VC
        # of one-beat packets may start twice in a row before the next VC's turn.)
        pick = Signal(NUM_VCS, name="pick")
        picked = Signal(name="picked")                          # pick.any(), its own register
        m.d.sync += [pick.eq(round_robin(m, startable & port.ready, vptr, name="vc_rr")),
                     picked.eq((startable & port.ready).any())]
        # The VC whose head is read (cand, one-hot, from registers only) and the source VC (src,
        # one-hot, or 0): the current packet's while its next beat is there, or the confirmed pick, or
        # without a pick the VC of the beat that has just arrived in ow.
        cand = Signal(NUM_VCS, name="cand")
        m.d.comb += cand.eq(Mux(in_pkt, cur_vc, Mux(picked, pick, ow_vc)))
        src = Signal(NUM_VCS, name="src")
        m.d.comb += src.eq(cand & Mux(in_pkt, nonempty, start_ok))
        # cand's head: its buffer's beat at the read pointer, or ow's beat when the buffer is empty (ow
        # then holds cand's only beat, or src is 0).  One select among the read ports, then one with ow
        # (not a choice between RAM and ow per VC before the select: a quarter of the multiplexers).
        from_buf = Signal(name="next_buffered")
        m.d.comb += from_buf.eq((cand & self.buffered).any())
        ow_entry = Signal(BufferEntry, name="ow_entry")
        m.d.comb += [ow_entry.word.eq(ow.word), ow_entry.first.eq(ow.first), ow_entry.last.eq(ow.last)]
        nxt = Signal(BufferEntry, name="next")
        m.d.comb += nxt.eq(Mux(from_buf, one_hot_select(m, cand, [h.as_value() for h in self.head], name="next_sel"),
                               ow_entry))
        take = Signal(name="take")
        m.d.comb += [take.eq(o_free & src.any()), self.leave.eq(Mux(o_free, src, 0)),
                     self.start.eq(Mux(o_free & ~in_pkt, src, 0))]
        # o_beat loads whenever it is free (its content does not matter while o_valid is low)
        with m.If(o_free):
            m.d.sync += [o_valid.eq(src.any()), last_vc.eq(Mux(nxt.last, src, 0)),
                         o_beat.word.eq(nxt.word), o_beat.vc.eq(one_hot_index(m, cand, name="cand_idx")),
                         o_beat.first.eq(nxt.first), o_beat.last.eq(nxt.last)]
        with m.If(take):
            m.d.sync += [in_pkt.eq(~nxt.last), cur_vc.eq(src)]
            with m.If(~in_pkt):
                m.d.sync += vptr.eq(past_one_hot(m, src, name="vc_past"))
        return m

