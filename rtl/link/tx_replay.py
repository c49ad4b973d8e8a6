"""Acknowledgements, replay window and go-back-N control of the link port's transmit side (ch. 7.3)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .params import require_params

__all__ = ["LinkTxReplaySignature", "LinkTxReplay"]


class LinkTxReplaySignature(wiring.Signature):
    """The flit sequencer's side of the replay control.

    Members
    -------
    finish_data : Out(1)
        A new data flit ends in this cycle (it takes ``next_seq``).
    replay_start : Out(1)
        A replayed flit starts in this cycle (with sequence number ``replay_ptr``).
    in_first, emit_crc : Out(1)
        The flit in progress is the first of a replay; a flit ends in this cycle.
    next_seq, next_seq_p1 : In(seq_bits)
        Sequence number of the next new data flit, and one more.
    window_ok : In(1)
        The replay buffer has room for another new data flit.
    replay_ptr : In(seq_bits)
        Sequence number of the next flit to replay (its metadata address).
    replay_active, replay_seen, rp_reset, meta_ok : In(1)
        A replay has flits left; the same a cycle ago; ``replay_ptr`` was reset by a trigger a cycle
        ago; ``replay_ptr`` did not change in the previous cycle (the metadata read is current).
    replay_first : In(1)
        The first flit of the current replay is not yet sent.
    link_error : In(1)
        The link-error state.
    """

    def __init__(self, seq_bits):
        self.seq_bits = S = seq_bits
        super().__init__({"finish_data": Out(1), "replay_start": Out(1), "in_first": Out(1), "emit_crc": Out(1),
                          "next_seq": In(S), "next_seq_p1": In(S), "window_ok": In(1), "replay_ptr": In(S),
                          "replay_active": In(1), "replay_seen": In(1), "rp_reset": In(1), "meta_ok": In(1),
                          "replay_first": In(1), "link_error": In(1)})

    def __eq__(self, other):
        return type(other) is LinkTxReplaySignature and other.seq_bits == self.seq_bits

    def __hash__(self):
        return hash((LinkTxReplaySignature, self.seq_bits))

    def __repr__(self):
        return f"LinkTxReplaySignature({self.seq_bits})"


class LinkTxReplay(wiring.Component):
    """Acknowledgement window, replay pointer, replay timer and link-error state of
    :class:`~rtl.link.LinkTx` (go-back-N, ``docs/link.md``, "Replay timer and link-error state").

    ``next_seq`` and ``ack_seq`` bound the unacknowledged flits; an acknowledgement outside the window
    is a protocol error.  A NAK (or the replay timer, which runs while flits are unacknowledged and
    restarts on every acknowledgement progress) sets ``replay_ptr`` to the oldest unacknowledged flit.
    A NAK that arrives before the first flit of the replay has been sent is stale (asked for by an
    older flit) and ignored.  A replay that makes no progress is an *attempt* (progress with the NAK
    itself starts a new series); when ``max_replays`` attempts in a row fail the port enters the
    link-error state.  ``retrain`` leaves it and replays every unacknowledged flit.

    Timing: acknowledgements are checked against the registers in one cycle and take effect in the
    next (acks come at most every other cycle, and ``next_seq`` only grows, so the check stays valid);
    the number of outstanding flits is a register with the two window compares of its next value; the
    timer compare is registered.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    flits : In(LinkTxReplaySignature(seq_bits))
        From the flit sequencer.
    ack_valid, ack, ack_nak : In
        An acknowledgement (cumulative, with the NAK flag) from a received flit.
    replay_timeout : In(16) ; max_replays : In(4) ; retrain : In(1)
        As :class:`~rtl.link.LinkTx`'s.
    irq, ev_nak_received, ev_timeout, protocol : Out(1)
        Strobes: entering the link-error state; a NAK came; the timer triggered a replay; an
        acknowledgement outside the window.
    """

    def __init__(self, params):
        self.params = p = require_params(params)
        S = p.seq_bits
        super().__init__({"flits": In(LinkTxReplaySignature(S)),
                          "ack_valid": In(1), "ack": In(S), "ack_nak": In(1),
                          "replay_timeout": In(16, init=1024), "max_replays": In(4, init=4), "retrain": In(1),
                          "irq": Out(1), "ev_nak_received": Out(1), "ev_timeout": Out(1), "protocol": Out(1)})

    def elaborate(self, platform):
        m = Module()
        p, f = self.params, self.flits
        S, R = p.seq_bits, p.replay_flits
        next_seq = Signal(S)
        next_seq_p1 = Signal(S, init=1)     # next_seq + 1, kept as a register (timing)
        ack_seq = Signal(S)
        replaying = Signal()
        replay_ptr = Signal(S)
        replay_ptr_prev = Signal(S)
        attempts = Signal(4)
        timer = Signal(16)
        replay_first = Signal()         # the first flit of the current replay is not yet sent
        link_error = Signal()
        # outstanding = next_seq - ack_seq, kept as a register with the two window compares of its next
        # value (timing); updated below from finish_data and the acknowledgement progress.
        outstanding = Signal(S)
        win_lt_r = Signal(init=1)            # outstanding < R
        win_lt_r1 = Signal(init=R > 1)       # outstanding < R - 1
        unacked = next_seq != ack_seq       # outstanding != 0 without the subtraction (timing)
        replay_active = replaying & (replay_ptr != next_seq)
        m.d.sync += replay_ptr_prev.eq(replay_ptr)
        replay_seen = Signal()
        rp_reset = Signal()         # replay_ptr was set to ack_seq in the previous cycle (a trigger)
        m.d.sync += replay_seen.eq(replay_active)
        m.d.comb += [f.next_seq.eq(next_seq), f.next_seq_p1.eq(next_seq_p1), f.replay_ptr.eq(replay_ptr),
                     f.replay_active.eq(replay_active), f.replay_seen.eq(replay_seen), f.rp_reset.eq(rp_reset),
                     f.meta_ok.eq(replay_ptr == replay_ptr_prev), f.replay_first.eq(replay_first),
                     f.link_error.eq(link_error),
                     # replay window: outstanding + finish_data < R, as two compares of registers and a select
                     f.window_ok.eq(Mux(f.finish_data, win_lt_r1, win_lt_r))]

        with m.If(f.finish_data):
            m.d.sync += [next_seq.eq(next_seq_p1), next_seq_p1.eq(next_seq_p1 + 1)]
        with m.If(f.replay_start):
            m.d.sync += replay_ptr.eq(replay_ptr + 1)
        with m.If(replaying & ~replay_active):
            m.d.sync += replaying.eq(0)

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
                m.d.comb += self.protocol.eq(1)
            with m.Elif(a_moves):
                m.d.comb += [new_ack.eq(a_ack), progress.eq(1)]
                m.d.sync += [ack_seq.eq(a_ack), attempts.eq(0)]
                # replay_ptr only grows, or was reset to ack_seq (then any progress is past it)
                with m.If(replaying & (a_past | rp_reset)):
                    m.d.sync += replay_ptr.eq(a_ack)

        remaining = Mux(progress, next_seq != a_ack, unacked)
        # The next outstanding without this cycle's finish_data, for both outcomes of `progress`; the
        # window compares are made on both from registers and chosen last (timing: `progress` and
        # `finish_data` come late, the subtraction does not wait for them).
        out_acked = Signal(S)
        m.d.comb += out_acked.eq(outstanding - a_adv)
        out_base = Mux(progress, out_acked, outstanding)

        def below(limit):
            return Mux(progress, out_acked < limit, outstanding < limit)

        m.d.sync += [outstanding.eq(out_base + f.finish_data),
                     win_lt_r.eq(Mux(f.finish_data, below(R - 1), below(R))),
                     win_lt_r1.eq(Mux(f.finish_data, below(R - 2), below(R - 1)))]
        # A NAK that arrives before the first flit of the current replay has been sent completely was
        # asked for by a flit sent before the replay (the receiver decides at a flit's end): that
        # replay already resends everything unacknowledged, so the NAK is stale and triggers nothing
        # (after a timeout the receiver's NAK hold-off may end just then).
        with m.If(replay_first & Mux(f.in_first, f.emit_crc, ~replaying)):
            m.d.sync += replay_first.eq(0)
        nak_trig = a_valid & a_nak & remaining & ~link_error & ~replay_first
        # The timer compare is registered (timing); timer_restart masks the cycle after a restart.
        timer_hit = Signal()
        timer_restart = Signal()
        m.d.sync += [timer_hit.eq(timer >= self.replay_timeout), timer_restart.eq(0)]
        tmo_trig = timer_hit & ~timer_restart & unacked & ~link_error
        m.d.comb += [self.ev_nak_received.eq(a_valid & a_nak), self.ev_timeout.eq(tmo_trig)]
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
