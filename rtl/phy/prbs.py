"""PRBS generator and checker for the bring-up of a SerDes lane (issue 47; ``docs/phy.md``).

Not a block of the dissertation: a test aid of the PHY.  The transmit side sends a pseudo-random
binary sequence instead of link traffic, the receive side counts the bit errors, the way a bit error
rate tester does (ITU-T O.150).

Conventions shared by :class:`PrbsGenerator`, :class:`PrbsChecker` and their tests:

* **Bit order.**  A word is 16 consecutive bits of the sequence: bit 0 is the earliest, bit 15 the
  latest.  In a :class:`~rtl.phy.lane.LineWord` byte 0 (bits 7:0, the earlier symbol) therefore
  carries the earlier 8 bits.  With 8b/10b in the path the sequence is a property of the data the
  PCS carries, not of the serial line.
* **The sequences.**  A Fibonacci shift register of ``n`` stages Q1..Qn and the polynomial
  x^n + x^m + 1: each bit Q1 takes Qm xor Qn and every stage moves on by one; the sequence is the
  bit stream through the register (O.150 takes it at Qn), so ``s[k] = s[k-m] xor s[k-n]``.

  - PRBS7, x^7 + x^6 + 1 (``n=7, m=6``), not inverted.  O.150's clause 5 starts at 2^9-1; this is the
    PRBS7 of transceivers and test sets (OIF-CEI, the PRBS-7 of FPGA transceivers).
  - PRBS31, x^31 + x^28 + 1 (``n=31, m=28``), **inverted** as O.150 clause 5.8 specifies: the line
    carries the complement of the register bits, so its longest run of zeros is 31 and of ones 30.
    A receiver set to the non-inverted PRBS31 sees every bit wrong and never locks.
* **History.**  Both blocks keep the last 31 line bits (after inversion, bit 0 the oldest).  The
  last ``n`` of them, inverted back where the pattern is inverted, are the register Q1..Qn (Qn the
  oldest); the next word continues the sequence from there, and the history moves on by that word
  with the register after the step as its last ``n`` bits (:func:`prbs_step`).  Any 31 bits are a
  valid PRBS31 state except all ones on the line; a PRBS7 state is any 7 line bits except zero.
* **Seed.**  O.150's starting state, every stage one.  Where the register the history holds is all
  zero (an LFSR never leaves that state), the seed stands in for it, so neither block can stop at
  zero, whatever its input or a change of pattern left in the history.
* **Clock.**  Both blocks run in ``sync``; the PHY renames it to its transmit and receive word
  clocks (``DomainRenamer``).
"""

from amaranth.hdl import Assert, Cat, Module, Mux, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["PrbsPattern", "PrbsGenerator", "PrbsChecker", "lfsr_step", "prbs_step", "WORD_BITS"]

WORD_BITS = 16          # one line word: two 8b/10b data bytes
HISTORY_BITS = 31       # the longest register (PRBS31)
COUNTER_MAX = 2**32 - 1


class PrbsPattern(enum.Enum, shape=1):
    """The sequence a :class:`PrbsGenerator` sends and a :class:`PrbsChecker` expects.

    ``length``, ``tap`` and ``inverted`` give the polynomial x^length + x^tap + 1 and whether the line
    carries the register bits inverted (module docstring).
    """
    PRBS7 = 0
    PRBS31 = 1

    @property
    def length(self):
        return {0: 7, 1: 31}[self.value]

    @property
    def tap(self):
        return {0: 6, 1: 28}[self.value]

    @property
    def inverted(self):
        return self.value == 1


def lfsr_step(state, pattern, count=WORD_BITS):
    """The next ``count`` bits of ``pattern``'s register, as combinational logic unrolled in Python.

    Parameters
    ----------
    state : Value
        The register, ``pattern.length`` bits of the (not inverted) sequence, bit 0 the oldest
        (stage Qn), the last bit the newest (Q1).
    pattern : PrbsPattern
        The polynomial.
    count : int
        How many bits to step.

    Returns
    -------
    (Value, Value)
        The register after ``count`` bits, and those ``count`` bits (bit 0 the earliest).
    """
    n, m = pattern.length, pattern.tap
    # each bit as the set of register bits it is the xor of (a mask), so every output is one flat xor
    bits = [1 << i for i in range(n)]
    for _ in range(count):
        bits.append(bits[-n] ^ bits[-m])        # s[k] = s[k-n] xor s[k-m]
    def xor_of(mask):
        return Cat(*(state[i] for i in range(n) if mask >> i & 1)).xor()
    return Cat(*map(xor_of, bits[-n:])), Cat(*map(xor_of, bits[n:]))


