"""The ATU's bulk-job engine: the memory-mapped command interface of dissertation ch. 5.7 ("larger jobs
passed to the ATU asynchronously, to make deregistration cheap"), as a descriptor ring in host memory.

Formats (:class:`rtl.atu.layout.JobDescriptor`, :class:`~rtl.atu.layout.JobCompletion`,
:class:`~rtl.atu.layout.JobRing`), rules and figures: ``docs/atu.md``, "Bulk jobs"; the reference
model is :meth:`sim.atu_model.AtuModel.job`.
"""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import TAG_BITS, HtaxBeat, HtaxCmd, HtaxStatus, HtaxVC

from .flush import FlushControlSignature
from .formats import LINE_GATES, READ_ADDR_BITS, gat_configured, gate_word_addr
from .layout import (
    GATE_INDEX_BITS,
    JOB_INDEX_BITS,
    JOB_WORDS,
    LARGE_PAGE_BITS,
    GatBase,
    Gate,
    GatTable,
    JobCompletion,
    JobDescriptor,
    JobOp,
    JobRing,
    JobStatus,
)

__all__ = ["AtuJobs", "AtuFlushMux", "JOB_TAG"]

#: the HTAX tag of the engine's reads: above every reorder-buffer slot (the ATU allows jobs with at most
#: 16 slots, so a GATE read's tag never has bit 4 set)
JOB_TAG = (1 << TAG_BITS) - 1


class _State(enum.Enum):
    IDLE = 0
    READ = 1            # send the descriptor's READ
    WAIT = 2            # its words, or the first-level entry's
    CHECK = 3           # the descriptor's range, registered
    DECIDE = 4
    ENTRY = 5           # ask for the GAT base port / send the first-level entry's READ
    ENTRY_DATA = 6      # the on-chip entry arrives
    GAT = 7             # check the GAT entry
    STORE = 8           # a WRITE of GATEs: its header
    STORE_DATA = 9
    FLUSH = 10          # start the range flush
    FLUSH_WAIT = 11
    DONE = 12           # the completion word's WRITE: its header
    DONE_DATA = 13


class AtuFlushMux(wiring.Component):
    """Shares the flush controller between software (the register file's ``atu.flush``) and the job
    engine, through registers: the controller sees the chosen fields and start strobe one cycle after
    the choice (so it starts from flops, as without jobs; a flush starts one cycle later than without
    jobs).  A software strobe starts a flush when the controller is free (no flush runs or is about to
    start), first when the engine asks in the same cycle; during the engine's flush it waits
    (``pending``) and starts first when the controller is free; a strobe during a software flush is
    ignored, as without jobs.  The engine's flush (``job.start``, held until ``granted``) starts when
    the controller is free and no software strobe waits or comes.  ``done`` goes to the owner of the
    flush that completes.

    Members
    -------
    sw : In(FlushControlSignature)
    job : In(FlushControlSignature)
        ``start`` is the engine's request, held until ``granted``.
    granted : Out(1)
    busy : In(1)
        The flush controller runs a flush.
    flush : Out(FlushControlSignature)
    """

    def __init__(self, formats):
        super().__init__({"sw": In(FlushControlSignature(formats)), "job": In(FlushControlSignature(formats)),
                          "granted": Out(1), "busy": In(1), "flush": Out(FlushControlSignature(formats))})

    def elaborate(self, platform):
        m = Module()
        sw, job, fl = self.sw, self.job, self.flush
        job_owns = Signal()                 # the running (or starting) flush is the engine's
        pending = Signal()                  # a software strobe waits for the controller
        started = Signal()                  # = fl.start: the controller starts in this cycle
        busy = self.busy | started
        sw_go = (sw.start | pending) & ~busy
        job_go = job.start & ~sw.start & ~pending & ~busy
        m.d.sync += started.eq(sw_go | job_go)
        with m.If(sw_go | job_go):
            m.d.sync += job_owns.eq(job_go)
        for name in ("extra", "vpid", "tlb", "ats", "gat"):
            reg = Signal.like(getattr(fl, name), name=f"r_{name}")
            m.d.sync += reg.eq(Mux(job_go, getattr(job, name), getattr(sw, name)))
            m.d.comb += getattr(fl, name).eq(reg)
        nla = Signal.like(fl.nla.as_value())
        m.d.sync += nla.eq(Mux(job_go, job.nla.as_value(), sw.nla.as_value()))
        m.d.comb += [
            fl.nla.eq(nla), fl.start.eq(started), self.granted.eq(job_go),
            sw.done.eq(fl.done & ~job_owns), job.done.eq(fl.done & job_owns),
        ]
        with m.If(sw_go):
            m.d.sync += pending.eq(0)
        with m.Elif(sw.start & busy & job_owns):
            m.d.sync += pending.eq(1)
        return m


