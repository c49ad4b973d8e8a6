# amaranth: UnusedElaboratable=no
"""PrbsGenerator and PrbsChecker (rtl/phy/prbs.py) against a bit-serial reference of PRBS7 and PRBS31.

The reference is written from the polynomials and ITU-T O.150's drawing of the shift register, not
from the gateware's parallel step.  Random tests print their seed; ``SEED=<n>`` replays one.
"""

import os
import random

import pytest
from amaranth.hdl import Module

from rtl.phy.prbs import PrbsChecker, PrbsGenerator, PrbsPattern
from sim.amsim import run_sim

PRBS7, PRBS31 = PrbsPattern.PRBS7, PrbsPattern.PRBS31
PATTERNS = [PRBS7, PRBS31]
OTHER = {PRBS7: PRBS31, PRBS31: PRBS7}
# (n, m, inverted): x^n + x^m + 1; O.150 clause 5.8 inverts PRBS31, PRBS7 is sent as it is
POLY = {PRBS7: (7, 6, False), PRBS31: (31, 28, True)}
MAX = 2**32 - 1


def _rng():
    seed = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {seed} (replay with SEED={seed})")
    return random.Random(seed)


def _bits(word):
    return [word >> i & 1 for i in range(16)]


def _word(bits):
    return sum(b << i for i, b in enumerate(bits))


class Lfsr:
    """O.150's shift register: stages Q1..Qn (bit i-1 of ``reg``); at each clock Q1 takes Qm xor Qn
    and every other stage takes its predecessor's bit."""

    def __init__(self, pattern, reg):
        self.n, self.m, self.inverted = POLY[pattern]
        self.reg = reg

    @classmethod
    def seed(cls, pattern):
        """The register with every stage one (O.150's starting state)."""
        return cls(pattern, (1 << POLY[pattern][0]) - 1)

    @classmethod
    def after(cls, pattern, line):
        """The register that holds the last n bits of ``line`` (oldest first, as on the line)."""
        n, _, inverted = POLY[pattern]
        return cls(pattern, sum((line[-q] ^ inverted) << (q - 1) for q in range(1, n + 1)))

    def clock(self):
        """One clock; the bit that entered Q1, the next bit of the sequence (not inverted)."""
        fb = (self.reg >> (self.m - 1) ^ self.reg >> (self.n - 1)) & 1
        self.reg = (self.reg << 1 | fb) & ((1 << self.n) - 1)
        return fb

    def line_word(self):
        """The next 16 bits as the line carries them, bit 0 the earliest."""
        return _word([self.clock() ^ self.inverted for _ in range(16)])


def _words(pattern, count):
    """The first ``count`` line words after the all-ones seed."""
    lfsr = Lfsr.seed(pattern)
    return [lfsr.line_word() for _ in range(count)]


class GeneratorModel:
    """PrbsGenerator as its docstring states it: a 31-bit line history, all zero at reset; a word
    continues the selected sequence from the register in the history (the seed standing in for an
    all-zero one); the history moves on by the word and its last n bits are then the register."""

    def __init__(self):
        self.line = [0] * 31
        self.seeded = 0

    @property
    def data(self):
        return _word(self.line[-16:])

    def advance(self, pattern):
        n, _, inverted = POLY[pattern]
        lfsr = Lfsr.after(pattern, self.line)
        if lfsr.reg == 0:
            self.seeded += 1
            lfsr = Lfsr.seed(pattern)
        self.line = (self.line + _bits(lfsr.line_word()))[-31:]
        self.line[-n:] = [(lfsr.reg >> (q - 1) & 1) ^ inverted for q in range(n, 0, -1)]


# -- the reference ----------------------------------------------------------------------------------

