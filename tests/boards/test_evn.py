# amaranth: UnusedElaboratable=no
"""The ECP5-5G Evaluation Board top (boards/ecp5_5g_evn.py): the PLL's dividers, the pins the build
constrains, the design's parameters; under ``-m soak`` the bring-up bitstream (place and route with
every clock met, the DCU at DCU1's site)."""

import pytest
from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform

from boards.ecp5_5g_evn import EvnCore, EvnTop, build
from boards.ecp5_pll import pll_dividers


def test_pll_dividers_match_ecppll():
    """Project Trellis' ecppll gives 12 -> 80 MHz as CLKI_DIV 3, CLKFB_DIV 20, CLKOP_DIV 7 (VCO 560)."""
    assert pll_dividers(12, 80) == (3, 20, 7, 80.0)
    clki, fb, op, out = pll_dividers(12, 100)
    assert out == 100 and 400 <= out * op <= 800 and 12 / clki >= 3.125
    with pytest.raises(ValueError, match=r"^no PLL setting makes 62.5 MHz from 12 MHz within 1 %$"):
        pll_dividers(12, 62.5)


def test_bad_variant():
    with pytest.raises(ValueError, match=r"^variant must be 'nic' or 'bringup', not 'full'$"):
        EvnCore(variant="full")


def test_build_plan_constrains_the_pins():
    """The build's LPF places the UART, the LEDs, the 12 MHz clock and DCU1's reference clock and
    channels (serdes 2 and 3) on the CABGA381 pins of the board file."""
    plan = ECP55GEVNPlatform().prepare(EvnTop(variant="bringup"), name="evn")
    lpf = plan.files["evn.lpf"]
    for pin in ("W13", "W14", "Y14", "Y15", "W17", "W18", "Y16", "Y17", "Y19", "W20"):
        assert f'SITE "{pin}"' in lpf, pin
    for res in ("uart_0__rx", "uart_0__tx", "led_0__io", "led_7__io", "clk12_0__io"):
        assert res in lpf, res
    assert 'FREQUENCY PORT "clk12_0__io" 12000000.0 HZ' in lpf


@pytest.mark.soak
def test_bringup_bitstream(tmp_path):
    """``make bitstream BOARD=ecp5_5g_evn VARIANT=bringup``: the .bit is written, every clock meets
    its constraint (core 80 MHz from the PLL, the DCU's word clocks 100 MHz), the DCU and its
    reference clock block sit at DCU1's site."""
    report = build(variant="bringup", out_dir=tmp_path)
    assert (tmp_path / "evn_bringup.bit").stat().st_size > 100_000
    assert (tmp_path / "evn_bringup.svf").exists()
    fmax = report["fmax"]
    assert len(fmax) >= 5 and all(v["achieved"] >= v["constraint"] for v in fmax.values()), fmax
    assert report["sites"]["DCUA"] == "X71/Y95/DCU" and report["sites"]["EXTREFB"] == "X71/Y95/EXTREF"
