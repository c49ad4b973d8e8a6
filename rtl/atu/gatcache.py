"""The ATU's cache of the first-level table in host memory (dissertation ch. 5.3: "for the long term,
the base address table can be mapped to main memory and the on-chip memory becomes a cache of the
first level table")."""

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .layout import GAT_BASE_BITS

__all__ = ["AtuGatCache", "GatCacheReadSignature"]


class GatCacheReadSignature(wiring.Signature):
    """The GAT cache's read port as the lookup sees it: ``gat`` is read at ``en``; one cycle later
    ``hit`` (the cached entry is that GAT's), ``large`` and ``addr`` (its :class:`GatBase` fields).

    Members
    -------
    en : Out(1)
    gat : Out(formats.gat_bits)
    hit, large : In(1)
    addr : In(GAT_BASE_BITS)
    """

    def __init__(self, formats):
        self._bits = formats.gat_bits
        super().__init__({"en": Out(1), "gat": Out(formats.gat_bits), "hit": In(1), "large": In(1),
                          "addr": In(GAT_BASE_BITS)})

    def __eq__(self, other):
        return type(other) is GatCacheReadSignature and other.members == self.members

    def __hash__(self):
        return hash((GatCacheReadSignature, self._bits))

    def __repr__(self):
        return f"GatCacheReadSignature(gat_bits={self._bits})"


class AtuGatCache(wiring.Component):
    """A direct-mapped cache of first-level entries: ``entries`` rows of {valid, tag, large, addr}
    (LUT or block RAM, by size), indexed by the low bits of the GAT index.

    One write port: an invalidation (a flush with ``gat``: the row of that GAT index, valid clear)
    wins over a fill (a first-level entry that arrived from host memory; a lost fill costs a later
    miss).  Not cleared by reset: it starts empty from the configuration image, and software that
    changes a first-level entry, or the table's base, invalidates the entries it changed by flushes.

    Parameters
    ----------
    formats : AtuFormats
        ``gat_cache_entries`` > 0.

    Members
    -------
    read : In(GatCacheReadSignature)
    fill : In(stream.Signature(formats.gat_fill, always_ready=True))
    invalidate : In(stream.Signature(formats.gat_bits, always_ready=True))
    """

    def __init__(self, *, formats):
        self._f = formats
        super().__init__({
            "read": In(GatCacheReadSignature(formats)),
            "fill": In(stream.Signature(formats.gat_fill, always_ready=True)),
            "invalidate": In(stream.Signature(formats.gat_bits, always_ready=True)),
        })

    def elaborate(self, platform):
        m = Module()
        f = self._f
        cb = f.cache_bits
        row = data.StructLayout({"valid": 1, "tag": f.gat_bits - cb, "large": 1, "addr": GAT_BASE_BITS})
        m.submodules.mem = mem = Memory(shape=row, depth=1 << cb, init=[])
        rd = mem.read_port(domain="sync")
        wr = mem.write_port()
        tag = Signal(f.gat_bits - cb)           # the tag of the GAT read, for the compare one cycle later
        with m.If(self.read.en):
            m.d.sync += tag.eq(self.read.gat[cb:])
        m.d.comb += [
            rd.en.eq(self.read.en), rd.addr.eq(self.read.gat[:cb]),
            self.read.hit.eq(rd.data.valid & (rd.data.tag == tag)),
            self.read.large.eq(rd.data.large), self.read.addr.eq(rd.data.addr),
        ]
        fill = self.fill.payload
        m.d.comb += [wr.data.valid.eq(~self.invalidate.valid), wr.data.tag.eq(fill.gat[cb:]),
                     wr.data.large.eq(fill.large), wr.data.addr.eq(fill.addr),
                     wr.en.eq(self.invalidate.valid | self.fill.valid),
                     wr.addr.eq(Mux(self.invalidate.valid, self.invalidate.payload[:cb], fill.gat[:cb]))]

        if platform == "formal":
            # a row once invalidated reads back invalid until a fill writes it (the read port is not
            # transparent: a read in the cycle of a write sees the old row)
            watch = Signal(cb)
            clear = Signal(init=1)
            read_clear = Signal()
            m.d.comb += watch.eq(AnyConst(cb))
            with m.If(wr.en & (wr.addr == watch)):
                m.d.sync += clear.eq(self.invalidate.valid)
            with m.If(rd.en):
                m.d.sync += read_clear.eq(clear & (rd.addr == watch))
            with m.If(read_clear):
                m.d.comb += Assert(~self.read.hit)
        return m
