"""The SerDes PHY of one link port (issue 47; dissertation ch. 7.3 and fig. 7-15's PHY share).

``SerdesPhy`` sits between a link port's 16+2-bit phits (core clock ``sync``) and one SerDes channel
(:class:`~rtl.phy.lane.SerdesLaneSignature`: the ECP5 DCU or its model).  It owns two local clock
domains, ``tx`` and ``rx``, driven by the channel's word clocks, and crosses between them and the core
only through :mod:`~rtl.phy.crossing`.  Those domains have no reset: their state restarts from the
enables (``LineEncoder``/``LineDecoder`` go back to idle when the path is down), and their counters
live across a relock.

Modes: LINK carries the link port's flits (:mod:`~rtl.phy.line`); PRBS sends a PRBS7 or PRBS31
pattern (an IDLE word with its comma every 256 words keeps the receiver aligned and is not part of
the pattern) and checks what it receives, for bring-up before any link traffic.  While not in LINK
mode, or while a side is not ready, the link port sees IDLE phits and its phits are dropped (counted):
its retransmission protocol recovers what was in flight (``docs/link.md``).
"""

from amaranth.hdl import ClockDomain, ClockSignal, DomainRenamer, Module, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.cdc import FFSynchronizer, PulseSynchronizer
from amaranth.lib.wiring import In, Out

from rtl.common.phit import PhitCtl, PhySignature

from .crossing import PhitCrossing, Snapshot
from .lane import LineWord, Phit, RxWord, SerdesLaneSignature
from .line import IDLE_WORD, ByteAligner, LineDecoder, LineEncoder
from .prbs import PrbsChecker, PrbsGenerator, PrbsPattern
from .reset import SerdesReset

__all__ = ["PhyMode", "PhyTx", "PhyRx", "SerdesPhy", "TxCounters", "RxCounters", "COMMA_PERIOD"]

COMMA_PERIOD = 256      # PRBS mode: one IDLE word in this many


class PhyMode(enum.Enum, shape=1):
    LINK = 0
    PRBS = 1


class TxCounters(data.Struct):
    cycles: 32      # transmit word clock cycles (wraps)
    skips: 32       # SKIP words sent inside flits (saturates)


class RxCounters(data.Struct):
    cycles: 32          # receive word clock cycles (wraps)
    symbol_errors: 32   # LINK mode: words with a code violation or disparity error (saturates)
    framing_errors: 32  # flits broken off, data outside flits (saturates)
    realigns: 16        # byte alignment changes (saturates)
    dropped: 16         # phits the receive crossing had no room for (saturates)
    prbs_errors: 32     # PRBS bit errors since the last clear (saturates)
    prbs_words: 32      # PRBS words checked since the last clear (saturates)
    prbs_locked: 1


def _count(m, domain, counter, strobe, wrap=False):
    """``counter`` += 1 on ``strobe``; saturating unless ``wrap``."""
    with m.If(strobe & (wrap | ~counter.all())):
        m.d[domain] += counter.eq(counter + 1)


class PhyTx(wiring.Component):
    """Transmit word clock side (its ``sync`` is the channel's ``tx_clk``).

    Members
    -------
    i : In(stream.Signature(Phit))
        Phits from the crossing.
    o : Out(LineWord)
        To the SerDes.
    link_en, prbs_en : In(1)
        Send flits; send the PRBS pattern (at most one high; both low: IDLE words).
    pattern : In(PrbsPattern)
    counters : Out(TxCounters)
    """

    i: In(stream.Signature(Phit))
    o: Out(LineWord)
    link_en: In(1)
    prbs_en: In(1)
    pattern: In(PrbsPattern)
    counters: Out(TxCounters)

    def elaborate(self, platform):
        m = Module()
        m.submodules.encoder = enc = LineEncoder()
        m.submodules.prbs = gen = PrbsGenerator()
        wiring.connect(m, wiring.flipped(self.i), enc.i)
        slot = Signal(range(COMMA_PERIOD))
        prbs_word = Signal(LineWord)
        m.d.comb += [enc.en.eq(self.link_en), gen.pattern.eq(self.pattern)]
        m.d.sync += slot.eq(slot + 1)
        with m.If(slot == 0):
            m.d.sync += [prbs_word.data.eq(IDLE_WORD[0]), prbs_word.k.eq(IDLE_WORD[1])]
        with m.Else():
            m.d.comb += gen.en.eq(1)
            m.d.sync += [prbs_word.data.eq(gen.data), prbs_word.k.eq(0)]
        with m.If(self.prbs_en):
            m.d.comb += self.o.eq(prbs_word)
        with m.Else():
            m.d.comb += self.o.eq(enc.o)
        _count(m, "sync", self.counters.cycles, 1, wrap=True)
        _count(m, "sync", self.counters.skips, enc.skips)
        return m