def _line_step(m, pattern, history):
    """``prbs_step`` for a constant ``pattern``: ``(next_history, word, seeded)``."""
    n = pattern.length
    flip = (1 << n) - 1 if pattern.inverted else 0
    seeded = Signal(name=f"{pattern.name.lower()}_seeded")
    state = Signal(n, name=f"{pattern.name.lower()}_state")     # a signal: lfsr_step reads it many times
    m.d.comb += [seeded.eq((history[-n:] ^ flip) == 0),
                 state.eq(Mux(seeded, (1 << n) - 1, history[-n:] ^ flip))]
    state, bits = lfsr_step(state, pattern)
    word = bits ^ ((1 << WORD_BITS) - 1 if pattern.inverted else 0)
    # the history moves on by the word, its last n bits the register stepped (from the seed, if it
    # stood in: then, for PRBS31, not the bits on the line)
    shifted = Cat(history[WORD_BITS:], word)
    return Cat(shifted[:len(history) - n], state ^ flip), word, seeded


def prbs_step(m, pattern, history):
    """The line word that follows ``history`` in the selected sequence, as combinational logic in ``m``.

    Parameters
    ----------
    m : Module
        Where the logic goes.
    pattern : Value of shape PrbsPattern
        The sequence.
    history : Value
        The last 31 line bits (after inversion), bit 0 the oldest.

    Returns
    -------
    (Signal, Signal, Signal)
        ``next_history``: ``history`` moved on by the word, its last ``n`` bits the register after
        the step; ``word``: the next 16 line bits (bit 0 the earliest); ``seeded``: the register in
        ``history`` was all zero and the seed stood in for it.
    """
    steps = {p: _line_step(m, p, history) for p in PrbsPattern}
    next_history, word, seeded = Signal(HISTORY_BITS), Signal(WORD_BITS), Signal()
    with m.Switch(pattern):
        for p, (h, w, s) in steps.items():
            with m.Case(p):
                m.d.comb += [next_history.eq(h), word.eq(w), seeded.eq(s)]
    return next_history, word, seeded


def _popcount(value):
    """The number of ones in ``value``, as a balanced adder tree."""
    terms = [value[i] for i in range(len(value))]
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


class PrbsGenerator(wiring.Component):
    """The transmit side of a PRBS test: 16 bits of the selected sequence a cycle.

    The history (module docstring) is one 31-bit register and ``data`` its last 16 bits, so ``data``
    comes straight from flip-flops.  At reset the history is all zero on the line: for PRBS31 that is
    O.150's starting state (31 ones, inverted), ``data`` shows its bits 15..30 and the first ``en``
    loads 0xFFFF (its bits 31..46: the first 16 of the 28 zeros after the seed, inverted); for PRBS7
    the seed stands in for the zero register, the reset word 0x0000 is not part of the sequence and
    the first ``en`` loads 0x3040 (the 16 bits after seven ones).

    A change of ``pattern`` continues the new sequence from the last ``n`` bits sent (for PRBS31 the
    whole history is a valid state, so the switch is seamless); where those bits are all zero as the
    new pattern reads them (a PRBS31 run of zeros read as PRBS7), the seed stands in.  The register
    is therefore never all zero.

    Members
    -------
    pattern : In(PrbsPattern)
        The sequence to send; sampled where ``en`` is high.
    en : In(1)
        Advance by a word: ``data`` shows the next 16 bits of the sequence from the next cycle on.
    data : Out(16)
        The current word (registered), bit 0 the earliest bit on the line.
    """

    pattern: In(PrbsPattern)
    en: In(1)
    data: Out(WORD_BITS)

    def elaborate(self, platform):
        m = Module()
        history = Signal(HISTORY_BITS)
        next_history, _, _ = prbs_step(m, self.pattern, history)
        with m.If(self.en):
            m.d.sync += history.eq(next_history)
        m.d.comb += self.data.eq(history[-WORD_BITS:])
        return m


