"""The EXTOLL address translation unit (dissertation ch. 5.3-5.4, figs. 5-8 to 5-12).

The ATU translates network logical addresses (NLAs) of a VPID into host physical addresses for the
FUs, over the ATS virtual channel of its HTAX port.  It is composed of blocks joined by streams
(fig. 5-12; ``docs/atu.md`` draws it):

* :class:`~rtl.atu.rx.AtuRxDecoder` splits the receive link: translation requests, flush responses,
  GATE read responses;
* :class:`~rtl.atu.queue.AtuRequestQueue` is the request FIFO (with a bypass when it is empty);
* :class:`~rtl.atu.lookup.AtuLookup` reads the TLB (:class:`~rtl.atu.tlb.AtuTlb`) and the GAT base
  entry and classifies each request: answered at once, or a miss;
* :class:`~rtl.atu.rob.AtuReorderBuffer` gives a miss a slot (= the tag of its GATE read) and returns
  the answers in request order; :class:`~rtl.atu.gate.AtuGateCheck` checks each returning GATE and
  fills the TLB;
* :class:`~rtl.atu.flush.AtuFlush` runs the flush protocol (ch. 5.3, fig. 5-11);
* :class:`~rtl.atu.tx.AtuTxArbiter` sends flush requests, GATE reads and translation responses;
* with ``jobs``, :class:`~rtl.atu.jobs.AtuJobs` executes bulk jobs from a descriptor ring in host memory
  (ch. 5.7's command interface) and :class:`~rtl.atu.jobs.AtuFlushMux` shares the flush controller.

Each block lists its own deviations from the dissertation; those visible at the ATU's ports:

* Responses leave in allocation order across all FUs once a FU has a result pending in the reorder
  buffer (the ordering rule needs it only per FU); a FU with nothing pending is never blocked.
* Only one flush runs at a time; ``flush_start`` while a flush runs is ignored (software polls
  ``done``, ch. 5.3).
* The GAT base table is not copied: the register file's RAM has a read port for the unit.
* A GATE whose VPID differs from the request's is never put into the TLB; a GATE read before a flush
  never either.  TLB entries are tagged with the VPID.
* Unknown ATS messages (translation responses, flush requests sent to the ATU), multi-beat ATS
  packets and anything on the posted/non-posted VCs are consumed, dropped and counted.

Parameters
----------
gat_entries : int
    GAT base-address table entries (power of two, 2..16384).
tlb_entries : int
    TLB entries (power of two, 16..16384).
tlb_ways : int
    1, 2 or 4.
large_tlb_entries : int
    Entries of the large-page TLB (power of two, 2..512; direct mapped).
lookahead : int
    0..7: the most look-ahead GATEs a miss's read fetches after its own, for a request whose access
    reaches the end of its page (0: no look-ahead).
gat_cache_entries : int
    0 (no first-level table in host memory), or the entries of the GAT cache (power of two, 2..16384)
    that holds first-level entries while ``atu.gat_table.enable`` is set; then every GAT index of the
    32-bit NLA page is valid (2^14 GATs, 16 TiB of NLA).
reorder_entries : int
    Reorder-buffer slots = outstanding misses (power of two, 2..32; at most 16 with ``jobs``: the job
    engine's reads take tag 31).
jobs : bool
    The bulk-job engine (``atu.job_ring``, ``atu.job_doorbell``, ``atu.job_status``,
    ``atu.job_counters``).
request_fifo : int
    Request FIFO depth (power of two, 4..4096).
vpids : int
    Configured number of VPIDs (power of two, 2..65536); a request with a larger VPID fails.
htax_port, host_port : int
    HTAX port numbers of the ATU and of host memory (0..15).
fu_ports : tuple of int
    HTAX ports of the FUs that receive ATS flush requests (distinct, 0..15, not the ATU's).

Members
-------
htax : Out(HtaxPortSignature)
    The ATU's HTAX port.
regs : Out(RegisterView(REGISTERS, GAT_ENTRIES=gat_entries))
    The register file's ``atu`` block (:class:`rtl.common.regview.RegisterView`): the flush request
    register (``start`` a one-cycle strobe; ``done_set`` sets ``done``), the counter strobes
    (``errors.failed_incr``: one per translation answered with ``ok = 0``, one cycle after the
    response entered the output register; ``errors.dropped_incr``: one per packet dropped, docs/regs.md)
    and the GAT base-address table's synchronous read port (``gat_base.addr``/``data``: data one cycle
    after the address); ``irq.status.atu_flush_done_event`` strobes with ``done_set``, so a completed
    flush also sets the interrupt status bit (an MSI-style write when ``irq.mask.atu_flush_done`` is set).
"""