class PhyRx(wiring.Component):
    """Receive word clock side (its ``sync`` is the channel's ``rx_clk``).

    Members
    -------
    i : In(RxWord)
        From the SerDes.
    o : Out(stream.Signature(Phit, always_ready=True))
        Phits to the crossing.
    link_en, prbs_en : In(1)
        Decode flits; check the PRBS pattern (each only while the receive path is ready).
    pattern : In(PrbsPattern)
    prbs_clear : In(1)
        Strobe: zero the PRBS error and word counters.
    dropped : In(1)
        Strobe from the receive crossing: a phit found no room.
    counters : Out(RxCounters)
    """

    i: In(RxWord)
    o: Out(stream.Signature(Phit, always_ready=True))
    link_en: In(1)
    prbs_en: In(1)
    pattern: In(PrbsPattern)
    prbs_clear: In(1)
    dropped: In(1)
    counters: Out(RxCounters)

    def elaborate(self, platform):
        m = Module()
        m.submodules.aligner = align = ByteAligner()
        m.submodules.decoder = dec = LineDecoder()
        m.submodules.prbs = chk = PrbsChecker()
        w = align.o
        idle = (w.data == IDLE_WORD[0]) & (w.k == IDLE_WORD[1])
        m.d.comb += [align.i.eq(self.i), dec.i.eq(w), dec.en.eq(self.link_en),
                     chk.pattern.eq(self.pattern), chk.valid.eq(self.prbs_en & ~idle),
                     chk.data.eq(w.data), chk.clear.eq(self.prbs_clear)]
        wiring.connect(m, dec.o, wiring.flipped(self.o))
        c = self.counters
        m.d.comb += [c.prbs_errors.eq(chk.errors), c.prbs_words.eq(chk.words),
                     c.prbs_locked.eq(chk.locked)]
        _count(m, "sync", c.cycles, 1, wrap=True)
        _count(m, "sync", c.symbol_errors, dec.symbol_errors)
        _count(m, "sync", c.framing_errors, dec.framing_errors)
        _count(m, "sync", c.realigns, align.realigned)
        _count(m, "sync", c.dropped, self.dropped)
        return m


