"""The ECP5-5G DCU (``DCUA`` and ``EXTREFB`` hard macros) as the SerDes of one or two link ports
(issue 47): generic 8b/10b at 2.0 Gb/s behind :class:`~rtl.phy.lane.SerdesLaneSignature`.

Configuration (Lattice TN1261, "ECP5 and ECP5-5G SERDES/PCS Usage Guide", now FPGA-TN-02206; cited by
section title, the numbering differs between revisions):

* **Protocol.** ``G8B10B``, the generic 8b/10b mode ("Generic 8b10b Mode"): the PCS encodes and
  decodes 8b/10b, its word aligner finds the K28.5 comma (both running disparities, all ten bits
  compared) and its link state machine keeps the alignment ("8b10b Decoder", "External Link State
  Machine Option": the internal one is used, ``FFC_SIGNAL_DETECT`` high enables it).  The PCS aligns
  *symbols*: which byte of a 16-bit word a comma lands in after a receive reset is not defined, the
  fabric's :class:`~rtl.phy.line.ByteAligner` fixes it.  No clock tolerance compensation
  ("Clock Tolerance Compensation": ``CTC_BYPASS``): the fabric matches rates by dropping idle words.
* **Rate.** 200 MHz reference x10 (``D_REFCK_MODE``) = 2.0 GHz, divided by 1 (``D_TX_VCO_CK_DIV``,
  ``RX_DCO_CK_DIV``: full rate, "Reference Clocks", "Rate Modes"): 2.0 Gb/s each way.
* **Fabric interface.** The 1:2 gearbox ("FPGA Interface Clocks", case "16/20-bit, CTC FIFO
  bypassed"): two symbols per word, ``FF_TX_PCLK``/``FF_RX_PCLK`` at line rate / 20 = 100 MHz.  As
  the references do, each channel's ``FF_TX_PCLK`` clocks its own TX FIFO (``FF_TXI_CLK``) and its
  ``FF_RX_PCLK`` the RX FIFO (``FF_RXI_CLK``); the lane's ``tx_clk``/``rx_clk`` are these clocks.
  Bus layout per byte ("Transmit Data", "Receive Data", data bus usage by mode; the 2.0 Gb/s
  ``G8B10B`` core of Lattice's Clarity Designer wires the same bits): TX ``[7:0]`` data, ``[8]`` K,
  ``[9]`` force disparity, ``[10]`` disparity value, ``[11]`` unused; RX ``[7:0]`` data, ``[8]`` K,
  ``[9]`` disparity error, ``[10]`` code violation.  Byte 0 (bits 11:0) is the earlier on the line.
  The decoder also replaces a code violation with K=1, 0xEE (not a valid K character; LUNA and
  Yumewatari rely on it), so that counts as a code violation too.
* **Analog and undocumented settings** (CMU, CDR DCO, bias, loss of signal, equalizer): the values
  Clarity Designer (Diamond 3.7) writes for a ``G8B10B`` channel at 2.0 Gb/s from a 200 MHz
  reference, except: TX swing 1000 mV with the slice currents Clarity, LiteICLink and LUNA use for it;
  the phase detector stays on while the loss-of-signal detector fires (``PDEN_SEL``), so internal
  loopback works with nothing on the line; ``D_SYNC_LOCAL_EN`` set (without it ``FF_TX_PCLK`` stays
  dead in 1:2 mode, LiteSATA's ECP5 bring-up).

Dual-level signals (one TX PLL per DCU, shared by its two channels):

* ``D_FFC_TRST`` (TX PLL reset) is the OR of the lanes' ``tx_pll_rst``: either lane restarts the PLL
  for both, and both lanes see the same ``tx_pll_lock`` (``D_FFS_PLOL`` inverted);
* the macro and dual resets (``D_FFC_MACRO_RST``, ``D_FFC_DUAL_RST``) are held inactive: the four
  per-lane resets and ``D_FFC_TRST`` cover the reset sequence ("Reset Sequence and Reset State
  Diagram", :class:`~rtl.phy.reset.SerdesReset`);
* a DCU channel that carries no lane is powered down.

Polarity and loopback ("SERDES Client Interface", "SERDES Debug Capabilities"):

* ``rx_polarity`` drives the fabric control port ``FFC_SB_INV_RX`` (as Yumewatari and ECP5-PCIe do);
* ``tx_polarity`` and ``loopback`` have no fabric control port (only the static ``INVERT_TX``
  parameter), so :class:`DcuSci` writes them through the DCU's configuration port: ``CH_01`` bit 1
  (transmit invert) and ``CH_15`` bits 5:0 (``lb_ctl``, near-end serial loopback), the registers
  LiteICLink and LUNA use (:data:`SCI_FIELDS`).  It runs on the first lane's ``tx_clk``, so these two
  controls take effect a few cycles after they change and only while the TX PLL runs.  The loopback
  value is LUNA's (LiteICLink's ``0b0001`` is marked "does not seem enough" there); neither reference
  tested it on hardware, it needs a board check.

Pads: the DCU's pins are hard-wired to its macro, not to I/O buffers.  The members ``refclk_p``,
``refclk_n`` and ``pads`` must reach top-level ports directly (nextpnr removes its own buffers on
them); :meth:`Ecp5Dcu.connect_pads` wires them to platform resources requested with ``dir="-"``.
nextpnr knows no frequency for the DCU's clock outputs: a board build constrains them (``--freq``, or
an LPF ``FREQUENCY NET`` on the name synthesis keeps for the net).
On the ECP5-5G evaluation board (amaranth-boards 0.0.21 ``ECP55GEVNPlatform``, LFE5UM5G-85F CABGA381,
pins as in :data:`CABGA381_PINS`; connectors from the board's user guide FPGA-EB-02017):

==================  ========  ==================================================================
resource            DCU       pins, connector
==================  ========  ==================================================================
``serdes`` 0        DCU0 CH0  TX W4/W5, RX Y5/Y6: the "SERDES test SMA" footprints J9-J26
``serdes`` 1        DCU0 CH1  TX W8/W9, RX Y7/Y8: same
``serdes`` 2        DCU1 CH0  TX W13/W14, RX Y14/Y15: same
``serdes`` 3        DCU1 CH1  TX W17/W18, RX Y16/Y17: same
``serdes_clk`` 0    DCU0      Y11/Y12 (``REFCLKP_D0``/``REFCLKN_D0``): SMA footprints, no oscillator
``serdes_clk`` 1    DCU1      Y19/W20: the board's 200 MHz LVDS oscillator X2 (JP9 disables it)
==================  ========  ==================================================================

The board's bill of materials lists the 18 SMAs J9-J26 as not loaded.  With the on-board oscillator
only DCU1 (``dcu=1``, ``serdes`` 2 and 3) has its reference clock; DCU0 needs one on its SMAs.
"""

