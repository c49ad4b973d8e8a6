"""Flit sequencer of the link port's transmit side: flit choice and assembly (ch. 7.3)."""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .crc import flit_crc
from .params import FlitType, PhitCtl, require_params
from .tx_credits import LinkTxCreditSignature
from .tx_replay import LinkTxReplaySignature
from .tx_store import LinkTxStore

__all__ = ["LinkTxFramer", "CTRL_EVERY"]

# Control flits with fresh credits are slipped between data flits after this many data flits.
CTRL_EVERY = 4

_IDLE, _HDR, _BODY, _CRC = range(4)
_DATA, _REPLAY, _CTRL = range(3)


def _round_robin(m, can, last, vcs, width):
    """The first VC after ``last`` whose ``can`` flag is set (``last`` itself if none other).  A
    function of registers only (the ``can`` flags and ``last``: 6 inputs for 4 VCs, one LUT4 level and
    the slice's PFUMX/L6MUX), beside the header select rather than in front of it."""
    pick_vc = Signal(width)
    with m.Switch(last):
        for prev in range(vcs):
            order = [(prev + k) % vcs for k in range(1, vcs + 1)]
            pick = order[-1]
            for v in reversed(order[:-1]):
                pick = Mux(can[v], v, pick)
            with m.Case(prev):
                m.d.comb += pick_vc.eq(pick)
    return pick_vc


def _phit_output(m, width, crc, emit_crc, header, sof, body, phit):
    """The phit and control bits of this cycle: the CRC phit (EOF), a header phit (SOF on the first),
    a beat phit, or IDLE."""
    out_phit = Signal(width)
    out_ctl = Signal(PhitCtl)
    with m.If(emit_crc):
        m.d.comb += [out_phit.eq(crc), out_ctl.eq(PhitCtl.EOF)]
    with m.Elif(header):
        m.d.comb += [out_phit.eq(phit), out_ctl.eq(Mux(sof, PhitCtl.SOF, PhitCtl.BODY))]
    with m.Elif(body):
        m.d.comb += [out_phit.eq(phit), out_ctl.eq(PhitCtl.BODY)]
    with m.Else():
        m.d.comb += [out_phit.eq(0), out_ctl.eq(PhitCtl.IDLE)]
    return out_phit, out_ctl


def _gap_done(m, idle_gap, idle):
    """Whether a flit may start: after ``idle_gap`` cycles of ``idle`` (IDLE phits: rate matching for
    a PHY, ``docs/link.md``); always with no gap."""
    if not idle_gap:
        return 1
    quiet = Signal(range(idle_gap))     # cycles idle since the last flit, saturating
    with m.If(~idle):
        m.d.sync += quiet.eq(0)
    with m.Elif(quiet != idle_gap - 1):
        m.d.sync += quiet.eq(quiet + 1)
    return idle & (quiet == idle_gap - 1)


def _headers(m, p, *, expected, nak, freed):
    """The data flit header (``vc`` and ``seq`` to be driven) and the control flit header."""
    d_hdr = p.data_header(Signal(p.data_header.size, name="d_hdr"))
    c_hdr = p.ctrl_header(Signal(p.ctrl_header.size, name="c_hdr"))
    m.d.comb += [d_hdr.type.eq(FlitType.DATA), d_hdr.ack.eq(expected), c_hdr.type.eq(FlitType.CTRL),
                 c_hdr.ack.eq(expected), c_hdr.nak.eq(nak)]
    m.d.comb += [c_hdr.credit[v].eq(freed[v]) for v in range(p.vcs)]
    return d_hdr, c_hdr


