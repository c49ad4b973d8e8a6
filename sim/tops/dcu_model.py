"""A behavioural model of the fabric side of one ECP5 DCU channel (hard 8b/10b, 16-bit words), for
simulating :class:`rtl.phy.SerdesPhy` and board tops without the hard macro (issue 47).  Not part of
the product: :class:`rtl.phy.Ecp5Dcu` takes its place on the FPGA.

What it models, per channel:

- **Clocks.** ``tx_clk`` is the local line word clock (domain ``tx_domain``, driven by the
  testbench); ``rx_clk`` is the peer's line word clock (``rx_domain``), as a CDR recovers it, or the
  local one in internal loopback.
- **Locks and resets.** The TX PLL locks ``pll_cycles`` word clocks after ``tx_pll_rst`` falls; the
  CDR locks ``lock_cycles`` receive clocks after ``rx_serdes_rst`` falls while there is a signal;
  ``rx_los`` is high while the peer sends nothing (its PLL unlocked or its TX PCS in reset) or the line
  is ``cut``.  While the CDR is unlocked or the RX PCS in reset, received bytes carry code violations.
- **Byte alignment.** Each release of ``rx_pcs_rst`` picks at random whether the comma lands in byte 0
  or byte 1 of the word (the PCS aligns symbols, not words).
- **Polarity.** A receiver whose polarity does not match the line's sees code violations only.
- **Errors.** With probability ``error_rate`` / 2**32 per word one byte goes wrong: half of the time
  a code violation, half of the time a different valid data byte (8b/10b does not catch every bit
  error; the link CRC must).
- **Latency.** ``tx_latency`` words from ``tx`` to the line, ``rx_latency`` from the line to ``rx``.

What it cannot model: the analog line (jitter, eye, equalisation), a clock that stops, running
disparity across symbols (one line bit error corrupts one symbol here, up to two on a real line), the
PCS's own FIFOs' phase relations, the DCU's configuration port.
"""

from amaranth.hdl import Cat, ClockDomain, ClockSignal, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int
from rtl.phy.lane import LineWord, RxWord, SerdesLaneSignature

__all__ = ["LineState", "DcuModel"]


class LineState(data.Struct):
    """What one direction of the cable carries in a word clock cycle."""
    word: LineWord
    ok: 1           # a signal is there (the sender's PLL locked and its TX PCS out of reset)
    inverted: 1     # the sender inverts its polarity


def _xorshift(m, domain, seed):
    state = Signal(32, init=(seed & 0xffffffff) | 1)
    x1, x2, x3 = Signal(32), Signal(32), Signal(32)
    m.d.comb += [x1.eq(state ^ (state << 13)[:32]), x2.eq(x1 ^ (x1 >> 17)), x3.eq(x2 ^ (x2 << 5)[:32])]
    m.d[domain] += state.eq(x3)
    return state