from amaranth.hdl import (
    Cat,
    ClockDomain,
    ClockSignal,
    Const,
    DomainRenamer,
    Instance,
    IOBufferInstance,
    Module,
    Mux,
    Signal,
)
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_choice, check_distinct

from .lane import SerdesLaneSignature

__all__ = ["Ecp5Dcu", "DcuSci", "Ecp5DcuPadSignature", "tx_bus", "rx_word", "DUAL_PARAMS", "LANE_PARAMS",
           "OFF_LANE_PARAMS", "EXTREFB_PARAMS", "SCI_FIELDS", "CABGA381_PINS", "CABGA381_REFCLK_PINS"]


#: ``DCUA`` parameters of the dual: TX PLL, reference clock, shared bias (``CHX`` never appears here)
DUAL_PARAMS = {
    # power
    "D_MACROPDB":          "0b1",       # the dual is powered (together with D_FFC_MACROPDB high)
    "D_IB_PWDNB":          "0b1",       # reference clock input buffer powered (the receivers need it)
    "D_TXPLL_PWDNB":       "0b1",       # TX PLL powered
    # TX PLL: 200 MHz x10 = 2.0 GHz, serializers at full rate
    "D_REFCK_MODE":        "0b001",     # multiplier x10 (0b000 x20, 0b010 x16, 0b011 x8, 0b100 x25)
    "D_TX_VCO_CK_DIV":     "0b000",     # VCO / 1: full rate
    "D_TX_MAX_RATE":       "2.0",       # line rate in Gb/s, for Diamond's rate checks (no bitstream bits)
    "D_PLL_LOL_SET":       "0b01",      # TX PLL loss-of-lock window (Clarity, 2.0 Gb/s)
    "D_CDR_LOL_SET":       "0b11",      # CDR loss-of-lock window (Clarity, 2.0 Gb/s)
    "D_BITCLK_LOCAL_EN":   "0b1",       # serializers clocked by this DCU's own TX PLL...
    "D_BITCLK_ND_EN":      "0b0",       # ...which is not lent to the neighbouring DCU...
    "D_BITCLK_FROM_ND_EN": "0b0",       # ...nor borrowed from it
    "D_SYNC_LOCAL_EN":     "0b1",       # TX clock dividers synchronised locally (FF_TX_PCLK runs)
    "D_SYNC_ND_EN":        "0b0",       # no lane alignment across DCUs
    "D_XGE_MODE":          "0b0",       # not XAUI
    "D_BUS8BIT_SEL":       "0b0",       # 10-bit SERDES words (8b/10b), not the 8-bit SERDES-only mode
    # CTC FIFO watermarks: CTC bypassed, the wizard's defaults
    "D_LOW_MARK":          "0d4",
    "D_HIGH_MARK":         "0d12",
    # clock multiplier unit, bias and regulators: undocumented, Clarity's values at 2.0 Gb/s
    "D_SETIRPOLY_AUX":     "0b10",
    "D_SETICONST_AUX":     "0b01",
    "D_SETIRPOLY_CH":      "0b10",
    "D_SETICONST_CH":      "0b10",
    "D_SETPLLRC":          "0d1",
    "D_RG_EN":             "0b1",
    "D_RG_SET":            "0b00",
    "D_REQ_ISET":          "0b001",
    "D_PD_ISET":           "0b00",
    "D_ISETLOS":           "0d0",
    "D_DCO_CALIB_TIME_SEL": "0b00",
    "D_CMUSETBIASI":       "0b00",
    "D_CMUSETI4CPP":       "0d3",
    "D_CMUSETI4CPZ":       "0d3",
    "D_CMUSETI4VCO":       "0b00",
    "D_CMUSETICP4P":       "0b01",
    "D_CMUSETICP4Z":       "0b101",
    "D_CMUSETINITVCT":     "0b00",
    "D_CMUSETISCL4VCO":    "0b000",
    "D_CMUSETP1GM":        "0b000",
    "D_CMUSETP2AGM":       "0b000",
    "D_CMUSETZGM":         "0b000",
}