from amaranth.hdl import Assert, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import Out, connect, flipped

from rtl.common.htax import HtaxPortSignature
from rtl.common.params import check_choice, check_distinct, check_int, check_port, check_pow2
from rtl.common.regview import RegisterView

from .flush import AtuFlush
from .formats import LINE_GATES, AtuFormats
from .gatcache import AtuGatCache
from .gate import AtuGateCheck
from .jobs import JOB_TAG, AtuFlushMux, AtuJobs
from .lookup import AtuLookup
from .queue import AtuRequestQueue
from .rob import AtuReorderBuffer
from .rx import AtuRxDecoder
from .tlb import AtuTlb
from .tx import AtuTxArbiter

__all__ = ["Atu", "REGISTERS", "check_params"]


def check_params(*, gat_entries, tlb_entries, tlb_ways, large_tlb_entries, lookahead, reorder_entries,
                 request_fifo, vpids, htax_port, host_port, fu_ports, gat_cache_entries=0, jobs=False):
    """Validate the ATU parameters; raise ``TypeError``/``ValueError`` with a precise message."""
    check_pow2("gat_entries", gat_entries, 2, 1 << 14)
    check_pow2("tlb_entries", tlb_entries, 16, 1 << 14)
    check_choice("tlb_ways", tlb_ways, (1, 2, 4))
    check_pow2("large_tlb_entries", large_tlb_entries, 2, 1 << 9)
    check_int("lookahead", lookahead, 0, LINE_GATES - 1)
    if gat_cache_entries != 0:
        check_pow2("gat_cache_entries", gat_cache_entries, 2, 1 << 14)
    check_pow2("reorder_entries", reorder_entries, 2, 32)
    if not isinstance(jobs, bool):
        raise TypeError(f"jobs must be a bool, not {jobs!r}")
    if jobs and reorder_entries > 16:
        raise ValueError(f"reorder_entries must be at most 16 with jobs (the job engine's reads take tag "
                         f"{JOB_TAG}), not {reorder_entries}")
    check_pow2("request_fifo", request_fifo, 4, 4096)
    check_pow2("vpids", vpids, 2, 1 << 16)
    check_port("htax_port", htax_port)
    check_port("host_port", host_port)
    if host_port == htax_port:
        raise ValueError(f"host_port must differ from htax_port, both are {htax_port}")
    fu_ports = tuple(fu_ports)
    for p in fu_ports:
        check_port("fu_ports entry", p)
    check_distinct("fu_ports", fu_ports)
    if htax_port in fu_ports:
        raise ValueError(f"fu_ports must not contain the ATU's own port {htax_port}")
    return fu_ports


#: the part of the register map (``rdl/nic_regs.rdl``) the ATU owns: its block (flush request, counters,
#: GAT base-address table) and the interrupt status bit of a completed flush
REGISTERS = ("atu", "irq.status.atu_flush_done")


