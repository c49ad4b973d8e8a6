"""An ECP5 PLL (``EHXPLLL``) making one clock from the board's oscillator, with the divider search of
Project Trellis' ``ecppll`` (the same limits and the same choice: the smallest output error, then the
VCO nearest 600 MHz).  ``make bitstream`` clocks the NIC core with it (``docs/board.md``)."""

from amaranth.hdl import Instance, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Ecp5Pll", "pll_dividers"]

PFD_MIN, PFD_MAX = 3.125, 400.0     # MHz, phase detector input
VCO_MIN, VCO_MAX = 400.0, 800.0     # MHz


def pll_dividers(in_mhz, out_mhz):
    """``(clki_div, clkfb_div, clkop_div, actual_mhz)`` for ``out_mhz`` from ``in_mhz``: feedback from
    CLKOP, so out = in / clki_div * clkfb_div and VCO = out * clkop_div.

    Raises
    ------
    ValueError
        If no divider setting reaches the output within 1 %.
    """
    best = None
    for clki_div in range(1, 129):
        pfd = in_mhz / clki_div
        if not PFD_MIN <= pfd <= PFD_MAX:
            continue
        for clkfb_div in range(1, 81):
            out = pfd * clkfb_div
            for clkop_div in range(1, 129):
                vco = out * clkop_div
                if not VCO_MIN <= vco <= VCO_MAX:
                    continue
                key = (abs(out - out_mhz), abs(vco - 600))
                if best is None or key < best[0]:
                    best = (key, (clki_div, clkfb_div, clkop_div, out))
    if best is None or best[0][0] > out_mhz / 100:
        raise ValueError(f"no PLL setting makes {out_mhz} MHz from {in_mhz} MHz within 1 %")
    return best[1]


class Ecp5Pll(wiring.Component):
    """Parameters
    ----------
    in_mhz, out_mhz : float

    Members
    -------
    clk_in : In(1)
    clk_out : Out(1)
    locked : Out(1)
    """

    clk_in: In(1)
    clk_out: Out(1)
    locked: Out(1)

    def __init__(self, *, in_mhz, out_mhz):
        self.in_mhz, self.out_mhz = in_mhz, out_mhz
        self.clki_div, self.clkfb_div, self.clkop_div, self.actual_mhz = pll_dividers(in_mhz, out_mhz)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        clkintfb = Signal()
        m.submodules.pll = Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI=str(self.in_mhz), a_FREQUENCY_PIN_CLKOP=f"{self.actual_mhz:g}",
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREF_SEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_OUTDIVIDER_MUXB="DIVB",
            p_OUTDIVIDER_MUXC="DIVC", p_OUTDIVIDER_MUXD="DIVD",
            p_CLKI_DIV=self.clki_div, p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=self.clkop_div,
            p_CLKOP_CPHASE=(self.clkop_div - 1) // 2, p_CLKOP_FPHASE=0,
            p_FEEDBK_PATH="CLKOP", p_CLKFB_DIV=self.clkfb_div,
            i_RST=0, i_STDBY=0, i_CLKI=self.clk_in, o_CLKOP=self.clk_out, i_CLKFB=self.clk_out,
            o_CLKINTFB=clkintfb, i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1,
            i_PHASELOADREG=1, i_PLLWAKESYNC=0, i_ENCLKOP=0, o_LOCK=self.locked)
        return m