#: ``DCUA`` parameters of a channel that carries a lane (``CHX`` becomes ``CH0`` or ``CH1``)
LANE_PARAMS = {
    # protocol: generic 8b/10b through the PCS's encoder, decoder, word aligner and link state machine
    "CHX_PROTOCOL":        "G8B10B",    # generic 8b/10b mode
    "CHX_UC_MODE":         "0b1",       # user-configured PCS (what Clarity sets for G8B10B)
    "CHX_PCIE_MODE":       "0b0",       # no PCI Express behaviour (electrical idle, receiver detect)
    "CHX_RIO_MODE":        "0b0",       # no Serial RapidIO behaviour
    "CHX_GE_AN_ENABLE":    "0b0",       # no Gigabit Ethernet auto-negotiation
    "CHX_PCIE_EI_EN":      "0b0",       # TX not forced into electrical idle
    "CHX_PCS_DET_TIME_SEL": "0b00",     # receiver-detect timing (unused)
    "CHX_ENC_BYPASS":      "0b0",       # the PCS encodes 8b/10b
    "CHX_DEC_BYPASS":      "0b0",       # the PCS decodes 8b/10b
    "CHX_SB_BYPASS":       "0b0",       # TX SERDES bridge in the path
    "CHX_RX_SB_BYPASS":    "0b0",       # RX SERDES bridge in the path
    "CHX_PRBS_ENABLE":     "0b0",       # no built-in PRBS (the fabric has its own)
    "CHX_PRBS_SELECTION":  "0b0",       # (PRBS only)
    "CHX_PRBS_LOCK":       "0b0",       # (PRBS only)
    # comma alignment on K28.5 by the word aligner under the link state machine
    "CHX_WA_BYPASS":       "0b0",       # word aligner in the path
    "CHX_WA_MODE":         "0b0",       # word aligner mode of G8B10B (Clarity)
    "CHX_ENABLE_CG_ALIGN": "0b1",       # comma (code group) alignment on
    "CHX_LSM_DISABLE":     "0b0",       # the link state machine drives the aligner
    "CHX_UDF_COMMA_MASK":  "0x3ff",     # compare all ten bits...
    "CHX_UDF_COMMA_A":     "0x283",     # ...with K28.5 of RD+ (abcdei fghj 110000 0101, a at bit 0)...
    "CHX_UDF_COMMA_B":     "0x17C",     # ...or of RD- (001111 1010)
    # no clock tolerance compensation
    "CHX_CTC_BYPASS":      "0b1",       # CTC FIFO bypassed
    "CHX_MATCH_2_ENABLE":  "0b0",       # no skip matching
    "CHX_MATCH_4_ENABLE":  "0b0",
    "CHX_MIN_IPG_CNT":     "0b11",      # (CTC only)
    "CHX_CC_MATCH_1":      "0x000",     # (CTC only)
    "CHX_CC_MATCH_2":      "0x000",
    "CHX_CC_MATCH_3":      "0x000",
    "CHX_CC_MATCH_4":      "0x000",
    # 16-bit fabric interface: 1:2 gearboxes, half-rate word clocks
    "CHX_TX_GEAR_MODE":    "0b1",       # TX 1:2 gearbox (two symbols per word)
    "CHX_RX_GEAR_MODE":    "0b1",       # RX 1:2 gearbox
    "CHX_TX_GEAR_BYPASS":  "0b0",       # TX gearbox in the path
    "CHX_RX_GEAR_BYPASS":  "0b0",       # RX gearbox in the path
    "CHX_FF_TX_H_CLK_EN":  "0b1",       # FF_TX_PCLK is the symbol clock / 2 (100 MHz)...
    "CHX_FF_TX_F_CLK_DIS": "0b1",       # ...not the full symbol clock
    "CHX_FF_RX_H_CLK_EN":  "0b1",       # FF_RX_PCLK is the recovered symbol clock / 2...
    "CHX_FF_RX_F_CLK_DIS": "0b1",       # ...not the full one
    "CHX_SEL_SD_RX_CLK":   "0b1",       # RX FIFO written by the recovered clock (no CTC FIFO)
    # rate: full rate both ways, CDR for 2.0 Gb/s
    "CHX_RX_DCO_CK_DIV":   "0b000",     # CDR at full rate (/1)
    "CHX_CDR_MAX_RATE":    "2.0",       # line rate in Gb/s, for Diamond's rate checks (no bitstream bits)
    "CHX_RATE_MODE_TX":    "0b0",       # TX full rate (not /2)
    "CHX_RATE_MODE_RX":    "0b0",       # RX full rate (not /2)
    "CHX_TX_DIV11_SEL":    "0b0",       # no /11 (SDI) rate
    "CHX_RX_DIV11_SEL":    "0b0",
    # polarity: static inversion off (RX through FFC_SB_INV_RX, TX through the SCI)
    "CHX_INVERT_TX":       "0b0",
    "CHX_INVERT_RX":       "0b0",
    # power
    "CHX_TPWDNB":          "0b1",       # transmitter powered
    "CHX_RPWDNB":          "0b1",       # receiver powered
    # transmitter: 50 ohm, 1000 mV, no de-emphasis
    "CHX_RTERM_TX":        "0d19",      # 50 ohm termination
    "CHX_TXAMPLITUDE":     "0d1000",    # 1000 mV differential (set by the slices below)
    "CHX_TX_CM_SEL":       "0b00",      # default common mode
    "CHX_TXDEPRE":         "DISABLED",  # no pre-cursor de-emphasis
    "CHX_TXDEPOST":        "DISABLED",  # no post-cursor de-emphasis
    "CHX_TDRV_PRE_EN":     "0b0",       # no pre-cursor tap...
    "CHX_TDRV_POST_EN":    "0b0",       # ...nor post-cursor tap
    "CHX_TX_PRE_SIGN":     "0b0",       # (taps off)
    "CHX_TX_POST_SIGN":    "0b0",       # (taps off)
    "CHX_TDRV_DAT_SEL":    "0b00",      # driver fed by the serializer
    "CHX_TDRV_SLICE0_CUR": "0b011",     # 400 uA...
    "CHX_TDRV_SLICE0_SEL": "0b01",      # ...main data
    "CHX_TDRV_SLICE1_CUR": "0b000",     # 100 uA...
    "CHX_TDRV_SLICE1_SEL": "0b00",      # ...off
    "CHX_TDRV_SLICE2_CUR": "0b11",      # 3200 uA...
    "CHX_TDRV_SLICE2_SEL": "0b01",      # ...main data
    "CHX_TDRV_SLICE3_CUR": "0b10",      # 2400 uA...
    "CHX_TDRV_SLICE3_SEL": "0b01",      # ...main data
    "CHX_TDRV_SLICE4_CUR": "0b00",      # 800 uA...
    "CHX_TDRV_SLICE4_SEL": "0b00",      # ...off
    "CHX_TDRV_SLICE5_CUR": "0b00",      # 800 uA...
    "CHX_TDRV_SLICE5_SEL": "0b00",      # ...off
    # receiver front end (Clarity's values)
    "CHX_RTERM_RX":        "0d22",      # 50 ohm termination (the wizard's code for it)
    "CHX_RXTERM_CM":       "0b11",      # termination common mode
    "CHX_RXIN_CM":         "0b11",      # input common-mode feedback
    "CHX_REQ_EN":          "0b1",       # linear equalizer on...
    "CHX_REQ_LVL_SET":     "0b00",      # ...at 6 dB, its lowest
    "CHX_RX_RATE_SEL":     "0d10",      # equalizer pole
    "CHX_LEQ_OFFSET_SEL":  "0b0",       # equalizer offset not trimmed
    "CHX_LEQ_OFFSET_TRIM": "0b000",     # (no trim)
    "CHX_RCV_DCC_EN":      "0b0",       # AC-coupled input (no DC-coupling mode)
    "CHX_LDR_RX2CORE_SEL": "0b0",       # no low-speed (out-of-band) receive path
    "CHX_LDR_CORE2TX_SEL": "0b0",       # no low-speed transmit path
    # loss of signal
    "CHX_RX_LOS_EN":       "0b1",       # detector on...
    "CHX_RLOS_SEL":        "0b1",       # ...and reported on FFS_RLOS
    "CHX_RX_LOS_LVL":      "0b100",     # threshold (the wizard's)
    "CHX_RX_LOS_CEQ":      "0b11",      # (the wizard's)
    "CHX_RX_LOS_HYST_EN":  "0b0",       # no hysteresis
    "CHX_PDEN_SEL":        "0b0",       # CDR phase detector not switched off by loss of signal
    # CDR oscillator and calibration: undocumented, Clarity's values at 2.0 Gb/s
    "CHX_CDR_CNT4SEL":     "0b00",
    "CHX_CDR_CNT8SEL":     "0b00",
    "CHX_DCOATDCFG":       "0b00",
    "CHX_DCOATDDLY":       "0b00",
    "CHX_DCOBYPSATD":      "0b1",
    "CHX_DCOCALDIV":       "0b000",
    "CHX_DCOCTLGI":        "0b011",
    "CHX_DCODISBDAVOID":   "0b0",
    "CHX_DCOFLTDAC":       "0b00",
    "CHX_DCOFTNRG":        "0b001",
    "CHX_DCOIOSTUNE":      "0b010",
    "CHX_DCOITUNE":        "0b00",
    "CHX_DCOITUNE4LSB":    "0b010",
    "CHX_DCOIUPDNX2":      "0b1",
    "CHX_DCONUOFLSB":      "0b100",
    "CHX_DCOSCALEI":       "0b01",
    "CHX_DCOSTARTVAL":     "0b010",
    "CHX_DCOSTEP":         "0b11",
    "CHX_BAND_THRESHOLD":  "0d0",
    "CHX_AUTO_FACQ_EN":    "0b1",       # automatic frequency acquisition
    "CHX_AUTO_CALIB_EN":   "0b1",       # automatic DCO calibration
    "CHX_CALIB_CK_MODE":   "0b0",       # (calibration clock mode)
    "CHX_REG_BAND_OFFSET": "0d0",
    "CHX_REG_BAND_SEL":    "0d0",
    "CHX_REG_IDAC_SEL":    "0d0",
    "CHX_REG_IDAC_EN":     "0b0",
}