def test_reference_prbs7_period_ones_and_start():
    lfsr = Lfsr.seed(PRBS7)
    states, bits = set(), []
    for _ in range(127):
        states.add(lfsr.reg)
        bits.append(lfsr.clock())
    assert lfsr.reg == 0x7F and len(states) == 127     # period exactly 127: every non-zero state once
    assert sum(bits) == 64                              # 2^(n-1) ones a period
    # by hand from s[k] = s[k-6] ^ s[k-7] after seven ones: s[0..5] = 0, s[6] = s[0] ^ s[-1] = 1,
    # s[7..11] = 0, s[12] = s[6] ^ s[5] = 1, s[13] = s[7] ^ s[6] = 1, s[14] = s[15] = 0
    assert "".join(map(str, bits[:16])) == "0000001000001100"
    assert _words(PRBS7, 1) == [0x3040]


def test_reference_prbs31_start():
    # by hand from s[k] = s[k-28] ^ s[k-31] after 31 ones: s[0..27] = 0; s[28..30] = s[0..2] ^ 1 = 1;
    # s[31..55] = s[3..27] ^ s[0..24] = 0; s[56..58] = s[28..30] ^ s[25..27] = 1;
    # s[59..61] = s[31..33] ^ s[28..30] = 1; s[62] = s[34] ^ s[31] = 0
    lfsr = Lfsr.seed(PRBS31)
    bits = [lfsr.clock() for _ in range(63)]
    assert bits == [0] * 28 + [1] * 3 + [0] * 25 + [1] * 6 + [0]
    # on the line (inverted), counted from O.150's start (the register's 31 bits come out first)
    line = [1 ^ 1] * 31 + [b ^ 1 for b in bits]
    assert line[:62] == [0] * 31 + [1] * 28 + [0] * 3
    assert _words(PRBS31, 2) == [0xFFFF, _word(line[47:63])] == [0xFFFF, 0x8FFF]


@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_reference_maximal_length(pattern):
    """The reference's clock is a linear map M on n bits; M^(2^n - 1) = I and M != I.  2^7 - 1 and
    2^31 - 1 are prime, so every non-zero state has period exactly 2^n - 1: each non-zero state once a
    period, hence 2^(n-1) ones a period (the states whose Q1 is one)."""
    n = POLY[pattern][0]

    def clock(reg):
        lfsr = Lfsr(pattern, reg)
        lfsr.clock()
        return lfsr.reg

    def apply(cols, v):
        out = 0
        for i in range(n):
            if v >> i & 1:
                out ^= cols[i]
        return out

    def power(cols, e):
        result = [1 << i for i in range(n)]
        while e:
            if e & 1:
                result = [apply(cols, c) for c in result]
            cols = [apply(cols, c) for c in cols]
            e >>= 1
        return result

    step = [clock(1 << i) for i in range(n)]
    identity = [1 << i for i in range(n)]
    assert step != identity
    assert power(step, 2**n - 1) == identity


# -- the generator ----------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_generator_matches_reference(pattern):
    rng = _rng()
    dut = PrbsGenerator()
    expected = _words(pattern, 2000)

    async def tb(ctx):
        ctx.set(dut.pattern, pattern)
        assert ctx.get(dut.data) == 0                   # the reset history
        sent = 0
        while sent < len(expected):
            en = rng.random() < 0.7
            ctx.set(dut.en, en)
            await ctx.tick()
            sent += en
            assert ctx.get(dut.data) == (expected[sent - 1] if sent else 0)

    run_sim(dut, tb)


def test_generator_pattern_changes():
    rng = _rng()
    dut = PrbsGenerator()
    model = GeneratorModel()

    async def tb(ctx):
        pattern = PRBS7
        for cycle in range(3000):
            if cycle and rng.random() < 0.05:
                pattern = OTHER[pattern]
            en = not cycle or rng.random() < 0.8        # PRBS7 first: its register is zero at reset
            ctx.set(dut.pattern, pattern)
            ctx.set(dut.en, en)
            await ctx.tick()
            if en:
                model.advance(pattern)
            assert ctx.get(dut.data) == model.data

    run_sim(dut, tb)
    assert model.seeded >= 1                            # so the seed stood in at least once


