"""The ATU's TLB lookup pipeline (dissertation ch. 5.4, fig. 5-12 "TLB lookup"; fig. 5-9 step 8)."""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import PPN_BITS, AtsCause

from .formats import OfferSignature
from .layout import GAT_BASE_BITS
from .tlb import TlbReadSignature
from .util import stream_rules

__all__ = ["AtuLookup"]


class AtuLookup(wiring.Component):
    """Two-stage TLB lookup: s1 reads the TLB row and the GAT base entry, s2 holds the registered
    compare and classifies the request.

    A request enters s1 when s1 is empty or moves on, and not in a cycle with ``hold`` (a flush
    invalidates a TLB row then, so no lookup reads the row while it is written).  Its TLB row and its
    GAT base entry (the register file's RAM, ``gat``) are read at the same edge, so a miss knows the
    GATE address without another cycle.  The compare is registered into s2 (direct-mapped: the
    {valid, VPID, tag} compare in 8-bit pieces, ANDed in s2; several ways: the hit), so the block RAM's
    output only drives the compare.  s2 classifies: ``bad`` -> ``NLA_RANGE``; GAT base 0 ->
    ``GAT_NOT_CONFIGURED``; a hit -> OK or ``PERMISSION``; otherwise a miss.  A hit needs valid, tag
    and VPID equal.

    Parameters
    ----------
    formats : AtuFormats
    fu_ports : tuple of int
        The FUs' HTAX ports: ``results.fu`` is the index of the request's source among them (or
        ``len(fu_ports)`` for any other source), registered here for the reorder buffer's counters.

    Members
    -------
    requests : In(OfferSignature(formats.request))
    hold : In(1)
        Take no request in this cycle.
    epoch : In(1)
        The flush epoch; a request carries the epoch of its TLB read.
    lookups : Out(1)
        A request enters s1 (reads the TLB) in this cycle.
    tlb : Out(TlbReadSignature)
    gat_addr : Out(gat_bits)
    gat_data : In(GAT_BASE_BITS)
        The GAT base-address table's synchronous read port (data one cycle after the address).
    results : Out(stream.Signature(formats.lookup))
        The classified request (s2); obeys the stream rules.
    hit, miss : Out(1)
        A TLB hit or miss leaves s2 in this cycle (requests out of range or with an unconfigured GAT
        are neither).
    """

    def __init__(self, *, formats, fu_ports):
        self._f = formats
        self._fu_ports = tuple(fu_ports)
        super().__init__({
            "requests": In(OfferSignature(formats.request)),
            "hold": In(1),
            "epoch": In(1),
            "lookups": Out(1),
            "tlb": Out(TlbReadSignature(formats)),
            "gat_addr": Out(formats.gat_bits),
            "gat_data": In(GAT_BASE_BITS),
            "results": Out(stream.Signature(formats.lookup)),
            "hit": Out(1),
            "miss": Out(1),
        })

    def _fu_index(self, port):
        idx = Const(len(self._fu_ports), range(len(self._fu_ports) + 1))
        for i, p in enumerate(self._fu_ports):
            idx = Mux(port == p, i, idx)
        return idx

    def elaborate(self, platform):
        m = Module()
        f = self._f
        W = f.ways
        s1 = Signal(f.request)
        s1_valid = Signal()
        s1_epoch = Signal()
        s2 = Signal(f.request)
        s2_valid = Signal()
        s2_epoch = Signal()
        s2_go = s2_valid & self.results.ready
        s1_adv = s1_valid & (~s2_valid | s2_go)
        take = (~s1_valid | s1_adv) & ~self.hold
        load = self.requests.valid & take
        nreq = self.requests.payload
        m.d.comb += [
            self.requests.ready.eq(take),
            self.lookups.eq(load),
            self.tlb.en.eq(load),
            self.tlb.page.eq(nreq.nla),
            self.gat_addr.eq(Mux(load, nreq.nla.gat_index, s1.nla.gat_index)),
        ]
        with m.If(load):
            m.d.sync += [s1.eq(nreq), s1_valid.eq(1), s1_epoch.eq(self.epoch)]
        with m.Elif(s1_adv):
            m.d.sync += s1_valid.eq(0)

        ways = [self.tlb.ways[w] for w in range(W)]
        s1_tag = f.key(s1.nla).tag
        way_hit = Signal()
        ent = Signal(f.tlb_entry)
        for w in reversed(ways):
            with m.If(w.valid & (w.tag == s1_tag) & (w.vpid == s1.vpid)):
                m.d.comb += [way_hit.eq(1), ent.eq(w)]
        # one way: the entry goes into s2 as read (only the hit needs the compare); several ways: the
        # matching way's entry
        sel = ways[0] if W == 1 else ent
        # one way: the compare is split into 8-bit pieces registered apart (the block RAM's clock-to-out
        # leaves little of the cycle), s2 ANDs them; several ways: the hit itself is registered
        if W == 1:
            key_tlb = Cat(ways[0].valid, ways[0].vpid, ways[0].tag)
            key_req = Cat(Const(1), s1.vpid, s1_tag)
            pieces = [key_tlb[i:i + 8] == key_req[i:i + 8] for i in range(0, len(key_tlb), 8)]
        else:
            pieces = [way_hit]
        s2_match = Signal(len(pieces))
        s2_hit = s2_match.all()
        s2_perm = Signal()                  # the entry permits the access (read or write)
        s2_ppn = Signal(PPN_BITS)
        s2_lookup = Signal()                # in range and GAT configured: the TLB decides
        s2_gat = Signal(GAT_BASE_BITS)
        s2_fu = Signal(range(len(self._fu_ports) + 1))
        with m.If(s1_adv):
            m.d.sync += [s2.eq(s1), s2_valid.eq(1), s2_epoch.eq(s1_epoch), s2_match.eq(Cat(*pieces)),
                         s2_perm.eq(Mux(s1.write, sel.write, sel.read)), s2_ppn.eq(sel.ppn),
                         s2_lookup.eq(~s1.bad & (self.gat_data != 0)), s2_gat.eq(self.gat_data),
                         s2_fu.eq(self._fu_index(s1.src))]
        with m.Elif(s2_go):
            m.d.sync += s2_valid.eq(0)

        is_hit = s2_lookup & s2_hit
        is_miss = s2_lookup & ~s2_hit
        ok = is_hit & s2_perm
        cause = Signal(AtsCause)
        with m.If(s2.bad):
            m.d.comb += cause.eq(AtsCause.NLA_RANGE)
        with m.Elif(~s2_lookup):
            m.d.comb += cause.eq(AtsCause.GAT_NOT_CONFIGURED)
        with m.Elif(~s2_perm):
            m.d.comb += cause.eq(AtsCause.PERMISSION)
        r = self.results.payload
        m.d.comb += [
            self.results.valid.eq(s2_valid),
            r.miss.eq(is_miss), r.ok.eq(ok), r.cause.eq(cause), r.ppn.eq(Mux(ok, s2_ppn, 0)),
            r.dst.eq(s2.src), r.tag.eq(s2.tag), r.fu.eq(s2_fu), r.epoch.eq(s2_epoch),
            r.vpid.eq(s2.vpid), r.write.eq(s2.write), r.nla.eq(s2.nla), r.gat_base.eq(s2_gat),
            self.hit.eq(s2_go & is_hit),
            self.miss.eq(s2_go & is_miss),
        ]

        if platform == "formal":
            stream_rules(m, self.results, Assert, name="results")
            m.d.comb += Assert(~(self.tlb.en & self.hold))
            # the 8-bit pieces decide exactly what the full compare decides, on the entry that s2 keeps
            full = Signal()
            with m.If(s1_adv):
                m.d.sync += full.eq(way_hit)
            with m.If(s2_valid):
                m.d.comb += [
                    Assert(s2_hit == full),
                    Assert(~r.ok | (~r.miss & ~s2.bad & (r.cause == AtsCause.NONE))),
                    Assert(r.ok | r.miss | (r.cause != AtsCause.NONE)),
                    Assert(r.ok | (r.ppn == 0)),
                ]
        return m