class AtuJobs(wiring.Component):
    """The bulk-job engine: one job at a time from the ring, beside the translations.

    While ``ring.enable`` is set and ``consumer`` differs from ``producer``, the engine reads the
    descriptor of job ``consumer`` (one READ of 4 words, tag :data:`JOB_TAG`), checks it, and:

    * REGISTER / DEREGISTER: reads the range's GAT entry (the on-chip table through the lookup's port,
      one cycle in which no request enters the lookup; with the first-level table, one READ of the
      entry), then writes the GATEs as posted WRITEs of up to 8 words, never across a 64-byte line
      (REGISTER: {valid, read, write, large, vpid, ppn + page}; DEREGISTER: 0), and a DEREGISTER then
      runs one range flush of its pages (TLB and ATS, the descriptor's VPID);
    * FLUSH: one range flush (TLB, ATS, and with ``gat`` the GAT cache entry of the first page's GAT);

    and finally writes the completion word {done, status, index} over the descriptor's last word and
    advances ``consumer`` (``done`` strobes; ``error`` with it for a status other than OK).  A failed
    check stores nothing.  Checks (the model's order): descriptor read failed (error status, not the
    4 words asked, or a header without data) -> MEMORY_ERROR; unknown op, count 0, a reserved bit set,
    VPID not below ``vpids`` -> MALFORMED; ``large`` with an NLA page (REGISTER: or PPN) not 2 MB aligned
    -> PAGE_SIZE; REGISTER / DEREGISTER with a GAT index beyond the table or pages beyond their GAT,
    REGISTER with physical pages beyond the 40-bit PPN, FLUSH beyond the NLA space -> RANGE; the GAT
    entry's read failed -> MEMORY_ERROR, not configured -> GAT_NOT_CONFIGURED, its ``large`` flag differs
    -> PAGE_SIZE.  While the ring is disabled ``consumer`` follows ``producer`` (after the running job).
    Response beats with :data:`JOB_TAG` that the engine does not wait for are
    ignored.

    Parameters
    ----------
    formats : AtuFormats
    host_port, htax_port : int

    Members
    -------
    ring : In(JobRing)
    producer : In(16)
    consumer : Out(16)
    busy, done, error : Out(1)
    table : In(GatTable)
        ``atu.gat_table`` (used with the first-level table only).
    beats : In(stream.Signature(HtaxBeat, always_ready=True))
        RESPONSE-VC beats moving into the ATU.
    out : Out(stream.Signature(HtaxBeat))
        The engine's packets; a packet's beats follow each other without a gap.
    borrow : Out(stream.Signature(range(gat_entries)))
    gat_data : In(GatBase)
        The on-chip GAT base entry, one cycle after ``borrow`` moved.
    flush : Out(FlushControlSignature)
        ``start`` held until ``granted``.
    granted : In(1)
    """

    def __init__(self, *, formats, host_port, htax_port):
        self._f = formats
        self._host_port = host_port
        self._htax_port = htax_port
        super().__init__({
            "ring": In(JobRing),
            "producer": In(JOB_INDEX_BITS),
            "consumer": Out(JOB_INDEX_BITS),
            "busy": Out(1), "done": Out(1), "error": Out(1),
            "table": In(GatTable),
            "beats": In(stream.Signature(HtaxBeat, always_ready=True)),
            "out": Out(stream.Signature(HtaxBeat)),
            "borrow": Out(stream.Signature(formats.chip_bits)),
            "gat_data": In(GatBase),
            "flush": Out(FlushControlSignature(formats)),
            "granted": In(1),
        })

    def _receive(self, m, state, words, entry, rd_err):
        """Frame the responses with :data:`JOB_TAG` while the engine waits: the descriptor's words (or
        the first-level entry) into ``words``/``entry``; returns "the response has ended" (``rd_err``:
        error status or not the words asked)."""
        beat = self.beats.payload
        hdr = beat.word.header
        mine = Signal()                         # inside a response the engine takes
        rk = Signal(range(JOB_WORDS + 1))       # its data words so far
        want = Signal(range(JOB_WORDS + 1))     # words asked: 4 (descriptor) or 1 (entry)
        ended = Signal()
        waiting = state == _State.WAIT
        is_hdr = self.beats.valid & beat.first & (hdr.cmd == HtaxCmd.RESPONSE) & (hdr.tag == JOB_TAG) & waiting
        with m.If(is_hdr):
            m.d.sync += [mine.eq(~beat.last), rk.eq(0),
                         rd_err.eq((hdr.status != HtaxStatus.OK) | (hdr.body.mem.length != want) | beat.last)]
            m.d.comb += ended.eq(beat.last)
        with m.Elif(self.beats.valid & mine):
            m.d.sync += [mine.eq(~beat.last), rk.eq(rk + 1), entry.eq(beat.word.data)]
            with m.If(want == JOB_WORDS):           # (the first-level entry goes to `entry` only)
                with m.Switch(rk):
                    for i in range(JOB_WORDS):
                        with m.Case(i):
                            m.d.sync += words[i].eq(beat.word.data)
            m.d.comb += ended.eq(beat.last)
            with m.If(beat.last & (rk + 1 != want)):
                m.d.sync += rd_err.eq(1)
        return want, ended

    def elaborate(self, platform):
        m = Module()
        f = self._f
        state = Signal(_State)
        consumer = Signal(JOB_INDEX_BITS)
        words = [Signal(64, name=f"word{i}") for i in range(JOB_WORDS)]
        d = data.View(JobDescriptor, Cat(*words))
        entry = Signal(GatBase)
        rd_err = Signal()
        status = Signal(JobStatus)
        daddr = Signal(READ_ADDR_BITS)          # the descriptor's word address
        waddr = Signal(READ_ADDR_BITS)          # the next GATE's word address
        left = Signal(GATE_INDEX_BITS + 1)      # GATEs still to write
        ppn = Signal.like(d.ppn)
        n = Signal(range(LINE_GATES + 1))       # words of the current WRITE
        k = Signal(range(LINE_GATES))
        last = Signal(42)                       # the range's last NLA page
        extra = Signal(32)                      # the range's pages - 1 (its flush's ``extra``)
        ppn_last = Signal(42)                   # the last 4 KB physical page a REGISTER maps
        fl_req = Signal()                       # = state is FLUSH, as a flop (steers the flush mux)
        borrowing = Signal()                    # = state is ENTRY for the on-chip table, as a flop
        want, ended = self._receive(m, state, words, entry, rd_err)
        m.d.comb += [self.consumer.eq(consumer), self.busy.eq(state != _State.IDLE)]

        large = d.large
        step = Mux(large, 1 << LARGE_PAGE_BITS, 1)
        pages = Mux(large, d.count << LARGE_PAGE_BITS, d.count)
        gat_index = d.nla_page[GATE_INDEX_BITS:]
        table_on = self.table.enable if f.l1 else Const(0)
        op = d.op.as_value()
        reserved = (d["_rsv0"] != 0) | (d["_rsv1"] != 0) | (d["_rsv2"] != 0)
        malformed = (op == 0) | (op > JobOp.FLUSH.value) | (d.count == 0) | reserved | (d.vpid[f.vpid_bits:] != 0)
        misaligned = large & ((d.nla_page[:LARGE_PAGE_BITS] != 0)
                              | ((d.op == JobOp.REGISTER) & (d.ppn[:LARGE_PAGE_BITS] != 0)))
        far = (gat_index[f.chip_bits:] != 0) & ~table_on
        out_of_range = Mux(d.op == JobOp.FLUSH, last[f.nla_bits:] != 0,
                           far | (last[GATE_INDEX_BITS:] != gat_index)
                           | ((d.op == JobOp.REGISTER) & (ppn_last[len(d.ppn):] != 0)))
        line_room = LINE_GATES - waddr[:3]
        chunk = Mux(left < line_room, left, line_room)     # words of the next WRITE of GATEs
        self._output(m, state, d, daddr, waddr, chunk, ppn, n, k, status, consumer, borrowing)
        m.d.comb += [
            self.borrow.valid.eq(borrowing), self.borrow.payload.eq(gat_index),
            self.flush.nla.eq(d.nla_page[:f.nla_bits]), self.flush.extra.eq(extra),
            self.flush.vpid.eq(d.vpid), self.flush.tlb.eq(1), self.flush.ats.eq(1),
            self.flush.gat.eq(d.gat & (d.op == JobOp.FLUSH)), self.flush.start.eq(fl_req),
        ]
        moved = self.out.valid & self.out.ready
        m.d.sync += [self.done.eq(0), self.error.eq(0)]

        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(~self.ring.enable):
                    m.d.sync += consumer.eq(self.producer)
                with m.Elif(consumer != self.producer):
                    index = consumer & ~(Const(0xFFFF, 16) << self.ring.size)[:16]
                    m.d.sync += [state.eq(_State.READ), daddr.eq((self.ring.base << 9) + (index << 2)),
                                 want.eq(JOB_WORDS)]
            with m.Case(_State.READ):
                with m.If(moved):
                    m.d.sync += state.eq(_State.WAIT)
            with m.Case(_State.STORE):
                with m.If(moved):
                    m.d.sync += [state.eq(_State.STORE_DATA), k.eq(0), n.eq(chunk)]
            with m.Case(_State.DONE):
                with m.If(moved):
                    m.d.sync += state.eq(_State.DONE_DATA)
            with m.Case(_State.WAIT):
                with m.If(ended):
                    m.d.sync += state.eq(Mux(want == 1, _State.GAT, _State.CHECK))
                    with m.If(want == JOB_WORDS):
                        m.d.sync += status.eq(JobStatus.OK)
            with m.Case(_State.CHECK):
                m.d.sync += [state.eq(_State.DECIDE), last.eq(d.nla_page + pages - 1), extra.eq(pages - 1),
                             ppn_last.eq(d.ppn + pages - 1)]
            with m.Case(_State.DECIDE):
                m.d.sync += [state.eq(_State.DONE), left.eq(d.count), ppn.eq(d.ppn)]
                with m.If(rd_err):
                    m.d.sync += status.eq(JobStatus.MEMORY_ERROR)
                with m.Elif(malformed):
                    m.d.sync += status.eq(JobStatus.MALFORMED)
                with m.Elif(misaligned):
                    m.d.sync += status.eq(JobStatus.PAGE_SIZE)
                with m.Elif(out_of_range):
                    m.d.sync += status.eq(JobStatus.RANGE)
                with m.Elif(d.op == JobOp.FLUSH):
                    m.d.sync += [state.eq(_State.FLUSH), fl_req.eq(1)]
                with m.Else():
                    m.d.sync += [state.eq(_State.ENTRY), want.eq(1), borrowing.eq(~table_on)]
            with m.Case(_State.ENTRY):
                with m.If(Mux(borrowing, self.borrow.ready, moved)):
                    m.d.sync += [state.eq(Mux(borrowing, _State.ENTRY_DATA, _State.WAIT)), rd_err.eq(0),
                                 borrowing.eq(0)]
            with m.Case(_State.ENTRY_DATA):
                m.d.sync += [state.eq(_State.GAT), entry.eq(self.gat_data)]
            with m.Case(_State.GAT):
                m.d.sync += [state.eq(_State.STORE), waddr.eq(gate_word_addr(entry.large, d.nla_page[:GATE_INDEX_BITS],
                                                                             entry.addr))]
                with m.If(rd_err):
                    m.d.sync += [state.eq(_State.DONE), status.eq(JobStatus.MEMORY_ERROR)]
                with m.Elif(~gat_configured(entry)):
                    m.d.sync += [state.eq(_State.DONE), status.eq(JobStatus.GAT_NOT_CONFIGURED)]
                with m.Elif(entry.large != large):
                    m.d.sync += [state.eq(_State.DONE), status.eq(JobStatus.PAGE_SIZE)]
            with m.Case(_State.STORE_DATA):
                with m.If(moved):
                    m.d.sync += [k.eq(k + 1), left.eq(left - 1), waddr.eq(waddr + 1), ppn.eq(ppn + step)]
                    with m.If(k + 1 == n):
                        m.d.sync += state.eq(Mux(left == 1, Mux(d.op == JobOp.DEREGISTER, _State.FLUSH, _State.DONE),
                                                 _State.STORE))
                        m.d.sync += fl_req.eq((left == 1) & (d.op == JobOp.DEREGISTER))
            with m.Case(_State.FLUSH):
                with m.If(self.granted):
                    m.d.sync += [state.eq(_State.FLUSH_WAIT), fl_req.eq(0)]
            with m.Case(_State.FLUSH_WAIT):
                with m.If(self.flush.done):
                    m.d.sync += state.eq(_State.DONE)
            with m.Case(_State.DONE_DATA):
                with m.If(moved):
                    m.d.sync += [state.eq(_State.IDLE), consumer.eq(consumer + 1), self.done.eq(1),
                                 self.error.eq(status != JobStatus.OK)]
        if platform == "formal":
            # a WRITE of GATEs has 1..8 words in one line, and every GATE of the range is written once
            with m.If(state == _State.STORE_DATA):
                m.d.comb += [Assert((n != 0) & (k < n) & (left != 0)), Assert(waddr[:3] + (n - k) <= LINE_GATES)]
            with m.If(state == _State.STORE):
                m.d.comb += Assert(left != 0)
            m.d.comb += [Assert(fl_req == (state == _State.FLUSH)),
                         Assert(~borrowing | (state == _State.ENTRY))]
        return m

    def _output(self, m, state, d, daddr, waddr, chunk, ppn, n, k, status, consumer, borrowing):
        """The engine's beats: the descriptor's and the first-level entry's READs, the GATE WRITEs and
        the completion word's WRITE."""
        beat = self.out.payload
        h = beat.word.header
        is_read = (state == _State.READ) | (state == _State.ENTRY)
        is_hdr = is_read | (state == _State.STORE) | (state == _State.DONE)
        words = Mux(state == _State.READ, JOB_WORDS, Mux(state == _State.STORE, chunk, 1))
        addr = Signal(READ_ADDR_BITS)
        with m.Switch(state):
            with m.Case(_State.READ):
                m.d.comb += addr.eq(daddr)
            with m.Case(_State.ENTRY):
                m.d.comb += addr.eq(Cat(d.nla_page[GATE_INDEX_BITS:], self.table.base))
            with m.Case(_State.STORE):
                m.d.comb += addr.eq(waddr)
            with m.Default():
                m.d.comb += addr.eq(daddr + JOB_WORDS - 1)
        gate = Signal(Gate)
        m.d.comb += [gate.valid.eq(1), gate.read.eq(d.read), gate.write.eq(d.write), gate.large.eq(d.large),
                     gate.vpid.eq(d.vpid), gate.ppn.eq(ppn)]
        done = Signal(JobCompletion)
        m.d.comb += [done.done.eq(1), done.status.eq(status), done.index.eq(consumer)]
        m.d.comb += self.out.valid.eq(is_hdr & ((state != _State.ENTRY) | ~borrowing)
                                      | (state == _State.STORE_DATA) | (state == _State.DONE_DATA))
        with m.If(is_hdr):
            m.d.comb += [
                h.cmd.eq(Mux(is_read, HtaxCmd.READ, HtaxCmd.WRITE)),
                h.vc.eq(Mux(is_read, HtaxVC.NONPOSTED, HtaxVC.POSTED)), h.src.eq(self._htax_port),
                h.dst.eq(self._host_port), h.tag.eq(Mux(is_read, JOB_TAG, 0)),
                h.body.mem.addr.eq(Cat(Const(0, 3), addr)), h.body.mem.length.eq(words),
                h.body.mem.first_be.eq(0xFF), h.body.mem.last_be.eq(Mux(words > 1, 0xFF, 0)),
                beat.vc.eq(h.vc), beat.first.eq(1), beat.last.eq(is_read),
            ]
        with m.Else():
            m.d.comb += [
                beat.word.data.eq(Mux(state == _State.DONE_DATA, done.as_value(),
                                      Mux(d.op == JobOp.REGISTER, gate.as_value(), 0))),
                beat.vc.eq(HtaxVC.POSTED), beat.last.eq((state == _State.DONE_DATA) | (k + 1 == n)),
            ]
