"""The bridge's DMA read path: HTAX READ to AXI4 AR, R to HTAX RESPONSE (``docs/hostbus.md``)."""

from amaranth.hdl import Module
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import ceil_log2

from rtl.common.axi import axi_addr, axi_rdata
from rtl.common.htax import ADDR_BITS, MAX_DATA_WORDS, HtaxBeat, HtaxHeader
from rtl.common.params import check_pow2

from .read_collect import ReadCollect
from .read_issue import ReadIssue
from .read_respond import ReadRespond
from .writer import hazard_signature

__all__ = ["HostReader"]


class HostReader(wiring.Component):
    """A :class:`~rtl.hostbus.read_issue.ReadIssue` (READ to AR, one AXI ID per read in flight), a
    :class:`~rtl.hostbus.read_collect.ReadCollect` (R beats into the data memory, per ID) and a
    :class:`~rtl.hostbus.read_respond.ReadRespond` (RESPONSE packets), around two memories: the READ of
    every ID in flight, and 8 words per ID (block RAM).

    Parameters
    ----------
    ids : int
        AXI read IDs (reads in flight), a power of two, 1..32.
    entries : int
        Entries of the writer's hazard table.
    host_port : int

    Members
    -------
    i : In(stream.Signature(HtaxBeat))
        READ headers.
    o : Out(stream.Signature(HtaxBeat))
        RESPONSE packets.
    ar : Out(stream.Signature(axi_addr(id_bits, ADDR_BITS)))
    r : In(stream.Signature(axi_rdata(id_bits)))
    hazard : In(hazard_signature(entries))
    r_error : Out(1)
        An R beat for an ID not in flight arrives now.
    """

    def __init__(self, *, ids=32, entries=8, host_port):
        self._ids = check_pow2("ids", ids, 1, 32)
        self._entries, self._host_port = entries, host_port
        self.id_bits = max(1, ceil_log2(ids))
        super().__init__({
            "i": In(stream.Signature(HtaxBeat)),
            "o": Out(stream.Signature(HtaxBeat)),
            "ar": Out(stream.Signature(axi_addr(self.id_bits, ADDR_BITS))),
            "r": In(stream.Signature(axi_rdata(self.id_bits))),
            "hazard": In(hazard_signature(entries)),
            "r_error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        ids, bits = self._ids, self.id_bits
        m.submodules.table = table = memory.Memory(shape=HtaxHeader, depth=1 << bits, init=[])
        m.submodules.words = words = memory.Memory(shape=64, depth=MAX_DATA_WORDS << bits, init=[])
        m.submodules.issue = issue = ReadIssue(ids=ids, entries=self._entries)
        m.submodules.collect = collect = ReadCollect(ids=ids, id_bits=bits)
        m.submodules.respond = respond = ReadRespond(host_port=self._host_port, id_bits=bits)

        connect(m, reader=flipped(self.i), issue=issue.i)
        connect(m, reader=flipped(self.hazard), issue=issue.hazard)
        connect(m, issue=issue.ar, reader=flipped(self.ar))
        connect(m, issue=issue.table, memory=table.write_port())
        connect(m, reader=flipped(self.r), collect=collect.r)
        connect(m, collect=collect.data, memory=words.write_port())
        connect(m, collect=collect.done, respond=respond.done)
        connect(m, respond=respond.table, memory=table.read_port())
        connect(m, respond=respond.data, memory=words.read_port())
        connect(m, respond=respond.release, issue=issue.release)
        connect(m, respond=respond.o, reader=flipped(self.o))
        m.d.comb += [collect.busy.eq(issue.busy), self.r_error.eq(collect.r_error)]
        return m
