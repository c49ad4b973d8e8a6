"""Receive half of the link port: flit checking, in-order acceptance, ack/NAK generation (ch. 7.3).

Every phit goes through one register stage, then a framer that follows the control bits
(:class:`~rtl.link.params.PhitCtl`).  A flit is *good* when it is framed correctly (SOF, header, whole
beats, EOF, no IDLE inside), its length fits its type and its CRC matches.  A good data flit is
accepted when its sequence number is the expected one; a good flit ahead of it (a gap) asks for a NAK,
one behind it (a duplicate from a replay) is dropped and re-acknowledged by the ack field of the next
flit the transmitter sends.  A bad flit asks for a NAK too.  After a NAK the receiver stays quiet until
it accepts a flit or ``nak_holdoff`` cycles pass, so the flits already in flight behind an error do not
each trigger a replay.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature

from .crc import flit_crc
from .params import FlitType, PhitCtl, require_params
from .rx_buffer import RxBuffer

__all__ = ["LinkRx"]


class LinkRx(wiring.Component):
    """Receive side of :class:`~rtl.link.LinkPort`.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    phit, ctl : ``In(phit_bits)``, ``In(PhitCtl)``
        From the PHY, one phit per cycle.
    rx : ``Out(NetStreamSignature()).array(vcs)``
        Received packets per virtual channel.
    freed : ``Out(credit_bits).array(vcs)``
        Cumulative credits to return (beats freed per VC).
    expected : ``Out(seq_bits)``
        Next expected sequence number: the cumulative acknowledgement to send.
    ack_valid, ack, ack_nak : ``Out(1)``, ``Out(seq_bits)``, ``Out(1)``
        A good flit carried acknowledgement ``ack`` (a NAK when ``ack_nak``); ``ack`` and ``ack_nak``
        are meaningful only while ``ack_valid`` is high.
    credit_valid, credit : ``Out(1)``, ``Out(credit_bits).array(vcs)``
        A good control flit carried the peer's cumulative credit counters (``credit`` is meaningful
        only while ``credit_valid`` is high).
    nak_req : ``Out(1)``
        Pulse: send a NAK.
    nak_holdoff : ``In(16)``
        Cycles after a NAK before another one may be asked for.
    bad_flit, overflow : ``Out(1)``
        Pulses: a flit failed framing or CRC; an in-sequence flit did not fit the buffer (credit
        violation by the peer).
    """

    def __init__(self, params):
        self.params = require_params(params)
        p = params
        super().__init__({
            "phit": In(p.phit_bits), "ctl": In(PhitCtl),
            "rx": Out(NetStreamSignature()).array(p.vcs),
            "freed": Out(p.credit_bits).array(p.vcs),
            "expected": Out(p.seq_bits),
            "ack_valid": Out(1), "ack": Out(p.seq_bits), "ack_nak": Out(1),
            "credit_valid": Out(1), "credit": Out(p.credit_bits).array(p.vcs),
            "nak_req": Out(1), "nak_holdoff": In(16, init=1024),
            "bad_flit": Out(1), "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        W, P, S = p.phit_bits, p.phits_per_beat, p.seq_bits

        bufs = []
        for vc in range(p.vcs):
            buf = RxBuffer(p)
            m.submodules[f"buf{vc}"] = buf
            wiring.connect(m, wiring.flipped(self.rx[vc]), buf.o)
            m.d.comb += self.freed[vc].eq(buf.freed)
            bufs.append(buf)

        # One register stage on the PHY input (timing; the PHY's own output is not assumed registered).
        phit = Signal(W)
        ctl = Signal(PhitCtl)
        m.d.sync += [phit.eq(self.phit), ctl.eq(self.ctl)]

        # CRC over SOF and BODY phits.  The CRC phit is compared a cycle ahead, while the last header
        # or beat phit is in ``phit`` and the CRC phit still at the input (timing): ``crc_match``.
        crc_value = flit_crc(m, p, ctl, phit)
        crc_match = Signal()
        m.d.sync += crc_match.eq(crc_value == self.phit[:p.crc_bits])

        in_flit = Signal()
        stray = Signal()            # inside a run of phits that belong to no flit (lost SOF)
        hdr = Signal(p.header_phits * W)
        hdr_cnt = Signal(range(p.header_phits + 1))
        j = Signal(range(P))
        beat = Signal(64)
        beats = Signal(range(p.max_beats + 2))
        too_long = Signal()
        ovf = Signal()
        expected = Signal(S)
        nak_out = Signal()
        holdoff = Signal(16)
        m.d.comb += self.expected.eq(expected)

        dhdr = p.data_header(hdr[:p.data_header.size])
        chdr = p.ctrl_header(hdr[:p.ctrl_header.size])
        is_ctrl = dhdr.type == FlitType.CTRL
        hdr_phits = Signal(range(p.header_phits + 1))
        m.d.comb += hdr_phits.eq(p.ctrl_header_phits if p.ctrl_header_phits == p.data_header_phits
                                 else 0)
        if p.ctrl_header_phits != p.data_header_phits:
            with m.If(is_ctrl):
                m.d.comb += hdr_phits.eq(p.ctrl_header_phits)
            with m.Else():
                m.d.comb += hdr_phits.eq(p.data_header_phits)
        hdr_done = hdr_cnt == hdr_phits
        vc = dhdr.vc

        # Sequence check of the flit in progress, registered (timing): the sequence number is in the
        # first header phit, written at SOF; ``expected`` changes only at the EOF of an earlier flit;
        # a data flit's EOF comes at least two cycles after its SOF, so both are settled by then.
        in_seq = Signal()
        is_ahead = Signal()
        ahead = (dhdr.seq - expected)[:S]
        m.d.sync += [in_seq.eq(ahead == 0), is_ahead.eq(ahead < (1 << (S - 1)))]

        bad = Signal()          # the flit in progress (or a stray run) is lost
        good_eof = Signal()

        with m.If(ctl == PhitCtl.SOF):
            m.d.comb += bad.eq(in_flit)
            m.d.sync += [in_flit.eq(1), stray.eq(0), hdr.eq(phit), hdr_cnt.eq(1), j.eq(0),
                         beats.eq(0), too_long.eq(0), ovf.eq(0)]
        with m.Elif(ctl == PhitCtl.BODY):
            with m.If(~in_flit):
                m.d.comb += bad.eq(~stray)
                m.d.sync += stray.eq(1)
            with m.Elif(~hdr_done):
                for k in range(1, p.header_phits):
                    with m.If(hdr_cnt == k):
                        m.d.sync += hdr[k * W:(k + 1) * W].eq(phit)
                m.d.sync += hdr_cnt.eq(hdr_cnt + 1)
            with m.Else():
                m.d.sync += j.eq(j + 1)
                if P > 1:
                    for k in range(P - 1):
                        with m.If(j == k):
                            m.d.sync += beat[k * W:(k + 1) * W].eq(phit)
                with m.If(j == P - 1):
                    m.d.sync += [j.eq(0), beats.eq(beats + 1)]
                    with m.If(is_ctrl | (beats == p.max_beats)):
                        m.d.sync += too_long.eq(1)
                    with m.Else():
                        for v, buf in enumerate(bufs):
                            with m.If((vc == v) & ~ovf):
                                m.d.comb += [buf.w_en.eq(1),
                                             buf.w_data.eq(Cat(beat[:(P - 1) * W], phit))]
                                with m.If(~buf.room):
                                    m.d.sync += ovf.eq(1)
        with m.Elif(ctl == PhitCtl.EOF):
            with m.If(~in_flit):
                m.d.comb += bad.eq(~stray)
                m.d.sync += stray.eq(1)
            with m.Else():
                m.d.sync += in_flit.eq(0)
                shape_ok = hdr_done & (j == 0) & ~too_long & (is_ctrl | (beats != 0))
                with m.If(shape_ok & crc_match):
                    m.d.comb += good_eof.eq(1)
                with m.Else():
                    m.d.comb += bad.eq(1)
        with m.Else():     # PhitCtl.IDLE
            m.d.comb += bad.eq(in_flit)
            m.d.sync += [in_flit.eq(0), stray.eq(0)]

        want_nak = Signal()
        # ack, ack_nak and credit are read only with their valid strobe: not gated by it (timing: the
        # port registers them, and a gate would make the flit checks reach those registers' resets).
        m.d.comb += [self.ack.eq(Mux(is_ctrl, chdr.ack, dhdr.ack)), self.ack_nak.eq(is_ctrl & chdr.nak)]
        m.d.comb += [self.credit[v].eq(chdr.credit[v]) for v in range(p.vcs)]
        with m.If(good_eof):
            m.d.comb += self.ack_valid.eq(1)
            with m.If(is_ctrl):
                m.d.comb += self.credit_valid.eq(1)
            with m.Else():
                with m.If(in_seq & ~ovf):
                    m.d.comb += [bufs[v].commit.eq(vc == v) for v in range(p.vcs)]
                    m.d.sync += [expected.eq(expected + 1), nak_out.eq(0)]
                with m.Else():
                    m.d.comb += [bufs[v].rollback.eq(1) for v in range(p.vcs)]
                    with m.If(in_seq):
                        m.d.comb += [self.overflow.eq(1), want_nak.eq(1)]
                    with m.Elif(is_ahead):
                        m.d.comb += want_nak.eq(1)
        with m.If(bad):
            m.d.comb += [self.bad_flit.eq(1), want_nak.eq(1)]
            m.d.comb += [bufs[v].rollback.eq(1) for v in range(p.vcs)]

        with m.If(nak_out):
            m.d.sync += holdoff.eq(holdoff + 1)
            with m.If(holdoff >= self.nak_holdoff):
                m.d.sync += nak_out.eq(0)
        with m.If(want_nak & ~nak_out):
            m.d.comb += self.nak_req.eq(1)
            m.d.sync += [nak_out.eq(1), holdoff.eq(0)]
        return m
