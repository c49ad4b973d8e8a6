"""The ATU's GATE check (dissertation ch. 5.4, fig. 5-12 "check", and ch. 5.3's rules for a GATE)."""

from amaranth.hdl import Assert, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import AtsCause
from rtl.common.htax import TAG_BITS, HtaxBeat, HtaxCmd, HtaxStatus

from .formats import LINE_GATES, AsyncReadSignature, gat_configured, gate_word_addr, lookahead_more
from .layout import LARGE_PAGE_BITS, GatBase, Gate

__all__ = ["AtuGateCheck"]


class AtuGateCheck(wiring.Component):
    """Checks each GATE that host memory returns for a waiting reorder-buffer slot.

    The RESPONSE-VC beats are framed here.  A response header whose tag names a slot that waits
    (``waiting``) when the header arrives claims the slot: an error response (or one without data) at
    once, with ``MEMORY_ERROR``; a response with data at its data beat.  A response for a slot that does
    not wait is ignored (this includes a header that arrives in the cycle its slot is allocated: the
    slot's information was not written yet).  The slot's request information (``info``) is read with
    the header's tag and registered, so the check in the data beat's cycle starts from flops.  Checks in
    order: error status or no data -> ``MEMORY_ERROR``; a first-level entry that is not configured ->
    ``GAT_NOT_CONFIGURED``; not valid -> ``INVALID_GATE``; VPID differs -> ``VPID_MISMATCH``; page size
    differs from the GAT's or a large page not 2 MB aligned -> ``PAGE_SIZE``; access not permitted ->
    ``PERMISSION``; else OK with the GATE's page (a large page: plus the 4 KB page's index inside the 2 MB
    page).  A failed check never carries a page (``ppn`` 0).

    **Look-ahead.**  A read with look-ahead (``more`` > 0 in the slot's information) returns the
    slot's GATE first and then the next GATEs of its 64-byte line; each is checked like a GATE of the
    slot's request (valid, VPID, page size) for the page it maps and, if it passes, the slot's epoch was
    current at the response's header and no flush started since, fills the TLB with ``pref`` set (the
    slot's translation may be answered, and a flush complete, before its last look-ahead word: the
    epoch bit alone could have wrapped).  Look-ahead GATEs give no result, and no more are taken than the
    read asked for (none after a first-level entry).

    The result is registered and leaves on ``results`` (and ``fill``) one cycle after ``arrived``.  A
    valid GATE of the request's VPID fills the TLB even if this access was refused (so the other access
    kind can hit), but only if it was read in the current flush epoch and no flush starts in the cycle
    it is checked: no GATE read before a flush enters the TLB after it.  A GATE of another VPID never
    enters the TLB.

    Parameters
    ----------
    formats : AtuFormats

    Members
    -------
    beats : In(stream.Signature(HtaxBeat, always_ready=True))
        RESPONSE-VC beats moving into the ATU.
    waiting : In(slots)
        Bit ``s``: slot ``s`` waits for its GATE.
    info : Out(AsyncReadSignature(depth=slots, shape=formats.slot_info))
    epoch : In(1)
    flush_start : In(1)
        A flush starts in this cycle (cancels a fill).
    arrived : Out(stream.Signature(range(slots), always_ready=True))
    results : Out(stream.Signature(formats.gate_result, always_ready=True))
    fill : Out(stream.Signature(formats.fill, always_ready=True))
    reads2 : Out(stream.Signature(formats.read, always_ready=True))
        With the first-level table: the GATE read of a slot whose first-level entry arrived (the caller
        queues it; at most one per slot).
    gfill : Out(stream.Signature(formats.gat_fill, always_ready=True))
        With the first-level table: a first-level entry for the GAT cache.
    """

    def __init__(self, *, formats, lookahead=0):
        self._f = formats
        self._lookahead = lookahead
        R = formats.slots
        super().__init__({
            "beats": In(stream.Signature(HtaxBeat, always_ready=True)),
            "waiting": In(R),
            "info": Out(AsyncReadSignature(depth=R, shape=formats.slot_info)),
            "epoch": In(1),
            "flush_start": In(1),
            "arrived": Out(stream.Signature(range(R), always_ready=True)),
            "results": Out(stream.Signature(formats.gate_result, always_ready=True)),
            "fill": Out(stream.Signature(formats.fill, always_ready=True)),
            "reads2": Out(stream.Signature(formats.read, always_ready=True)),
            "gfill": Out(stream.Signature(formats.gat_fill, always_ready=True)),
        })

    def _waits(self, tag):
        """``tag`` (a DMA read tag) names a slot that waits for its GATE."""
        bits = self._f.slot_bits
        hit = self.waiting.bit_select(tag[:bits], 1)
        return hit & (tag[bits:] == 0) if bits < TAG_BITS else hit

    def elaborate(self, platform):
        m = Module()
        f = self._f
        beat = self.beats.payload
        hdr = beat.word.header
        moves = self.beats.valid
        r_in = Signal()                     # inside a RESPONSE packet
        r_want = Signal()                   # the next data beat is a GATE for slot r_tag
        r_tag = Signal(TAG_BITS)
        r_la = Signal()                     # the next data beats are look-ahead GATEs of the slot in `inf`
        la_k = Signal(range(LINE_GATES))    # the next look-ahead GATE's distance from the slot's GATE
        fin_err = Signal()
        fin_tag = Signal(TAG_BITS)
        fin_ok = Signal()                   # a GATE or an error response for a slot that waits for it
        data_beat = Signal()                # the data beat of a response for the waiting slot r_tag
        gate = data.View(Gate, beat.word.data)
        inf = Signal(f.slot_info)
        m.d.comb += self.info.addr.eq(hdr.tag[:f.slot_bits])
        with m.If(moves & beat.first):
            m.d.sync += inf.eq(self.info.data)
        gi = inf.nla.gate_index
        entry, entry_ok, large, more = self._first_level(m, inf, r_tag, data_beat, fin_ok, slot_of=fin_tag)
        la_now = Signal()                   # this beat is look-ahead GATE la_k
        # no flush started since the packet's header (when the slot's translation, not yet answered,
        # still held its epoch): the look-ahead words after its answer may fill only then, so that a
        # GATE read before a completed flush never fills, however many flushes the epoch bit has seen
        la_live = Signal()
        is_hdr = moves & beat.first & (hdr.cmd == HtaxCmd.RESPONSE)
        with m.If(moves & beat.first):
            m.d.sync += la_live.eq((self.info.data.epoch == self.epoch) & ~self.flush_start)
        with m.Elif(self.flush_start):
            m.d.sync += la_live.eq(0)
        with m.If(moves):
            with m.If(beat.first):
                m.d.sync += [r_in.eq(~beat.last), r_la.eq(0)]
                ok_data = (hdr.status == HtaxStatus.OK) & (hdr.body.mem.length != 0) & ~beat.last
                # the data beat is taken only for a slot already waiting when the header arrives: its
                # request info (read now, below) was written at least one cycle before
                m.d.sync += [r_want.eq(is_hdr & ok_data & self._waits(hdr.tag)), r_tag.eq(hdr.tag)]
                with m.If(is_hdr & ~ok_data):
                    m.d.comb += [fin_err.eq(1), fin_tag.eq(hdr.tag), fin_ok.eq(self._waits(hdr.tag))]
            with m.Elif(r_in):
                # a first-level entry's read asked for no look-ahead: words after it are not GATEs
                m.d.sync += [r_in.eq(~beat.last), r_want.eq(0), r_la.eq(((r_want & ~entry) | r_la) & ~beat.last),
                             la_k.eq(Mux(r_want, 1, la_k + 1))]
                with m.If(r_want):
                    # the slot waited when the header arrived, and only a response with its tag clears
                    # that, which cannot come before this packet's data beat: no second check (a
                    # configured first-level entry is not an arrival: the slot waits for its GATE)
                    m.d.comb += [fin_tag.eq(r_tag), fin_ok.eq(~entry_ok), data_beat.eq(1)]
                with m.Elif(r_la):
                    m.d.comb += la_now.eq(1)
        slot = fin_tag[:f.slot_bits]
        m.d.comb += [self.arrived.valid.eq(fin_ok), self.arrived.payload.eq(slot)]

        vpid_ok = gate.vpid == inf.vpid
        # the page size agrees with the GAT's, and a large page is 2 MB aligned
        size_ok = (gate.large == large) & (~gate.large | (gate.ppn[:LARGE_PAGE_BITS] == 0))
        perm = Mux(inf.write, gate.write, gate.read)
        ok = ~fin_err & ~entry & gate.valid & vpid_ok & size_ok & perm
        cause = Signal(AtsCause)
        # checks in order (a first-level entry that arrives answers only when it is not configured)
        checks = [(fin_err, AtsCause.MEMORY_ERROR)] + ([(entry, AtsCause.GAT_NOT_CONFIGURED)] if f.l1 else [])
        for k, (failed, why) in enumerate(checks):
            with (m.If if k == 0 else m.Elif)(failed):
                m.d.comb += cause.eq(why)
        with m.Elif(~gate.valid):
            m.d.comb += cause.eq(AtsCause.INVALID_GATE)
        with m.Elif(~vpid_ok):
            m.d.comb += cause.eq(AtsCause.VPID_MISMATCH)
        with m.Elif(~size_ok):
            m.d.comb += cause.eq(AtsCause.PAGE_SIZE)
        with m.Elif(~perm):
            m.d.comb += cause.eq(AtsCause.PERMISSION)
        # a look-ahead GATE's page: la_k pages on in the GATE's line (never more than the read asked for)
        line = Mux(large, gi[LARGE_PAGE_BITS:LARGE_PAGE_BITS + 3], gi[:3])
        la_line = (line + la_k)[:3]
        la_page = Signal(f.page)
        m.d.comb += la_page.eq(inf.nla)
        with m.If(large):
            m.d.comb += la_page.gate_index[LARGE_PAGE_BITS:LARGE_PAGE_BITS + 3].eq(la_line)
        with m.Else():
            m.d.comb += la_page.gate_index[:3].eq(la_line)
        la_ok = la_now & (la_k <= more) & la_live
        # a flush starting in this cycle flips the epoch, so it cancels the fill as well
        fill_now = (((fin_ok & ~fin_err & ~entry) & (inf.epoch == self.epoch)) | la_ok) & gate.valid & vpid_ok \
            & size_ok & ~self.flush_start

        # stage g: the check's result, registered
        g_valid = Signal()
        g = Signal(f.gate_result)
        g_fill = Signal()
        g_new = Signal(f.fill)
        low = Mux(large, gi[:LARGE_PAGE_BITS], 0)
        m.d.sync += [g_valid.eq(fin_ok), g.slot.eq(slot), g.ok.eq(ok), g.cause.eq(cause), g.ppn.eq(gate.ppn | low),
                     g_fill.eq(fill_now), g_new.nla.eq(Mux(la_now, la_page, inf.nla)), g_new.large.eq(large),
                     g_new.pref.eq(la_now), g_new.read.eq(gate.read), g_new.write.eq(gate.write),
                     g_new.vpid.eq(inf.vpid), g_new.ppn.eq(gate.ppn)]
        res = self.results.payload
        m.d.comb += [
            self.results.valid.eq(g_valid),
            res.slot.eq(g.slot), res.ok.eq(g.ok), res.cause.eq(g.cause), res.ppn.eq(Mux(g.ok, g.ppn, 0)),
            self.fill.valid.eq(g_fill), self.fill.payload.eq(g_new),
        ]

        if platform == "formal":
            self._invariants(m, fin_ok=fin_ok, la_ok=la_ok, slot=slot, g_valid=g_valid, g=g, g_fill=g_fill,
                             g_new=g_new, gate=gate, inf=inf, large=large)
        return m

    def _first_level(self, m, inf, r_tag, data_beat, fin_ok, *, slot_of):
        """The first-level entry of a slot whose GAT was not cached (``inf.gmiss``): returns "this data
        beat is such an entry" (given ``data_beat``: a data beat for a waiting slot), "it is configured"
        (then it fills the GAT cache if no flush started since the read, and the slot's GATE read leaves
        on ``reads2`` one cycle later; the slot keeps waiting), and the page size and look-ahead length
        of the slot's GATE (the entry's for such a slot, else the slot information's)."""
        f = self._f
        beat = self.beats.payload
        if not f.l1:
            m.d.comb += [self.reads2.valid.eq(0), self.gfill.valid.eq(0)]
            return Const(0), Const(0), inf.large, inf.more
        R = f.slots
        slot = r_tag[:f.slot_bits]
        phase2 = Signal(R)                  # the slot's entry arrived: the next response is its GATE
        large2 = Signal(R)                  # that entry's page size
        ge = data.View(GatBase, beat.word.data[:GatBase.as_shape().size])
        gi = inf.nla.gate_index
        entry = data_beat & inf.gmiss & ~phase2.bit_select(slot, 1)
        configured = gat_configured(ge)
        entry_ok = entry & configured
        with m.If(entry_ok):
            m.d.sync += [phase2.bit_select(slot, 1).eq(1), large2.bit_select(slot, 1).eq(ge.large)]
        with m.Elif(fin_ok):
            m.d.sync += phase2.bit_select(slot_of[:f.slot_bits], 1).eq(0)
        rd = self.reads2.payload
        gf = self.gfill.payload
        m.d.sync += [
            self.reads2.valid.eq(entry_ok), rd.slot.eq(slot), rd.more.eq(lookahead_more(inf.next, ge.large, gi,
                                                                                        self._lookahead)),
            rd.addr.eq(gate_word_addr(ge.large, gi, ge.addr)),
            self.gfill.valid.eq(entry_ok & (inf.epoch == self.epoch) & ~self.flush_start),
            gf.gat.eq(inf.nla.gat_index), gf.large.eq(ge.large), gf.addr.eq(ge.addr),
        ]
        large = Mux(inf.gmiss, large2.bit_select(slot, 1), inf.large)
        more = Mux(inf.gmiss, lookahead_more(inf.next, large, gi, self._lookahead), inf.more)
        return entry, entry_ok, large, more

    def _invariants(self, m, *, fin_ok, la_ok, slot, g_valid, g, g_fill, g_new, gate, inf, large):
        f = self._f
        # results follow arrivals by one cycle; an OK result and a fill only for a valid GATE of the
        # slot's own VPID (OK also needs the permission; a fill does not: the other access kind may hit)
        last_ok = Signal()
        last_slot = Signal(range(f.slots))
        last_gate = Signal(Gate)
        last_vpid = Signal(f.vpid_bits)
        last_write = Signal()
        last_large = Signal()
        last_la = Signal()
        m.d.sync += [last_ok.eq(fin_ok), last_slot.eq(slot), last_gate.eq(gate), last_vpid.eq(inf.vpid),
                     last_write.eq(inf.write), last_large.eq(large), last_la.eq(la_ok)]
        m.d.comb += [
            Assert(g_valid == last_ok),
            Assert(~g_valid | (g.slot == last_slot)),
            Assert(~g_fill | g_valid | last_la),
            Assert(~g.ok | (g.cause == AtsCause.NONE)),
            Assert(g.ok | ~g_valid | (g.cause != AtsCause.NONE)),
        ]
        with m.If(g_valid & g.ok):
            m.d.comb += [Assert(last_gate.valid), Assert(last_gate.vpid == last_vpid),
                         Assert(last_gate.large == last_large),
                         Assert(Mux(last_write, last_gate.write, last_gate.read)),
                         Assert(g.ppn[LARGE_PAGE_BITS:] == last_gate.ppn[LARGE_PAGE_BITS:]),
                         Assert(last_large | (g.ppn == last_gate.ppn))]
        with m.If(g_fill):
            m.d.comb += [Assert(last_gate.valid), Assert(last_gate.vpid == g_new.vpid),
                         Assert(last_gate.large == g_new.large), Assert(g_new.ppn == last_gate.ppn),
                         Assert(~g_new.large | (g_new.ppn[:LARGE_PAGE_BITS] == 0))]
