# amaranth: UnusedElaboratable=no
"""Formal proofs for the ATU (``python -m fpga.formal --unit atu``), on a small ATU (16-entry TLB,
2-entry large-page TLB, 2-entry GAT cache, 4-slot reorder buffer, 4-entry request FIFO, 2 GATs on chip,
2 VPIDs, the bulk-job engine), bounded from reset, with the flush range, the GAT cache invalidation,
the first-level table's enable and base and the job ring's registers and doorbell arbitrary in every
cycle (so the job engine's READs, WRITEs and flushes mix with the translations).

For ``links`` the ATU is elaborated for the ``"formal"`` platform, so every block adds the invariants
it states in its own ``elaborate`` (request-queue occupancy, TLB invalidation, the lookup's compare,
reorder-buffer bookkeeping, GATE check, flush counting, the output link's rules, the receive link's
``ready2`` promise; ``docs/atu.md`` lists them).  ``vpid_perm`` checks the end-to-end property and the
two link rules without them: under its fixed environment they made the search more than ten times
slower (step 12 after 30 minutes instead of 2 on a loaded machine), and ``links`` checks them under
any traffic.  This file only adds the environment and the properties at the ATU's ports, and reads
no state of the ATU.

* ``vpid_perm``: the environment sends one fixed (``AnyConst``) translation request over and over
  and answers every GATE read with one fixed (``AnyConst``) GATE first and another fixed GATE in
  every further word (the look-ahead GATEs of other pages; responses of 1..8 words, the GAT base
  entry's ``large`` flag and address arbitrary in every cycle); whenever the ATU sends a translation
  response with ``ok = 1``, the first GATE is valid, its VPID equals the request's, it permits the
  access, its page size agrees and the physical page is the GATE's (a large page: plus the page's index
  in it).  So no look-ahead GATE ever answers the requested page.  Hits (after a fill) and misses are
  both reached within the depth.
* ``links``: any traffic that obeys the HTAX link rules on the rx link (:mod:`rtl.common.htax_rules`),
  a switch that refuses VCs at random, random flush strobes and GAT base data: the blocks' invariants
  hold, among them the link rules on the tx link (stream rules, framing, well-formed headers) and the
  ``ready2`` promise on the rx link.
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Fragment, Module, Mux, Signal

from rtl.atu import Atu
from rtl.atu.layout import LARGE_PAGE_BITS, Gate
from rtl.common.ats import AtsCmd, AtsMessage
from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from rtl.common.htax_rules import link_rules, sink_rules
from sim.formal import Proof


def _small():
    return Atu(gat_entries=2, tlb_entries=16, tlb_ways=1, large_tlb_entries=2, gat_cache_entries=2,
               reorder_entries=4, request_fifo=4, vpids=2, htax_port=2, host_port=0, fu_ports=(3,), jobs=True)


class AtuProperties(Elaboratable):
    """``fixed``: one fixed request and GATE, and the end-to-end property; ``contracts``: elaborate the
    ATU for the ``"formal"`` platform (its blocks' invariants, the link rules among them), else assert
    the link rules at its ports here."""

    def __init__(self, *, fixed, contracts):
        self.fixed = fixed
        self.contracts = contracts

    def elaborate(self, platform):
        m = Module()
        dut = _small()
        # the blocks' own invariants come with the "formal" platform; without ``contracts`` the ATU is
        # elaborated without them (they make the end-to-end proof several times slower)
        m.submodules.dut = Fragment.get(dut, platform="formal" if self.contracts else None)
        rx, tx, regs = dut.htax.rx, dut.htax.tx, dut.regs.atu
        m.d.comb += [
            rx.valid.eq(AnySeq(1)), rx.payload.as_value().eq(AnySeq(len(rx.payload.as_value()))),
            tx.ready.eq(AnySeq(4)),
            regs.flush.nla.eq(AnySeq(len(regs.flush.nla))), regs.flush.tlb.eq(AnySeq(1)),
            regs.flush.ats.eq(AnySeq(1)), regs.flush.gat.eq(AnySeq(1)), regs.flush.start.eq(AnySeq(1)),
            regs.flush_range.extra.eq(AnySeq(32)),
            regs.gat_base.data.eq(AnySeq(len(regs.gat_base.data.as_value()))),
            regs.gat_table.enable.eq(AnySeq(1)), regs.gat_table.base.eq(AnySeq(len(regs.gat_table.base))),
            regs.job_ring.enable.eq(AnySeq(1)), regs.job_ring.size.eq(AnySeq(4)), regs.job_ring.base.eq(AnySeq(40)),
            regs.job_doorbell.producer.eq(AnySeq(16)),
        ]
        link_rules(m, rx, Assume, well_formed=True, name="in")
        if not self.contracts:
            sink_rules(m, rx, Assert, name="in")
            link_rules(m, tx, Assert, well_formed=True, name="out")
        if not self.fixed:
            return m
        req = Signal(AtsMessage)
        gate = Signal(Gate)
        other = Signal(Gate)                # every look-ahead word
        m.d.comb += [req.eq(AnyConst(64)), gate.eq(AnyConst(64)), other.eq(AnyConst(64))]
        beat, hdr = rx.payload, rx.payload.word.header
        in_rsp = Signal()                   # the next RESPONSE beat is a look-ahead word
        with m.If(rx.valid & rx.ready.bit_select(beat.vc.as_value(), 1) & (beat.vc == HtaxVC.RESPONSE)):
            m.d.sync += in_rsp.eq(~beat.first)
        with m.If(rx.valid):
            with m.If(beat.vc == HtaxVC.ATS):
                m.d.comb += Assume(hdr.body.ats.as_value() == req.as_value())
            with m.If(beat.vc == HtaxVC.RESPONSE):
                with m.If(beat.first):
                    m.d.comb += Assume((hdr.cmd == HtaxCmd.RESPONSE) & (hdr.status == HtaxStatus.OK)
                                       & (hdr.body.mem.length != 0))
                with m.Elif(in_rsp):
                    m.d.comb += Assume(beat.word.data == other.as_value())
                with m.Else():
                    m.d.comb += Assume(beat.word.data == gate.as_value())
            m.d.comb += Assume((beat.vc == HtaxVC.ATS) | (beat.vc == HtaxVC.RESPONSE))
        m.d.comb += Assume(req.cmd == AtsCmd.TRANSLATION_REQUEST)
        tr = req.translation_request
        rsp = tx.payload.word.header.body.ats.translation_response
        with m.If(tx.valid & (tx.payload.vc == HtaxVC.ATS) & (rsp.cmd == AtsCmd.TRANSLATION_RESPONSE) & rsp.ok):
            m.d.comb += [
                Assert(gate.valid),
                Assert(gate.vpid == tr.vpid),
                Assert(gate.write | ~tr.write),
                Assert(gate.read | tr.write),
                Assert(~gate.large | (gate.ppn[:LARGE_PAGE_BITS] == 0)),
                Assert(rsp.ppn == (gate.ppn | Mux(gate.large, tr.nla_page[:LARGE_PAGE_BITS], 0))),
            ]
        return m


def proofs(cfg):
    yield Proof("vpid_perm", AtuProperties(fixed=True, contracts=False), mode="bmc", depth=14)
    yield Proof("links", AtuProperties(fixed=False, contracts=True), mode="bmc", depth=12)
