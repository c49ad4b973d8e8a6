"""Transmit half of the link port: flit assembly, replay buffer, go-back-N retransmission (ch. 7.3).

A data flit takes beats of one virtual channel while they keep coming, up to ``max_beats`` and the
peer's credits; it ends (EOF) at the first beat boundary where the next beat is not there, so a
packet larger than a flit, or one whose source stalls, continues in the channel's next flit.  Every
beat sent for the first time is also written to the replay buffer at
``(seq mod replay_flits, beat)``; the flit's VC and beat count go to a small metadata memory, so a
replay regenerates the flit with its original sequence number and the current acknowledgement.

Go-back-N: a NAK (or the replay timer, which runs while flits are unacknowledged and restarts on
every acknowledgement progress) restarts transmission at the oldest unacknowledged flit; a data flit
in progress is ended at its next beat boundary so the replay starts within one beat.  A NAK that
arrives before the first flit of the replay has been sent is stale (asked for by an older flit) and
ignored.  A replay that does not make progress is an *attempt* (progress with the NAK itself starts
a new series); when ``max_replays`` attempts in a row fail the port enters
the link-error state: it sends only control flits (so the peer still gets acks and credits), raises
``link_error`` and strobes ``irq``.  ``retrain`` leaves that state and replays every unacknowledged
flit, so nothing the port accepted is lost.

A new data flit goes to the next VC after the previous one's, round-robin, among the VCs that have a
beat and a credit.  When there is nothing else to send the port sends control flits back to back:
they carry the cumulative acknowledgement, a NAK flag and the cumulative credit counters of every VC.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature

from .crc import flit_crc
from .framing import BeatBuffer, PacketShaper
from .params import FlitType, PhitCtl, require_params

__all__ = ["LinkTx"]

# Control flits with fresh credits are slipped between data flits after this many data flits.
CTRL_EVERY = 4

_IDLE, _HDR, _BODY, _CRC = range(4)
_DATA, _REPLAY, _CTRL = range(3)


class LinkTx(wiring.Component):
    """Transmit side of :class:`~rtl.link.LinkPort`.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    tx : ``In(NetStreamSignature()).array(vcs)``
        Packets to send per virtual channel.
    phit, ctl : ``Out(phit_bits)``, ``Out(PhitCtl)``
        To the PHY, one phit per cycle (registered).
    expected, ack_valid, ack, ack_nak, credit_valid, credit, nak_req, freed :
        From :class:`~rtl.link.link_rx.LinkRx` (see there).
    replay_timeout : ``In(16)``
        Replay timer in cycles.
    max_replays : ``In(4)``
        Failed replays in a row before the link-error state.
    retrain : ``In(1)``
        Pulse: leave the link-error state and replay.
    link_error, irq : ``Out(1)``
        Link-error state; one-cycle strobe on entering it.
    ev_retransmit, ev_nak_sent, ev_nak_received, ev_timeout, ev_malformed, ev_protocol : ``Out(1)``
        Event pulses for the counters (``ev_malformed`` has one bit per VC: several may pulse at once).
    tx_data_phit : ``Out(1)``
        The phit on ``phit`` belongs to a data flit (performance monitoring).
    """

    def __init__(self, params):
        self.params = require_params(params)
        p = params
        super().__init__({
            "tx": In(NetStreamSignature()).array(p.vcs),
            "phit": Out(p.phit_bits), "ctl": Out(PhitCtl),
            "expected": In(p.seq_bits),
            "ack_valid": In(1), "ack": In(p.seq_bits), "ack_nak": In(1),
            "credit_valid": In(1), "credit": In(p.credit_bits).array(p.vcs),
            "nak_req": In(1), "freed": In(p.credit_bits).array(p.vcs),
            "replay_timeout": In(16, init=1024), "max_replays": In(4, init=4), "retrain": In(1),
            "link_error": Out(1), "irq": Out(1),
            "ev_retransmit": Out(1), "ev_nak_sent": Out(1), "ev_nak_received": Out(1),
            "ev_timeout": Out(1), "ev_malformed": Out(p.vcs), "ev_protocol": Out(1),
            "tx_data_phit": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        W, P, S, C, R = p.phit_bits, p.phits_per_beat, p.seq_bits, p.credit_bits, p.replay_flits
        rbits = R.bit_length() - 1

        # Shaper, then a register FIFO: the flit logic sees registered valid/data, the network side a
        # registered ready (timing).
        shapers = []
        for vc in range(p.vcs):
            sh = PacketShaper()
            fifo = BeatBuffer()
            m.submodules[f"shaper{vc}"] = sh
            m.submodules[f"fifo{vc}"] = fifo
            wiring.connect(m, wiring.flipped(self.tx[vc]), sh.i)
            wiring.connect(m, sh.o, fifo.i)
            m.d.comb += self.ev_malformed[vc].eq(sh.malformed)
            shapers.append(fifo)

        # Replay buffer: beats at (slot, beat); per-slot metadata (vc, beat count).
        meta_layout = Cat(Signal(p.vc_bits), Signal(p.beat_cnt_bits)).shape()
        m.submodules.replay = rmem = Memory(shape=64, depth=R << p.beat_idx_bits, init=[])
        m.submodules.meta = mmem = Memory(shape=meta_layout, depth=R, init=[])
        rwp = rmem.write_port()
        rrp = rmem.read_port(transparent_for=())
        mwp = mmem.write_port()
        mrp = mmem.read_port(transparent_for=())

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

        next_seq = Signal(S)
        next_seq_p1 = Signal(S, init=1)     # next_seq + 1, kept as a register (timing)
        ack_seq = Signal(S)
        replaying = Signal()
        replay_ptr = Signal(S)
        replay_ptr_prev = Signal(S)
        attempts = Signal(4)
        timer = Signal(16)
        nak_pending = Signal()
        replay_first = Signal()         # the first flit of the current replay is not yet sent
        cur_first = Signal()            # the flit in progress is the first of a replay
        in_first = (kind == _REPLAY) & cur_first & (state != _IDLE)
        link_error = Signal()
        sent = [Signal(C, name=f"sent{v}") for v in range(p.vcs)]
        peer_freed = [Signal(C, name=f"peer_freed{v}") for v in range(p.vcs)]
        credit_sent = [Signal(C, name=f"credit_sent{v}") for v in range(p.vcs)]
        since_ctrl = Signal(range(CTRL_EVERY + 1))
        m.d.comb += self.link_error.eq(link_error)

        avail = [Signal(C + 1, name=f"avail{v}") for v in range(p.vcs)]
        # credit_ok: at least one credit, registered from the previous cycle's count (timing).  At most
        # one beat per cycle is sent, so >= 2 then means >= 1 now; one credit of the pool goes unused.
        credit_ok = [Signal(name=f"credit_ok{v}", init=1) for v in range(p.vcs)]
        for v in range(p.vcs):
            m.d.comb += avail[v].eq(p.rx_buffer_beats - (sent[v] - peer_freed[v])[:C])
            m.d.sync += credit_ok[v].eq(avail[v] >= 2)
        # outstanding = next_seq - ack_seq, kept as a register with the two window compares of its next
        # value (timing); updated below from finish_data and the acknowledgement progress.
        outstanding = Signal(S)
        win_lt_r = Signal(init=1)            # outstanding < R
        win_lt_r1 = Signal(init=R > 1)       # outstanding < R - 1
        unacked = next_seq != ack_seq       # outstanding != 0 without the subtraction (timing)
        replay_active = replaying & (replay_ptr != next_seq)
        m.d.sync += replay_ptr_prev.eq(replay_ptr)
        meta_ok = replay_ptr == replay_ptr_prev
        # The flit choice reads replay_active a cycle late (timing: the sequence compare is off the path
        # into the flit header).  That is exact whenever a replay flit may start: it starts only when
        # replay_ptr did not change in the previous cycle (meta_ok) and no trigger came in it (rp_reset),
        # and next_seq and `replaying` cannot end a replay on their own (next_seq moves away from
        # replay_ptr; `replaying` clears only after replay_active was low).  Otherwise the port waits
        # one idle cycle, as it does for the metadata.
        replay_seen = Signal()
        rp_reset = Signal()         # replay_ptr was set to ack_seq in the previous cycle (a trigger)
        m.d.sync += replay_seen.eq(replay_active)
        m.d.comb += mrp.addr.eq(replay_ptr[:rbits])
        meta_vc = mrp.data[:p.vc_bits]
        meta_beats = mrp.data[p.vc_bits:]

        # Beat source of the flit in progress.
        src_valid = Signal()
        src_data = Signal(64)
        with m.If(kind == _REPLAY):
            m.d.comb += [src_valid.eq(1), src_data.eq(rrp.data)]
        with m.Else():
            with m.Switch(cur_vc):
                for v, sh in enumerate(shapers):
                    with m.Case(v):
                        m.d.comb += [src_valid.eq(sh.o.valid), src_data.eq(sh.o.payload)]
        # Whether the flit ends at the next beat boundary instead of taking another beat: the replayed
        # flit's length is reached, or for new data the source has no beat, the flit is full, the peer
        # has no credit, or a NAK, replay or link error is pending (which ends the flit at a beat
        # boundary).  With several phits per beat this is decided a cycle ahead, from registers (timing):
        # the cycle before a beat boundary sends no beat, so beat_cnt is final and credit_ok still
        # holds at the boundary; a source beat or an urgent event that comes in that very cycle waits
        # for the next boundary.
        at_beat = (state == _BODY) & (j == 0)
        end_now = Signal()
        cur_ok = Cat(*credit_ok).bit_select(cur_vc, 1)
        if P > 1:
            end_pre = Signal()
            m.d.sync += end_pre.eq(Mux(
                kind == _REPLAY, beat_cnt == nbeats,
                (beat_cnt != 0) & (~src_valid | (beat_cnt == p.max_beats) | ~cur_ok
                                   | nak_pending | replay_active | link_error)))
            m.d.comb += end_now.eq(at_beat & end_pre)
        else:
            urgent = Signal()       # registered (timing): the flit may take one more beat
            m.d.sync += urgent.eq(nak_pending | replay_active | link_error)
            m.d.comb += end_now.eq(at_beat & Mux(
                kind == _REPLAY, beat_cnt == nbeats,
                (beat_cnt != 0) & (~src_valid | (beat_cnt == p.max_beats) | ~cur_ok | urgent)))
        emit_crc = (state == _CRC) | end_now
        consume = at_beat & ~end_now

        # Replay buffer access: read the beat that the next j == 0 consumes; write new beats a cycle
        # after they are sent (registered: timing; a flit is replayed a round trip later at the earliest).
        # With several phits per beat, consumes are at least two cycles apart and beat_cnt itself is
        # the address (registered); with one phit per beat the address must run a beat ahead.
        if P > 1:
            m.d.comb += rrp.addr.eq(Cat(beat_cnt[:p.beat_idx_bits], cur_seq[:rbits]))
        else:
            beat_next = beat_cnt + consume
            m.d.comb += rrp.addr.eq(Cat(beat_next[:p.beat_idx_bits], cur_seq[:rbits]))
        m.d.sync += [rwp.addr.eq(Cat(beat_cnt[:p.beat_idx_bits], cur_seq[:rbits])),
                     rwp.data.eq(src_data),
                     rwp.en.eq(consume & (kind == _DATA))]
        for v, sh in enumerate(shapers):
            m.d.comb += sh.o.ready.eq(consume & new_vc[v])
            with m.If(consume & new_vc[v]):
                m.d.sync += sent[v].eq(sent[v] + 1)

        # The phit of this cycle.
        out_phit = Signal(W)
        out_ctl = Signal(PhitCtl)
        # The header or beat phit, independent of end_now (which only chooses the CRC phit instead).
        body_phit = Signal(W)
        m.d.comb += body_phit.eq(Mux(state == _HDR, hdr[:W], Mux(j == 0, src_data[:W], beat_reg[:W])))
        with m.If(emit_crc):
            m.d.comb += [out_phit.eq(crc_value), out_ctl.eq(PhitCtl.EOF)]
        with m.Elif(state == _HDR):
            m.d.comb += [out_phit.eq(body_phit), out_ctl.eq(Mux(hdr_idx == 0, PhitCtl.SOF, PhitCtl.BODY))]
        with m.Elif(state == _BODY):
            m.d.comb += [out_phit.eq(body_phit), out_ctl.eq(PhitCtl.BODY)]
        with m.Else():
            m.d.comb += [out_phit.eq(0), out_ctl.eq(PhitCtl.IDLE)]
        m.d.sync += [self.phit.eq(out_phit), self.ctl.eq(out_ctl),
                     self.tx_data_phit.eq((out_ctl != PhitCtl.IDLE) & (kind != _CTRL)
                                          & (state != _IDLE))]

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
        with m.If(finish_data):
            m.d.sync += [next_seq.eq(next_seq_p1), next_seq_p1.eq(next_seq_p1 + 1)]
            m.d.comb += [mwp.addr.eq(cur_seq[:rbits]), mwp.data.eq(Cat(cur_vc, beat_cnt)),
                         mwp.en.eq(1)]
            m.d.sync += since_ctrl.eq(Mux(since_ctrl == CTRL_EVERY, CTRL_EVERY, since_ctrl + 1))

        # Choice of the next flit, at the end of one or when idle.
        decide = emit_crc | (state == _IDLE)
        # Replay window: outstanding + finish_data < R, as two compares of registers and a select.
        window_ok = Mux(finish_data, win_lt_r1, win_lt_r)
        can = [shapers[v].o.valid & credit_ok[v] for v in range(p.vcs)]
        credit_dirty = Signal()     # registered (timing): an update may wait one more cycle
        m.d.sync += credit_dirty.eq(
            Cat(*(self.freed[v] != credit_sent[v] for v in range(p.vcs))).any())
        # Round-robin among the VCs that can send: the first after last_vc.  A function of registers
        # only (the `can` flags and last_vc: 6 inputs for 4 VCs, one LUT4 level and the slice's
        # PFUMX/L6MUX), beside the header select rather than in front of it.
        rr_pick = Signal(p.vc_bits)
        with m.Switch(last_vc):
            for prev in range(p.vcs):
                order = [(prev + k) % p.vcs for k in range(1, p.vcs + 1)]
                pick = order[-1]
                for v in reversed(order[:-1]):
                    pick = Mux(can[v], v, pick)
                with m.Case(prev):
                    m.d.comb += rr_pick.eq(pick)
        d_hdr = p.data_header(Signal(p.data_header.size, name="d_hdr"))
        c_hdr = p.ctrl_header(Signal(p.ctrl_header.size, name="c_hdr"))
        d_vc = Signal(p.vc_bits)
        d_seq = Signal(S)
        m.d.comb += [d_hdr.type.eq(FlitType.DATA), d_hdr.ack.eq(self.expected),
                     d_hdr.vc.eq(d_vc), d_hdr.seq.eq(d_seq),
                     c_hdr.type.eq(FlitType.CTRL), c_hdr.ack.eq(self.expected),
                     c_hdr.nak.eq(nak_pending)]
        m.d.comb += [c_hdr.credit[v].eq(self.freed[v]) for v in range(p.vcs)]

        def start(k, vc, seq, header, hphits):
            m.d.sync += [state.eq(_HDR), kind.eq(k), cur_vc.eq(vc), cur_seq.eq(seq), hdr.eq(header),
                         hdr_idx.eq(0), hdr_last.eq(hphits - 1), beat_cnt.eq(0),
                         new_vc.eq((1 << vc) if k == _DATA else 0)]

        def start_ctrl():
            start(_CTRL, 0, 0, c_hdr.as_value(), p.ctrl_header_phits)
            m.d.sync += [credit_sent[v].eq(self.freed[v]) for v in range(p.vcs)]
            m.d.sync += since_ctrl.eq(0)
            with m.If(nak_pending):
                m.d.comb += self.ev_nak_sent.eq(1)
                m.d.sync += nak_pending.eq(0)

        with m.If(decide):
            m.d.sync += state.eq(_IDLE)
            with m.If(nak_pending | link_error):
                start_ctrl()
            with m.Elif(replay_seen | rp_reset):
                with m.If(meta_ok & ~rp_reset):
                    m.d.comb += [d_vc.eq(meta_vc), d_seq.eq(replay_ptr)]
                    start(_REPLAY, meta_vc, replay_ptr, d_hdr.as_value(), p.data_header_phits)
                    m.d.sync += [nbeats.eq(meta_beats), replay_ptr.eq(replay_ptr + 1),
                                 cur_first.eq(replay_first & ~in_first)]
                    m.d.comb += self.ev_retransmit.eq(1)
            with m.Elif(credit_dirty & (since_ctrl == CTRL_EVERY)):
                start_ctrl()
            with m.Elif(window_ok & Cat(*can).any()):
                vc = rr_pick
                new_seq = Mux(finish_data, next_seq_p1, next_seq)
                m.d.comb += [d_vc.eq(vc), d_seq.eq(new_seq)]
                start(_DATA, vc, new_seq, d_hdr.as_value(), p.data_header_phits)
                m.d.sync += last_vc.eq(vc)
            with m.Else():
                start_ctrl()
        with m.If(replaying & ~replay_active):
            m.d.sync += replaying.eq(0)

        # Incoming acknowledgements and credits.
        with m.If(self.nak_req):
            m.d.sync += nak_pending.eq(1)
        # Acknowledgements in two stages (timing): the window check against the registers, then its
        # effect.  Acks come at most every other cycle (one per flit of >= 2 phits), so ack_seq has
        # taken the previous one when the next is checked; next_seq only grows, which keeps the
        # check valid a cycle later.
        a_valid = Signal()
        a_ack = Signal(S)
        a_nak = Signal()
        a_in_window = Signal()
        a_moves = Signal()
        a_adv = Signal(S)
        a_past = Signal()           # the ack is past the replay pointer
        adv = (self.ack - ack_seq)[:S]
        m.d.sync += [a_valid.eq(self.ack_valid), a_ack.eq(self.ack), a_nak.eq(self.ack_nak),
                     a_in_window.eq(adv <= outstanding), a_moves.eq(adv != 0), a_adv.eq(adv),
                     a_past.eq(adv > (replay_ptr - ack_seq)[:S]), rp_reset.eq(0)]
        new_ack = Signal(S)
        m.d.comb += new_ack.eq(ack_seq)
        progress = Signal()
        with m.If(a_valid):
            with m.If(~a_in_window):
                m.d.comb += self.ev_protocol.eq(1)
            with m.Elif(a_moves):
                m.d.comb += [new_ack.eq(a_ack), progress.eq(1)]
                m.d.sync += [ack_seq.eq(a_ack), attempts.eq(0)]
                # replay_ptr only grows, or was reset to ack_seq (then any progress is past it)
                with m.If(replaying & (a_past | rp_reset)):
                    m.d.sync += replay_ptr.eq(a_ack)
        # Credits in two stages like the acks (timing): peer_freed changes only through them, and sent
        # only grows, so the check stays valid a cycle later.
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
                    m.d.comb += self.ev_protocol.eq(1)

        # Replay triggers: NAK, replay timer; failed attempts lead to the link-error state.
        remaining = Mux(progress, next_seq != a_ack, unacked)
        # The next outstanding without this cycle's finish_data, for both outcomes of `progress`; the
        # window compares are made on both from registers and chosen last (timing: `progress` and
        # `finish_data` come late, the subtraction does not wait for them).
        out_acked = Signal(S)
        m.d.comb += out_acked.eq(outstanding - a_adv)
        out_base = Mux(progress, out_acked, outstanding)

        def below(limit):
            return Mux(progress, out_acked < limit, outstanding < limit)

        m.d.sync += [outstanding.eq(out_base + finish_data),
                     win_lt_r.eq(Mux(finish_data, below(R - 1), below(R))),
                     win_lt_r1.eq(Mux(finish_data, below(R - 2), below(R - 1)))]
        # A NAK that arrives before the first flit of the current replay has been sent completely was
        # asked for by a flit sent before the replay (the receiver decides at a flit's end): that
        # replay already resends everything unacknowledged, so the NAK is stale and triggers nothing
        # (after a timeout the receiver's NAK hold-off may end just then).
        with m.If(replay_first & Mux(in_first, emit_crc, ~replaying)):
            m.d.sync += replay_first.eq(0)
        nak_trig = a_valid & a_nak & remaining & ~link_error & ~replay_first
        # The timer compare is registered (timing); timer_restart masks the cycle after a restart.
        timer_hit = Signal()
        timer_restart = Signal()
        m.d.sync += [timer_hit.eq(timer >= self.replay_timeout), timer_restart.eq(0)]
        tmo_trig = timer_hit & ~timer_restart & unacked & ~link_error
        m.d.comb += [self.ev_nak_received.eq(a_valid & a_nak),
                     self.ev_timeout.eq(tmo_trig)]
        with m.If(progress | ~unacked | link_error):
            m.d.sync += [timer.eq(0), timer_restart.eq(1)]
        with m.Elif(timer != 0xffff):
            m.d.sync += timer.eq(timer + 1)
        # A NAK that comes with acknowledgement progress (the control flit carries both) starts a
        # new series of attempts: the replay before it made progress.
        failed = Mux(progress, 0, attempts)
        with m.If(nak_trig | tmo_trig):
            m.d.sync += [timer.eq(0), timer_restart.eq(1)]
            with m.If(failed >= self.max_replays):
                m.d.sync += link_error.eq(1)
                m.d.comb += self.irq.eq(1)
            with m.Else():
                m.d.sync += [attempts.eq(failed + 1), replaying.eq(1), replay_ptr.eq(new_ack),
                             rp_reset.eq(1), replay_first.eq(1)]
        with m.If(self.retrain & link_error):
            m.d.sync += [link_error.eq(0), attempts.eq(0), timer.eq(0), timer_restart.eq(1), replaying.eq(1),
                         replay_ptr.eq(new_ack), rp_reset.eq(1), replay_first.eq(1)]
        return m
