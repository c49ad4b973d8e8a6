"""The UART bridge: the host CPU's stores and reads, from a PC over the board's UART."""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiSignature, connect_flat, flat_members
from rtl.common.blockfifo import BlockRamFIFO
from rtl.common.params import check_int, check_pow2

from .axi_manager import AxiBurstManager
from .bridge_deframer import BridgeDeframer
from .bridge_enframer import BridgeEnframer
from .bridge_executor import BridgeExecutor
from .formats import MAX_WORDS, MEM_DATA, BridgeWord, mem_request

__all__ = ["UartBridge"]


class UartBridge(wiring.Component):
    """Commands from a byte stream (the PC, through :class:`~rtl.board.UartRx`) become accesses to the
    NIC's device window (``m_axi_*``, to ``NicAxi``'s ``s_axi_*``) and to the board's host memory
    (``mem_req``/``mem_rsp``, to :class:`~rtl.board.HostMemory`'s word port); every command is
    answered on the outgoing byte stream (to :class:`~rtl.board.UartTx`).  It stands for the host CPU
    of a board without one, as LiteX's UARTBone does.  The protocol (frames, statuses, CRC) is in
    :mod:`rtl.board.formats`; the PC side is ``sim/uart_bridge.py``.

    Blocks, joined by streams::

        i -> FIFO -> BridgeDeframer -> BridgeExecutor -> BridgeEnframer -> o
                           \\              |   \\__ AxiBurstManager -> m_axi_*
                            word buffer --+    \\__ mem_req / mem_rsp

    Rules the bridge owns: commands are performed one at a time, in order, each answered once, a
    write's answer after its B (a later read sees it); nothing is performed for a frame with a wrong
    CRC, an unknown space or op, or words out of range; no input hangs it (an unknown byte is answered
    at once, a broken-off frame after ``frame_timeout`` cycles, an AXI access that does not finish
    after ``axi_timeout`` cycles).

    Flow control: the UART has none, so the bytes of frames wait in a receive FIFO of ``rx_depth``
    bytes while a command is performed and answered.  The PC must keep the bytes of the commands it has
    sent and whose responses it has not received at or below ``rx_depth`` (``UartBridgeHost`` does);
    then no byte is lost.

    Parameters
    ----------
    mem_size : int
        Bytes of the host memory (as ``HostMemory``'s ``size``, default 64 KiB).
    id_bits, addr_bits : int
        ID and address widths of ``m_axi`` (``NicAxi``'s ``s_axi``: 4 and 52).
    rx_depth : int
        Bytes of the receive FIFO, a power of two from 16 to 16384 (default 512: one DP16KD).
    frame_timeout : int
        Cycles without a byte that end a started frame (default 2 ** 20, 6.7 ms at 156.25 MHz).
    axi_timeout : int
        Cycles a NIC window access may take (default 2 ** 16, 0.42 ms at 156.25 MHz).

    Members
    -------
    i : In(stream.Signature(8))
        Command bytes.
    o : Out(stream.Signature(8))
        Response bytes.
    m_axi_* : AXI4 manager port
        Flat ports (:func:`rtl.board.axi.flat_members`), ID 0 on every burst.
    mem_req : Out(stream.Signature(mem_request(log2(mem_size / 8))))
    mem_rsp : In(stream.Signature(64))

    Raises
    ------
    TypeError, ValueError
        For parameters outside the ranges above.
    """

    def __init__(self, *, mem_size=64 * 1024, id_bits=4, addr_bits=52, rx_depth=512, frame_timeout=1 << 20,
                 axi_timeout=1 << 16):
        self.mem_size = check_pow2("mem_size", mem_size, 64, 1 << 24)
        self.id_bits = check_int("id_bits", id_bits, 1, 16)
        self.addr_bits = check_int("addr_bits", addr_bits, 12, 64)
        self.rx_depth = check_pow2("rx_depth", rx_depth, 16, 1 << 14)
        self.frame_timeout = check_int("frame_timeout", frame_timeout, 16)
        self.axi_timeout = check_int("axi_timeout", axi_timeout, 16)
        mem_word_bits = (mem_size // 8 - 1).bit_length()
        super().__init__({
            "i": In(stream.Signature(8)),
            "o": Out(stream.Signature(8)),
            **flat_members("m_axi", AxiSignature(id_bits=id_bits, addr_bits=addr_bits), manager=True),
            "mem_req": Out(stream.Signature(mem_request(mem_word_bits))),
            "mem_rsp": In(stream.Signature(MEM_DATA)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.rx_fifo = rx_fifo = BlockRamFIFO(width=8, depth=self.rx_depth)
        m.submodules.deframer = deframer = BridgeDeframer(frame_timeout=self.frame_timeout)
        m.submodules.executor = executor = BridgeExecutor(mem_size=self.mem_size, addr_bits=self.addr_bits,
                                                          axi_timeout=self.axi_timeout)
        m.submodules.manager = manager = AxiBurstManager(id_bits=self.id_bits, addr_bits=self.addr_bits)
        m.submodules.enframer = enframer = BridgeEnframer()

        m.d.comb += [rx_fifo.w_data.eq(self.i.payload), rx_fifo.w_en.eq(self.i.valid), self.i.ready.eq(rx_fifo.w_rdy),
                     deframer.i.payload.eq(rx_fifo.r_data), deframer.i.valid.eq(rx_fifo.r_rdy),
                     rx_fifo.r_en.eq(deframer.i.ready)]
        wiring.connect(m, deframer.cmd, executor.cmd)
        wiring.connect(m, executor.rsp, enframer.rsp)
        wiring.connect(m, enframer.o, wiring.flipped(self.o))
        wiring.connect(m, executor.mem_req, wiring.flipped(self.mem_req))
        wiring.connect(m, wiring.flipped(self.mem_rsp), executor.mem_rsp)
        wiring.connect(m, executor.nic_req, manager.req)
        wiring.connect(m, executor.nic_wdata, manager.wdata)
        wiring.connect(m, manager.rdata, executor.nic_rdata)
        wiring.connect(m, manager.done, executor.nic_done)
        m.d.comb += [manager.abort.eq(executor.nic_abort), executor.nic_busy.eq(manager.busy)]
        connect_flat(m, self, "m_axi", manager.axi, manager=True)

        # the word buffer: distributed RAM, one command's words.  The deframer writes it only while
        # no command is open, the executor only while one is (the deframer waits for cmd.ready), so the
        # two writers never meet; two read ports (executor, enframer) cost a second LUT RAM copy
        # (18 DPR16X4) and no multiplexer.
        m.submodules.buffer = buf = Memory(shape=BridgeWord, depth=MAX_WORDS, init=[])
        wr = buf.write_port()
        exe_rd, enf_rd = buf.read_port(domain="comb"), buf.read_port(domain="comb")
        with m.If(deframer.buf_en):
            m.d.comb += [wr.en.eq(1), wr.addr.eq(deframer.buf_addr), wr.data.eq(deframer.buf_data)]
        with m.Else():
            m.d.comb += [wr.en.eq(executor.buf_wr_en), wr.addr.eq(executor.buf_wr_addr),
                         wr.data.data.eq(executor.buf_wr_data)]
        m.d.comb += [exe_rd.addr.eq(executor.buf_rd_addr), executor.buf_rd_data.eq(exe_rd.data),
                     enf_rd.addr.eq(enframer.buf_addr), enframer.buf_data.eq(enf_rd.data.data)]
        return m