#: ``DCUA`` parameters of a channel without a lane: both directions powered down
OFF_LANE_PARAMS = {
    "CHX_TPWDNB":          "0b0",       # transmitter powered down
    "CHX_RPWDNB":          "0b0",       # receiver powered down
}

#: ``EXTREFB`` parameters (Clarity's reference clock block)
EXTREFB_PARAMS = {
    "REFCK_PWDNB":         "0b1",       # reference clock buffer powered
    "REFCK_RTERM":         "0b1",       # on-chip 100 ohm differential termination
    "REFCK_DCBIAS_EN":     "0b0",       # no on-chip DC bias (AC-coupled or LVDS-level clock)
}

#: Controls the configuration port writes, per lane: (``CH_xx`` address, mask, value while the
#: control is set, lane member).  While it is clear the field holds what the bitstream put there
#: (read before the first write).  Registers as LiteICLink and LUNA use them (TN1261 appendix,
#: channel registers); not verified on hardware here.
SCI_FIELDS = (
    (0x01, 0b0000_0010, 0b0000_0010, "tx_polarity"),    # CH_01 bit 1: invert the transmitted bits
    (0x15, 0b0011_1111, 0b0011_0010, "loopback"),       # CH_15 [5:0] lb_ctl: near-end serial loopback
)

