"""The bridge's DMA read requests: HTAX READs from the NIC become AXI4 read bursts (``docs/hostbus.md``)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from rtl.common.axi import SIZE_8B, AxiBurst, axi_addr
from rtl.common.htax import ADDR_BITS, HtaxBeat, HtaxHeader
from rtl.common.rr import lowest, one_hot_index

from .writer import hazard_signature

__all__ = ["ReadIssue", "release_signature"]


def release_signature(id_bits):
    """An AXI read ID is free again (its response has been sent)."""
    return wiring.Signature({"valid": Out(1), "id": Out(id_bits)})


class ReadIssue(wiring.Component):
    """Takes HTAX READ headers, gives each a free AXI read ID and sends its AR.

    A READ waits in a register until its ID is allocated and every write that arrived before it to the
    same 64-byte line has its B (the writer's ``hazard`` table: the entries that matched on arrival, less
    those retired since), so a read never passes an earlier write to its line; writes and responses go
    on meanwhile (the READ holds only the non-posted path).  The READ's header is stored under its ID
    for the response.  Header in to AR valid: 2 cycles.

    Parameters
    ----------
    ids : int
        AXI read IDs, a power of two, 1..32 (reads in flight).
    entries : int
        Entries of the writer's hazard table.

    Members
    -------
    i : In(stream.Signature(HtaxBeat))
        READ headers (single beats).
    hazard : In(hazard_signature(entries))
    ar : Out(stream.Signature(axi_addr(id_bits, ADDR_BITS)))
    table : In(memory.WritePort.Signature(addr_width=id_bits, shape=HtaxHeader))
        The request of each ID in flight.
    release : In(release_signature(id_bits))
    busy : Out(ids)
        IDs in flight.
    """

    def __init__(self, *, ids, entries):
        self._ids, self._entries = ids, entries
        self._id_bits = max(1, ceil_log2(ids))
        super().__init__({
            "i": In(stream.Signature(HtaxBeat)),
            "hazard": In(hazard_signature(entries)),
            "ar": Out(stream.Signature(axi_addr(self._id_bits, ADDR_BITS))),
            "table": In(memory.WritePort.Signature(addr_width=self._id_bits, shape=HtaxHeader)),
            "release": In(release_signature(self._id_bits)),
            "busy": Out(ids),
        })

    def elaborate(self, platform):
        m = Module()
        n_ids, n = self._ids, self._entries
        hdr = HtaxHeader(self.i.payload.word.as_value())
        held = Signal()
        req = Signal(HtaxHeader)
        wait = Signal(n)
        retire = self.hazard.retire

        # the writes in flight to the READ's line when it arrives; each clears when its B arrives
        match = Cat(self.hazard.line[k] == (hdr.body.mem.addr >> 6) for k in range(n))
        m.d.comb += self.i.ready.eq(~held)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [held.eq(1), req.eq(hdr), wait.eq(match & self.hazard.valid & ~retire)]
        with m.Else():
            m.d.sync += wait.eq(wait & ~retire)

        free = Signal(n_ids)
        pick = Signal(n_ids)
        m.d.comb += [free.eq(~self.busy), pick.eq(lowest(free))]
        pick_id = one_hot_index(m, pick, name="pick_id")

        with m.If(self.ar.ready):
            m.d.sync += self.ar.valid.eq(0)
        issuing = Signal()          # a held READ takes a free ID and goes out on AR now
        m.d.comb += issuing.eq(held & (wait == 0) & free.any() & (~self.ar.valid | self.ar.ready))
        mem = req.body.mem
        with m.If(issuing):
            m.d.sync += [held.eq(0), self.ar.valid.eq(1),
                         self.ar.payload.id.eq(pick_id), self.ar.payload.addr.eq(mem.addr),
                         self.ar.payload.len.eq(mem.length - 1), self.ar.payload.size.eq(SIZE_8B),
                         self.ar.payload.burst.eq(AxiBurst.INCR)]
        m.d.comb += [self.table.en.eq(issuing), self.table.addr.eq(pick_id), self.table.data.eq(req)]

        set_mask = Mux(issuing, pick, 0)
        clr_mask = Mux(self.release.valid, Const(1, n_ids) << self.release.id, 0)
        m.d.sync += self.busy.eq((self.busy | set_mask) & ~clr_mask)
        return m