def test_generator_zero_register_takes_seed():
    """A run of zeros of PRBS31 read as a PRBS7 register is all zero: the seed stands in."""
    dut = PrbsGenerator()

    async def tb(ctx):
        ctx.set(dut.pattern, PRBS31)
        ctx.set(dut.en, 1)
        for _ in range(5000):
            await ctx.tick()
            if ctx.get(dut.data) >> 9 == 0:             # the last 7 bits on the line are zero
                break
        else:
            raise AssertionError("no run of 7 zeros")
        ctx.set(dut.pattern, PRBS7)
        for expected in _words(PRBS7, 200):
            await ctx.tick()
            assert ctx.get(dut.data) == expected

    run_sim(dut, tb)


# -- generator -> channel -> checker ----------------------------------------------------------------

class Link:
    """A generator, a channel the testbench plays (flips, garbage, slips, idle cycles) and a checker."""

    def __init__(self, pattern, *, expect=None, **params):
        self.gen, self.chk = PrbsGenerator(), PrbsChecker(**params)
        self.lock_words, self.unlock_errors = self.chk.lock_words, self.chk.unlock_errors
        self.pattern, self.expect = pattern, expect or pattern
        self.top = Module()
        self.top.submodules.gen, self.top.submodules.chk = self.gen, self.chk
        self.bits = []          # line bits the generator sent and the checker has not yet received

    def run(self, body):
        async def tb(ctx):
            ctx.set(self.gen.pattern, self.pattern)
            ctx.set(self.chk.pattern, self.expect)
            await body(ctx)
        run_sim(self.top, tb)

    async def send(self, ctx, count=1, *, flip=0, garbage=None, clear=0, slip=None):
        """``count`` cycles, each one word of the line into the checker (``flip`` xored into it, or
        ``garbage`` instead of it; bit ``slip`` of the first one received twice); returns ``locked``
        after each."""
        locked = []
        for _ in range(count):
            self.bits += _bits(ctx.get(self.gen.data))
            if slip is not None:
                at, slip = len(self.bits) - 16 + slip, None
                self.bits.insert(at, self.bits[at])
            word, self.bits = _word(self.bits[:16]), self.bits[16:]
            ctx.set(self.gen.en, 1)
            ctx.set(self.chk.valid, 1)
            ctx.set(self.chk.data, word ^ flip if garbage is None else garbage)
            ctx.set(self.chk.clear, clear)
            await ctx.tick()
            locked.append(ctx.get(self.chk.locked))
        ctx.set(self.gen.en, 0)
        ctx.set(self.chk.valid, 0)
        ctx.set(self.chk.clear, 0)
        return locked

    async def idle(self, ctx, count=2, *, data=0):
        """``count`` cycles with ``valid`` low (and ``data`` on the wires); 2 let the counters settle."""
        ctx.set(self.chk.data, data)
        for _ in range(count):
            await ctx.tick()

    async def lock(self, ctx):
        """Send lock_words + 2 words, lock coming within them and staying; the word (counted from 1)
        after which it came."""
        locked = await self.send(ctx, self.lock_words + 2)
        assert locked[-1], "no lock within lock_words + 2 words"
        first = locked.index(1) + 1
        assert first >= self.lock_words and all(locked[first - 1:])
        return first

    def counters(self, ctx):
        return ctx.get(self.chk.errors), ctx.get(self.chk.words)


