"""The write half of the board's host memory on AXI4: AW/W/B to word writes."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import SIZE_8B, AxiBurst, AxiResp, axi_addr, axi_bresp, axi_wdata
from rtl.common.params import check_int

from .formats import mem_write

__all__ = ["AxiMemWriter", "burst_fits"]


def burst_fits(addr, length, size, burst, words, base=0):
    """``(in range, supported, word)`` for a burst of ``length + 1`` beats at byte address ``addr`` into
    a memory of ``words`` 64-bit words at byte address ``base``: every word inside, INCR of 8-byte beats
    (or a single beat), and the memory word of the first beat."""
    word_bits = (words - 1).bit_length()
    offset = (addr - base)[:len(addr)]         # below base: wraps to a large offset, out of range
    word = offset[3:3 + word_bits]
    in_range = (offset[3 + word_bits:] == 0) & (word + length < words)
    supported = (length == 0) | ((burst == AxiBurst.INCR) & (size == SIZE_8B))
    return in_range, supported, word


class AxiMemWriter(wiring.Component):
    """Takes one AXI4 write burst at a time and turns its beats into word writes.

    An AW is taken when no burst is open.  Its beats are counted by ``AWLEN``; beat ``k`` writes word
    ``(addr - base) // 8 + k`` with the beat's strobes (INCR, 8-byte beats: a misaligned start address selects
    its bytes through the strobes).  One B follows the last beat, with the burst's ID.

    Outcomes: ``OKAY``; ``DECERR`` for a burst with a word outside the memory; ``SLVERR`` for a burst of
    more than one beat that is not INCR with ``AWSIZE`` 3.  Both take the burst's beats and write
    nothing.  A burst whose ``WLAST`` is not on beat ``AWLEN`` (and only there) is written and answered
    ``SLVERR``.  ``error`` is high for one cycle with every B that is not OKAY.

    Parameters
    ----------
    id_bits, addr_bits : int
        The AXI ID and address widths.
    words : int
        Words of the memory (a power of two).
    base : int
        Byte address of word 0 (a multiple of 8).

    Members
    -------
    aw : In(stream.Signature(axi_addr(id_bits, addr_bits)))
    w : In(stream.Signature(axi_wdata()))
    b : Out(stream.Signature(axi_bresp(id_bits)))
    mem_wr : Out(stream.Signature(mem_write(word_bits)))
        Word writes; ``ready`` is the grant of the memory's write port.
    error : Out(1)
    """

    def __init__(self, *, id_bits, addr_bits, words, base=0):
        self.id_bits = check_int("id_bits", id_bits, 1, 16)
        self.addr_bits = check_int("addr_bits", addr_bits, 12, 64)
        self.words = words
        self.base = base
        self.word_bits = (words - 1).bit_length()
        super().__init__({
            "aw": In(stream.Signature(axi_addr(id_bits, addr_bits))),
            "w": In(stream.Signature(axi_wdata())),
            "b": Out(stream.Signature(axi_bresp(id_bits))),
            "mem_wr": Out(stream.Signature(mem_write(self.word_bits))),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        aw = self.aw.payload
        bid = Signal(self.id_bits)
        length = Signal(8)
        word = Signal(self.word_bits)
        beat = Signal(8)
        resp = Signal(AxiResp)
        writes = Signal()               # the burst's beats go to memory
        in_range, supported, first = burst_fits(aw.addr, aw.len, aw.size, aw.burst, self.words,
                                            self.base)
        m.d.comb += [self.mem_wr.payload.addr.eq(word), self.mem_wr.payload.data.eq(self.w.payload.data),
                     self.mem_wr.payload.strb.eq(self.w.payload.strb),
                     self.b.payload.id.eq(bid), self.b.payload.resp.eq(resp)]
        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.aw.ready.eq(1)
                with m.If(self.aw.valid):
                    m.d.sync += [bid.eq(aw.id), length.eq(aw.len), word.eq(first), beat.eq(0),
                                 writes.eq(in_range & supported), resp.eq(AxiResp.DECERR)]
                    with m.If(in_range & supported):
                        m.d.sync += resp.eq(AxiResp.OKAY)
                    with m.Elif(in_range):
                        m.d.sync += resp.eq(AxiResp.SLVERR)
                    m.next = "DATA"
            with m.State("DATA"):
                m.d.comb += [self.mem_wr.valid.eq(self.w.valid & writes),
                             self.w.ready.eq(self.mem_wr.ready | ~writes)]
                with m.If(self.w.valid & self.w.ready):
                    m.d.sync += [beat.eq(beat + 1), word.eq(word + 1)]
                    with m.If((self.w.payload.last != (beat == length)) & writes):
                        m.d.sync += resp.eq(AxiResp.SLVERR)
                    with m.If(beat == length):
                        m.next = "RESP"
            with m.State("RESP"):
                m.d.comb += self.b.valid.eq(1)
                with m.If(self.b.ready):
                    m.d.comb += self.error.eq(resp != AxiResp.OKAY)
                    m.next = "IDLE"
        return m
