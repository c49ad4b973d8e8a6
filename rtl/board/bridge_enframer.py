"""The UART bridge's response enframer: a response and its words to bytes."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .formats import MAX_WORDS, MEM_DATA, BridgeOp, BridgeResponse, BridgeStatus, crc8_next

__all__ = ["BridgeEnframer"]

RESPONSE_BYTES = BridgeResponse.as_shape().size // 8
WORD_BYTES = MEM_DATA.width // 8


class BridgeEnframer(wiring.Component):
    """Sends a response frame (``rtl.board.formats``): the :class:`BridgeResponse`, for a READ with
    status OK its ``words_m1 + 1`` words from the word buffer, then the CRC-8 of the bytes before it.

    ``rsp.ready`` is raised in the cycle the CRC byte is taken, not before: the response and the
    buffer stay the executor's until the whole frame has left (the executor then releases the command).

    Members
    -------
    rsp : In(stream.Signature(BridgeResponse))
    buf_addr : Out(3)
    buf_data : In(64)
        The word buffer's entry ``buf_addr`` (an asynchronous read port).
    o : Out(stream.Signature(8))
    """

    rsp: In(stream.Signature(BridgeResponse))
    buf_addr: Out(range(MAX_WORDS))
    buf_data: In(MEM_DATA)
    o: Out(stream.Signature(8))

    def elaborate(self, platform):
        m = Module()
        r = self.rsp.payload
        count = Signal(range(max(RESPONSE_BYTES, WORD_BYTES)))     # bytes of the header, then of a word
        word = Signal(range(MAX_WORDS))
        crc = Signal(8)
        moves = self.o.valid & self.o.ready
        with m.If(moves):
            m.d.sync += [crc.eq(crc8_next(crc, self.o.payload)), count.eq(count + 1)]
        m.d.comb += self.buf_addr.eq(word)
        with m.FSM():
            with m.State("HEADER"):
                m.d.comb += [self.o.valid.eq(self.rsp.valid),
                             self.o.payload.eq(r.as_value().word_select(count, 8))]
                with m.If(moves & (count == RESPONSE_BYTES - 1)):
                    m.d.sync += [count.eq(0), word.eq(0)]
                    with m.If((r.op == BridgeOp.READ) & (r.status == BridgeStatus.OK)):
                        m.next = "DATA"
                    with m.Else():
                        m.next = "CRC"
            with m.State("DATA"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(self.buf_data.word_select(count, 8))]
                with m.If(moves & (count == WORD_BYTES - 1)):
                    m.d.sync += [count.eq(0), word.eq(word + 1)]
                    with m.If(word == r.ctl.words_m1):
                        m.next = "CRC"
            with m.State("CRC"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(crc)]
                with m.If(self.o.ready):
                    m.d.comb += self.rsp.ready.eq(1)
                    m.d.sync += [count.eq(0), crc.eq(0)]
                    m.next = "HEADER"
        return m
