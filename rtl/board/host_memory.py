"""The board's host memory: block RAM behind the NIC's DMA port and the UART bridge's word port."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiSignature, connect_flat, flat_members
from rtl.common.params import check_int, check_pow2

from .axi_mem_read import AxiMemReader
from .axi_mem_write import AxiMemWriter
from .formats import MEM_DATA, mem_request
from .uart import COUNTER_BITS

__all__ = ["HostMemory"]


class HostMemory(wiring.Component):
    """Host memory in block RAM: ``size`` bytes as 64-bit words, at addresses ``base .. base + size - 1``
    on ``s_axi`` (word ``k`` of the RAM holds address ``base + 8k``; the word port addresses the RAM's
    words).

    The board has no host: this memory stands for it behind ``NicAxi``'s ``m_axi`` (the NIC's DMA)
    and is read and written by the PC through the UART bridge.  One memory with one write port and one
    read port (a simple dual-port block RAM: 64 KiB are 32 DP16KD on the ECP5, two 36-bit halves of
    512 words each per 4 KiB), shared by three clients:

    * ``s_axi`` writes (:class:`~rtl.board.axi_mem_write.AxiMemWriter`), one burst at a time, a beat
      per cycle;
    * ``s_axi`` reads (:class:`~rtl.board.axi_mem_read.AxiMemReader`), one burst at a time, a beat per
      cycle; the read and write channels work independently (AXI orders nothing between them);
    * the word port, one request at a time: a request is taken when no response is waiting, uses the
      write or read port in the cycle it is taken (the AXI engines wait that cycle: the bridge's rare
      requests must not starve behind a long DMA stream) and is answered with one response, the word
      for a read and 0 for a write.

    Outcomes on ``s_axi`` (the engines' docstrings): bursts of any ID and up to 256 beats, INCR of
    8-byte beats, strobes honoured, answered in order.  A burst with a word outside the memory is
    answered ``DECERR``, one of more than one beat that is not INCR of 8-byte beats ``SLVERR``; neither
    reads or writes the memory, and each is counted in ``read_errors`` / ``write_errors``, as is a
    written burst whose ``WLAST`` is misplaced (``SLVERR``).

    Parameters
    ----------
    size : int
        Bytes, a power of two from 64 to 16 MiB (default 64 KiB).
    id_bits : int
        ID width of ``s_axi`` (default 5: ``NicAxi``'s ``m_axi``).
    addr_bits : int
        Address width of ``s_axi`` (default 52).
    base : int
        Byte address of the memory on ``s_axi``, a multiple of 8 (default 0).  The board puts its
        memory just below a 2 MB boundary with the GAT's first GATEs above it (``docs/board.md``).

    Members
    -------
    s_axi_* : AXI4 subordinate port
        The flat ports of :func:`rtl.board.axi.flat_members` (``s_axi_awaddr`` ...), the names
        ``NicAxi``'s ``m_axi_*`` has after its prefix: a top joins them with
        :func:`rtl.board.axi.wire_axi`.
    word_req : In(stream.Signature(mem_request(word_bits)))
        Word port requests (``word_bits`` = log2(``size`` / 8)).
    word_rsp : Out(stream.Signature(64))
        One response per request, in order.
    read_errors, write_errors : Out(16)
        Bursts answered with an error (saturating).

    Raises
    ------
    TypeError, ValueError
        For a ``size`` that is not a power of two from 64 to 16 MiB, an ``id_bits`` outside 1..16, an
        ``addr_bits`` outside 12..64 or too narrow for ``size``, or a ``base`` that is not a multiple of
        8 or puts the memory beyond the address space.
    """

    def __init__(self, *, size=64 * 1024, id_bits=5, addr_bits=52, base=0):
        self.size = check_pow2("size", size, 64, 1 << 24)
        self.id_bits = check_int("id_bits", id_bits, 1, 16)
        self.addr_bits = check_int("addr_bits", addr_bits, max(12, (size - 1).bit_length()), 64)
        self.base = check_int("base", base, 0, (1 << addr_bits) - size)
        if base % 8:
            raise ValueError(f"base must be a multiple of 8, not {base:#x}")
        self.words = size // 8
        self.word_bits = (self.words - 1).bit_length()
        self.axi_signature = AxiSignature(id_bits=id_bits, addr_bits=addr_bits)
        super().__init__({
            **flat_members("s_axi", self.axi_signature, manager=False),
            "word_req": In(stream.Signature(mem_request(self.word_bits))),
            "word_rsp": Out(stream.Signature(MEM_DATA)),
            "read_errors": Out(COUNTER_BITS),
            "write_errors": Out(COUNTER_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=64, depth=self.words, init=[], attrs={"ram_style": "block"})
        wp = mem.write_port(granularity=8)
        rp = mem.read_port(transparent_for=())
        params = dict(id_bits=self.id_bits, addr_bits=self.addr_bits, words=self.words, base=self.base)
        m.submodules.writer = writer = AxiMemWriter(**params)
        m.submodules.reader = reader = AxiMemReader(**params)

        axi = self.axi_signature.flip().create()
        connect_flat(m, self, "s_axi", axi, manager=False)
        wiring.connect(m, wiring.flipped(axi.aw), writer.aw)
        wiring.connect(m, wiring.flipped(axi.w), writer.w)
        wiring.connect(m, writer.b, wiring.flipped(axi.b))
        wiring.connect(m, wiring.flipped(axi.ar), reader.ar)
        wiring.connect(m, reader.r, wiring.flipped(axi.r))

        # the word port: one request at a time, ahead of the AXI engines in the cycle it is taken
        req = self.word_req.payload
        pending_read = Signal()             # the read port has this request's word in this cycle
        m.d.comb += self.word_req.ready.eq(~self.word_rsp.valid & ~pending_read)
        take = self.word_req.valid & self.word_req.ready
        port_write = take & req.write
        port_read = take & ~req.write
        m.d.sync += pending_read.eq(port_read)
        with m.If(self.word_rsp.ready):
            m.d.sync += self.word_rsp.valid.eq(0)
        with m.If(port_write):
            m.d.sync += [self.word_rsp.valid.eq(1), self.word_rsp.payload.eq(0)]
        with m.If(pending_read):
            m.d.sync += [self.word_rsp.valid.eq(1), self.word_rsp.payload.eq(rp.data)]

        m.d.comb += [writer.mem_wr.ready.eq(~port_write), reader.mem_rd.ready.eq(~port_read),
                     reader.mem_data.eq(rp.data)]
        with m.If(port_write):
            m.d.comb += [wp.addr.eq(req.addr), wp.data.eq(req.data), wp.en.eq(req.strb)]
        with m.Elif(writer.mem_wr.valid):
            w = writer.mem_wr.payload
            m.d.comb += [wp.addr.eq(w.addr), wp.data.eq(w.data), wp.en.eq(w.strb)]
        with m.If(port_read):
            m.d.comb += [rp.addr.eq(req.addr), rp.en.eq(1)]
        with m.Else():
            m.d.comb += [rp.addr.eq(reader.mem_rd.payload), rp.en.eq(reader.mem_rd.valid)]

        for counter, strobe in ((self.read_errors, reader.error), (self.write_errors, writer.error)):
            with m.If(strobe & (counter != (1 << len(counter)) - 1)):
                m.d.sync += counter.eq(counter + 1)
        return m
