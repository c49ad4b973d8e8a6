"""The ATU's TLB storage (dissertation ch. 5.4, fig. 5-12 "TLB")."""

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["AtuTlb", "TlbReadSignature", "touch_layout"]


class TlbReadSignature(wiring.Signature):
    """A TLB's synchronous read port as the lookup sees it: the row of ``page``'s set arrives in
    ``ways`` one cycle after ``en``.

    Members
    -------
    en : Out(1)
    page : Out(formats.page)
    ways : In(geometry.tlb_row)
    """

    def __init__(self, formats, geometry):
        self._g = geometry
        super().__init__({"en": Out(1), "page": Out(formats.page), "ways": In(geometry.tlb_row)})

    def __eq__(self, other):
        return type(other) is TlbReadSignature and other.members == self.members

    def __hash__(self):
        return hash(TlbReadSignature)

    def __repr__(self):
        return f"TlbReadSignature({self._g.tlb_row!r})"


def touch_layout(formats, geometry):
    """A touch: rewrite way ``way`` (several ways only) of ``page``'s set with ``entry`` (the hit entry,
    ``pref`` clear)."""
    way = {"way": range(geometry.ways)} if geometry.ways > 1 else {}
    return data.StructLayout({"page": formats.page, **way, "entry": geometry.tlb_entry})


class AtuTlb(wiring.Component):
    """TLB storage: one RAM of ``sets`` rows of ``ways`` entries {valid, read, write, pref, VPID, tag,
    PPN}, indexed by the low bits of the NLA page (the 4 KB-page TLB) or of the NLA page >> 9 (the
    large-page TLB); one read port, one write port.

    The write port serves an invalidation (a flush: every way of the set, valid bit clear), else a
    fill of this TLB's page size (``fill.large == geometry.large``; one way, chosen by a round-robin
    victim counter), else a touch (the lookup clears the ``pref`` bit of an entry at its first hit); an
    invalidation wins over a fill in the same cycle (a lost fill only costs a later miss), and both over
    a touch (a lost touch leaves ``pref`` set: the entry's next hit counts as its first; a touch whose
    set a fill wrote since the lookup read it writes the older entry back over the fill, which costs a
    later miss, never a wrong answer: the entry is still valid, no flush came between).  An
    invalidation writes the fill's fields with the valid bit clear: only the valid bit waits for the
    flush strobe, and an invalid entry's other fields are never used.  Not cleared by reset (RAM): it
    starts empty from the configuration image.

    Deviations from ch. 5.4: entries are tagged with the VPID (a GATE fetched for one VPID never hits
    for another); 2 and 4 ways as options.

    Parameters
    ----------
    formats : AtuFormats
    geometry : TlbGeometry
        ``formats.small`` or ``formats.large``.

    Members
    -------
    read : In(TlbReadSignature)
    fill : In(stream.Signature(formats.fill, always_ready=True))
        Write a valid entry for ``fill.nla`` if ``fill.large`` is this TLB's (always ready: a fill that
        loses to an invalidation is dropped).
    invalidate : In(stream.Signature(formats.page, always_ready=True))
        Clear the valid bit of every way of this page's set.
    touch : In(stream.Signature(touch_layout(formats, geometry), always_ready=True))
    touched : Out(1)
        The touch was written.
    """

    def __init__(self, *, formats, geometry):
        self._f = formats
        self._g = geometry
        super().__init__({
            "read": In(TlbReadSignature(formats, geometry)),
            "fill": In(stream.Signature(formats.fill, always_ready=True)),
            "invalidate": In(stream.Signature(formats.page, always_ready=True)),
            "touch": In(stream.Signature(touch_layout(formats, geometry), always_ready=True)),
            "touched": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        f = self._g
        W = f.ways
        m.submodules.mem = mem = Memory(shape=f.tlb_row, depth=f.sets, init=[])
        rd = mem.read_port(domain="sync")
        wr = mem.write_port(granularity=1)
        m.d.comb += [rd.en.eq(self.read.en), rd.addr.eq(f.key(self.read.page).set),
                     self.read.ways.eq(rd.data)]

        fill = self.fill.payload
        touch = self.touch.payload
        filling = self.fill.valid & (fill.large == f.large)
        entry = Signal(f.tlb_entry)
        with m.If(filling | self.invalidate.valid):
            m.d.comb += [entry.valid.eq(~self.invalidate.valid), entry.read.eq(fill.read),
                         entry.write.eq(fill.write), entry.pref.eq(fill.pref), entry.vpid.eq(fill.vpid),
                         entry.tag.eq(f.key(fill.nla).tag), entry.ppn.eq(fill.ppn)]
        with m.Else():
            m.d.comb += [entry.eq(touch.entry), entry.pref.eq(0)]
        m.d.comb += [wr.data[w].eq(entry) for w in range(W)]
        victim = Signal(range(W)) if W > 1 else None
        # the address and data choose among the three sources by the invalidation's and the fill's valid
        # only (the touch is the default), so the late touch strobe drives only the write enables
        m.d.comb += [wr.addr.eq(f.key(touch.page).set),
                     wr.en.eq(Mux(self.touch.valid, Const(1, W) << touch.way if W > 1 else 1, 0))]
        with m.If(self.invalidate.valid):
            m.d.comb += [wr.addr.eq(f.key(self.invalidate.payload).set), wr.en.eq((1 << W) - 1)]
        with m.Elif(filling):
            m.d.comb += [wr.addr.eq(f.key(fill.nla).set), wr.en.eq(Const(1, W) << victim if W > 1 else 1)]
            if W > 1:
                m.d.sync += victim.eq(victim + 1)
        m.d.comb += self.touched.eq(self.touch.valid & ~self.invalidate.valid & ~filling)
        if platform == "formal":
            # a set once invalidated reads back with every way invalid until a fill writes it again
            # (the read port is not transparent: a read in the cycle of a write sees the old row)
            watch = Signal(f.set_bits)
            clear = Signal(init=1)             # the RAM starts all zero: every set invalid
            read_clear = Signal()
            m.d.comb += watch.eq(AnyConst(f.set_bits))
            with m.If(wr.en.any() & (wr.addr == watch)):
                m.d.sync += clear.eq(self.invalidate.valid | (self.touched & ~touch.entry.valid))
            with m.If(rd.en):
                m.d.sync += read_clear.eq(clear & (rd.addr == watch))
            with m.If(read_clear):
                m.d.comb += [Assert(~self.read.ways[w].valid) for w in range(W)]
        return m