class SerdesPhy(wiring.Component):
    """One link port's PHY on one SerDes channel (core clock ``sync``).

    Parameters
    ----------
    fifo_depth : int
        Phits per crossing FIFO (a power of two).
    rx_prefill, rx_wait : int
        The receive crossing's hold of a flit (:class:`~rtl.phy.crossing.PhitCrossing`).
    reset_pulse, lock_stable, lock_timeout : int
        :class:`~rtl.phy.reset.SerdesReset`'s ``pulse``, ``stable``, ``timeout`` (core cycles).

    Members
    -------
    link : In(PhySignature(16))
        The link port's PHY side (``tx_phit``/``tx_ctl`` in, ``rx_phit``/``rx_ctl`` out).
    lane : In(SerdesLaneSignature())
        The SerDes channel.
    mode : In(PhyMode)
    pattern : In(PrbsPattern)
    prbs_clear, restart : In(1)
        Strobes: zero the PRBS counters; restart the reset sequence.
    loopback, tx_polarity, rx_polarity : In(1)
        To the channel; a change of ``loopback`` restarts the reset sequence.
    tx_ready, rx_ready : Out(1)
        Each direction is out of reset and locked.
    tx_retries, rx_retries : Out(16)
        :class:`~rtl.phy.reset.SerdesReset`'s.
    tx_dropped : Out(32)
        The link port's phits dropped: not in LINK mode, transmit side not ready, crossing full.
    rx_underflows : Out(32)
        Gaps inside a received flit (its phits came too late for the prefill).
    tx : Out(TxCounters), rx : Out(RxCounters)
        The word clock sides' counters, a few cycles late.
    """

    def __init__(self, *, fifo_depth=32, rx_prefill=4, rx_wait=16, reset_pulse=64, lock_stable=4096,
                 lock_timeout=1 << 20):
        self._reset = SerdesReset(pulse=reset_pulse, stable=lock_stable, timeout=lock_timeout)
        self._tx_cross = PhitCrossing(w_domain="sync", r_domain="tx", depth=fifo_depth)
        self._rx_cross = PhitCrossing(w_domain="rx", r_domain="sync", depth=fifo_depth,
                                      prefill=rx_prefill, wait=rx_wait)
        super().__init__({
            "link": In(PhySignature(16)), "lane": In(SerdesLaneSignature()),
            "mode": In(PhyMode), "pattern": In(PrbsPattern), "prbs_clear": In(1), "restart": In(1),
            "loopback": In(1), "tx_polarity": In(1), "rx_polarity": In(1),
            "tx_ready": Out(1), "rx_ready": Out(1), "tx_retries": Out(16), "rx_retries": Out(16),
            "tx_dropped": Out(32), "rx_underflows": Out(32),
            "tx": Out(TxCounters), "rx": Out(RxCounters)})

    def elaborate(self, platform):
        m = Module()
        lane = self.lane
        m.domains.tx = ClockDomain("tx", local=True, reset_less=True)
        m.domains.rx = ClockDomain("rx", local=True, reset_less=True)
        m.d.comb += [ClockSignal("tx").eq(lane.tx_clk), ClockSignal("rx").eq(lane.rx_clk)]

        m.submodules.reset = rst = self._reset
        loop_was = Signal()
        m.d.sync += loop_was.eq(self.loopback)
        m.d.comb += [rst.tx_pll_lock.eq(lane.tx_pll_lock), rst.rx_cdr_lock.eq(lane.rx_cdr_lock),
                     rst.rx_los.eq(lane.rx_los), rst.restart.eq(self.restart | (loop_was != self.loopback)),
                     lane.tx_pll_rst.eq(rst.tx_pll_rst), lane.tx_pcs_rst.eq(rst.tx_pcs_rst),
                     lane.rx_serdes_rst.eq(rst.rx_serdes_rst), lane.rx_pcs_rst.eq(rst.rx_pcs_rst),
                     lane.loopback.eq(self.loopback), lane.tx_polarity.eq(self.tx_polarity),
                     lane.rx_polarity.eq(self.rx_polarity),
                     self.tx_ready.eq(rst.tx_ready), self.rx_ready.eq(rst.rx_ready),
                     self.tx_retries.eq(rst.tx_retries), self.rx_retries.eq(rst.rx_retries)]
        link_mode = self.mode == PhyMode.LINK

        # core -> tx: the link port's flit phits
        m.submodules.tx_cross = txc = self._tx_cross
        take = link_mode & rst.tx_ready
        offered = self.link.tx_ctl != PhitCtl.IDLE
        m.d.comb += [txc.i.valid.eq(take & offered), txc.i.payload.data.eq(self.link.tx_phit),
                     txc.i.payload.ctl.eq(self.link.tx_ctl)]
        _count(m, "sync", self.tx_dropped, (offered & ~take) | txc.overflow)

        m.submodules.tx = tx = DomainRenamer("tx")(PhyTx())
        wiring.connect(m, txc.o, tx.i)
        m.d.comb += lane.tx.eq(tx.o)
        for name, value in (("link_en", take), ("prbs_en", ~link_mode & rst.tx_ready),
                            ("pattern", self.pattern)):
            m.submodules[f"tx_{name}"] = FFSynchronizer(value, getattr(tx, name), o_domain="tx")

        # rx -> core
        m.submodules.rx = rx = DomainRenamer("rx")(PhyRx())
        m.d.comb += rx.i.eq(lane.rx)
        for name, value in (("link_en", link_mode & rst.rx_ready), ("prbs_en", ~link_mode & rst.rx_ready),
                            ("pattern", self.pattern)):
            m.submodules[f"rx_{name}"] = FFSynchronizer(value, getattr(rx, name), o_domain="rx")
        m.submodules.rx_clear = clear = PulseSynchronizer(i_domain="sync", o_domain="rx")
        m.d.comb += [clear.i.eq(self.prbs_clear), rx.prbs_clear.eq(clear.o)]
        m.submodules.rx_cross = rxc = self._rx_cross
        wiring.connect(m, rx.o, rxc.i)
        m.d.comb += [rxc.o.ready.eq(1), rx.dropped.eq(rxc.overflow)]
        with m.If(rxc.o.valid):
            m.d.comb += [self.link.rx_phit.eq(rxc.o.payload.data), self.link.rx_ctl.eq(rxc.o.payload.ctl)]
        _count(m, "sync", self.rx_underflows, rxc.underflow)

        m.submodules.tx_snap = tx_snap = Snapshot(TxCounters, w_domain="tx", r_domain="sync")
        m.submodules.rx_snap = rx_snap = Snapshot(RxCounters, w_domain="rx", r_domain="sync")
        m.d.comb += [tx_snap.i.eq(tx.counters), self.tx.eq(tx_snap.o),
                     rx_snap.i.eq(rx.counters), self.rx.eq(rx_snap.o)]
        return m
