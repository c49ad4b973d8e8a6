"""The UART bridge's command deframer: bytes to parsed commands and the words of a write."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

from .formats import MAX_WORDS, BridgeCommand, BridgeOp, BridgeRequest, BridgeStatus, BridgeWord, crc8_next

__all__ = ["BridgeDeframer"]

HEADER_BYTES = BridgeCommand.as_shape().size // 8
WORD_BYTES = BridgeWord.as_shape().size // 8


class BridgeDeframer(wiring.Component):
    """Parses command frames (``rtl.board.formats``) from a byte stream.

    A byte that starts a frame must be a :class:`BridgeOp`; any other byte becomes at once a request
    with status ``BAD_CMD`` (the byte as ``op``, the rest zero), and the next byte starts a frame
    again, so garbage costs one answer per byte and never holds the parser.  A frame's length follows
    from its header alone (every ``words_m1`` is valid): the 10 header bytes, for a WRITE ``words_m1 + 1``
    words of 9 bytes, which go into the word buffer (``buf_*``, entry ``k`` for word ``k``) as they
    complete, and the CRC byte.  The request then carries the header and status OK, or ``BAD_CRC`` if
    the CRC over the frame is not 0.  If no byte arrives for ``frame_timeout`` cycles inside a frame,
    the request carries what header bytes arrived (missing ones zero) and ``BAD_FRAME``, and the next
    byte starts a frame.

    The request stays offered on ``cmd`` until the executor has finished with it and its response
    (the executor raises ``ready`` only then), and no byte is taken meanwhile: the word buffer belongs
    to one command at a time, and the bytes of the next frame wait in the bridge's receive FIFO.

    Parameters
    ----------
    frame_timeout : int
        Cycles without a byte after which a started frame is abandoned, at least 16 (choose well above
        one byte time, 10 x the UART divisor, and above the gaps the PC's USB transfers leave).

    Members
    -------
    i : In(stream.Signature(8))
    cmd : Out(stream.Signature(BridgeRequest))
    buf_en : Out(1)
        Write ``buf_data`` into buffer entry ``buf_addr`` in this cycle.
    buf_addr : Out(3)
    buf_data : Out(BridgeWord)
    """

    i: In(stream.Signature(8))
    cmd: Out(stream.Signature(BridgeRequest))
    buf_en: Out(1)
    buf_addr: Out(range(MAX_WORDS))
    buf_data: Out(BridgeWord)

    def __init__(self, *, frame_timeout):
        self.frame_timeout = check_int("frame_timeout", frame_timeout, 16)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        byte = self.i.payload
        raw = Signal(BridgeCommand.as_shape().size)         # the header, written byte by byte
        hdr = data.View(BridgeCommand, raw)
        status = Signal(BridgeStatus)
        count = Signal(range(HEADER_BYTES))                 # header bytes, then bytes of a word
        word = Signal(range(MAX_WORDS))
        shift = Signal(BridgeWord.as_shape().size)
        crc = Signal(8)
        timer = Signal(range(self.frame_timeout + 1))
        crc_next = crc8_next(crc, byte)
        taken = self.i.valid & self.i.ready
        known = (byte == BridgeOp.NOP.value) | (byte == BridgeOp.READ.value) | (byte == BridgeOp.WRITE.value)
        word_in = Cat(shift[8:], byte)                      # bytes arrive least significant first

        m.d.comb += [self.cmd.payload.cmd.eq(hdr), self.cmd.payload.status.eq(status),
                     self.buf_addr.eq(word), self.buf_data.eq(word_in)]
        with m.If(taken):
            m.d.sync += [crc.eq(crc_next), timer.eq(0)]
        with m.Elif(timer != self.frame_timeout):
            m.d.sync += timer.eq(timer + 1)
        expired = ~self.i.valid & (timer == self.frame_timeout)

        with m.FSM():
            with m.State("OP"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid):
                    m.d.sync += [raw.eq(byte), count.eq(1), word.eq(0), crc.eq(crc8_next(0, byte))]
                    with m.If(known):
                        m.next = "HEADER"
                    with m.Else():
                        m.d.sync += status.eq(BridgeStatus.BAD_CMD)
                        m.next = "EMIT"
            with m.State("HEADER"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(taken):
                    m.d.sync += [raw.word_select(count, 8).eq(byte), count.eq(count + 1)]
                    with m.If(count == HEADER_BYTES - 1):
                        m.d.sync += count.eq(0)
                        with m.If(hdr.op == BridgeOp.WRITE):
                            m.next = "DATA"
                        with m.Else():
                            m.next = "CRC"
                with m.Elif(expired):
                    m.next = "ABANDON"
            with m.State("DATA"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(taken):
                    m.d.sync += [shift.eq(word_in), count.eq(count + 1)]
                    with m.If(count == WORD_BYTES - 1):
                        m.d.comb += self.buf_en.eq(1)
                        m.d.sync += [count.eq(0), word.eq(word + 1)]
                        with m.If(word == hdr.ctl.words_m1):
                            m.next = "CRC"
                with m.Elif(expired):
                    m.next = "ABANDON"
            with m.State("CRC"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(taken):
                    m.d.sync += status.eq(BridgeStatus.OK)
                    with m.If(crc_next != 0):
                        m.d.sync += status.eq(BridgeStatus.BAD_CRC)
                    m.next = "EMIT"
                with m.Elif(expired):
                    m.next = "ABANDON"
            with m.State("ABANDON"):
                m.d.sync += status.eq(BridgeStatus.BAD_FRAME)
                m.next = "EMIT"
            with m.State("EMIT"):
                m.d.comb += self.cmd.valid.eq(1)
                with m.If(self.cmd.ready):
                    m.next = "OP"
        return m