@pytest.mark.parametrize("lock_words", [1, 16])
@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_locks_and_counts_no_errors(pattern, lock_words):
    """From reset: PRBS7's reset word 0x0000 and the zero register it leaves teach the checker
    nothing, so it locks on word lock_words + 2; PRBS31's reset word is mispredicted but leaves the
    checker's history at O.150's start (31 zeros on the line), so it locks on word lock_words + 1.
    Then thousands of clean words, with idle cycles carrying garbage in between, count no error and
    every valid word."""
    rng = _rng()
    link = Link(pattern, lock_words=lock_words)

    async def body(ctx):
        locked = await link.send(ctx, lock_words + 2)
        first = locked.index(1) + 1
        assert first == lock_words + (2 if pattern is PRBS7 else 1) and all(locked[first - 1:])
        await link.idle(ctx)
        base = lock_words + 2 - first                   # words checked after the lock
        assert link.counters(ctx) == (0, base)
        sent = 0
        for _ in range(3000):
            if rng.random() < 0.2:
                await link.idle(ctx, 1, data=rng.randrange(1 << 16))
            else:
                assert await link.send(ctx) == [1]
                sent += 1
        await link.idle(ctx)
        assert link.counters(ctx) == (0, base + sent)

    link.run(body)


@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_single_bit_flips_count_once(pattern):
    rng = _rng()
    link = Link(pattern)

    async def body(ctx):
        await link.lock(ctx)
        await link.idle(ctx)
        base = link.counters(ctx)
        # flips in every other word at most, so errors never run into unlock_errors
        flipped = {w: rng.sample(range(16), rng.choice([1, 1, 1, 2, 3])) for w in rng.sample(range(0, 2000, 2), 80)}
        for w in range(2000):
            flip = sum(1 << b for b in flipped.get(w, []))
            assert await link.send(ctx, flip=flip) == [1]
        await link.idle(ctx)
        errors, words = link.counters(ctx)
        assert errors - base[0] == sum(map(len, flipped.values()))
        assert words - base[1] == 2000

    link.run(body)


def test_clear_restarts_counters_with_its_word():
    link = Link(PRBS31)

    async def body(ctx):
        await link.lock(ctx)
        for _ in range(10):
            await link.send(ctx, flip=0b101)
            await link.send(ctx)
        await link.idle(ctx)
        errors, words = link.counters(ctx)
        assert errors >= 20 and words >= 20
        await link.send(ctx, flip=0b11)                 # before the clear: not counted
        await link.send(ctx, flip=0b1000, clear=1)      # with the clear: counted
        await link.send(ctx, 3)
        await link.idle(ctx)
        assert link.counters(ctx) == (1, 4)
        ctx.set(link.chk.clear, 1)                      # a clear alone
        await ctx.tick()
        ctx.set(link.chk.clear, 0)
        await link.idle(ctx)
        assert link.counters(ctx) == (0, 0)

    link.run(body)


@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_wrong_pattern_never_locks(pattern):
    link = Link(pattern, expect=OTHER[pattern])

    async def body(ctx):
        assert not any(await link.send(ctx, 2000))
        await link.idle(ctx)
        assert link.counters(ctx) == (0, 0)

    link.run(body)


@pytest.mark.parametrize("line", [0x0000, 0xFFFF, 0x5555])
@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_dead_line_never_locks(pattern, line):
    """All zeros or all ones is an all-zero register for one of the two readings; neither locks.
    (lock_words 2: one word of ones does follow the checker's reset history, PRBS31's 31 zeros.)"""
    link = Link(pattern, lock_words=2)

    async def body(ctx):
        assert not any(await link.send(ctx, 300, garbage=line))

    link.run(body)


@pytest.mark.parametrize(("lock_words", "unlock_errors"), [(16, 8), (4, 3)])
@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_garbage_drops_lock_and_relocks(pattern, lock_words, unlock_errors):
    rng = _rng()
    link = Link(pattern, lock_words=lock_words, unlock_errors=unlock_errors)

    async def body(ctx):
        await link.lock(ctx)
        await link.send(ctx, 100)
        await link.idle(ctx)
        base = link.counters(ctx)
        locked = []
        for _ in range(40):
            garbage = ctx.get(link.gen.data) ^ rng.randrange(1, 1 << 16)   # wrong in at least one bit
            locked += await link.send(ctx, garbage=garbage)
        # locked through unlock_errors - 1 wrong words, dropped by the next, never back in garbage
        assert locked == [1] * (unlock_errors - 1) + [0] * (40 - unlock_errors + 1)
        await link.idle(ctx)
        errors, words = link.counters(ctx)
        assert words - base[1] == unlock_errors          # only the words checked while locked
        assert unlock_errors <= errors - base[0] <= 16 * unlock_errors
        await link.lock(ctx)                            # within lock_words + 2 clean words
        await link.send(ctx, 500)
        await link.idle(ctx)
        assert link.counters(ctx)[0] == errors           # clean again

    link.run(body)