class LinkTxFramer(wiring.Component):
    """The flit sequencer of :class:`~rtl.link.LinkTx`: chooses each flit, sends it phit by phit with
    its CRC, and fills the replay buffer (:class:`~rtl.link.tx_store.LinkTxStore`; ``docs/link.md``,
    "Flits").

    A data flit takes beats of one virtual channel while they keep coming, up to ``max_beats`` and the
    peer's credits; it ends (EOF) at the first beat boundary where the next beat is not there, so a
    packet larger than a flit, or one whose source stalls, continues in the channel's next flit.  Every
    beat sent for the first time is also written to the replay buffer at ``(seq mod replay_flits,
    beat)``; the flit's VC and beat count go to a small metadata memory, so a replay regenerates the
    flit with its original sequence number and the current acknowledgement.  A data flit in progress
    is ended at its next beat boundary when a NAK, a replay or the link-error state is pending, so a
    replay starts within one beat.  In the link-error state only control flits are sent.

    At the end of a flit (or when idle) the next one is, in this order: a control flit when a NAK is
    to be sent or in the link-error state; the next replayed flit during a replay; a control flit
    when credits changed and ``CTRL_EVERY`` data flits went since the last one; a new data flit on
    the next VC after the previous one's, round-robin among the VCs with a beat and a credit, while
    the replay window has room; else a control flit.  Control flits carry the cumulative
    acknowledgement, a NAK flag and the cumulative credit counters of every VC.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    beats : In(stream.Signature(64)).array(vcs)
        The beats to send per VC (the packet structure is implied, :mod:`rtl.link.framing`).
    credits : Out(LinkTxCreditSignature(vcs))
        To :class:`~rtl.link.tx_credits.LinkTxCredits`.
    replay : Out(LinkTxReplaySignature(seq_bits))
        To :class:`~rtl.link.tx_replay.LinkTxReplay`.
    phit, ctl, tx_data_phit : Out
        As :class:`~rtl.link.LinkTx`'s (registered).
    expected : In(seq_bits) ; nak_req : In(1) ; freed : In(credit_bits).array(vcs)
        From :class:`~rtl.link.link_rx.LinkRx`: the acknowledgement to send, a NAK request, the
        receiver's cumulative freed counters.
    ev_retransmit, ev_nak_sent : Out(1)
        Strobes: a replayed flit starts; a control flit with the NAK flag starts.
    """

    def __init__(self, params):
        self.params = p = require_params(params)
        super().__init__({
            "beats": In(stream.Signature(64)).array(p.vcs),
            "credits": Out(LinkTxCreditSignature(p.vcs)), "replay": Out(LinkTxReplaySignature(p.seq_bits)),
            "phit": Out(p.phit_bits), "ctl": Out(PhitCtl), "tx_data_phit": Out(1),
            "expected": In(p.seq_bits), "nak_req": In(1), "freed": In(p.credit_bits).array(p.vcs),
            "ev_retransmit": Out(1), "ev_nak_sent": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, cr, rp = self.params, self.credits, self.replay
        W, P, S = p.phit_bits, p.phits_per_beat, p.seq_bits
        rbits = p.slot_bits
        m.submodules.store = store = LinkTxStore(p)

        # CRC over the phits as they leave the output register (timing: the phit multiplexer does not
        # feed the CRC logic); the CRC phit takes the last header/beat phit in combinationally.
        crc_value = flit_crc(m, p, self.ctl, self.phit)

        state = Signal(2, init=_IDLE)
        kind = Signal(2)
        hdr = Signal(p.header_phits * W)     # shifted right by one phit per header phit sent
        hdr_idx = Signal(range(p.header_phits + 1))
        hdr_last = Signal(range(p.header_phits + 1))
        cur_vc = Signal(p.vc_bits)
        new_vc = Signal(p.vcs)          # one-hot cur_vc of a new data flit, 0 otherwise (timing: the pops)
        cur_seq = Signal(S)
        nbeats = Signal(p.beat_cnt_bits)
        beat_cnt = Signal(p.beat_cnt_bits)
        j = Signal(range(P))
        beat_reg = Signal(64)           # the beat being sent, shifted right by one phit per phit
        last_vc = Signal(p.vc_bits, init=p.vcs - 1)     # VC of the last new data flit: VC 0 goes first
        nak_pending = Signal()
        cur_first = Signal()            # the flit in progress is the first of a replay
        in_first = (kind == _REPLAY) & cur_first & (state != _IDLE)
        since_ctrl = Signal(range(CTRL_EVERY + 1))
        gap_done = _gap_done(m, p.idle_gap, state == _IDLE)
        credit_ok = cr.credit_ok
        # The flit choice reads replay_active a cycle late (replay_seen; timing: the sequence compare is
        # off the path into the flit header).  That is exact whenever a replay flit may start: it starts
        # only when replay_ptr did not change in the previous cycle (meta_ok) and no trigger came in it
        # (rp_reset), and next_seq and `replaying` cannot end a replay on their own.  Otherwise the port
        # waits one idle cycle, as it does for the metadata.
        m.d.comb += store.mr_slot.eq(rp.replay_ptr[:rbits])
        meta_vc, meta_beats = store.mr_meta.vc, store.mr_meta.beats

        # Beat source of the flit in progress.
        src_valid = Signal()
        src_data = Signal(64)
        m.d.comb += [src_valid.eq(Mux(kind == _REPLAY, 1, Array(b.valid for b in self.beats)[cur_vc])),
                     src_data.eq(Mux(kind == _REPLAY, store.r_data, Array(b.payload for b in self.beats)[cur_vc]))]
        # Whether the flit ends at the next beat boundary instead of taking another beat: the replayed
        # flit's length is reached, or for new data the source has no beat, the flit is full, the peer
        # has no credit, or a NAK, replay or link error is pending.  With several phits per beat this
        # is decided a cycle ahead, from registers (timing): the cycle before a beat boundary sends no
        # beat, so beat_cnt is final and credit_ok still holds at the boundary; a source beat or an
        # urgent event that comes in that very cycle waits for the next boundary.
        at_beat = (state == _BODY) & (j == 0)
        end_now = Signal()
        cur_ok = credit_ok.bit_select(cur_vc, 1)
        if P > 1:
            end_pre = Signal()
            m.d.sync += end_pre.eq(Mux(
                kind == _REPLAY, beat_cnt == nbeats,
                (beat_cnt != 0) & (~src_valid | (beat_cnt == p.max_beats) | ~cur_ok
                                   | nak_pending | rp.replay_active | rp.link_error)))
            m.d.comb += end_now.eq(at_beat & end_pre)
        else:
            urgent = Signal()       # registered (timing): the flit may take one more beat
            m.d.sync += urgent.eq(nak_pending | rp.replay_active | rp.link_error)
            m.d.comb += end_now.eq(at_beat & Mux(
                kind == _REPLAY, beat_cnt == nbeats,
                (beat_cnt != 0) & (~src_valid | (beat_cnt == p.max_beats) | ~cur_ok | urgent)))
        emit_crc = (state == _CRC) | end_now
        consume = at_beat & ~end_now

        # Replay buffer access: read the beat that the next j == 0 consumes; write new beats a cycle
        # after they are sent (registered: timing; a flit is replayed a round trip later at the earliest).
        # With several phits per beat, consumes are at least two cycles apart and beat_cnt itself is
        # the address (registered); with one phit per beat the address must run a beat ahead.
        rd_beat = beat_cnt if P > 1 else beat_cnt + consume
        m.d.comb += [store.r_beat.eq(rd_beat[:p.beat_idx_bits]), store.r_slot.eq(cur_seq[:rbits])]
        m.d.sync += [store.w_beat.eq(beat_cnt[:p.beat_idx_bits]), store.w_slot.eq(cur_seq[:rbits]),
                     store.w_data.eq(src_data), store.w_en.eq(consume & (kind == _DATA))]
        for v, b in enumerate(self.beats):
            m.d.comb += [b.ready.eq(consume & new_vc[v]), cr.sent_incr[v].eq(consume & new_vc[v])]

        # The phit of this cycle.  The header or beat phit is independent of end_now, which only
        # chooses the CRC phit instead.
        body_phit = Mux(state == _HDR, hdr[:W], Mux(j == 0, src_data[:W], beat_reg[:W]))
        out_phit, out_ctl = _phit_output(m, W, crc_value, emit_crc, state == _HDR, hdr_idx == 0, state == _BODY,
                                         body_phit)
        m.d.sync += [self.phit.eq(out_phit), self.ctl.eq(out_ctl),
                     self.tx_data_phit.eq((out_ctl != PhitCtl.IDLE) & (kind != _CTRL) & (state != _IDLE))]

        # Per-state sequencing.
        with m.If(state == _HDR):
            m.d.sync += [hdr_idx.eq(hdr_idx + 1), hdr.eq(hdr >> W)]
            with m.If(hdr_idx == hdr_last):
                m.d.sync += [hdr_idx.eq(0), j.eq(0), beat_cnt.eq(0)]
                m.d.sync += state.eq(Mux(kind == _CTRL, _CRC, _BODY))
        with m.If(consume):
            m.d.sync += [beat_reg.eq(src_data >> W), beat_cnt.eq(beat_cnt + 1)]
            if P > 1:
                m.d.sync += j.eq(1)
        if P > 1:
            with m.If((state == _BODY) & (j != 0)):
                m.d.sync += [j.eq(Mux(j == P - 1, 0, j + 1)), beat_reg.eq(beat_reg >> W)]

        # End of flit bookkeeping.
        finish_data = emit_crc & (kind == _DATA) & (state != _IDLE)
        m.d.comb += [rp.finish_data.eq(finish_data), rp.in_first.eq(in_first), rp.emit_crc.eq(emit_crc)]
        with m.If(finish_data):
            m.d.comb += [store.mw_slot.eq(cur_seq[:rbits]), store.mw_meta.vc.eq(cur_vc),
                         store.mw_meta.beats.eq(beat_cnt), store.mw_en.eq(1)]
            m.d.sync += since_ctrl.eq(Mux(since_ctrl == CTRL_EVERY, CTRL_EVERY, since_ctrl + 1))

        # Choice of the next flit, at the end of one or when idle.
        decide = emit_crc | (state == _IDLE)
        can = [b.valid & credit_ok[v] for v, b in enumerate(self.beats)]
        rr_pick = _round_robin(m, can, last_vc, p.vcs, p.vc_bits)
        d_hdr, c_hdr = _headers(m, p, expected=self.expected, nak=nak_pending, freed=self.freed)

        def start(k, vc, seq, header, hphits):
            m.d.sync += [state.eq(_HDR), kind.eq(k), cur_vc.eq(vc), cur_seq.eq(seq), hdr.eq(header),
                         hdr_idx.eq(0), hdr_last.eq(hphits - 1), beat_cnt.eq(0),
                         new_vc.eq((1 << vc) if k == _DATA else 0)]

        def start_ctrl():
            start(_CTRL, 0, 0, c_hdr.as_value(), p.ctrl_header_phits)
            m.d.comb += cr.ctrl_sent.eq(1)
            m.d.sync += since_ctrl.eq(0)
            with m.If(nak_pending):
                m.d.comb += self.ev_nak_sent.eq(1)
                m.d.sync += nak_pending.eq(0)

        with m.If(decide):
            m.d.sync += state.eq(_IDLE)
        with m.If(decide & gap_done):
            with m.If(nak_pending | rp.link_error):
                start_ctrl()
            with m.Elif(rp.replay_seen | rp.rp_reset):
                with m.If(rp.meta_ok & ~rp.rp_reset):
                    m.d.comb += [d_hdr.vc.eq(meta_vc), d_hdr.seq.eq(rp.replay_ptr), rp.replay_start.eq(1),
                                 self.ev_retransmit.eq(1)]
                    start(_REPLAY, meta_vc, rp.replay_ptr, d_hdr.as_value(), p.data_header_phits)
                    m.d.sync += [nbeats.eq(meta_beats), cur_first.eq(rp.replay_first & ~in_first)]
            with m.Elif(cr.credit_dirty & (since_ctrl == CTRL_EVERY)):
                start_ctrl()
            with m.Elif(rp.window_ok & Cat(*can).any()):
                new_seq = Mux(finish_data, rp.next_seq_p1, rp.next_seq)
                m.d.comb += [d_hdr.vc.eq(rr_pick), d_hdr.seq.eq(new_seq)]
                start(_DATA, rr_pick, new_seq, d_hdr.as_value(), p.data_header_phits)
                m.d.sync += last_vc.eq(rr_pick)
            with m.Else():
                start_ctrl()
        with m.If(self.nak_req):
            m.d.sync += nak_pending.eq(1)
        return m
