"""The phit interface between a link port and its PHY (dissertation ch. 7.3: 16+2-bit phits), shared
by ``rtl/link`` (which makes and takes phits), ``rtl/phy`` (which carries them over a SerDes line) and
the composing packages that wire the two (``docs/link.md``, ``docs/phy.md``)."""

from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["PhitCtl", "PhySignature"]


class PhitCtl(enum.Enum, shape=2):
    """The two control bits of a phit (the "+2" of the 16+2-bit phit, two K flags of 8b/10b)."""
    IDLE = 0    # no flit; data ignored
    SOF = 1     # first phit of a flit (first header phit)
    BODY = 2    # further header phits and beat phits
    EOF = 3     # last phit of a flit: the CRC


class PhySignature(wiring.Signature):
    """One link port's side toward the PHY (SERDES): a phit and its two control bits each way.

    Members
    -------
    tx_phit : Out(phit_bits)
    tx_ctl : Out(PhitCtl)
    rx_phit : In(phit_bits)
    rx_ctl : In(PhitCtl)
    """

    def __init__(self, phit_bits):
        self._bits = phit_bits
        super().__init__({"tx_phit": Out(phit_bits), "tx_ctl": Out(PhitCtl),
                          "rx_phit": In(phit_bits), "rx_ctl": In(PhitCtl)})

    def __eq__(self, other):
        return type(other) is PhySignature and other._bits == self._bits

    def __hash__(self):
        return hash((PhySignature, self._bits))

    def __repr__(self):
        return f"PhySignature({self._bits})"