class PrbsChecker(wiring.Component):
    """The receive side of a PRBS test: synchronises to the received sequence and counts bit errors.

    **Unlocked**, the checker loads every valid word into its history, so once a register's worth of
    correct bits has arrived (one word for PRBS7, two for PRBS31) it predicts the next word.  A word
    that equals its prediction is good unless the prediction came from an all-zero register (a dead
    line, all zeros or all ones, must not pass for a sequence).  After ``lock_words`` good words in a
    row it is **locked**.

    **Locked**, it advances the history from its own prediction and ignores the received bits for
    that: a self-synchronising checker (one that always shifts in what it receives) would count one
    flipped line bit once when it arrives and again each time it reaches a tap (three times for these
    trinomials).  Here one flipped bit is one error; a bit slip or a loss of sync makes nearly every
    word wrong instead.  After ``unlock_errors`` words in a row with errors it drops lock and
    synchronises again.  A change of ``pattern`` drops lock at once (the word presented in that
    cycle is ignored).

    While locked every valid word is checked: ``words`` counts it and ``errors`` adds the number of
    bits in which it differs from the prediction (0..16).  Both counters see a word two cycles after
    it is presented (the sum is registered before it reaches the 32-bit adders), saturate at
    2^32-1, and count nothing while unlocked (the word that drops lock is counted, the one that
    completes lock is not).  A bit error rate is ``errors / (16 * words)``.

    Parameters
    ----------
    lock_words : int
        Good words in a row that lock the checker (1..255).  A random word passes with probability
        2^-16, so the default 16 makes a false lock impossible in practice.
    unlock_errors : int
        Words with errors in a row that drop lock (1..255).  The default 8: a synchronised link at bit
        error rate ``b`` has a word in error with probability about ``16 b``, so it drops lock with
        probability about ``(16 b)^8`` a word (4e-15 at b=1e-3, one false drop in weeks at 100 M
        words/s); a slipped or foreign sequence passes a word with probability 2^-16, so it drops lock
        after 8 words (80 ns), having counted about 64 bit errors for the event.

    Members
    -------
    pattern : In(PrbsPattern)
        The sequence expected.
    valid : In(1)
        ``data`` holds a received word this cycle; words with ``valid`` low are ignored.
    data : In(16)
        The received word, bit 0 the earliest on the line.
    clear : In(1)
        Zero ``errors`` and ``words``; they count again from the word presented in the same cycle.
    errors : Out(32)
        Bit errors counted since ``clear`` (saturating).
    words : Out(32)
        Words checked since ``clear`` (saturating).
    locked : Out(1)
        The checker is synchronised and counting.

    Raises
    ------
    TypeError
        If a parameter is not an integer.
    ValueError
        If a parameter is out of range.
    """

    pattern: In(PrbsPattern)
    valid: In(1)
    data: In(WORD_BITS)
    clear: In(1)
    errors: Out(32)
    words: Out(32)
    locked: Out(1)

    def __init__(self, *, lock_words=16, unlock_errors=8):
        self.lock_words = check_int("lock_words", lock_words, 1, 255)
        self.unlock_errors = check_int("unlock_errors", unlock_errors, 1, 255)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        history = Signal(HISTORY_BITS)
        next_history, predicted, seeded = prbs_step(m, self.pattern, history)
        diff = Signal(WORD_BITS)
        m.d.comb += diff.eq(predicted ^ self.data)

        last_pattern = Signal(PrbsPattern)
        m.d.sync += last_pattern.eq(self.pattern)
        changed = self.pattern != last_pattern
        run = Signal(8)         # good words in a row while unlocked, words with errors while locked
        with m.If(changed):
            m.d.sync += [self.locked.eq(0), run.eq(0)]
        with m.Elif(self.valid & self.locked):
            m.d.sync += [history.eq(next_history), run.eq(Mux(diff.any(), run + 1, 0))]
            with m.If(diff.any() & (run == self.unlock_errors - 1)):
                m.d.sync += [self.locked.eq(0), run.eq(0)]
        with m.Elif(self.valid):
            good = ~diff.any() & ~seeded
            m.d.sync += [history.eq(Cat(history[WORD_BITS:], self.data)), run.eq(Mux(good, run + 1, 0))]
            with m.If(good & (run == self.lock_words - 1)):
                m.d.sync += [self.locked.eq(1), run.eq(0)]

        checked, wrong = Signal(), Signal(range(WORD_BITS + 1))
        m.d.sync += [checked.eq(self.valid & self.locked & ~changed), wrong.eq(_popcount(diff))]
        errors = self.errors + wrong
        with m.If(self.clear):
            m.d.sync += [self.errors.eq(0), self.words.eq(0)]
        with m.Elif(checked):
            m.d.sync += [self.errors.eq(Mux(errors > COUNTER_MAX, COUNTER_MAX, errors)),
                         self.words.eq(self.words + (self.words != COUNTER_MAX))]

        if platform == "formal":
            # locked implies a non-zero register, so the own-prediction path can never be seeded
            m.d.comb += Assert(~(self.locked & ~changed) | ~seeded)
        return m