#: SerDes balls of the LFE5UM5G-85F in the CABGA381 package: (dcu, channel) -> (tx_p, tx_n, rx_p, rx_n)
CABGA381_PINS = {
    (0, 0): ("W4", "W5", "Y5", "Y6"),
    (0, 1): ("W8", "W9", "Y7", "Y8"),
    (1, 0): ("W13", "W14", "Y14", "Y15"),
    (1, 1): ("W17", "W18", "Y16", "Y17"),
}
#: Reference clock balls of the CABGA381 package: dcu -> (refclk_p, refclk_n)
CABGA381_REFCLK_PINS = {0: ("Y11", "Y12"), 1: ("Y19", "W20")}

_EE = 0xEE      # what the decoder puts out for a code violation (with K set)


def tx_bus(word):
    """The 24-bit ``FF_TX_D`` bus of a channel for ``word`` (a :class:`~rtl.phy.lane.LineWord` view):
    per byte data, K, force disparity (0), disparity value (0), unused (0)."""
    return Cat(word.data[:8], word.k[0], Const(0, 3), word.data[8:], word.k[1], Const(0, 3))


def rx_word(m, bus, word):
    """Drive ``word`` (a :class:`~rtl.phy.lane.RxWord` view) from the 24-bit ``FF_RX_D`` bus."""
    for i in range(2):
        byte = bus[12 * i:12 * i + 12]
        m.d.comb += [word.data[8 * i:8 * i + 8].eq(byte[:8]), word.k[i].eq(byte[8]),
                     word.disp_err[i].eq(byte[9]),
                     word.code_err[i].eq(byte[10] | (byte[8] & (byte[:8] == _EE)))]


class Ecp5DcuPadSignature(wiring.Signature):
    """The high-speed pins of one DCU channel, as seen from the DCU.

    Members
    -------
    tx_p, tx_n : Out(1)
        ``HDOUTP``/``HDOUTN``.
    rx_p, rx_n : In(1)
        ``HDINP``/``HDINN``.
    """

    def __init__(self):
        super().__init__({"tx_p": Out(1), "tx_n": Out(1), "rx_p": In(1), "rx_n": In(1)})

    def __eq__(self, other):
        return type(other) is Ecp5DcuPadSignature

    def __hash__(self):
        return hash(Ecp5DcuPadSignature)

    def __repr__(self):
        return "Ecp5DcuPadSignature()"


