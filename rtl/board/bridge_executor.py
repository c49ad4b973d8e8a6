"""The UART bridge's executor: a parsed command performed on the NIC window or the host memory."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiResp
from rtl.common.params import check_int, check_pow2

from .formats import (
    MAX_WORDS,
    MEM_DATA,
    BridgeOp,
    BridgeRequest,
    BridgeResponse,
    BridgeSpace,
    BridgeStatus,
    BridgeWord,
    burst_request,
    mem_request,
)

__all__ = ["BridgeExecutor", "words_fit"]


def words_fit(addr, words_m1, word_bits):
    """Words ``addr .. addr + words_m1`` all lie below ``2 ** word_bits``."""
    return (addr[word_bits:] == 0) & ((addr[:word_bits] + words_m1)[word_bits:] == 0)


class BridgeExecutor(wiring.Component):
    """Performs one parsed command at a time and hands its response to the enframer.

    A request whose status is not OK (``BAD_CMD``, ``BAD_CRC``, ``BAD_FRAME``) and a NOP are answered
    as they are.  Otherwise the space decides (``BAD_SPACE`` for an unknown one) and the words must lie
    inside it (``RANGE``: below ``mem_size`` for MEM; inside the ``addr_bits`` address space for NIC):

    * **MEM**: one word-port request per word, the next after the previous one's response; a READ
      stores each word in the buffer.
    * **NIC**: one burst through the AXI manager (``nic_*``), the write's words from the buffer, the
      read's words into it; the status is the burst's AXI response.  The burst must end within
      ``axi_timeout`` cycles of the command's start, waiting for an earlier, timed-out burst included;
      otherwise the status is ``TIMEOUT`` and the manager is told to give the burst up (``nic_abort``).

    The response goes out on ``rsp``; when the enframer has sent it (it raises ``rsp.ready`` only
    then), the executor takes the request (``cmd.ready``), which lets the deframer go on.  Commands are
    therefore performed strictly in order, and a write's response leaves after its B: a READ that
    follows a WRITE sees it.

    Parameters
    ----------
    mem_size : int
        Bytes of the host memory (a power of two, as ``HostMemory``'s ``size``).
    addr_bits : int
        Address width of the NIC window (52).
    axi_timeout : int
        Cycles a NIC command may take, at least 16.

    Members
    -------
    cmd : In(stream.Signature(BridgeRequest))
    rsp : Out(stream.Signature(BridgeResponse))
    buf_rd_addr : Out(3)
    buf_rd_data : In(BridgeWord)
        The word buffer's entry ``buf_rd_addr`` (an asynchronous read port).
    buf_wr_en, buf_wr_addr, buf_wr_data : Out(1), Out(3), Out(64)
        Write ``buf_wr_data`` into the data of entry ``buf_wr_addr``.
    mem_req : Out(stream.Signature(mem_request(log2(mem_size / 8))))
    mem_rsp : In(stream.Signature(64))
    nic_req : Out(stream.Signature(burst_request(addr_bits - 3)))
    nic_wdata : Out(stream.Signature(BridgeWord))
    nic_rdata : In(stream.Signature(64))
    nic_done : In(stream.Signature(AxiResp))
    nic_abort : Out(1)
    nic_busy : In(1)
    """

    def __init__(self, *, mem_size, addr_bits=52, axi_timeout):
        self.mem_size = check_pow2("mem_size", mem_size, 64, 1 << 24)
        self.addr_bits = check_int("addr_bits", addr_bits, 12, 64)
        self.axi_timeout = check_int("axi_timeout", axi_timeout, 16)
        self.mem_word_bits = (mem_size // 8 - 1).bit_length()
        super().__init__({
            "cmd": In(stream.Signature(BridgeRequest)),
            "rsp": Out(stream.Signature(BridgeResponse)),
            "buf_rd_addr": Out(range(MAX_WORDS)),
            "buf_rd_data": In(BridgeWord),
            "buf_wr_en": Out(1),
            "buf_wr_addr": Out(range(MAX_WORDS)),
            "buf_wr_data": Out(MEM_DATA),
            "mem_req": Out(stream.Signature(mem_request(self.mem_word_bits))),
            "mem_rsp": In(stream.Signature(MEM_DATA)),
            "nic_req": Out(stream.Signature(burst_request(addr_bits - 3))),
            "nic_wdata": Out(stream.Signature(BridgeWord)),
            "nic_rdata": In(stream.Signature(MEM_DATA)),
            "nic_done": In(stream.Signature(AxiResp)),
            "nic_abort": Out(1),
            "nic_busy": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self.cmd.payload.cmd
        write = c.op == BridgeOp.WRITE
        status = Signal(BridgeStatus)
        idx = Signal(range(MAX_WORDS + 1))       # the word being moved
        timer = Signal(range(self.axi_timeout + 1))
        expired = timer == self.axi_timeout
        m.d.sync += timer.eq(timer + ~expired)

        m.d.comb += [
            self.rsp.payload.op.eq(c.op), self.rsp.payload.tag.eq(c.tag), self.rsp.payload.ctl.eq(c.ctl),
            self.rsp.payload.status.eq(status),
            self.buf_rd_addr.eq(idx), self.buf_wr_addr.eq(idx),
            self.mem_req.payload.write.eq(write), self.mem_req.payload.addr.eq(c.addr[:self.mem_word_bits] + idx),
            self.mem_req.payload.data.eq(self.buf_rd_data.data), self.mem_req.payload.strb.eq(self.buf_rd_data.strb),
            self.nic_req.payload.write.eq(write), self.nic_req.payload.addr.eq(c.addr),
            self.nic_req.payload.words_m1.eq(c.ctl.words_m1),
            self.nic_wdata.payload.eq(self.buf_rd_data),
        ]
        with m.FSM():
            with m.State("IDLE"):
                m.d.sync += [idx.eq(0), timer.eq(0)]
                with m.If(self.cmd.valid):
                    m.next = "RESPOND"
                    with m.If(self.cmd.payload.status != BridgeStatus.OK):
                        m.d.sync += status.eq(self.cmd.payload.status)
                    with m.Elif(c.op == BridgeOp.NOP):
                        m.d.sync += status.eq(BridgeStatus.OK)
                    with m.Elif(c.ctl.space == BridgeSpace.MEM):
                        m.d.sync += status.eq(BridgeStatus.RANGE)
                        with m.If(words_fit(c.addr, c.ctl.words_m1, self.mem_word_bits)):
                            m.d.sync += status.eq(BridgeStatus.OK)
                            m.next = "MEM_REQ"
                    with m.Elif(c.ctl.space == BridgeSpace.NIC):
                        m.d.sync += status.eq(BridgeStatus.RANGE)
                        with m.If(words_fit(c.addr, c.ctl.words_m1, self.addr_bits - 3)):
                            m.next = "NIC_START"
                    with m.Else():
                        m.d.sync += status.eq(BridgeStatus.BAD_SPACE)

            with m.State("MEM_REQ"):
                m.d.comb += self.mem_req.valid.eq(1)
                with m.If(self.mem_req.ready):
                    m.next = "MEM_RSP"
            with m.State("MEM_RSP"):
                m.d.comb += [self.mem_rsp.ready.eq(1), self.buf_wr_data.eq(self.mem_rsp.payload)]
                with m.If(self.mem_rsp.valid):
                    m.d.comb += self.buf_wr_en.eq(~write)
                    m.d.sync += idx.eq(idx + 1)
                    m.next = "MEM_REQ"
                    with m.If(idx == c.ctl.words_m1):
                        m.next = "RESPOND"

            with m.State("NIC_START"):              # the manager may still finish a timed-out burst
                m.d.comb += self.nic_req.valid.eq(~self.nic_busy)
                with m.If(~self.nic_busy):
                    m.next = "NIC_RUN"
                with m.Elif(expired):
                    m.d.sync += status.eq(BridgeStatus.TIMEOUT)
                    m.next = "RESPOND"
            with m.State("NIC_RUN"):
                m.d.comb += [self.nic_wdata.valid.eq(write & (idx <= c.ctl.words_m1)),
                             self.nic_rdata.ready.eq(1), self.buf_wr_data.eq(self.nic_rdata.payload),
                             self.nic_done.ready.eq(1)]
                with m.If(self.nic_wdata.valid & self.nic_wdata.ready):
                    m.d.sync += idx.eq(idx + 1)
                with m.If(self.nic_rdata.valid):
                    m.d.comb += self.buf_wr_en.eq(idx < MAX_WORDS)
                    m.d.sync += idx.eq(idx + 1)
                with m.If(self.nic_done.valid):
                    m.d.sync += status.eq(self.nic_done.payload)
                    m.next = "RESPOND"
                with m.Elif(expired):
                    m.d.comb += self.nic_abort.eq(1)
                    m.d.sync += status.eq(BridgeStatus.TIMEOUT)
                    m.next = "RESPOND"

            with m.State("RESPOND"):
                m.d.comb += self.rsp.valid.eq(1)
                with m.If(self.rsp.ready):
                    m.d.comb += self.cmd.ready.eq(1)
                    m.next = "IDLE"
        return m
