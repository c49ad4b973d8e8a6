"""The read half of the board's host memory on AXI4: AR/R from word reads."""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiResp, axi_addr, axi_rdata
from rtl.common.params import check_int

from .axi_mem_write import burst_fits
from .formats import MEM_DATA

__all__ = ["AxiMemReader"]

_DEPTH = 2          # R beats buffered: a read in flight and a beat waiting keep one beat per cycle
_BEAT = data.StructLayout({"data": 64, "last": 1})


class AxiMemReader(wiring.Component):
    """Takes one AXI4 read burst at a time and answers it from word reads.

    An AR is taken when no burst is open.  Beat ``k`` of an INCR burst of 8-byte beats is word
    ``(addr - base) // 8 + k``.  The word reads go out on ``mem_rd`` (the memory's read port grants them
    through ``ready``), each one's data is on ``mem_data`` in the cycle after its grant, and the beats
    wait in a two-entry FIFO for ``r``.  A read is issued only when the FIFO will have room for its
    data, counting the beat ``r`` takes in the same cycle, so a burst streams one beat per cycle.

    Outcomes: ``OKAY`` beats; ``DECERR`` for a burst with a word outside the memory, ``SLVERR`` for a
    burst of more than one beat that is not INCR with ``ARSIZE`` 3: then ``ARLEN + 1`` beats of zero
    data with that response, and nothing is read.  ``error`` is high for one cycle when such a burst
    is taken.

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
    ar : In(stream.Signature(axi_addr(id_bits, addr_bits)))
    r : Out(stream.Signature(axi_rdata(id_bits)))
    mem_rd : Out(stream.Signature(word_bits))
        Word reads (the word address); ``ready`` is the grant of the memory's read port.
    mem_data : In(64)
        The data of the read granted in the previous cycle.
    error : Out(1)
    """

    def __init__(self, *, id_bits, addr_bits, words, base=0):
        self.id_bits = check_int("id_bits", id_bits, 1, 16)
        self.addr_bits = check_int("addr_bits", addr_bits, 12, 64)
        self.words = words
        self.base = base
        self.word_bits = (words - 1).bit_length()
        super().__init__({
            "ar": In(stream.Signature(axi_addr(id_bits, addr_bits))),
            "r": Out(stream.Signature(axi_rdata(id_bits))),
            "mem_rd": Out(stream.Signature(self.word_bits)),
            "mem_data": In(MEM_DATA),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.beats = beats = fifo.SyncFIFO(width=_BEAT.size, depth=_DEPTH)
        head = data.View(_BEAT, beats.r_data)
        landing = Signal(_BEAT)
        ar = self.ar.payload
        rid = Signal(self.id_bits)
        length = Signal(8)
        word = Signal(self.word_bits)
        issued = Signal(9)              # reads granted
        sent = Signal(8)                # beats handed to R (error bursts)
        resp = Signal(AxiResp)
        in_flight = Signal()            # a read was granted in the previous cycle
        in_flight_last = Signal()
        in_range, supported, first = burst_fits(ar.addr, ar.len, ar.size, ar.burst, self.words,
                                            self.base)

        r_moves = self.r.valid & self.r.ready
        m.d.comb += [landing.data.eq(self.mem_data), landing.last.eq(in_flight_last),
                     beats.w_en.eq(in_flight), beats.w_data.eq(landing),
                     self.mem_rd.payload.eq(word), self.r.payload.id.eq(rid)]
        granted = self.mem_rd.valid & self.mem_rd.ready
        m.d.sync += [in_flight.eq(granted), in_flight_last.eq(issued == length)]
        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.ar.ready.eq(1)
                with m.If(self.ar.valid):
                    m.d.sync += [rid.eq(ar.id), length.eq(ar.len), word.eq(first), issued.eq(0),
                                 sent.eq(0), resp.eq(AxiResp.DECERR)]
                    with m.If(in_range & supported):
                        m.next = "READ"
                    with m.Else():
                        m.d.comb += self.error.eq(1)
                        with m.If(in_range):
                            m.d.sync += resp.eq(AxiResp.SLVERR)
                        m.next = "ERROR"
            with m.State("READ"):
                room = beats.level + in_flight - r_moves < _DEPTH
                m.d.comb += [self.mem_rd.valid.eq((issued <= length) & room),
                             self.r.valid.eq(beats.r_rdy), beats.r_en.eq(self.r.ready),
                             self.r.payload.data.eq(head.data), self.r.payload.last.eq(head.last),
                             self.r.payload.resp.eq(AxiResp.OKAY)]
                with m.If(granted):
                    m.d.sync += [issued.eq(issued + 1), word.eq(word + 1)]
                with m.If(r_moves & head.last):
                    m.next = "IDLE"
            with m.State("ERROR"):
                m.d.comb += [self.r.valid.eq(1), self.r.payload.resp.eq(resp), self.r.payload.last.eq(sent == length)]
                with m.If(self.r.ready):
                    m.d.sync += sent.eq(sent + 1)
                    with m.If(sent == length):
                        m.next = "IDLE"
        return m
