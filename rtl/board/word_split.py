"""One word port (the UART bridge's MEM space) to two: the host memory below ``2**low_bits`` words,
a register block above (``docs/board.md``)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

from .formats import MEM_DATA, mem_request

__all__ = ["WordSplit"]


class WordSplit(wiring.Component):
    """A request goes to ``low`` (word addresses below ``2**low_bits``) or to ``high`` (the address
    less ``2**low_bits``); one request at a time, so the responses come back in order.

    Parameters
    ----------
    word_bits : int
        Address width of ``i`` (words).
    low_bits, high_bits : int
        Address widths of ``low`` and ``high``; ``high_bits <= low_bits < word_bits``.  Addresses
        at or above ``2**low_bits + 2**high_bits`` go to ``high`` with their upper bits dropped: the
        bridge's range check (its ``mem_size``) keeps them out.

    Members
    -------
    i_req : In(stream.Signature(mem_request(word_bits)))
    i_rsp : Out(stream.Signature(MEM_DATA))
    low_req, high_req : Out(stream.Signature(mem_request(low_bits / high_bits)))
    low_rsp, high_rsp : In(stream.Signature(MEM_DATA))
    """

    def __init__(self, *, word_bits, low_bits, high_bits):
        self._bits = check_int("word_bits", word_bits, 2, 61)
        self._low = check_int("low_bits", low_bits, 1, word_bits - 1)
        self._high = check_int("high_bits", high_bits, 1, low_bits)
        super().__init__({
            "i_req": In(stream.Signature(mem_request(word_bits))), "i_rsp": Out(stream.Signature(MEM_DATA)),
            "low_req": Out(stream.Signature(mem_request(low_bits))), "low_rsp": In(stream.Signature(MEM_DATA)),
            "high_req": Out(stream.Signature(mem_request(high_bits))),
            "high_rsp": In(stream.Signature(MEM_DATA))})

    def elaborate(self, platform):
        m = Module()
        req = self.i_req.payload
        high = req.addr[self._low:] != 0
        busy, was_high = Signal(), Signal()
        for port, sel in ((self.low_req, ~high), (self.high_req, high)):
            m.d.comb += [port.payload.write.eq(req.write), port.payload.data.eq(req.data),
                         port.payload.strb.eq(req.strb), port.payload.addr.eq(req.addr),
                         port.valid.eq(self.i_req.valid & ~busy & sel)]
        m.d.comb += self.i_req.ready.eq(~busy & ((high & self.high_req.ready) | (~high & self.low_req.ready)))
        with m.If(self.i_req.valid & self.i_req.ready):
            m.d.sync += [busy.eq(1), was_high.eq(high)]
        rsp = Signal.like(self.i_rsp.payload)
        with m.If(was_high):
            m.d.comb += [self.i_rsp.valid.eq(busy & self.high_rsp.valid), rsp.eq(self.high_rsp.payload),
                         self.high_rsp.ready.eq(busy & self.i_rsp.ready)]
        with m.Else():
            m.d.comb += [self.i_rsp.valid.eq(busy & self.low_rsp.valid), rsp.eq(self.low_rsp.payload),
                         self.low_rsp.ready.eq(busy & self.i_rsp.ready)]
        m.d.comb += self.i_rsp.payload.eq(rsp)
        with m.If(self.i_rsp.valid & self.i_rsp.ready):
            m.d.sync += busy.eq(0)
        return m
