"""The ATU's TLB lookup pipeline (dissertation ch. 5.4, fig. 5-12 "TLB lookup"; fig. 5-9 step 8), with
the large-page TLB and the look-ahead length of a miss (IBM HCA MMU seed: next-page look-ahead)."""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import PPN_BITS, AtsCause

from .formats import OfferSignature, gat_configured, gate_word_addr, lookahead_more
from .gatcache import GatCacheReadSignature
from .layout import LARGE_PAGE_BITS, GatBase, GatTable
from .tlb import TlbReadSignature, touch_layout
from .util import stream_rules

__all__ = ["AtuLookup"]


class AtuLookup(wiring.Component):
    """Two-stage TLB lookup: s1 reads both TLB rows and the GAT base entry, s2 holds the registered
    compares and classifies the request.

    A request enters s1 when s1 is empty or moves on, and not in a cycle with ``hold`` (a flush
    invalidates TLB rows then, so no lookup reads a row while it is written).  Its rows in the 4 KB-page
    TLB (``tlb``, set of the NLA page) and in the large-page TLB (``ltlb``, set of the NLA page >> 9) and
    its GAT base entry (the register file's RAM, ``gat``) are read at the same edge, so a miss knows the
    GATE address without another cycle.  The compares are registered into s2 (one way: {valid, VPID,
    tag} in 8-bit pieces, ANDed in s2; several ways: the hit), so a RAM's output only drives a compare;
    s2 takes the large-page TLB's answer when the GAT base entry's ``large`` flag is set, else the 4 KB
    TLB's.  s2 classifies: ``bad`` -> ``NLA_RANGE``; GAT base 0, or a 4 KB-page GAT not 2 MB aligned ->
    ``GAT_NOT_CONFIGURED``; a hit -> OK (a large page: its PPN plus the page's index in it) or
    ``PERMISSION``; otherwise a miss, with its GATE's word address and ``more``: for a request with
    ``next`` (the access continues into the next page), the GATEs after its own that the read also
    fetches: up to ``lookahead``, never past the end of the GATE's 64-byte line.

    A hit on an entry whose ``pref`` bit is set (a look-ahead filled it) clears the bit (``touch``: the
    entry as read, written back) unless a flush started since the TLB read (the epoch differs, or
    ``hold``): a touch never writes an entry back after a flush invalidated it.

    Parameters
    ----------
    formats : AtuFormats
    fu_ports : tuple of int
        The FUs' HTAX ports: ``results.fu`` is the index of the request's source among them (or
        ``len(fu_ports)`` for any other source), registered here for the reorder buffer's counters.
    lookahead : int
        0..7: the most GATEs a miss's read fetches after its own (0: no look-ahead).

    Members
    -------
    requests : In(OfferSignature(formats.request))
    hold : In(1)
        Take no request in this cycle.
    epoch : In(1)
        The flush epoch; a request carries the epoch of its TLB read.
    lookups : Out(1)
        A request enters s1 (reads the TLBs) in this cycle.
    tlb, ltlb : Out(TlbReadSignature)
        The 4 KB-page and the large-page TLB's read ports.
    touch, ltouch : Out(stream.Signature(touch_layout, always_ready=True))
        Clear the ``pref`` bit of the hit entry.
    gat_addr : Out(log2(gat_entries))
    gat_data : In(GatBase)
        The GAT base-address table's synchronous read port (data one cycle after the address).
    borrow : In(stream.Signature(range(gat_entries)))
        The job engine asks for the GAT base read port (``valid`` holds the lookup); ``ready``: s1 is
        empty or moves on in this cycle, so ``payload`` is this cycle's ``gat_addr`` and the data of the
        next cycle is the engine's.
    gcache : Out(GatCacheReadSignature)
        With the first-level table (``gat_cache_entries`` > 0): the GAT cache's read port.
    table : In(GatTable)
        With the first-level table: ``atu.gat_table`` (``enable``: GAT base entries come from the first-
        level table in host memory at ``base``, through the GAT cache, and every GAT index is valid).
    gat_miss : Out(1)
        A request whose GAT entry is not cached leaves s2 (its read is the first-level entry's).
    results : Out(stream.Signature(formats.lookup))
        The classified request (s2); obeys the stream rules.
    hit, miss : Out(1)
        A TLB hit or miss leaves s2 in this cycle (requests out of range or with an unconfigured GAT
        are neither).
    """

    def __init__(self, *, formats, fu_ports, lookahead=0):
        self._f = formats
        self._fu_ports = tuple(fu_ports)
        self._lookahead = lookahead
        super().__init__({
            "requests": In(OfferSignature(formats.request)),
            "hold": In(1),
            "epoch": In(1),
            "lookups": Out(1),
            "tlb": Out(TlbReadSignature(formats, formats.small)),
            "ltlb": Out(TlbReadSignature(formats, formats.large)),
            "touch": Out(stream.Signature(touch_layout(formats, formats.small), always_ready=True)),
            "ltouch": Out(stream.Signature(touch_layout(formats, formats.large), always_ready=True)),
            "gat_addr": Out(formats.chip_bits),
            "gat_data": In(GatBase),
            "borrow": In(stream.Signature(formats.chip_bits)),
            **({"gcache": Out(GatCacheReadSignature(formats)), "table": In(GatTable)} if formats.l1 else {}),
            "gat_miss": Out(1),
            "results": Out(stream.Signature(formats.lookup)),
            "hit": Out(1),
            "miss": Out(1),
        })

    def _fu_index(self, port):
        idx = Const(len(self._fu_ports), range(len(self._fu_ports) + 1))
        for i, p in enumerate(self._fu_ports):
            idx = Mux(port == p, i, idx)
        return idx

    @staticmethod
    def _compare(m, g, read, s1, s1_adv, name):
        """s1 -> s2 of one TLB (geometry ``g``, read port ``read``): the registered compare pieces (their
        AND is the hit), the entry to use as s1 sees it, its way (registered) and, for the proof, the
        full compare."""
        ways = [read.ways[w] for w in range(g.ways)]
        tag = g.key(s1.nla).tag
        way_hit = Signal(name=f"{name}_way_hit")
        ent = Signal(g.tlb_entry, name=f"{name}_ent")
        way = Signal(range(g.ways), name=f"{name}_way") if g.ways > 1 else None
        for i, w in reversed(list(enumerate(ways))):
            with m.If(w.valid & (w.tag == tag) & (w.vpid == s1.vpid)):
                m.d.comb += [way_hit.eq(1), ent.eq(w)]
                if way is not None:
                    m.d.comb += way.eq(i)
        # one way: the entry goes into s2 as read, and the compare in 8-bit pieces registered apart (the
        # RAM's clock-to-out leaves little of the cycle); several ways: the matching way, the hit
        if g.ways == 1:
            key_tlb = Cat(ways[0].valid, ways[0].vpid, ways[0].tag)
            key_req = Cat(Const(1), s1.vpid, tag)
            pieces = [key_tlb[i:i + 8] == key_req[i:i + 8] for i in range(0, len(key_tlb), 8)]
        else:
            pieces = [way_hit]
        match = Signal(len(pieces), name=f"{name}_match")
        s2_way = Signal(range(g.ways), name=f"{name}_s2_way") if way is not None else None
        full = Signal(name=f"{name}_full")
        with m.If(s1_adv):
            m.d.sync += [match.eq(Cat(*pieces)), full.eq(way_hit)]
            if way is not None:
                m.d.sync += s2_way.eq(way)
        return match.all(), ways[0] if g.ways == 1 else ent, s2_way, full

    def _gat_entry(self, m, load, nreq, s1):
        """The GAT base entry s1 uses (the on-chip table's, or with the first-level table on the GAT
        cache's; for an entry not cached, the table's base), whether the request is in range, and whether
        its first-level entry is not cached."""
        f = self._f
        gd = self.gat_data
        if not f.l1:
            return gd, ~s1.bad, Const(0)
        gc, on = self.gcache, self.table.enable
        m.d.comb += [gc.en.eq(load), gc.gat.eq(nreq.nla.gat_index)]
        # a first-level entry that is not cached: its address field carries the table's base into s2
        # (registered with the request, so the result holds while it waits)
        entry = Signal(GatBase)
        m.d.comb += [entry.large.eq(Mux(on, gc.large, gd.large)),
                     entry.addr.eq(Mux(on, Mux(gc.hit, gc.addr, self.table.base), gd.addr))]
        return entry, ~s1.bad & (~s1.far | on), on & ~gc.hit

    def elaborate(self, platform):
        m = Module()
        f = self._f
        s1 = Signal(f.request)
        s1_valid = Signal()
        s1_epoch = Signal()
        s2 = Signal(f.request)
        s2_valid = Signal()
        s2_epoch = Signal()
        s2_go = s2_valid & self.results.ready
        s1_adv = s1_valid & (~s2_valid | s2_go)
        free1 = ~s1_valid | s1_adv
        take = free1 & ~self.hold & ~self.borrow.valid
        load = self.requests.valid & take
        nreq = self.requests.payload
        m.d.comb += [
            self.requests.ready.eq(take),
            self.borrow.ready.eq(free1),
            self.lookups.eq(load),
            self.tlb.en.eq(load), self.tlb.page.eq(nreq.nla),
            self.ltlb.en.eq(load), self.ltlb.page.eq(nreq.nla),
            self.gat_addr.eq(Mux(self.borrow.valid & free1, self.borrow.payload,
                                 Mux(load, nreq.nla.gat_index, s1.nla.gat_index)[:f.chip_bits])),
        ]
        with m.If(load):
            m.d.sync += [s1.eq(nreq), s1_valid.eq(1), s1_epoch.eq(self.epoch)]
        with m.Elif(s1_adv):
            m.d.sync += s1_valid.eq(0)

        s_hit, s_pick, s_way, s_full = self._compare(m, f.small, self.tlb, s1, s1_adv, "small")
        l_hit, l_pick, _, l_full = self._compare(m, f.large, self.ltlb, s1, s1_adv, "large")
        s2_large = Signal()                 # the GAT maps 2 MB pages: the large-page TLB decides
        s2_lookup = Signal()                # in range and GAT configured: the TLBs decide
        s2_range = Signal()                 # VPID and GAT index in range
        s2_gmiss = Signal()                 # in range, the GAT's first-level entry is not cached
        s2_gat = Signal(len(self.gat_data.addr))
        s2_fu = Signal(range(len(self._fu_ports) + 1))
        gd, in_range, gmiss = self._gat_entry(m, load, nreq, s1)
        # the entry's answer, chosen by the GAT's page size already in s1 (the RAM outputs only pass a
        # multiplexer), so s2's path from the compare to the answer has no page-size choice; a hit entry
        # is {valid, the request's VPID and tag, these}, so nothing else of it is kept
        ent = Signal(data.StructLayout({"perm": 1, "read": 1, "write": 1, "pref": 1, "ppn": PPN_BITS}))
        pick = Signal(data.StructLayout({"read": 1, "write": 1, "pref": 1, "ppn": PPN_BITS}))
        for name in ("read", "write", "pref", "ppn"):
            m.d.comb += getattr(pick, name).eq(Mux(gd.large, getattr(l_pick, name), getattr(s_pick, name)))
        with m.If(s1_adv):
            m.d.sync += [
                ent.perm.eq(Mux(s1.write, pick.write, pick.read)), ent.read.eq(pick.read),
                ent.write.eq(pick.write), ent.pref.eq(pick.pref),
                ent.ppn.eq(pick.ppn | Mux(gd.large, s1.nla.gate_index[:LARGE_PAGE_BITS], 0)),
                s2.eq(s1), s2_valid.eq(1), s2_epoch.eq(s1_epoch), s2_large.eq(gd.large),
                s2_range.eq(in_range), s2_gmiss.eq(in_range & gmiss),
                s2_lookup.eq(in_range & ~gmiss & gat_configured(gd)),
                s2_gat.eq(gd.addr), s2_fu.eq(self._fu_index(s1.src)),
            ]
        with m.Elif(s2_go):
            m.d.sync += s2_valid.eq(0)

        s2_hit = Mux(s2_large, l_hit, s_hit)
        is_hit = s2_lookup & s2_hit
        is_miss = s2_lookup & ~s2_hit
        perm = ent.perm
        ok = is_hit & perm
        cause = Signal(AtsCause)
        with m.If(~s2_range):
            m.d.comb += cause.eq(AtsCause.NLA_RANGE)
        with m.Elif(~s2_lookup & ~s2_gmiss):
            m.d.comb += cause.eq(AtsCause.GAT_NOT_CONFIGURED)
        with m.Elif(~perm):
            m.d.comb += cause.eq(AtsCause.PERMISSION)
        r = self.results.payload
        gi = s2.nla.gate_index
        entry_addr = Cat(s2.nla.gat_index, s2_gat[:len(self.table.base)]) if f.l1 else 0
        m.d.comb += [
            self.results.valid.eq(s2_valid),
            r.miss.eq(is_miss | s2_gmiss), r.ok.eq(ok), r.cause.eq(cause), r.ppn.eq(Mux(ok, ent.ppn, 0)),
            r.dst.eq(s2.src), r.tag.eq(s2.tag), r.fu.eq(s2_fu), r.epoch.eq(s2_epoch),
            r.vpid.eq(s2.vpid), r.write.eq(s2.write), r.nla.eq(s2.nla), r.large.eq(s2_large),
            r.next.eq(s2.next), r.gmiss.eq(s2_gmiss),
            # the GATE's word address, or the first-level entry's: {table base, GAT index}
            r.addr.eq(Mux(s2_gmiss, entry_addr, gate_word_addr(s2_large, gi, s2_gat))),
            r.more.eq(Mux(s2_gmiss, 0, lookahead_more(s2.next, s2_large, gi, self._lookahead))),
            self.hit.eq(s2_go & is_hit),
            self.miss.eq(s2_go & (is_miss | s2_gmiss)),
            self.gat_miss.eq(s2_go & s2_gmiss),
        ]
        # the first hit on a look-ahead entry clears its pref bit, unless a flush started since the read
        touch = s2_go & is_hit & ent.pref & (s2_epoch == self.epoch) & ~self.hold
        for port, g in ((self.touch, f.small), (self.ltouch, f.large)):
            e = port.payload.entry
            m.d.comb += [port.valid.eq(touch & (s2_large == g.large)), port.payload.page.eq(s2.nla),
                         e.valid.eq(1), e.read.eq(ent.read), e.write.eq(ent.write), e.vpid.eq(s2.vpid),
                         e.tag.eq(g.key(s2.nla).tag), e.ppn.eq(ent.ppn[g.shift:] << g.shift)]
        if s_way is not None:
            m.d.comb += self.touch.payload.way.eq(s_way)

        if platform == "formal":
            stream_rules(m, self.results, Assert, name="results")
            m.d.comb += Assert(~(self.tlb.en & self.hold))
            with m.If(s2_valid):
                m.d.comb += [
                    # the 8-bit pieces decide exactly what the full compare decides, on the entry s2 keeps
                    Assert(s_hit == s_full), Assert(l_hit == l_full),
                    Assert(~r.ok | (~r.miss & ~s2.bad & (r.cause == AtsCause.NONE))),
                    Assert(r.ok | r.miss | (r.cause != AtsCause.NONE)),
                    Assert(r.ok | (r.ppn == 0)),
                ]
        return m
