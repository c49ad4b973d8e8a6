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
        job_send = self.jobs.valid & (lock | (job_turn & ~fl_send & ~rd_send))
        rsp = self.responses
        m.d.comb += [
            tx.valid.eq(out_valid), tx.payload.eq(out),
            self.flush_requests.ready.eq(free & ~lock),
            self.reads2.ready.eq(free & ~lock & ~fl_send),
            self.reads.ready.eq(free & ~lock & ~fl_send & ~rd2_send),
            self.jobs.ready.eq(free & (lock | (job_turn & ~fl_send & ~rd_send))),
            rsp.ready.eq(free & ~lock & ~fl_send & ~rd_send & ~job_send),
            self.answered.valid.eq(moves & out_rsp), self.answered.payload.eq(out_epoch),
        ]

        h = out.word.header

        def ats_header(dst, tag):
            return [h.cmd.eq(HtaxCmd.ATS), h.vc.eq(HtaxVC.ATS), h.src.eq(self._htax_port), h.dst.eq(dst),
                    h.tag.eq(tag), out.vc.eq(HtaxVC.ATS), out.first.eq(1), out.last.eq(1)]

        with m.If(free):
            m.d.sync += [out.eq(0), out_valid.eq(fl_send | rd_send | job_send | rsp.valid),
                         out_rsp.eq(~fl_send & ~rd_send & ~job_send),
                         out_vc.eq(Mux(~fl_send & rd_send, HtaxVC.NONPOSTED, HtaxVC.ATS)),
                         job_turn.eq(self.jobs.valid & ~job_send)]
            with m.If(job_send):
                m.d.sync += [out.eq(self.jobs.payload), out_vc.eq(self.jobs.payload.vc),
                             lock.eq(~self.jobs.payload.last)]
            with m.Elif(fl_send):
                fl = self.flush_requests.payload
                fr = h.body.ats.flush_request
                m.d.sync += ats_header(fl.dst, 0)
                m.d.sync += [fr.cmd.eq(AtsCmd.FLUSH_REQUEST), fr.vpid.eq(fl.vpid), fr.nla_page.eq(fl.nla),
                             fr.flush_id.eq(fl.flush_id)]
            with m.Elif(rd_send):
                rd = data.View(self._f.read, Mux(rd2_send, self.reads2.payload.as_value(),
                                                 self.reads.payload.as_value()))
                m.d.sync += [h.cmd.eq(HtaxCmd.READ), h.vc.eq(HtaxVC.NONPOSTED), h.src.eq(self._htax_port),
                             h.dst.eq(self._host_port), h.tag.eq(rd.slot),
                             h.body.mem.addr.eq(Cat(Const(0, 3), rd.addr)),
                             h.body.mem.length.eq(rd.more + 1), h.body.mem.first_be.eq(0xFF),
                             h.body.mem.last_be.eq(Mux(rd.more != 0, 0xFF, 0)),
                             out.vc.eq(HtaxVC.NONPOSTED), out.first.eq(1), out.last.eq(1)]
            with m.Else():
                tr = h.body.ats.translation_response
                m.d.sync += ats_header(rsp.payload.dst, rsp.payload.tag)
                m.d.sync += [tr.cmd.eq(AtsCmd.TRANSLATION_RESPONSE), tr.ok.eq(rsp.payload.ok),
                             tr.cause.eq(rsp.payload.cause), tr.ppn.eq(rsp.payload.ppn),
                             out_epoch.eq(rsp.payload.epoch)]
        m.d.sync += self.failed.eq(rsp.valid & rsp.ready & ~rsp.payload.ok)

        if platform == "formal":
            link_rules(m, tx, Assert, well_formed=True, name="tx")
            m.d.comb += [
                Assert(~out_valid | (out_vc == out.vc)),
                Assert(~lock | (out_valid & ~out.last)),
                Assert(~(out_valid & out_rsp) | (h.body.ats.cmd == AtsCmd.TRANSLATION_RESPONSE)),
            ]
        return m