class DcuModel(wiring.Component):
    """Parameters
    ----------
    tx_domain, rx_domain : str
        The local line word clock and the peer's.
    pll_cycles, lock_cycles : int
        TX PLL and CDR lock times in word clocks.
    tx_latency, rx_latency : int
        Words of latency each way.
    seed : int

    Members
    -------
    lane : Out(SerdesLaneSignature())
    line_tx : Out(LineState)
        Toward the peer (``tx_domain``).
    line_rx : In(LineState)
        From the peer (``rx_domain``).
    error_rate : In(32)
        Probability per received word of a wrong byte, times 2**32.
    cut : In(1)
        The cable toward this receiver is cut.
    injected : Out(32)
        Words made wrong.
    """

    def __init__(self, *, tx_domain, rx_domain, pll_cycles=32, lock_cycles=64, tx_latency=4,
                 rx_latency=6, seed=1):
        self._txd, self._rxd = tx_domain, rx_domain
        self._pll = check_int("pll_cycles", pll_cycles, 1, 1 << 16)
        self._lock = check_int("lock_cycles", lock_cycles, 1, 1 << 16)
        self._tx_lat = check_int("tx_latency", tx_latency, 1, 64)
        self._rx_lat = check_int("rx_latency", rx_latency, 2, 64)
        self._seed = seed
        super().__init__({"lane": Out(SerdesLaneSignature()), "line_tx": Out(LineState),
                          "line_rx": In(LineState), "error_rate": In(32), "cut": In(1),
                          "injected": Out(32)})

    def _tx(self, m):
        lane, d = self.lane, m.d[self._txd]
        pll_ctr = Signal(range(self._pll + 1))
        d += pll_ctr.eq(Mux(lane.tx_pll_rst, 0, Mux(pll_ctr == self._pll, pll_ctr, pll_ctr + 1)))
        m.d.comb += [lane.tx_clk.eq(ClockSignal(self._txd)), lane.tx_pll_lock.eq(pll_ctr == self._pll)]
        stages = [Signal(LineState, name=f"tx_stage{i}") for i in range(self._tx_lat)]
        d += [stages[0].word.eq(lane.tx), stages[0].ok.eq(lane.tx_pll_lock & ~lane.tx_pcs_rst),
              stages[0].inverted.eq(lane.tx_polarity)]
        for a, b in zip(stages, stages[1:], strict=False):
            d += b.eq(a)
        m.d.comb += self.line_tx.eq(stages[-1])

    def _rx(self, m):
        lane, d = self.lane, m.d.mrx
        m.domains.mrx = ClockDomain("mrx", local=True, reset_less=True)
        m.d.comb += [ClockSignal("mrx").eq(Mux(lane.loopback, ClockSignal(self._txd),
                                                ClockSignal(self._rxd))),
                     lane.rx_clk.eq(ClockSignal("mrx"))]
        line = Signal(LineState)
        m.d.comb += line.eq(Mux(lane.loopback, self.line_tx, self.line_rx))
        rng = _xorshift(m, "mrx", self._seed)
        los = Signal(init=1)
        lock_ctr = Signal(range(self._lock + 1))
        locked = lock_ctr == self._lock
        d += [los.eq(~line.ok | self.cut),
              lock_ctr.eq(Mux(lane.rx_serdes_rst | los, 0, Mux(locked, lock_ctr, lock_ctr + 1)))]
        m.d.comb += [lane.rx_los.eq(los), lane.rx_cdr_lock.eq(locked)]

        # the PCS: byte offset chosen at each reset release, errors, polarity
        offset, pcs_was = Signal(), Signal()
        d += pcs_was.eq(lane.rx_pcs_rst)
        with m.If(pcs_was & ~lane.rx_pcs_rst):
            d += offset.eq(rng[7])
        prev = Signal(LineWord)
        d += prev.eq(line.word)
        word, aligned = Signal(RxWord), Signal(LineWord)
        m.d.comb += [aligned.data.eq(Mux(offset, Cat(prev.data[8:], line.word.data[:8]), line.word.data)),
                     aligned.k.eq(Mux(offset, Cat(prev.k[1], line.word.k[0]), line.word.k)),
                     word.data.eq(aligned.data), word.k.eq(aligned.k)]
        hit = rng[:32] < self.error_rate
        byte = rng[5]
        with m.If(~locked | lane.rx_pcs_rst | (line.inverted != lane.rx_polarity)):
            m.d.comb += [word.data.eq(rng[8:24]), word.code_err.eq(0b11)]
        with m.Elif(hit & rng[6]):
            m.d.comb += word.code_err.eq(Mux(byte, 0b10, 0b01))
        with m.Elif(hit):
            flip = Cat(rng[9:16], 1)
            m.d.comb += word.data.eq(aligned.data ^ Mux(byte, flip << 8, flip))
        with m.If(locked & ~lane.rx_pcs_rst & hit):
            d += self.injected.eq(self.injected + 1)
        stages = [Signal(RxWord, name=f"rx_stage{i}") for i in range(self._rx_lat - 1)]
        d += stages[0].eq(word)
        for a, b in zip(stages, stages[1:], strict=False):
            d += b.eq(a)
        m.d.comb += lane.rx.eq(stages[-1])

    def elaborate(self, platform):
        m = Module()
        self._tx(m)
        self._rx(m)
        return m