class DcuSci(wiring.Component):
    """Applies per-lane controls that have no fabric port through the DCU's configuration port (SCI):
    for each field of :data:`SCI_FIELDS` a read-modify-write of the lane's channel register whenever
    the lane's controls differ from what was last applied.  Nothing is accessed while they do not
    change (the bitstream's values hold: the controls start out clear).

    Every access holds address, data and channel select for a cycle before and after its strobe
    (``rd`` two cycles, the read data is taken at the end of the second; ``wstn`` low for one): the
    port is asynchronous to the fabric.

    Parameters
    ----------
    lanes : int
        Lanes served (channel select bit ``i`` is lane ``i``'s channel).

    Members
    -------
    tx_polarity, loopback : In(lanes)
        One bit per lane (synchronous to this component's ``sync`` domain).
    sel : Out(lanes)
        Channel select (``CHx_SCIEN`` and ``CHx_SCISEL``), one-hot during an access.
    addr : Out(6)
    wdata : Out(8)
    rdata : In(8)
    rd : Out(1)
        Read strobe (``D_SCIRD``).
    wstn : Out(1)
        Write strobe, active low (``D_SCIWSTN``).
    busy : Out(1)
        An update is under way.
    """

    def __init__(self, *, lanes):
        self._lanes = check_choice("lanes", lanes, (1, 2))
        super().__init__({"tx_polarity": In(lanes), "loopback": In(lanes), "sel": Out(lanes),
                          "addr": Out(6), "wdata": Out(8), "rdata": In(8), "rd": Out(1),
                          "wstn": Out(1, init=1), "busy": Out(1)})

    def elaborate(self, platform):
        m = Module()
        n, nf = self._lanes, len(SCI_FIELDS)
        want = [Cat(*(getattr(self, f[3])[i] for f in SCI_FIELDS)) for i in range(n)]
        applied = [Signal(nf, name=f"applied{i}") for i in range(n)]
        # each field as the bitstream left it, read before its first write
        saved = [[Signal(8, name=f"saved{i}_{j}") for j in range(nf)] for i in range(n)]
        saved_ok = [Signal(nf, name=f"saved_ok{i}") for i in range(n)]
        lane, field, target = Signal(range(2)), Signal(range(nf)), Signal(nf)

        # the register's new value from the one being read
        new = Signal(8)
        for i in range(n):
            for j, (_, mask, on, _) in enumerate(SCI_FIELDS):
                with m.If((lane == i) & (field == j)):
                    off = Mux(saved_ok[i][j], saved[i][j], self.rdata & mask)
                    m.d.comb += new.eq((self.rdata & (~mask & 0xff)) | Mux(target[j], on, off))

        with m.FSM():
            with m.State("IDLE"):
                for i in reversed(range(n)):        # lane 0 first
                    with m.If(want[i] != applied[i]):
                        m.d.sync += [lane.eq(i), target.eq(want[i]), field.eq(0), self.sel.eq(1 << i),
                                     self.addr.eq(SCI_FIELDS[0][0]), self.rd.eq(1), self.busy.eq(1)]
                        m.next = "READ"
            with m.State("READ"):
                m.next = "READ2"
            with m.State("READ2"):
                m.d.sync += [self.rd.eq(0), self.wdata.eq(new)]
                for i in range(n):
                    for j, (_, mask, _, _) in enumerate(SCI_FIELDS):
                        with m.If((lane == i) & (field == j) & ~saved_ok[i][j]):
                            m.d.sync += [saved[i][j].eq(self.rdata & mask), saved_ok[i][j].eq(1)]
                m.next = "SETUP"
            with m.State("SETUP"):
                m.d.sync += self.wstn.eq(0)
                m.next = "STROBE"
            with m.State("STROBE"):
                m.d.sync += self.wstn.eq(1)
                m.next = "HOLD"
            with m.State("HOLD"):
                with m.If(field == nf - 1):
                    for i in range(n):
                        with m.If(lane == i):
                            m.d.sync += applied[i].eq(target)
                    m.d.sync += [self.sel.eq(0), self.busy.eq(0)]
                    m.next = "IDLE"
                with m.Else():
                    for j in range(nf - 1):
                        with m.If(field == j):
                            m.d.sync += self.addr.eq(SCI_FIELDS[j + 1][0])
                    m.d.sync += [field.eq(field + 1), self.rd.eq(1)]
                    m.next = "READ"
        return m


