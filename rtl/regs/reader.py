"""The register file's read engine: one READ at a time, its words fetched through two stages (ch. 7.2)."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import TAG_BITS, HtaxStatus

from .slots import FetchSignature, ReadRequestSignature, ResponseSignature

__all__ = ["RegReader"]


class RegReader(wiring.Component):
    """Holds the READ being answered and fetches its words (docs/regs.md, "HTAX side").

    A request is taken only while no read is in progress (:class:`~rtl.regs.rx.RegRx` holds the
    non-posted VC while ``response.busy``).  Stage A is a word whose synchronous sources (RAM,
    external arrays) are being read at ``fetch.addr``; stage B its data, registered (read side effects
    happen as a word enters B: a word in B is always sent).  The read ends when its header was sent
    with a status other than ``OK``, or its last data word was sent.

    Parameters
    ----------
    flops : list of :class:`~rtl.regs.slots.FlopSlot`
    wbits : int
        Word-address bits of the window.

    Members
    -------
    request : In(ReadRequestSignature(...))
    fetch : Out(FetchSignature(...))
        To the flip-flop registers and the arrays.
    flop_data : In(64)
        The flip-flop registers' read data for ``fetch.fsel`` (combinational).
    array_data : In(64)
        The arrays' read data of the word in stage B.
    a_wait : In(1)
        The word in stage A may not move to stage B in this cycle (a counter bank's word whose value is
        not there yet).
    response : Out(ResponseSignature(...))
        To the transmitter.
    """

    def __init__(self, *, flops, wbits):
        self._flops = flops
        super().__init__({
            "request": In(ReadRequestSignature(tag_bits=TAG_BITS)),
            "fetch": Out(FetchSignature(flops=len(flops), wbits=wbits)),
            "flop_data": In(64), "array_data": In(64), "a_wait": In(1),
            "response": Out(ResponseSignature(tag_bits=TAG_BITS)),
        })
        self._win_bits = wbits + 3

    def elaborate(self, platform):
        m = Module()
        req, f, rsp = self.request, self.fetch, self.response
        rd_left = Signal(4)         # words still to fetch
        rd_fetch = Signal()         # rd_left != 0 for an OK read, as a flag (on the fetch-enable path)
        a_valid = Signal()
        b_valid = rsp.valid         # stage B: the word's data, registered off the RAM outputs
        b_flop = f.captured

        with m.If(req.valid):
            m.d.sync += [
                rsp.busy.eq(1), rsp.header.eq(1), rsp.src.eq(req.src), rsp.tag.eq(req.tag),
                rsp.addr.eq(req.addr), rsp.length.eq(req.length), rsp.be.eq(req.be), rsp.status.eq(req.status),
                f.addr.eq(req.addr[3:self._win_bits]),
                rd_left.eq(req.length), rsp.beats.eq(req.length),
                rd_fetch.eq((req.status == HtaxStatus.OK) & (req.length != 0)),
            ]

        m.d.comb += f.load.eq(a_valid & ~self.a_wait & (~b_valid | rsp.load_data))
        with m.If(f.load):
            m.d.sync += [b_valid.eq(1), b_flop.eq(self.flop_data)]
        with m.Elif(rsp.load_data):
            m.d.sync += b_valid.eq(0)
        a_take = f.load
        m.d.comb += f.fill.eq(rd_fetch & (~a_valid | a_take))
        with m.If(f.fill):
            # the one-hot select of the word's flip-flop register is decoded as the word enters stage A
            m.d.sync += [a_valid.eq(1), f.addr.eq(f.addr + 1), rd_left.eq(rd_left - 1), rd_fetch.eq(rd_left != 1),
                         f.fsel.eq(Cat(*(f.addr == fl.word for fl in self._flops)))]
        with m.Elif(a_take):
            m.d.sync += a_valid.eq(0)
        m.d.comb += rsp.data.eq(b_flop | self.array_data)

        with m.If(rsp.load_header):
            m.d.sync += rsp.header.eq(0)
            with m.If(rsp.status != HtaxStatus.OK):
                m.d.sync += rsp.busy.eq(0)
        with m.If(rsp.load_data):
            m.d.sync += rsp.beats.eq(rsp.beats - 1)
            with m.If(rsp.beats == 1):
                m.d.sync += rsp.busy.eq(0)
        return m
