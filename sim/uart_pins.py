"""A PC's UART on a DUT's pins in cocotb (8N1, ``divisor`` clock cycles per bit): the bus model of a
board top's UART, and a :class:`sim.uart_bridge.BridgeTransport` so that
:class:`~sim.uart_bridge.UartBridgeHost` runs on the simulated board as on a real one; and
:class:`SimClock`, the clock of :class:`sim.board.BoardHost` in simulation."""

from collections import deque

import cocotb
from cocotb.triggers import ClockCycles, Event, FallingEdge, ReadOnly
from cocotb.utils import get_sim_time

from .uart_bridge import BridgeTransport

__all__ = ["UartPins", "SimClock"]


class UartPins(BridgeTransport):
    """Parameters
    ----------
    clk : the DUT's clock signal
    rx : the DUT's UART input (this model drives it)
    tx : the DUT's UART output (this model samples it)
    divisor : int
        Clock cycles per bit, the DUT's ``UartRx``/``UartTx`` ``divisor``.
    timeout : int
        Clock cycles :meth:`recv` waits for a byte before it raises ``TimeoutError``.
    """

    def __init__(self, clk, rx, tx, *, divisor, timeout=200_000):
        self.clk, self.rx, self.tx, self.divisor, self.timeout = clk, rx, tx, divisor, timeout
        self.rx.value = 1
        self.received = deque()
        self.framing_errors = 0
        self._got = Event()
        self._task = cocotb.start_soon(self._receive())

    async def send(self, data):
        for byte in bytes(data):
            for bit in [0] + [byte >> i & 1 for i in range(8)] + [1]:
                self.rx.value = bit
                await ClockCycles(self.clk, self.divisor)

    async def _receive(self):
        while True:
            await FallingEdge(self.tx)
            await ClockCycles(self.clk, self.divisor // 2)
            await ReadOnly()
            if int(self.tx.value):
                continue                    # a glitch, not a start bit
            byte = 0
            for i in range(8):
                await ClockCycles(self.clk, self.divisor)
                await ReadOnly()
                byte |= int(self.tx.value) << i
            await ClockCycles(self.clk, self.divisor)
            await ReadOnly()
            if not int(self.tx.value):
                self.framing_errors += 1
                continue
            self.received.append(byte)
            self._got.set()

    async def recv(self, n):
        out = bytearray()
        waited = 0
        while len(out) < n:
            if self.received:
                out.append(self.received.popleft())
                continue
            self._got.clear()
            await ClockCycles(self.clk, self.divisor * 10)
            waited += self.divisor * 10
            if waited > self.timeout:
                raise TimeoutError(f"{len(out)} of {n} bytes from the DUT in {self.timeout} cycles")
        return bytes(out)


class SimClock:
    """Simulated time in cycles of ``clk`` (period ``period_ns``): ``now()`` and ``async cycles(n)``."""

    def __init__(self, clk, period_ns):
        self.clk, self.period_ns = clk, period_ns

    def now(self):
        return int(get_sim_time("ns") / self.period_ns + 1e-6)

    async def cycles(self, n):
        await ClockCycles(self.clk, max(1, n))
