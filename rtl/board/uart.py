"""A UART (8N1) for the board's USB-UART (the FT2232H's second channel on the ECP5-5G Evaluation
Board): :class:`UartRx` and :class:`UartTx`, byte streams on one side, the pin on the other.

Not a unit of the dissertation: the board has no host CPU, so the host's stores and reads come over
this UART (:class:`~rtl.board.UartBridge`).  Both take ``divisor``, the clock cycles per bit (the
clock frequency over the baud rate, rounded: 156.25 MHz / 3 Mbaud gives 52, 0.16 % fast, well inside
the receiver's half-bit margin over 10 bits).  The two halves of this pair share the file, as the brief
asked for ``rtl/board/uart.py``; they share no logic.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import cdc, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["UartRx", "UartTx", "MIN_DIVISOR", "COUNTER_BITS"]

MIN_DIVISOR = 4         # the receiver samples at divisor // 2: at least two cycles into the bit
COUNTER_BITS = 16


def _saturating(m, counter, strobe):
    with m.If(strobe & (counter != (1 << len(counter)) - 1)):
        m.d.sync += counter.eq(counter + 1)


class UartRx(wiring.Component):
    """UART receiver, 8 data bits, no parity, one stop bit, least significant bit first.

    The pin passes a two-flip-flop synchronizer (it is asynchronous to ``sync``).  A falling edge
    starts a frame; the start bit is sampled ``divisor // 2`` cycles later, in its middle, and a high
    level there is a glitch: the frame is abandoned (``glitches`` counts it) and the receiver looks for
    the next falling edge.  Each data bit and the stop bit are sampled ``divisor`` cycles after the
    previous sample.  A low stop bit is a framing error: the byte is dropped, ``frame_error`` is high
    for one cycle, ``frame_errors`` counts it, and the receiver waits for the line to go high (a break
    counts once).  The received byte waits in one output register; a byte completed while the previous
    one has not been taken is dropped and counted in ``overruns`` (the UART has no flow control: a
    reader that keeps up takes a byte within 10 bit times).

    Parameters
    ----------
    divisor : int
        Clock cycles per bit, at least 4.

    Members
    -------
    rx : In(1, init=1)
        The serial input (idle high).
    o : Out(stream.Signature(8))
        Received bytes.
    frame_error : Out(1)
        High for one cycle when a byte is dropped for a low stop bit.
    frame_errors, overruns, glitches : Out(16)
        Saturating counts since reset.

    Raises
    ------
    TypeError, ValueError
        For a ``divisor`` that is not an integer of at least 4.
    """

    rx: In(1, init=1)
    o: Out(stream.Signature(8))
    frame_error: Out(1)
    frame_errors: Out(COUNTER_BITS)
    overruns: Out(COUNTER_BITS)
    glitches: Out(COUNTER_BITS)

    def __init__(self, *, divisor):
        self.divisor = check_int("divisor", divisor, MIN_DIVISOR)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        rx = Signal(init=1)
        m.submodules.sync_rx = cdc.FFSynchronizer(self.rx, rx, init=1)

        timer = Signal(range(self.divisor))
        bits = Signal(range(8))
        shift = Signal(8)
        done = Signal()             # a byte with a high stop bit, this cycle
        glitch = Signal()
        m.d.comb += self.frame_error.eq(0)
        with m.If(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(~rx):
                    m.d.sync += timer.eq(self.divisor // 2 - 1)
                    m.next = "START"
            with m.State("START"):
                with m.If(timer == 0):
                    with m.If(rx):
                        m.d.comb += glitch.eq(1)
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [timer.eq(self.divisor - 1), bits.eq(0)]
                        m.next = "DATA"
            with m.State("DATA"):
                with m.If(timer == 0):
                    m.d.sync += [shift.eq(Cat(shift[1:], rx)), bits.eq(bits + 1), timer.eq(self.divisor - 1)]
                    with m.If(bits == 7):
                        m.next = "STOP"
            with m.State("STOP"):
                with m.If(timer == 0):
                    with m.If(rx):
                        m.d.comb += done.eq(1)
                        m.next = "IDLE"
                    with m.Else():
                        m.d.comb += self.frame_error.eq(1)
                        m.next = "BREAK"
            with m.State("BREAK"):          # after a framing error: wait for the idle level
                with m.If(rx):
                    m.next = "IDLE"

        overrun = done & self.o.valid & ~self.o.ready
        with m.If(self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(done & ~overrun):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.eq(shift)]
        _saturating(m, self.frame_errors, self.frame_error)
        _saturating(m, self.overruns, overrun)
        _saturating(m, self.glitches, glitch)
        return m


class UartTx(wiring.Component):
    """UART transmitter, 8 data bits, no parity, one stop bit, least significant bit first.

    A byte is taken when the transmitter is idle (``i.ready`` high) and sent as a start bit, eight data
    bits and a stop bit of ``divisor`` cycles each; the next byte may start right after the stop bit.
    The pin is driven from a flip-flop.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit, at least 4.

    Members
    -------
    i : In(stream.Signature(8))
        Bytes to send.
    tx : Out(1, init=1)
        The serial output (idle high).
    busy : Out(1)
        A byte is being sent.

    Raises
    ------
    TypeError, ValueError
        For a ``divisor`` that is not an integer of at least 4.
    """

    i: In(stream.Signature(8))
    tx: Out(1, init=1)
    busy: Out(1)

    def __init__(self, *, divisor):
        self.divisor = check_int("divisor", divisor, MIN_DIVISOR)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        timer = Signal(range(self.divisor))
        left = Signal(range(11))        # bit times left in the frame, start bit included
        shift = Signal(9)               # the data bits, then the stop bit
        # ready in the stop bit's last cycle too: the next start bit follows it at once
        m.d.comb += [self.i.ready.eq((left == 0) | ((left == 1) & (timer == 0))), self.busy.eq(left != 0)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.tx.eq(0), shift.eq(Cat(self.i.payload, 1)), left.eq(10),
                         timer.eq(self.divisor - 1)]
        with m.Elif(left != 0):
            with m.If(timer != 0):
                m.d.sync += timer.eq(timer - 1)
            with m.Else():
                m.d.sync += [left.eq(left - 1), timer.eq(self.divisor - 1)]
                with m.If(left != 1):
                    m.d.sync += [self.tx.eq(shift[0]), shift.eq(shift[1:])]
        return m
