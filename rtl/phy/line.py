"""The phits of a link port on an 8b/10b line (issue 47; dissertation ch. 7.3, fig. 7-15's PHY).

EXTOLL's prototype marks frames with start and end characters on the line; here a word carries one
16-bit phit, and the phit's two control bits (:class:`~rtl.link.params.PhitCtl`) follow from marker
words, because two 8b/10b data symbols have no room for them:

========================  ===============  =========================================================
word                      bytes (0, 1)     meaning
========================  ===============  =========================================================
IDLE                      K28.5, D16.2     no flit; the comma aligns the receiver's bytes
START                     K27.7, K27.7     a flit starts: the next data word is its SOF phit
data                      two D symbols    a phit of the flit under way
SKIP                      K28.0, K28.0     inside a flit: the next phit is not there yet (ignored)
========================  ===============  =========================================================

A flit's last data word is its EOF (CRC) phit: the word after it is START or IDLE, never data or
SKIP, so the receiver holds each phit for one word until it knows whether it was the last.  A flit of
``n`` phits takes ``n + 1`` words plus its SKIPs.

Rate matching is by IDLE words: the transmitter sends IDLE whenever no flit is under way, the receiver
drops them.  The line's word rate (100 MHz at 2.0 Gb/s) must exceed the phits the core sends by the
marker overhead: the shortest flits, 4-phit control flits, need 5 words per 4 phits, so a link port
that sends them back to back when idle needs ``[link] idle_gap`` of at least 1 at a core clock of
80 MHz (5 words per 5 core cycles), and 6-phit data flits need ``f_core <= 6/7 f_word`` (86 MHz).
One IDLE word at least every ``comma_interval`` words keeps a receiver that comes up in the middle of
traffic aligned.  There is no clock tolerance compensation in the PCS.

The receiver breaks off a flit at any word that does not fit the sequence (a symbol error, an unknown
K word, START or IDLE right after START): it counts a framing error, drops the phit it holds, passes
an IDLE phit instead and nothing more until the next START.  The link port then sees a flit with an
IDLE phit in it, which its framer rejects, and the retransmission protocol sends the flit again
(``docs/link.md``).
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import enum, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int
from rtl.common.phit import PhitCtl

from .lane import D16_2, K27_7, K28_0, K28_5, LineWord, Phit, RxWord

__all__ = ["LineEncoder", "ByteAligner", "LineDecoder", "IDLE_WORD", "START_WORD", "SKIP_WORD"]

IDLE_WORD = (K28_5 | D16_2 << 8, 0b01)
START_WORD = (K27_7 | K27_7 << 8, 0b11)
SKIP_WORD = (K28_0 | K28_0 << 8, 0b11)


def _word(m, out, word):
    m.d.sync += [out.data.eq(word[0]), out.k.eq(word[1])]


class _TxState(enum.Enum, shape=2):
    IDLE = 0
    FIRST = 1
    FLIT = 2


class LineEncoder(wiring.Component):
    """Phits to line words (transmit word clock ``sync``), one word per cycle.

    Members
    -------
    i : In(stream.Signature(Phit))
        The flits' phits (no IDLE phits), SOF first and EOF last.  A phit that is not there in time
        inside a flit becomes a SKIP word.  Phits before a SOF (the rest of a flit whose start was
        lost when the crossing in front overflowed, which it counts) are dropped; a SOF before the
        previous flit's EOF starts a new flit: the old one ends there, its last phit arrives as an EOF,
        and the link port's length and CRC checks reject it.
    o : Out(LineWord)
        The word to the SerDes (registered).
    en : In(1)
        Send phits; when low, IDLE words only and ``i`` is not read.
    skips : Out(1)
        Strobe: a SKIP word was sent (the flit's next phit was late).

    Parameters
    ----------
    comma_interval : int
        A flit that would start ``comma_interval`` or more words after the last IDLE word waits for
        one IDLE word first, so that a receiver that comes up while flits follow each other back to
        back finds a comma to align to (its PCS and :class:`ByteAligner` need one).
    """

    def __init__(self, *, comma_interval=128):
        self._interval = check_int("comma_interval", comma_interval, 2, 1 << 16)
        super().__init__({"i": In(stream.Signature(Phit)),
                          "o": Out(LineWord, init={"data": IDLE_WORD[0], "k": IDLE_WORD[1]}),
                          "en": In(1), "skips": Out(1)})

    def elaborate(self, platform):
        m = Module()
        state = Signal(_TxState)
        head = self.i.payload
        since = Signal(range(self._interval + 1))       # words since the last IDLE word
        due = since == self._interval
        m.d.sync += since.eq(Mux(due, since, since + 1))
        with m.If((self.o.data == IDLE_WORD[0]) & (self.o.k == IDLE_WORD[1])):
            m.d.sync += since.eq(1)

        def send_head(next_state):
            m.d.comb += self.i.ready.eq(1)
            m.d.sync += [self.o.data.eq(head.data), self.o.k.eq(0), state.eq(next_state)]

        m.d.sync += self.skips.eq(0)
        with m.If(~self.en):
            _word(m, self.o, IDLE_WORD)
            m.d.sync += state.eq(_TxState.IDLE)
        with m.Elif(~self.i.valid):
            with m.If(state == _TxState.IDLE):
                _word(m, self.o, IDLE_WORD)
            with m.Else():
                _word(m, self.o, SKIP_WORD)
                m.d.sync += self.skips.eq(1)
        with m.Elif((state == _TxState.IDLE) & (head.ctl != PhitCtl.SOF)):
            m.d.comb += self.i.ready.eq(1)
            _word(m, self.o, IDLE_WORD)
        with m.Elif((state == _TxState.IDLE) & due):
            _word(m, self.o, IDLE_WORD)
        with m.Elif(((state == _TxState.IDLE) | (state == _TxState.FLIT)) & (head.ctl == PhitCtl.SOF)):
            _word(m, self.o, START_WORD)
            m.d.sync += state.eq(_TxState.FIRST)
        with m.Elif((state == _TxState.FLIT) & (head.ctl == PhitCtl.EOF)):
            send_head(_TxState.IDLE)
        with m.Else():
            send_head(_TxState.FLIT)
        return m


class ByteAligner(wiring.Component):
    """Word alignment of the received byte pairs (receive word clock ``sync``).

    The PCS aligns 10-bit symbols to the comma, but which byte of its 16-bit word a comma lands in
    depends on its reset.  A K28.5 in byte 1 switches to words made of the previous word's byte 1
    and this word's byte 0; a K28.5 in byte 0 switches back.

    Members
    -------
    i : In(RxWord)
        From the SerDes, every cycle.
    o : Out(RxWord)
        Aligned words, a cycle later.
    realigned : Out(1)
        Strobe: the alignment changed.
    """

    i: In(RxWord)
    o: Out(RxWord)
    realigned: Out(1)

    def elaborate(self, platform):
        m = Module()
        prev = Signal(RxWord)
        shift = Signal()
        m.d.sync += prev.eq(self.i)
        comma = [(self.i.data[8 * b:8 * b + 8] == K28_5) & self.i.k[b]
                 & ~self.i.code_err[b] & ~self.i.disp_err[b] for b in range(2)]
        new_shift = Mux(comma[1], 1, Mux(comma[0], 0, shift))
        m.d.sync += [shift.eq(new_shift), self.realigned.eq(new_shift != shift)]
        # word ``new_shift`` selects from (previous byte 1, this byte 0) or this word
        shifted = Signal(RxWord)
        m.d.comb += [shifted.data.eq(Cat(prev.data[8:], self.i.data[:8])),
                     shifted.k.eq(Cat(prev.k[1], self.i.k[0])),
                     shifted.code_err.eq(Cat(prev.code_err[1], self.i.code_err[0])),
                     shifted.disp_err.eq(Cat(prev.disp_err[1], self.i.disp_err[0]))]
        with m.If(shift):
            m.d.sync += self.o.eq(shifted)
        with m.Else():
            m.d.sync += self.o.eq(self.i)
        return m


class _RxState(enum.Enum, shape=2):
    OUT = 0
    FIRST = 1     # START seen, no phit yet
    HELD = 2      # holding a phit until the next word shows whether it was the flit's last


class LineDecoder(wiring.Component):
    """Aligned line words to phits (receive word clock ``sync``).

    Members
    -------
    i : In(RxWord)
        Aligned words, every cycle.
    en : In(1)
        The receive path is locked and out of reset; when low, every word is ignored (a flit under
        way ends in an IDLE phit, as a broken one does, but is not counted).
    o : Out(stream.Signature(Phit, always_ready=True))
        The flits' phits (registered), each a word after its own, and an IDLE phit where a flit was
        broken off.  Always ready: the crossing behind counts what it cannot take.
    symbol_errors : Out(1)
        Strobe: a word with a code violation or disparity error.
    framing_errors : Out(1)
        Strobe: a flit broken off, or data words outside a flit (counted once per run).
    """

    i: In(RxWord)
    en: In(1)
    o: Out(stream.Signature(Phit, always_ready=True))
    symbol_errors: Out(1)
    framing_errors: Out(1)

    def elaborate(self, platform):
        m = Module()
        w = self.i
        bad = (w.code_err != 0) | (w.disp_err != 0)
        is_data = ~bad & (w.k == 0)

        def is_word(word):
            return ~bad & (w.k == word[1]) & (w.data == word[0])

        start, idle, skip = is_word(START_WORD), is_word(IDLE_WORD), is_word(SKIP_WORD)
        state = Signal(_RxState)
        held, held_first = Signal(16), Signal()
        stray = Signal()        # inside a run of data words outside a flit
        broken = Signal()
        m.d.sync += [self.o.valid.eq(0), self.symbol_errors.eq(self.en & bad),
                     self.framing_errors.eq(broken)]

        def emit(ctl):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.data.eq(held), self.o.payload.ctl.eq(ctl)]

        with m.If(~self.en):
            m.d.sync += [state.eq(_RxState.OUT), stray.eq(0)]
            with m.If(state != _RxState.OUT):
                # the receive path went down inside a flit: close it as a broken one
                m.d.sync += [self.o.valid.eq(1), self.o.payload.data.eq(0),
                             self.o.payload.ctl.eq(PhitCtl.IDLE)]
        with m.Elif(skip & (state != _RxState.OUT)):
            pass
        with m.Elif(is_data & (state == _RxState.OUT)):
            m.d.comb += broken.eq(~stray)
            m.d.sync += stray.eq(1)
        with m.Elif(is_data):
            with m.If(state == _RxState.HELD):
                emit(Mux(held_first, PhitCtl.SOF, PhitCtl.BODY))
            m.d.sync += [held.eq(w.data), held_first.eq(state == _RxState.FIRST),
                         state.eq(_RxState.HELD)]
        with m.Elif((start | idle) & (state == _RxState.HELD)):
            emit(PhitCtl.EOF)
            m.d.sync += [state.eq(Mux(start, _RxState.FIRST, _RxState.OUT)), stray.eq(0)]
        with m.Elif(start):
            m.d.comb += broken.eq(state != _RxState.OUT)
            m.d.sync += [state.eq(_RxState.FIRST), stray.eq(0)]
        with m.Else():
            # IDLE right after START, an unknown K word, a symbol error
            m.d.comb += broken.eq(state != _RxState.OUT)
            m.d.sync += [state.eq(_RxState.OUT), stray.eq(0)]
        with m.If(broken & (state != _RxState.OUT)):
            # the flit ends in an IDLE phit: the link port rejects it, the crossing stops waiting
            m.d.sync += [self.o.valid.eq(1), self.o.payload.data.eq(0), self.o.payload.ctl.eq(PhitCtl.IDLE)]
        return m
