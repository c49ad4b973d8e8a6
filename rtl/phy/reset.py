"""Reset sequence of one SerDes channel (issue 47; Lattice TN1261, "Reset Sequence and Reset State
Diagram"), in the core clock, which runs before any SerDes clock does.

Transmit: hold the TX PLL and the TX PCS in reset for ``pulse`` cycles, release the PLL, wait until
its lock has held for ``stable`` cycles (or retry after ``timeout``), then release the PCS and wait
``settle`` cycles (the words the PCS held drain) before the side is ready.  Receive, once the
transmit side is ready: the same with the CDR and the RX PCS, where the lock is the CDR's and a
signal must be there.  Losing the PLL's lock restarts both sides; losing the signal or the CDR's lock
restarts the receive side.  ``restart`` restarts both (a register write, or a change of loopback).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["SerdesReset"]


class SerdesReset(wiring.Component):
    """Parameters
    ----------
    pulse, stable, timeout, settle : int
        Core clock cycles: reset pulse, lock hold before a release, wait for a lock before a retry,
        wait after a PCS release before the side is ready (the words the PCS held drain).

    Members
    -------
    tx_pll_lock, rx_cdr_lock, rx_los : In(1)
        From the SerDes (asynchronous; synchronised here).
    restart : In(1)
        Strobe: restart both sides.
    tx_pll_rst, tx_pcs_rst, rx_serdes_rst, rx_pcs_rst : Out(1)
        To the SerDes.
    tx_ready, rx_ready : Out(1)
        The side is out of reset and locked.
    tx_retries, rx_retries : Out(16)
        Sequences restarted on a lock that did not come (``timeout``) or was lost, per side.
    """

    tx_pll_lock: In(1)
    rx_cdr_lock: In(1)
    rx_los: In(1)
    restart: In(1)
    tx_pll_rst: Out(1, init=1)
    tx_pcs_rst: Out(1, init=1)
    rx_serdes_rst: Out(1, init=1)
    rx_pcs_rst: Out(1, init=1)
    tx_ready: Out(1)
    rx_ready: Out(1)
    tx_retries: Out(16)
    rx_retries: Out(16)

    def __init__(self, *, pulse=64, stable=4096, timeout=1 << 20, settle=32):
        self._pulse = check_int("pulse", pulse, 1, 1 << 16)
        self._settle = check_int("settle", settle, 1, 1 << 16)
        self._stable = check_int("stable", stable, 1, 1 << 24)
        self._timeout = check_int("timeout", timeout, stable + 1, 1 << 28)
        super().__init__()

    def _side(self, m, name, go, locked, lock_rst, pcs_rst, ready, retries):
        """One side's sequence: PULSE -> WAIT -> READY; ``go`` low holds it in PULSE."""
        timer = Signal(range(max(self._timeout, self._pulse, self._settle) + 1), name=f"{name}_timer")
        held = Signal(range(self._stable + 1), name=f"{name}_held")
        with m.FSM(name=f"{name}_fsm"):
            with m.State("PULSE"):
                m.d.sync += [lock_rst.eq(1), pcs_rst.eq(1), ready.eq(0), held.eq(0)]
                m.d.sync += timer.eq(timer + 1)
                with m.If(~go):
                    m.d.sync += timer.eq(0)
                with m.Elif(timer == self._pulse - 1):
                    m.d.sync += [timer.eq(0), lock_rst.eq(0)]
                    m.next = "WAIT"
            with m.State("WAIT"):
                m.d.sync += [timer.eq(timer + 1), held.eq(held + 1)]
                with m.If(~locked):
                    m.d.sync += held.eq(0)
                with m.If(~go):
                    m.d.sync += timer.eq(0)
                    m.next = "PULSE"
                with m.Elif(locked & (held == self._stable - 1)):
                    m.d.sync += [pcs_rst.eq(0), timer.eq(0)]
                    m.next = "SETTLE"
                with m.Elif(timer == self._timeout - 1):
                    m.d.sync += [timer.eq(0), retries.eq(retries + (retries != 0xffff))]
                    m.next = "PULSE"
            with m.State("SETTLE"):
                # words still in the PCS from before its release (garbage) drain first
                m.d.sync += timer.eq(timer + 1)
                with m.If(~go | ~locked):
                    m.d.sync += [timer.eq(0), pcs_rst.eq(1), lock_rst.eq(1)]
                    m.next = "PULSE"
                with m.Elif(timer == self._settle - 1):
                    m.d.sync += ready.eq(1)
                    m.next = "READY"
            with m.State("READY"):
                with m.If(~go | ~locked):
                    m.d.sync += [timer.eq(0), ready.eq(0), pcs_rst.eq(1), lock_rst.eq(1)]
                    with m.If(go):
                        m.d.sync += retries.eq(retries + (retries != 0xffff))
                    m.next = "PULSE"

    def elaborate(self, platform):
        m = Module()
        pll_lock, cdr_lock, los = Signal(), Signal(), Signal(init=1)
        m.submodules.sync_pll = FFSynchronizer(self.tx_pll_lock, pll_lock)
        m.submodules.sync_cdr = FFSynchronizer(self.rx_cdr_lock, cdr_lock)
        m.submodules.sync_los = FFSynchronizer(self.rx_los, los, init=1)
        restarting = Signal()
        m.d.sync += restarting.eq(self.restart)
        self._side(m, "tx", ~restarting & ~self.restart, pll_lock, self.tx_pll_rst, self.tx_pcs_rst,
                   self.tx_ready, self.tx_retries)
        self._side(m, "rx", self.tx_ready & ~self.restart, cdr_lock & ~los, self.rx_serdes_rst,
                   self.rx_pcs_rst, self.rx_ready, self.rx_retries)
        return m