class Atu(wiring.Component):
    __doc__ = __doc__

    def __init__(self, *, gat_entries=512, tlb_entries=1024, tlb_ways=1, large_tlb_entries=16, lookahead=7,
                 gat_cache_entries=0, reorder_entries=32, request_fifo=64, vpids=32, htax_port=2, host_port=0,
                 fu_ports=(3, 4, 5), jobs=False):
        self.fu_ports = check_params(gat_entries=gat_entries, tlb_entries=tlb_entries, tlb_ways=tlb_ways,
                                     large_tlb_entries=large_tlb_entries, lookahead=lookahead,
                                     gat_cache_entries=gat_cache_entries, jobs=jobs,
                                     reorder_entries=reorder_entries, request_fifo=request_fifo, vpids=vpids,
                                     htax_port=htax_port, host_port=host_port, fu_ports=fu_ports)
        self.gat_entries = gat_entries
        self.tlb_entries = tlb_entries
        self.tlb_ways = tlb_ways
        self.large_tlb_entries = large_tlb_entries
        self.lookahead = lookahead
        self.gat_cache_entries = gat_cache_entries
        self.jobs = jobs
        self.reorder_entries = reorder_entries
        self.request_fifo = request_fifo
        self.vpids = vpids
        self.htax_port = htax_port
        self.host_port = host_port
        self.formats = AtuFormats(gat_entries=gat_entries, tlb_entries=tlb_entries, tlb_ways=tlb_ways,
                                  reorder_entries=reorder_entries, vpids=vpids, fus=len(self.fu_ports),
                                  large_tlb_entries=large_tlb_entries, gat_cache_entries=gat_cache_entries)
        self.nla_bits = self.formats.nla_bits
        super().__init__({
            "htax": Out(HtaxPortSignature()),
            "regs": Out(RegisterView(REGISTERS, GAT_ENTRIES=gat_entries)),
        })

    def _first_level(self, m, platform, lookup, gate, flush, tx):
        """The first-level table in host memory: the GAT cache beside the lookup, filled by the GATE
        check and invalidated by flushes; the GATE reads that follow first-level entries queue for the
        output (at most one per slot, so the queue never refuses one)."""
        f = self.formats
        m.submodules.gcache = gcache = AtuGatCache(formats=f)
        # at most one entry per slot (a slot's GATE read follows its first-level entry once), and a
        # SyncFIFO of ``slots`` entries refuses a write only when it holds ``slots``: never
        m.submodules.reads2 = reads2 = SyncFIFO(width=len(tx.reads2.payload.as_value()), depth=f.slots)
        connect(m, lookup.gcache, gcache.read)
        connect(m, gate.gfill, gcache.fill)
        connect(m, flush.ginvalidate, gcache.invalidate)
        table = self.regs.atu.gat_table
        m.d.comb += [
            lookup.table.enable.eq(table.enable), lookup.table.base.eq(table.base),
            reads2.w_en.eq(gate.reads2.valid), reads2.w_data.eq(gate.reads2.payload),
            tx.reads2.valid.eq(reads2.r_rdy), tx.reads2.payload.eq(reads2.r_data), reads2.r_en.eq(tx.reads2.ready),
        ]
        if platform == "formal":
            m.d.comb += Assert(~reads2.w_en | reads2.w_rdy)

    def _jobs(self, m, lookup, flush, tx, rx):
        """The bulk-job engine: its packets into the output, the RESPONSE beats, the GAT base port
        borrowed from the lookup, the flush controller shared with software; returns the flush
        controller's control as software's flush register drives it."""
        f = self.formats
        regs = self.regs.atu
        m.submodules.jobs = jobs = AtuJobs(formats=f, host_port=self.host_port, htax_port=self.htax_port)
        m.submodules.flush_mux = mux = AtuFlushMux(f)
        # two beats between the engine and the output: the engine's state advances on the queue's
        # room (flops), not on the output's late choice, and a packet's beats still follow back to back
        m.submodules.job_q = q = SyncFIFO(width=len(tx.jobs.payload.as_value()), depth=2)
        m.d.comb += [q.w_en.eq(jobs.out.valid), q.w_data.eq(jobs.out.payload), jobs.out.ready.eq(q.w_rdy),
                     tx.jobs.valid.eq(q.r_rdy), tx.jobs.payload.eq(q.r_data), q.r_en.eq(tx.jobs.ready)]
        connect(m, jobs.borrow, lookup.borrow)
        connect(m, jobs.flush, mux.job)
        connect(m, mux.flush, flush.control)
        ring = regs.job_ring
        m.d.comb += [
            jobs.beats.valid.eq(rx.gate_beats.valid), jobs.beats.payload.eq(rx.gate_beats.payload),
            jobs.gat_data.addr.eq(regs.gat_base.data.addr), jobs.gat_data.large.eq(regs.gat_base.data.large),
            jobs.ring.enable.eq(ring.enable), jobs.ring.size.eq(ring.size), jobs.ring.base.eq(ring.base),
            jobs.producer.eq(regs.job_doorbell.producer),
            regs.job_status.consumer_next.eq(jobs.consumer), regs.job_status.busy_next.eq(jobs.busy),
            regs.job_counters.done_incr.eq(jobs.done), regs.job_counters.errors_incr.eq(jobs.error),
            mux.busy.eq(flush.busy), jobs.granted.eq(mux.granted),
        ]
        if f.l1:
            m.d.comb += [jobs.table.enable.eq(regs.gat_table.enable), jobs.table.base.eq(regs.gat_table.base)]
        return mux.sw

    def elaborate(self, platform):
        m = Module()
        f = self.formats
        m.submodules.rx = rx = AtuRxDecoder(formats=f)
        m.submodules.queue = queue = AtuRequestQueue(shape=f.request, depth=self.request_fifo)
        m.submodules.lookup = lookup = AtuLookup(formats=f, fu_ports=self.fu_ports, lookahead=self.lookahead)
        m.submodules.tlb = tlb = AtuTlb(formats=f, geometry=f.small)
        m.submodules.ltlb = ltlb = AtuTlb(formats=f, geometry=f.large)
        m.submodules.rob = rob = AtuReorderBuffer(formats=f)
        m.submodules.gate = gate = AtuGateCheck(formats=f, lookahead=self.lookahead)
        m.submodules.flush = flush = AtuFlush(formats=f, fu_ports=self.fu_ports)
        m.submodules.tx = tx = AtuTxArbiter(formats=f, htax_port=self.htax_port, host_port=self.host_port)
        if f.l1:
            self._first_level(m, platform, lookup, gate, flush, tx)
        else:
            m.d.comb += tx.reads2.valid.eq(0)

        # translation path: rx -> request queue -> lookup (+ TLB) -> reorder buffer -> tx
        connect(m, flipped(self.htax.rx), rx.rx)
        connect(m, rx.requests, queue.i)
        connect(m, queue.o, lookup.requests)
        connect(m, lookup.tlb, tlb.read)
        connect(m, lookup.ltlb, ltlb.read)
        connect(m, lookup.touch, tlb.touch)
        connect(m, lookup.ltouch, ltlb.touch)
        connect(m, lookup.results, rob.requests)
        connect(m, rob.responses, tx.responses)
        connect(m, rob.reads, tx.reads)
        connect(m, tx.tx, flipped(self.htax.tx))
        # GATE responses: rx -> GATE check -> reorder buffer and TLB
        connect(m, rx.gate_beats, gate.beats)
        connect(m, gate.info, rob.info)
        connect(m, gate.arrived, rob.arrived)
        connect(m, gate.results, rob.results)
        connect(m, gate.fill, tlb.fill)
        # flush: rx -> flush controller -> tx, TLB; the controller counts translations in flight
        connect(m, rx.flush_responses, flush.responses)
        connect(m, flush.requests, tx.flush_requests)
        connect(m, flush.invalidate, tlb.invalidate)
        connect(m, flush.linvalidate, ltlb.invalidate)
        # the large-page TLB sees the same fills (it takes those of large pages)
        m.d.comb += [ltlb.fill.valid.eq(gate.fill.valid), ltlb.fill.payload.eq(gate.fill.payload)]
        connect(m, tx.answered, flush.answered)
        m.d.comb += [
            rx.requests_ready2.eq(queue.i_ready2),
            gate.waiting.eq(rob.waiting),
            lookup.hold.eq(flush.starting),
            lookup.epoch.eq(flush.epoch),
            gate.epoch.eq(flush.epoch),
            gate.flush_start.eq(flush.starting),
            flush.lookups.eq(lookup.lookups),
        ]

        regs = self.regs.atu
        if self.jobs:
            control = self._jobs(m, lookup, flush, tx, rx)
        else:
            control = flush.control
            m.d.comb += [tx.jobs.valid.eq(0), lookup.borrow.valid.eq(0)]
        m.d.comb += [
            control.nla.eq(regs.flush.nla), control.vpid.eq(regs.flush.vpid),
            control.extra.eq(regs.flush_range.extra),
            control.tlb.eq(regs.flush.tlb), control.ats.eq(regs.flush.ats),
            control.gat.eq(regs.flush.gat if f.l1 else 0),
            regs.gat_counters.misses_incr.eq(lookup.gat_miss),
            control.start.eq(regs.flush.start),
            regs.flush.done_set.eq(control.done), regs.flush_counters.atu_flushes_incr.eq(flush.control.done),
            self.regs.irq.status.atu_flush_done_event.eq(control.done),
            regs.flush_counters.tlb_flushes_incr.eq(flush.tlb_flush),
            regs.tlb_counters.hits_incr.eq(lookup.hit), regs.tlb_counters.misses_incr.eq(lookup.miss),
            regs.errors.failed_incr.eq(tx.failed), regs.errors.dropped_incr.eq(rx.dropped | flush.dropped),
            regs.gat_base.addr.eq(lookup.gat_addr), lookup.gat_data.addr.eq(regs.gat_base.data.addr),
            lookup.gat_data.large.eq(regs.gat_base.data.large),
            regs.lookahead_counters.filled_incr.eq(
                gate.fill.valid & gate.fill.payload.pref
                & ~Mux(gate.fill.payload.large, flush.linvalidate.valid, flush.invalidate.valid)),
            regs.lookahead_counters.used_incr.eq(tlb.touched | ltlb.touched),
        ]
        return m
