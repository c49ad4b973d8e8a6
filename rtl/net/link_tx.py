"""Transmit half of the link port: flit assembly, replay buffer, go-back-N retransmission (ch. 7.3).

A data flit takes beats of one virtual channel while they keep coming, up to ``max_beats`` and the
peer's credits; it ends (EOF) at the first beat boundary where the next beat is not there, so a
packet larger than a flit, or one whose source stalls, continues in the channel's next flit.  Every
beat sent for the first time is also written to the replay buffer at
``(seq mod replay_flits, beat)``; the flit's VC and beat count go to a small metadata memory, so a
replay regenerates the flit with its original sequence number and the current acknowledgement.

Go-back-N: a NAK (or the replay timer, which runs while flits are unacknowledged and restarts on
every acknowledgement progress) restarts transmission at the oldest unacknowledged flit; a data flit
in progress is ended at its next beat boundary so the replay starts within one beat.  A replay that
does not make progress is an *attempt*; when ``max_replays`` attempts in a row fail the port enters
the link-error state: it sends only control flits (so the peer still gets acks and credits), raises
``link_error`` and strobes ``irq``.  ``retrain`` leaves that state and replays every unacknowledged
flit, so nothing the port accepted is lost.

When there is nothing else to send the port sends control flits back to back: they carry the
cumulative acknowledgement, a NAK flag and the cumulative credit counters of both VCs.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.crc import Processor
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature

from .framing import PacketShaper
from .params import FlitType, LinkParams, PhitCtl

__all__ = ["LinkTx"]

# Control flits with fresh credits are slipped between data flits after this many data flits.
CTRL_EVERY = 4

_IDLE, _HDR, _BODY, _CRC = range(4)
_DATA, _REPLAY, _CTRL = range(3)


class LinkTx(wiring.Component):
    """Transmit side of :class:`~rtl.net.LinkPort`.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    tx : ``In(NetStreamSignature()).array(2)``
        Packets to send per virtual channel.
    phit, ctl : ``Out(phit_bits)``, ``Out(PhitCtl)``
        To the PHY, one phit per cycle (registered).
    expected, ack_valid, ack, ack_nak, credit_valid, credit, nak_req, freed :
        From :class:`~rtl.net.link_rx.LinkRx` (see there).
    replay_timeout : ``In(16)``
        Replay timer in cycles.
    max_replays : ``In(4)``
        Failed replays in a row before the link-error state.
    retrain : ``In(1)``
        Pulse: leave the link-error state and replay.
    link_error, irq : ``Out(1)``
        Link-error state; one-cycle strobe on entering it.
    ev_retransmit, ev_nak_sent, ev_nak_received, ev_timeout, ev_malformed, ev_protocol : ``Out(1)``
        Event pulses for the counters (``ev_malformed`` may pulse for both VCs: it is two bits).
    tx_data_phit : ``Out(1)``
        The phit on ``phit`` belongs to a data flit (performance monitoring).
    """

    def __init__(self, params):
        if not isinstance(params, LinkParams):
            raise TypeError(f"params must be a LinkParams, not {params!r}")
        self.params = params
        p = params
        super().__init__({
            "tx": In(NetStreamSignature()).array(p.VCS),
            "phit": Out(p.phit_bits), "ctl": Out(PhitCtl),
            "expected": In(p.seq_bits),
            "ack_valid": In(1), "ack": In(p.seq_bits), "ack_nak": In(1),
            "credit_valid": In(1), "credit": In(p.credit_bits).array(p.VCS),
            "nak_req": In(1), "freed": In(p.credit_bits).array(p.VCS),
            "replay_timeout": In(16, init=1024), "max_replays": In(4, init=4), "retrain": In(1),
            "link_error": Out(1), "irq": Out(1),
            "ev_retransmit": Out(1), "ev_nak_sent": Out(1), "ev_nak_received": Out(1),
            "ev_timeout": Out(1), "ev_malformed": Out(p.VCS), "ev_protocol": Out(1),
            "tx_data_phit": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        W, P, S, C, R = p.phit_bits, p.phits_per_beat, p.seq_bits, p.credit_bits, p.replay_flits
        rbits = R.bit_length() - 1

        shapers = []
        for vc in range(p.VCS):
            sh = PacketShaper()
            m.submodules[f"shaper{vc}"] = sh
            wiring.connect(m, wiring.flipped(self.tx[vc]), sh.i)
            m.d.comb += self.ev_malformed[vc].eq(sh.malformed)
            shapers.append(sh)

        # Replay buffer: beats at (slot, beat); per-slot metadata (vc, beat count).
        meta_layout = Cat(Signal(1), Signal(p.beat_cnt_bits)).shape()
        m.submodules.replay = rmem = Memory(shape=64, depth=R << p.beat_idx_bits, init=[])
        m.submodules.meta = mmem = Memory(shape=meta_layout, depth=R, init=[])
        rwp = rmem.write_port()
        rrp = rmem.read_port(transparent_for=())
        mwp = mmem.write_port()
        mrp = mmem.read_port(transparent_for=())

        m.submodules.crc = crc = Processor(p.crc_algorithm(data_width=W))

        state = Signal(2, init=_IDLE)
        kind = Signal(2)
        hdr = Signal(p.header_phits * W)
        hdr_idx = Signal(range(p.header_phits + 1))
        hdr_last = Signal(range(p.header_phits + 1))
        cur_vc = Signal()
        cur_seq = Signal(S)
        nbeats = Signal(p.beat_cnt_bits)
        beat_cnt = Signal(p.beat_cnt_bits)
        j = Signal(range(P))
        beat_reg = Signal(64)
        last_vc = Signal()

        next_seq = Signal(S)
        ack_seq = Signal(S)
        replaying = Signal()
        replay_ptr = Signal(S)
        replay_ptr_prev = Signal(S)
        attempts = Signal(4)
        timer = Signal(16)
        nak_pending = Signal()
        link_error = Signal()
        sent = [Signal(C, name=f"sent{v}") for v in range(p.VCS)]
        peer_freed = [Signal(C, name=f"peer_freed{v}") for v in range(p.VCS)]
        credit_sent = [Signal(C, name=f"credit_sent{v}") for v in range(p.VCS)]
        since_ctrl = Signal(range(CTRL_EVERY + 1))
        m.d.comb += self.link_error.eq(link_error)

        avail = [Signal(C + 1, name=f"avail{v}") for v in range(p.VCS)]
        for v in range(p.VCS):
            m.d.comb += avail[v].eq(p.rx_buffer_beats - (sent[v] - peer_freed[v])[:C])
        outstanding = (next_seq - ack_seq)[:S]
        replay_active = replaying & (replay_ptr != next_seq)
        m.d.sync += replay_ptr_prev.eq(replay_ptr)
        meta_ok = replay_ptr == replay_ptr_prev
        m.d.comb += mrp.addr.eq(replay_ptr[:rbits])
        meta_vc = mrp.data[0]
        meta_beats = mrp.data[1:]

        # Beat source of the flit in progress.
        src_valid = Signal()
        src_data = Signal(64)
        with m.If(kind == _REPLAY):
            m.d.comb += [src_valid.eq(1), src_data.eq(rrp.data)]
        with m.Else():
            m.d.comb += [src_valid.eq(Mux(cur_vc, shapers[1].o.valid, shapers[0].o.valid)),
                         src_data.eq(Mux(cur_vc, shapers[1].o.payload, shapers[0].o.payload))]
        urgent = nak_pending | replay_active | link_error
        at_beat = (state == _BODY) & (j == 0)
        cur_avail = Mux(cur_vc, avail[1], avail[0])
        end_now = Signal()
        m.d.comb += end_now.eq(at_beat & Mux(
            kind == _REPLAY, beat_cnt == nbeats,
            (beat_cnt != 0) & (~src_valid | (beat_cnt == p.max_beats) | (cur_avail == 0) | urgent)))
        emit_crc = (state == _CRC) | end_now
        consume = at_beat & ~end_now

        # Replay buffer access: write new beats; read the beat that the next j == 0 consumes.
        beat_next = beat_cnt + consume
        m.d.comb += [rrp.addr.eq(Cat(beat_next[:p.beat_idx_bits], cur_seq[:rbits])),
                     rwp.addr.eq(Cat(beat_cnt[:p.beat_idx_bits], cur_seq[:rbits])),
                     rwp.data.eq(src_data),
                     rwp.en.eq(consume & (kind == _DATA))]
        for v, sh in enumerate(shapers):
            m.d.comb += sh.o.ready.eq(consume & (kind == _DATA) & (cur_vc == v))
            with m.If(consume & (kind == _DATA) & (cur_vc == v)):
                m.d.sync += sent[v].eq(sent[v] + 1)

        # The phit of this cycle.
        out_phit = Signal(W)
        out_ctl = Signal(PhitCtl)
        cur_beat = Mux(j == 0, src_data, beat_reg)
        with m.If(emit_crc):
            m.d.comb += [out_phit.eq(crc.crc), out_ctl.eq(PhitCtl.EOF)]
        with m.Elif(state == _HDR):
            m.d.comb += [out_phit.eq(hdr.word_select(hdr_idx, W)),
                         out_ctl.eq(Mux(hdr_idx == 0, PhitCtl.SOF, PhitCtl.BODY))]
        with m.Elif(state == _BODY):
            m.d.comb += [out_phit.eq(cur_beat.word_select(j, W)), out_ctl.eq(PhitCtl.BODY)]
        with m.Else():
            m.d.comb += [out_phit.eq(0), out_ctl.eq(PhitCtl.IDLE)]
        m.d.comb += [crc.data.eq(out_phit), crc.valid.eq((state == _HDR) | ((state == _BODY) & ~end_now)),
                     crc.start.eq((state == _HDR) & (hdr_idx == 0))]
        m.d.sync += [self.phit.eq(out_phit), self.ctl.eq(out_ctl),
                     self.tx_data_phit.eq((out_ctl != PhitCtl.IDLE) & (kind != _CTRL)
                                          & (state != _IDLE))]

        # Per-state sequencing.
        with m.If(state == _HDR):
            m.d.sync += hdr_idx.eq(hdr_idx + 1)
            with m.If(hdr_idx == hdr_last):
                m.d.sync += [hdr_idx.eq(0), j.eq(0), beat_cnt.eq(0)]
                m.d.sync += state.eq(Mux(kind == _CTRL, _CRC, _BODY))
        with m.If(consume):
            m.d.sync += [beat_reg.eq(src_data), beat_cnt.eq(beat_cnt + 1)]
            if P > 1:
                m.d.sync += j.eq(1)
        if P > 1:
            with m.If((state == _BODY) & (j != 0)):
                m.d.sync += j.eq(Mux(j == P - 1, 0, j + 1))

        # End of flit bookkeeping.
        finish_data = emit_crc & (kind == _DATA) & (state != _IDLE)
        with m.If(finish_data):
            m.d.sync += next_seq.eq(next_seq + 1)
            m.d.comb += [mwp.addr.eq(cur_seq[:rbits]), mwp.data.eq(Cat(cur_vc, beat_cnt)),
                         mwp.en.eq(1)]
            m.d.sync += since_ctrl.eq(Mux(since_ctrl == CTRL_EVERY, CTRL_EVERY, since_ctrl + 1))

        # Choice of the next flit, at the end of one or when idle.
        decide = emit_crc | (state == _IDLE)
        window_ok = (outstanding + finish_data) < R
        can = [shapers[v].o.valid & (avail[v] != 0) for v in range(p.VCS)]
        credit_dirty = Signal()
        m.d.comb += credit_dirty.eq(
            (self.freed[0] != credit_sent[0]) | (self.freed[1] != credit_sent[1]))
        d_hdr = p.data_header(Signal(p.data_header.size, name="d_hdr"))
        c_hdr = p.ctrl_header(Signal(p.ctrl_header.size, name="c_hdr"))
        d_vc = Signal()
        d_seq = Signal(S)
        m.d.comb += [d_hdr.type.eq(FlitType.DATA), d_hdr.ack.eq(self.expected),
                     d_hdr.vc.eq(d_vc), d_hdr.seq.eq(d_seq),
                     c_hdr.type.eq(FlitType.CTRL), c_hdr.ack.eq(self.expected),
                     c_hdr.nak.eq(nak_pending)]
        m.d.comb += [c_hdr.credit[v].eq(self.freed[v]) for v in range(p.VCS)]

        def start(k, vc, seq, header, hphits):
            m.d.sync += [state.eq(_HDR), kind.eq(k), cur_vc.eq(vc), cur_seq.eq(seq), hdr.eq(header),
                         hdr_idx.eq(0), hdr_last.eq(hphits - 1), beat_cnt.eq(0)]

        def start_ctrl():
            start(_CTRL, 0, 0, c_hdr.as_value(), p.ctrl_header_phits)
            m.d.sync += [credit_sent[v].eq(self.freed[v]) for v in range(p.VCS)]
            m.d.sync += since_ctrl.eq(0)
            with m.If(nak_pending):
                m.d.comb += self.ev_nak_sent.eq(1)
                m.d.sync += nak_pending.eq(0)

        with m.If(decide):
            m.d.sync += state.eq(_IDLE)
            with m.If(nak_pending | link_error):
                start_ctrl()
            with m.Elif(replay_active):
                with m.If(meta_ok):
                    m.d.comb += [d_vc.eq(meta_vc), d_seq.eq(replay_ptr)]
                    start(_REPLAY, meta_vc, replay_ptr, d_hdr.as_value(), p.data_header_phits)
                    m.d.sync += [nbeats.eq(meta_beats), replay_ptr.eq(replay_ptr + 1)]
                    m.d.comb += self.ev_retransmit.eq(1)
            with m.Elif(credit_dirty & (since_ctrl == CTRL_EVERY)):
                start_ctrl()
            with m.Elif(window_ok & (can[0] | can[1])):
                vc = Mux(can[0] & can[1], ~last_vc, can[1])
                m.d.comb += [d_vc.eq(vc), d_seq.eq(next_seq + finish_data)]
                start(_DATA, vc, next_seq + finish_data, d_hdr.as_value(), p.data_header_phits)
                m.d.sync += last_vc.eq(vc)
            with m.Else():
                start_ctrl()
        with m.If(replaying & ~replay_active):
            m.d.sync += replaying.eq(0)

        # Incoming acknowledgements and credits.
        with m.If(self.nak_req):
            m.d.sync += nak_pending.eq(1)
        new_ack = Signal(S)
        m.d.comb += new_ack.eq(ack_seq)
        adv = (self.ack - ack_seq)[:S]
        progress = Signal()
        with m.If(self.ack_valid):
            with m.If(adv > outstanding):
                m.d.comb += self.ev_protocol.eq(1)
            with m.Elif(adv != 0):
                m.d.comb += [new_ack.eq(self.ack), progress.eq(1)]
                m.d.sync += [ack_seq.eq(self.ack), attempts.eq(0)]
                with m.If(replaying & (adv > (replay_ptr - ack_seq)[:S])):
                    m.d.sync += replay_ptr.eq(self.ack)
        with m.If(self.credit_valid):
            for v in range(p.VCS):
                with m.If((self.credit[v] - peer_freed[v])[:C] <= (sent[v] - peer_freed[v])[:C]):
                    m.d.sync += peer_freed[v].eq(self.credit[v])
                with m.Else():
                    m.d.comb += self.ev_protocol.eq(1)

        # Replay triggers: NAK, replay timer; failed attempts lead to the link-error state.
        remaining = (next_seq - new_ack)[:S] != 0
        nak_trig = self.ack_valid & self.ack_nak & remaining & ~link_error
        tmo_trig = (timer >= self.replay_timeout) & (outstanding != 0) & ~link_error
        m.d.comb += [self.ev_nak_received.eq(self.ack_valid & self.ack_nak),
                     self.ev_timeout.eq(tmo_trig)]
        with m.If(progress | (outstanding == 0) | link_error):
            m.d.sync += timer.eq(0)
        with m.Elif(timer != 0xffff):
            m.d.sync += timer.eq(timer + 1)
        with m.If(nak_trig | tmo_trig):
            m.d.sync += timer.eq(0)
            with m.If(attempts >= self.max_replays):
                m.d.sync += link_error.eq(1)
                m.d.comb += self.irq.eq(1)
            with m.Else():
                m.d.sync += [attempts.eq(attempts + 1), replaying.eq(1), replay_ptr.eq(new_ack)]
        with m.If(self.retrain & link_error):
            m.d.sync += [link_error.eq(0), attempts.eq(0), timer.eq(0), replaying.eq(1),
                         replay_ptr.eq(new_ack)]
        return m