@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_bit_slip_drops_lock_and_relocks(pattern):
    """The channel sees one bit twice (a clock recovery slip).  Every later word is wrong by the
    sequence xor itself one bit later (itself a shift of the sequence: for PRBS7 never 16 zeros), so
    lock drops after unlock_errors words (plus the one the slip lands in); then it re-locks on the
    new phase."""
    link = Link(pattern)

    async def body(ctx):
        await link.lock(ctx)
        await link.send(ctx, 50)
        locked = await link.send(ctx, 40, slip=5)
        if pattern is PRBS7:
            assert locked.index(0) + 1 in (link.unlock_errors, link.unlock_errors + 1)
        else:
            assert 0 in locked[:2 * link.unlock_errors]
        assert locked[-1] == 1                                        # and re-locked
        await link.idle(ctx)
        errors = link.counters(ctx)[0]
        await link.send(ctx, 300)
        await link.idle(ctx)
        assert link.counters(ctx)[0] == errors

    link.run(body)


def test_pattern_change_drops_lock():
    link = Link(PRBS7)

    async def body(ctx):
        await link.lock(ctx)
        await link.idle(ctx)
        base = link.counters(ctx)
        ctx.set(link.chk.pattern, PRBS31)
        assert await link.send(ctx) == [0]              # dropped at once
        ctx.set(link.chk.pattern, PRBS7)
        assert await link.send(ctx) == [0]
        await link.idle(ctx)
        assert link.counters(ctx) == base               # neither change counted anything
        first = await link.lock(ctx)                    # and it synchronises again
        await link.idle(ctx)
        assert link.counters(ctx) == (0, link.lock_words + 2 - first)

    link.run(body)


def test_counters_saturate():
    link = Link(PRBS7)

    async def body(ctx):
        await link.lock(ctx)
        await link.idle(ctx)
        # preset both counters near the top (the simulator writes the registers; the design keeps them)
        ctx.set(link.chk.errors, MAX - 20)
        ctx.set(link.chk.words, MAX - 1)
        await link.idle(ctx, 1)
        assert link.counters(ctx) == (MAX - 20, MAX - 1)
        await link.send(ctx, flip=0xFFFF)
        await link.idle(ctx)
        assert link.counters(ctx) == (MAX - 4, MAX)
        await link.send(ctx, flip=0x00FF)
        await link.idle(ctx)
        assert link.counters(ctx) == (MAX, MAX)
        await link.send(ctx, flip=0x0001)
        await link.idle(ctx)
        assert link.counters(ctx) == (MAX, MAX)

    link.run(body)


# -- parameters -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"lock_words": 0}, ValueError, r"^lock_words must be between 1 and 255, not 0$"),
    ({"lock_words": 256}, ValueError, r"^lock_words must be between 1 and 255, not 256$"),
    ({"lock_words": 4.0}, TypeError, r"^lock_words must be an integer, not 4\.0$"),
    ({"lock_words": True}, TypeError, r"^lock_words must be an integer, not True$"),
    ({"unlock_errors": 0}, ValueError, r"^unlock_errors must be between 1 and 255, not 0$"),
    ({"unlock_errors": 1000}, ValueError, r"^unlock_errors must be between 1 and 255, not 1000$"),
    ({"unlock_errors": "8"}, TypeError, r"^unlock_errors must be an integer, not '8'$"),
])
def test_bad_parameters(kwargs, error, message):
    with pytest.raises(error, match=message):
        PrbsChecker(**kwargs)


def test_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        PrbsChecker(16, 8)
