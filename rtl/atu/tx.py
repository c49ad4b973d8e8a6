"""The ATU's transmit side: one output register for its HTAX link (dissertation ch. 5.3-5.4,
fig. 5-12 "ATS out" and the GATE reads of fig. 5-9)."""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import AtsCmd
from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxLinkSignature, HtaxVC
from rtl.common.htax_rules import link_rules

from .formats import OfferSignature

__all__ = ["AtuTxArbiter"]


class AtuTxArbiter(wiring.Component):
    """Output register and arbiter of the ATU's transmit link.

    Every beat leaves from one register, which loads whenever it is free (empty or its beat moves), by
    fixed priority: flush request > GATE read after a first-level entry > GATE (or first-level entry)
    read > job packet (in its turn) > translation response.  A job packet (the job engine's READs and
    multi-beat WRITEs, whole HTAX beats) keeps the register from its header to its last beat; a new one
    starts only in its *turn*, a flop set by a free cycle in which the job waited, so after each job
    packet one free cycle goes to the other sources (the choice never waits for the late bypass
    decision).  The source is chosen among
    flags that are registers (or register inputs); only ``valid`` waits for the late bypass decision
    (the register's data is the response candidate when nothing else is chosen, and nobody looks at
    it while ``valid`` is low), so the late decision drives one flop instead of the whole beat.  Flush
    requests and translation responses go out on the ATS VC, single-beat ATS packets with tag 0 (flush)
    or the request's tag; a GATE read is a READ of ``1 + more`` 64-bit words (the GATE, then the
    look-ahead GATEs of the same 64-byte line) on the non-posted VC, tagged with its reorder-buffer slot.

    Parameters
    ----------
    formats : AtuFormats
    htax_port : int
        The ATU's port (``src`` of every packet).
    host_port : int
        Host memory's port (``dst`` of GATE reads).

    Members
    -------
    flush_requests : In(stream.Signature(formats.flush_request))
    reads : In(stream.Signature(formats.read))
    reads2 : In(stream.Signature(formats.read))
        GATE reads after a first-level entry arrived (before ``reads``).
    responses : In(OfferSignature(formats.response))
    jobs : In(stream.Signature(HtaxBeat))
        The job engine's packets, beat by beat (``first`` .. ``last``; the beats of one packet follow
        each other without a gap).
    tx : Out(HtaxLinkSignature)
        Obeys the HTAX link rules.
    answered : Out(stream.Signature(1, always_ready=True))
        A translation response (of flush epoch ``payload``) moves out in this cycle.
    failed : Out(1)
        One cycle after a translation response with ``ok = 0`` entered the output register.
    """

    def __init__(self, *, formats, htax_port, host_port):
        self._f = formats
        self._htax_port = htax_port
        self._host_port = host_port
        super().__init__({
            "flush_requests": In(stream.Signature(formats.flush_request)),
            "reads": In(stream.Signature(formats.read)),
            "reads2": In(stream.Signature(formats.read)),
            "responses": In(OfferSignature(formats.response)),
            "jobs": In(stream.Signature(HtaxBeat)),
            "tx": Out(HtaxLinkSignature()),
            "answered": Out(stream.Signature(1, always_ready=True)),
            "failed": Out(1),
        })

    def _ats_header(self, m, beat, dst, tag):
        h = beat.word.header
        m.d.comb += [h.cmd.eq(HtaxCmd.ATS), h.vc.eq(HtaxVC.ATS), h.src.eq(self._htax_port), h.dst.eq(dst),
                     h.tag.eq(tag), beat.vc.eq(HtaxVC.ATS), beat.first.eq(1), beat.last.eq(1)]

    def _other_beat(self, m, beat, fl_send, rd_send, rd2_send):
        """The flush request's, the GATE read's or the job's beat, by priority."""
        h = beat.word.header
        with m.If(fl_send):
            fl = self.flush_requests.payload
            fr = h.body.ats.flush_request
            self._ats_header(m, beat, fl.dst, 0)
            m.d.comb += [fr.cmd.eq(AtsCmd.FLUSH_REQUEST), fr.vpid.eq(fl.vpid), fr.nla_page.eq(fl.nla),
                         fr.flush_id.eq(fl.flush_id)]
        with m.Elif(rd_send):
            rd = data.View(self._f.read, Mux(rd2_send, self.reads2.payload.as_value(),
                                             self.reads.payload.as_value()))
            m.d.comb += [h.cmd.eq(HtaxCmd.READ), h.vc.eq(HtaxVC.NONPOSTED), h.src.eq(self._htax_port),
                         h.dst.eq(self._host_port), h.tag.eq(rd.slot),
                         h.body.mem.addr.eq(Cat(Const(0, 3), rd.addr)),
                         h.body.mem.length.eq(rd.more + 1), h.body.mem.first_be.eq(0xFF),
                         h.body.mem.last_be.eq(Mux(rd.more != 0, 0xFF, 0)),
                         beat.vc.eq(HtaxVC.NONPOSTED), beat.first.eq(1), beat.last.eq(1)]
        with m.Else():
            m.d.comb += beat.eq(self.jobs.payload)

    def _reply_beat(self, m, beat, rsp):
        """A translation response's beat."""
        tr = beat.word.header.body.ats.translation_response
        self._ats_header(m, beat, rsp.dst, rsp.tag)
        m.d.comb += [tr.cmd.eq(AtsCmd.TRANSLATION_RESPONSE), tr.ok.eq(rsp.ok), tr.cause.eq(rsp.cause),
                     tr.ppn.eq(rsp.ppn)]

    def elaborate(self, platform):
        m = Module()
        tx = self.tx
        out = Signal(HtaxBeat)
        out_valid = Signal()
        out_rsp = Signal()                  # holds a translation response
        out_epoch = Signal()                # its flush epoch
        out_vc = Signal(HtaxVC)             # = out.vc, a flop for `free`
        lock = Signal()                     # the register holds a job packet's beat before its last
        job_turn = Signal()                 # a free cycle passed while the job waited: its turn
        moves = out_valid & tx.ready.bit_select(out_vc.as_value(), 1)
        free = ~out_valid | moves
        fl_send = self.flush_requests.valid & ~lock
        rd2_send = self.reads2.valid & ~lock
        rd_send = rd2_send | (self.reads.valid & ~lock)
        # job_turn implies jobs.valid: it is set only while the job waits, and nothing takes it before
        rsp_block = Signal()                # = lock | job_turn, as one flop: no response may load
        job_send = self.jobs.valid & lock | job_turn & ~fl_send & ~rd_send
        rsp_ok = ~rsp_block
        rsp = self.responses
        m.d.comb += [
            tx.valid.eq(out_valid), tx.payload.eq(out),
            self.flush_requests.ready.eq(free & ~lock),
            self.reads2.ready.eq(free & ~lock & ~fl_send),
            self.reads.ready.eq(free & ~lock & ~fl_send & ~rd2_send),
            self.jobs.ready.eq(free & (lock | (job_turn & ~fl_send & ~rd_send))),
            rsp.ready.eq(free & ~fl_send & ~rd_send & rsp_ok),
            self.answered.valid.eq(moves & out_rsp), self.answered.payload.eq(out_epoch),
        ]

        # the beat of a flush request, a GATE read or a job (chosen from early flags) and the response
        # beat (late: the bypass) meet in one 2:1 multiplexer in front of the register
        other = Signal(HtaxBeat)
        reply = Signal(HtaxBeat)
        self._other_beat(m, other, fl_send, rd_send, rd2_send)
        self._reply_beat(m, reply, rsp.payload)
        other_send = fl_send | rd_send | job_send

        with m.If(free):
            m.d.sync += [out.eq(Mux(other_send, other.as_value(), reply.as_value())),
                         out_valid.eq(other_send | (rsp.valid & rsp_ok)), out_rsp.eq(~other_send),
                         out_vc.eq(Mux(other_send, other.vc.as_value(), HtaxVC.ATS.value)),
                         out_epoch.eq(rsp.payload.epoch), job_turn.eq(self.jobs.valid & ~job_send),
                         rsp_block.eq(Mux(job_send, ~self.jobs.payload.last, lock) | (self.jobs.valid & ~job_send))]
            with m.If(job_send):
                m.d.sync += lock.eq(~self.jobs.payload.last)
        m.d.sync += self.failed.eq(rsp.valid & rsp.ready & ~rsp.payload.ok)

        if platform == "formal":
            link_rules(m, tx, Assert, well_formed=True, name="tx")
            m.d.comb += [
                Assert(~out_valid | (out_vc == out.vc)),
                Assert(~lock | (out_valid & ~out.last)),
                Assert(~job_turn | self.jobs.valid), Assert(rsp_block == (lock | job_turn)),
                Assert(~(out_valid & out_rsp) | (out.word.header.body.ats.cmd == AtsCmd.TRANSLATION_RESPONSE)),
            ]
        return m
