"""Where each register sits in the window, and the signatures the register file's blocks share (ch. 7.2).

:class:`~rtl.regs.regfile.RegisterFile` unrolls its description into one :class:`FlopSlot` per
flip-flop register (array elements included) and one :class:`ArraySlot` per RAM or external array;
its blocks decode word addresses against them.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import ADDR_BITS, PORT_BITS, HtaxStatus
from rtl.common.regspec import Reg

__all__ = ["FlopSlot", "ArraySlot", "expand_be", "WriteSignature", "ReadRequestSignature", "FetchSignature",
           "ResponseSignature"]


@dataclass
class FlopSlot:
    """A flip-flop register at word address ``word`` of the window; ``port`` is the register file's
    ``hw`` interface with the register's members, or ``None``."""
    reg: Reg
    word: int
    path: str
    port: object

    @property
    def name(self):
        """``path`` as an identifier, for signal names."""
        return self.path.replace(".", "_").replace("[", "_").replace("]", "")


@dataclass
class ArraySlot:
    """A RAM or external array from word address ``word``: element ``i`` at ``word + (i << shift)``."""
    reg: Reg
    word: int
    path: str
    port: object
    shift: int              # log2(stride / 8)
    idx_bits: int

    def hit(self, w):
        """Amaranth expression: word address ``w`` is an element of this array."""
        top = self.shift + self.idx_bits
        cond = (w >> top) == (self.word >> top)
        if self.shift:
            cond &= w[:self.shift] == 0
        if self.reg.count != 1 << self.idx_bits:
            cond &= self.index(w) < self.reg.count
        return cond

    def index(self, w):
        """Amaranth expression: the element index of word address ``w``."""
        if not self.idx_bits:
            return Const(0, 1)
        return w[self.shift:self.shift + self.idx_bits]

    @property
    def name(self):
        return self.path.replace(".", "_")


def expand_be(be):
    """The 64-bit mask of 8 byte enables."""
    return Cat(*(b.replicate(8) for b in be))


class WriteSignature(wiring.Signature):
    """One written word, registered, on its way into the registers (no handshake: a select bit set is
    a write in this cycle).

    Members
    -------
    fsel : Out(flops)
        One-hot: the flip-flop register written.
    asel : Out(arrays)
        One-hot: the array written.
    addr : Out(wbits)
        The word address (arrays take the element index from it).
    data : Out(64)
    be : Out(8)
        Byte enables.
    unmapped : Out(1)
        The word decodes to no register, or lies outside the window (an event for the counters).
    """

    def __init__(self, *, flops, arrays, wbits):
        super().__init__({"fsel": Out(flops), "asel": Out(arrays), "addr": Out(wbits), "data": Out(64),
                          "be": Out(8), "unmapped": Out(1)})

    def __eq__(self, other):
        return type(other) is WriteSignature and self.members == other.members

    def __repr__(self):
        return (f"WriteSignature(flops={self.members['fsel'].shape.width}, "
                f"arrays={self.members['asel'].shape.width}, wbits={self.members['addr'].shape.width})")


class ReadRequestSignature(wiring.Signature):
    """A READ request header as it arrives (no handshake: ``valid`` for one cycle, never refused).

    Members
    -------
    valid : Out(1)
    src : Out(PORT_BITS)
    tag : Out(tag)
    addr : Out(ADDR_BITS)
        The request's byte address.
    length : Out(4)
        Words requested.
    be : Out(16)
        ``first_be`` and ``last_be``.
    status : Out(HtaxStatus)
        The response's status, decided from the header.
    """

    def __init__(self, *, tag_bits):
        super().__init__({"valid": Out(1), "src": Out(PORT_BITS), "tag": Out(tag_bits), "addr": Out(ADDR_BITS),
                          "length": Out(4), "be": Out(16), "status": Out(HtaxStatus)})

    def __eq__(self, other):
        return type(other) is ReadRequestSignature and self.members == other.members

    def __repr__(self):
        return f"ReadRequestSignature(tag_bits={self.members['tag'].shape.width})"


class FetchSignature(wiring.Signature):
    """The read engine's two-stage fetch, as the registers see it (no handshake).

    Members
    -------
    addr : Out(wbits)
        The word entering stage A (synchronous sources are read at it).
    fill : Out(1)
        A word enters stage A in this cycle.
    load : Out(1)
        The word in stage A moves to stage B: registers capture their read data, read side effects
        (read-to-clear) act one cycle later.
    fsel : Out(flops)
        One-hot: the flip-flop register of the word in stage A.
    captured : Out(64)
        The flip-flop registers' word in stage B, as read (what a read-to-clear removes).
    """

    def __init__(self, *, flops, wbits):
        super().__init__({"addr": Out(wbits), "fill": Out(1), "load": Out(1), "fsel": Out(flops),
                          "captured": Out(64)})

    def __eq__(self, other):
        return type(other) is FetchSignature and self.members == other.members

    def __repr__(self):
        return (f"FetchSignature(flops={self.members['fsel'].shape.width}, "
                f"wbits={self.members['addr'].shape.width})")


class ResponseSignature(wiring.Signature):
    """A read in progress, from the read engine to the transmitter.

    Members
    -------
    busy : Out(1)
        A read is in progress.
    header : Out(1)
        Its response header is still to be sent.
    status, src, tag, addr, length, be : Out(...)
        The response header's fields (``length``: words requested; the header carries 0 unless
        ``status`` is ``OK``).
    beats : Out(4)
        Data beats still to send.
    valid : Out(1)
        ``data`` holds the next data word.
    data : Out(64)
    load_header : In(1)
        The transmitter takes the header in this cycle.
    load_data : In(1)
        It takes ``data`` in this cycle.
    """

    def __init__(self, *, tag_bits):
        super().__init__({
            "busy": Out(1), "header": Out(1), "status": Out(HtaxStatus), "src": Out(PORT_BITS),
            "tag": Out(tag_bits), "addr": Out(ADDR_BITS), "length": Out(4), "be": Out(16), "beats": Out(4),
            "valid": Out(1), "data": Out(64), "load_header": In(1), "load_data": In(1),
        })

    def __eq__(self, other):
        return type(other) is ResponseSignature and self.members == other.members

    def __repr__(self):
        return f"ResponseSignature(tag_bits={self.members['tag'].shape.width})"
