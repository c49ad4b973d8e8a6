"""The fabric side of one SerDes channel with hard 8b/10b: the interface between the PHY's fabric
logic (:class:`~rtl.phy.SerdesPhy`) and either the ECP5 DCU (:class:`~rtl.phy.Ecp5Dcu`) or its
behavioural model in simulation (``sim/tops/dcu_model.py``).

One line word is two 8b/10b symbols, 16 bits of data and a K flag per byte (the DCU's 16-bit "x2"
fabric interface).  Byte 0 (bits 7:0, ``k`` bit 0) is the earlier symbol on the line.  At 2.0 Gb/s a
word is 10 ns: ``tx_clk`` and ``rx_clk`` run at 100 MHz.
"""

from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.phit import PhitCtl

__all__ = ["Phit", "LineWord", "RxWord", "SerdesLaneSignature", "K28_5", "K27_7", "K29_7", "K28_0",
           "D16_2"]

# 8b/10b characters (as the 8-bit value with the K flag set, except D16.2)
K28_5 = 0xBC    # comma: word alignment and the idle word's first byte
K27_7 = 0xFB    # start of a flit
K29_7 = 0xFD    # end of a flit
K28_0 = 0x1C    # skip: filler inside a flit while its next phit is not there yet
D16_2 = 0x50    # the idle word's second byte (as in 1000BASE-X /I2/)

class Phit(data.Struct):
    """A link port's 16+2-bit phit (``docs/link.md``): 16 data bits and the control bits."""
    data: 16
    ctl: PhitCtl


class LineWord(data.Struct):
    """A word toward the line: two bytes, each with its K flag (byte 0 first on the line)."""
    data: 16
    k: 2

class RxWord(data.Struct):
    """A word from the line, as the PCS decoded it: per byte a K flag, an 8b/10b code violation and a
    running-disparity error (either error makes the byte meaningless)."""
    data: 16
    k: 2
    code_err: 2
    disp_err: 2

class SerdesLaneSignature(wiring.Signature):
    """One channel as the SerDes presents it (directions as seen from the SerDes).

    Members
    -------
    tx_clk : Out(1)
        Transmit word clock (the TX PLL's line rate / 20); ``tx`` is sampled on its rising edge.
    rx_clk : Out(1)
        Receive word clock recovered from the line; ``rx`` changes on its rising edge.
    tx : In(LineWord)
        The word to send.
    rx : Out(RxWord)
        The word received (meaningful while the receive path is locked and its PCS out of reset).
    tx_pll_lock : Out(1)
        The transmit PLL is locked (asynchronous).
    rx_cdr_lock : Out(1)
        The receiver's clock and data recovery is locked to the line (asynchronous).
    rx_los : Out(1)
        Loss of signal: no valid line signal at the receiver (asynchronous).
    tx_pll_rst, tx_pcs_rst, rx_serdes_rst, rx_pcs_rst : In(1)
        Resets, active high: transmit PLL, transmit PCS, receive SerDes (CDR), receive PCS.
    tx_polarity, rx_polarity : In(1)
        Invert the line's polarity in each direction.
    loopback : In(1)
        Internal serial loopback: the channel receives what it transmits, not the line.
    """

    def __init__(self):
        super().__init__({
            "tx_clk": Out(1), "rx_clk": Out(1),
            "tx": In(LineWord), "rx": Out(RxWord),
            "tx_pll_lock": Out(1), "rx_cdr_lock": Out(1), "rx_los": Out(1),
            "tx_pll_rst": In(1), "tx_pcs_rst": In(1), "rx_serdes_rst": In(1), "rx_pcs_rst": In(1),
            "tx_polarity": In(1), "rx_polarity": In(1), "loopback": In(1),
        })

    def __eq__(self, other):
        return type(other) is SerdesLaneSignature

    def __hash__(self):
        return hash(SerdesLaneSignature)

    def __repr__(self):
        return "SerdesLaneSignature()"