class Ecp5Dcu(wiring.Component):
    """One ECP5-5G DCU: its two channels (or one, the other powered down) as SerDes lanes with hard
    8b/10b at 2.0 Gb/s from a 200 MHz reference clock (module docstring: configuration, pads).

    Parameters
    ----------
    dcu : int
        0 or 1: ``DCU0``/``EXTREF0`` or ``DCU1``/``EXTREF1`` (the ``LOC`` attributes nextpnr places by).
    channels : tuple of int
        The DCU channel of each lane, distinct, from 0 and 1.

    Members
    -------
    lanes : Out(SerdesLaneSignature()).array(len(channels))
        Lane ``i`` is channel ``channels[i]``.  ``tx_pll_lock`` is the DCU's one TX PLL lock in every
        lane and any lane's ``tx_pll_rst`` resets that PLL.  ``tx_polarity`` and ``loopback`` reach
        the DCU through its configuration port, clocked by ``lanes[0].tx_clk``.
    refclk_p, refclk_n : In(1)
        The reference clock pins (``REFCLKP``/``REFCLKN`` of ``EXTREFB``).
    pads : Out(Ecp5DcuPadSignature()).array(len(channels))
        The high-speed pins of lane ``i``'s channel.

    Raises
    ------
    TypeError
        ``channels`` is not a tuple.
    ValueError
        ``dcu`` or a channel is out of range, or ``channels`` is empty or repeats a channel.
    """

    def __init__(self, *, dcu=0, channels=(0, 1)):
        self._dcu = check_choice("dcu", dcu, (0, 1))
        if not isinstance(channels, tuple):
            raise TypeError(f"channels must be a non-empty tuple, not {channels!r}")
        if not channels:
            raise ValueError(f"channels must be a non-empty tuple, not {channels!r}")
        for i, channel in enumerate(channels):
            check_choice(f"channels[{i}]", channel, (0, 1))
        self._channels = check_distinct("channels", channels)
        n = len(channels)
        super().__init__({"lanes": Out(SerdesLaneSignature()).array(n), "refclk_p": In(1), "refclk_n": In(1),
                          "pads": Out(Ecp5DcuPadSignature()).array(n)})

    @property
    def dcu(self):
        return self._dcu

    @property
    def channels(self):
        return self._channels

    def connect_pads(self, m, *, refclk, serdes):
        """Wire ``refclk_p``/``refclk_n`` and ``pads`` straight to the platform's pins in ``m`` (no I/O
        buffer: the pins belong to the DCU).

        ``refclk`` is the reference clock's :class:`~amaranth.lib.io.DifferentialPort` and ``serdes``
        one pin group per lane with ``tx`` and ``rx`` differential ports, as
        ``platform.request("serdes_clk", n, dir="-")`` and ``platform.request("serdes", n, dir="-")``
        return them.  Pins of the CABGA381 package must be this DCU's (:data:`CABGA381_PINS`).

        Raises
        ------
        ValueError
            ``serdes`` has not one group per lane, a port is inverted, or a port of the CABGA381
            package is on another DCU or channel's pins.
        """
        serdes = tuple(serdes)
        if len(serdes) != len(self._channels):
            raise ValueError(f"serdes must have one pin group per lane ({len(self._channels)}), "
                             f"not {len(serdes)}")
        _check_port("refclk", refclk, CABGA381_REFCLK_PINS[self._dcu], f"DCU{self._dcu}'s reference clock")
        m.submodules += [IOBufferInstance(refclk.p, i=self.refclk_p),
                         IOBufferInstance(refclk.n, i=self.refclk_n)]
        for i, (pads, group) in enumerate(zip(self.pads, serdes, strict=True)):
            pins, where = CABGA381_PINS[self._dcu, self._channels[i]], f"DCU{self._dcu} CH{self._channels[i]}"
            _check_port(f"serdes[{i}].tx", group.tx, pins[:2], where)
            _check_port(f"serdes[{i}].rx", group.rx, pins[2:], where)
            m.submodules += [IOBufferInstance(group.tx.p, o=pads.tx_p), IOBufferInstance(group.tx.n, o=pads.tx_n),
                             IOBufferInstance(group.rx.p, i=pads.rx_p), IOBufferInstance(group.rx.n, i=pads.rx_n)]

    def elaborate(self, platform):
        m = Module()
        refclk, plol = Signal(), Signal()
        m.submodules.extref = Instance("EXTREFB", a_LOC=f"EXTREF{self._dcu}",
                                       i_REFCLKP=self.refclk_p, i_REFCLKN=self.refclk_n, o_REFCLKO=refclk,
                                       **{f"p_{k}": v for k, v in EXTREFB_PARAMS.items()})

        # the configuration port, on the first lane's transmit word clock
        m.domains.sci = ClockDomain("sci", local=True, reset_less=True)
        m.d.comb += ClockSignal("sci").eq(self.lanes[0].tx_clk)
        m.submodules.sci = sci = DomainRenamer("sci")(DcuSci(lanes=len(self._channels)))
        for i, lane in enumerate(self.lanes):
            m.submodules[f"tx_polarity_sync{i}"] = FFSynchronizer(lane.tx_polarity, sci.tx_polarity[i],
                                                                  o_domain="sci")
            m.submodules[f"loopback_sync{i}"] = FFSynchronizer(lane.loopback, sci.loopback[i], o_domain="sci")

        params = dict(DUAL_PARAMS)
        ports = {
            "i_D_REFCLKI": refclk,                          # TX PLL reference
            "o_D_FFS_PLOL": plol,                           # TX PLL loss of lock
            "i_D_FFC_MACROPDB": 1,                          # dual powered
            "i_D_FFC_MACRO_RST": 0,                         # (not used: per-lane resets and TRST)
            "i_D_FFC_DUAL_RST": 0,
            "i_D_FFC_TRST": Cat(*(lane.tx_pll_rst for lane in self.lanes)).any(),   # TX PLL reset
            "i_D_SCIRD": sci.rd, "i_D_SCIWSTN": sci.wstn,   # configuration port
            "i_D_SCIENAUX": 0, "i_D_SCISELAUX": 0,          # (dual registers not accessed)
            **{f"i_D_SCIADDR{b}": sci.addr[b] for b in range(6)},
            **{f"i_D_SCIWDATA{b}": sci.wdata[b] for b in range(8)},
            **{f"o_D_SCIRDATA{b}": sci.rdata[b] for b in range(8)},
        }
        for i, (lane, pads) in enumerate(zip(self.lanes, self.pads, strict=True)):
            ch = f"CH{self._channels[i]}"
            params |= {k.replace("CHX", ch): v for k, v in LANE_PARAMS.items()}
            txd, rxd, rlol = Signal(24, name=f"txd{i}"), Signal(24, name=f"rxd{i}"), Signal(name=f"rlol{i}")
            m.d.comb += [txd.eq(tx_bus(lane.tx)), lane.tx_pll_lock.eq(~plol), lane.rx_cdr_lock.eq(~rlol)]
            rx_word(m, rxd, lane.rx)
            ports |= {
                f"i_{ch}_HDINP": pads.rx_p, f"i_{ch}_HDINN": pads.rx_n,
                f"o_{ch}_HDOUTP": pads.tx_p, f"o_{ch}_HDOUTN": pads.tx_n,
                f"i_{ch}_RX_REFCLK": refclk,                # CDR reference
                f"o_{ch}_FF_TX_PCLK": lane.tx_clk,          # TX word clock, fed back into the TX FIFO
                f"i_{ch}_FF_TXI_CLK": lane.tx_clk,
                f"o_{ch}_FF_RX_PCLK": lane.rx_clk,          # recovered word clock, into the RX FIFO
                f"i_{ch}_FF_RXI_CLK": lane.rx_clk,
                **{f"i_{ch}_FF_TX_D_{b}": txd[b] for b in range(24)},
                **{f"o_{ch}_FF_RX_D_{b}": rxd[b] for b in range(24)},
                f"i_{ch}_FFC_LANE_TX_RST": lane.tx_pcs_rst,
                f"i_{ch}_FFC_RRST": lane.rx_serdes_rst,
                f"i_{ch}_FFC_LANE_RX_RST": lane.rx_pcs_rst,
                f"o_{ch}_FFS_RLOS": lane.rx_los,
                f"o_{ch}_FFS_RLOL": rlol,
                f"i_{ch}_FFC_SB_INV_RX": lane.rx_polarity,  # receive polarity
                f"i_{ch}_SCIEN": sci.sel[i], f"i_{ch}_SCISEL": sci.sel[i],
                f"i_{ch}_FFC_TXPWDNB": 1, f"i_{ch}_FFC_RXPWDNB": 1,
                f"i_{ch}_FFC_SIGNAL_DETECT": 1,             # the link state machine runs
                f"i_{ch}_FFC_ENABLE_CGALIGN": 0,            # (manual aligner trigger: LSM in charge)
                f"i_{ch}_FFC_EI_EN": 0,                     # no electrical idle
                f"i_{ch}_FFC_PCIE_DET_EN": 0, f"i_{ch}_FFC_PCIE_CT": 0,    # no receiver detection
                f"i_{ch}_FFC_FB_LOOPBACK": 0, f"i_{ch}_FFC_SB_PFIFO_LP": 0,  # no parallel loopbacks
                f"i_{ch}_FFC_PFIFO_CLR": 0,
                f"i_{ch}_FFC_RATE_MODE_TX": 0, f"i_{ch}_FFC_RATE_MODE_RX": 0,    # full rate
                f"i_{ch}_FFC_DIV11_MODE_TX": 0, f"i_{ch}_FFC_DIV11_MODE_RX": 0,
                f"i_{ch}_FFC_TX_GEAR_MODE": 0, f"i_{ch}_FFC_RX_GEAR_MODE": 0,    # (gearing is static)
                f"i_{ch}_FFC_LDR_CORE2TX_EN": 0, f"i_{ch}_LDR_CORE2TX": 0,       # no low-speed TX
                f"i_{ch}_FFC_CDR_EN_BITSLIP": 0,
            }
        for c in {0, 1} - set(self._channels):
            params |= {k.replace("CHX", f"CH{c}"): v for k, v in OFF_LANE_PARAMS.items()}
            ports |= {f"i_CH{c}_FFC_TXPWDNB": 0, f"i_CH{c}_FFC_RXPWDNB": 0}
        m.submodules.dcua = Instance("DCUA", a_LOC=f"DCU{self._dcu}",
                                     **{f"p_{k}": v for k, v in params.items()}, **ports)
        return m


def _check_port(name, port, pins, where):
    """Raise if ``port`` (a differential port) is inverted or sits on CABGA381 SerDes balls other than
    ``pins`` (ports of other packages are not checked)."""
    if any(port.invert):
        raise ValueError(f"{name} must not be inverted (set the lane's polarity instead)")
    names = tuple(getattr(meta, "name", None) for meta in (*port.p.metadata, *port.n.metadata))
    known = {pin for group in (*CABGA381_PINS.values(), *CABGA381_REFCLK_PINS.values()) for pin in group}
    if all(pin in known for pin in names) and names != tuple(pins):
        raise ValueError(f"{name} must be on {where}'s pins {'/'.join(pins)}, not {'/'.join(names)}")
