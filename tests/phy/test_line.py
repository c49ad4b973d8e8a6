"""The line format (rtl/phy/line.py) against its reference model (sim/phy_model.py): the decoder
word for word on random streams with garbage, the encoder through the model's decoder under random
input gaps, the byte aligner on a stream whose comma lands in byte 1."""

import os
import random

from amaranth.sim import Simulator

from rtl.common.phit import PhitCtl
from rtl.phy.line import IDLE_WORD, SKIP_WORD, START_WORD, ByteAligner, LineDecoder, LineEncoder
from sim.amsim.clock import Clock, Clocked
from sim.amsim.stream import StreamSource
from sim.phy_model import LineDecoderModel, encode_flits, shift_bytes

SEED = int(os.environ.get("PHY_SEED", random.randrange(1 << 32)))


def _rng(salt):
    print(f"PHY_SEED={SEED}")
    return random.Random(SEED * 7 + salt)


def _flits(rng, count):
    return [[rng.randrange(1 << 16) for _ in range(rng.randrange(3, 20))] for _ in range(count)]


def _phits(flits):
    out = []
    for f in flits:
        out += [(d, PhitCtl.SOF.value if i == 0 else PhitCtl.EOF.value if i == len(f) - 1
                 else PhitCtl.BODY.value) for i, d in enumerate(f)]
    return out


def _garbage(rng, words):
    """``words`` with random damage: symbol errors, unknown K words, stray data, dropped words."""
    out = []
    for d, k in words:
        r = rng.random()
        if r < 0.02:
            out.append((d, k, True))
        elif r < 0.03:
            out.append((rng.choice([0xF7F7, 0x1CBC]), 0b11, False))
        elif r < 0.04:
            continue
        elif r < 0.05:
            out.append((rng.randrange(1 << 16), 0, False))
            out.append((d, k, False))
        else:
            out.append((d, k, False))
    return out


class _WordSampler(Clocked):
    def __init__(self, sig):
        self.sig, self.words = sig, []

    def signals(self):
        return (self.sig.data, self.sig.k)

    def observe(self, now, values):
        self.words.append(tuple(values))


def test_decoder_matches_model():
    """Random flits, idles, skips inside flits and damage: the decoder's phits and error strobes
    equal the model's, word for word."""
    rng = _rng(1)
    words = []
    for f in _flits(rng, 300):
        enc = encode_flits([f])
        for w in enc:
            words.append(w)
            if w not in (START_WORD,) and rng.random() < 0.1:
                words.append(SKIP_WORD)
        words += [IDLE_WORD] * rng.randrange(3)
    stream = _garbage(rng, words) + [(IDLE_WORD[0], IDLE_WORD[1], False)] * 3
    model = LineDecoderModel()
    for d, k, e in stream:
        model.word(d, k, e)
    dut = LineDecoder()
    got, errs = [], [0, 0]

    async def bench(ctx):
        ctx.set(dut.en, 1)
        for d, k, e in stream + [(IDLE_WORD[0], IDLE_WORD[1], False)]:
            ctx.set(dut.i.data, d)
            ctx.set(dut.i.k, k)
            ctx.set(dut.i.code_err, 0b01 if e else 0)
            await ctx.tick()
            if ctx.get(dut.o.valid):
                got.append((ctx.get(dut.o.payload.data), ctx.get(dut.o.payload.ctl).value))
            errs[0] += ctx.get(dut.framing_errors)
            errs[1] += ctx.get(dut.symbol_errors)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == model.phits
    assert errs == [model.framing_errors, model.symbol_errors]
    assert model.framing_errors > 10 and len(model.phits) > 1000


def _encode(flits, rng, *, idle):
    dut = LineEncoder()
    src = StreamSource(dut.i, rng=rng, idle=idle)
    out = _WordSampler(dut.o)
    phits = _phits(flits)
    skips = [0]

    async def bench(ctx):
        ctx.set(dut.en, 1)
        clock = Clock(src, out, limit=20 * len(phits) + 100)
        for d, c in phits:
            src.put({"data": d, "ctl": c})
        while src.busy or clock.now < 5:
            await clock.tick(ctx)
            skips[0] += ctx.get(dut.skips)
        for _ in range(4):
            await clock.tick(ctx)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return out.words, skips[0]


def test_encoder_round_trip():
    """Flits through the encoder with random gaps between and inside them come out of the model's
    decoder unchanged, with a SKIP word for every late phit and no framing error."""
    rng = _rng(2)
    flits = _flits(rng, 150)
    words, skips = _encode(flits, rng, idle=0.2)
    model = LineDecoderModel()
    for d, k in words:
        model.word(d, k)
    assert model.phits == _phits(flits)
    assert model.framing_errors == 0
    assert skips == words.count(SKIP_WORD) > 0
    assert set(words) <= {IDLE_WORD, START_WORD, SKIP_WORD} | {w for w in words if w[1] == 0}


def test_encoder_back_to_back():
    """Without gaps a flit of n phits takes n + 1 words and flits follow each other directly, but
    for one IDLE word (a comma) once ``comma_interval`` (128) words have passed without one."""
    rng = _rng(3)
    flits = _flits(rng, 60)
    words, skips = _encode(flits, rng, idle=0.0)
    first = words.index(START_WORD)
    body = words[first:]
    assert [w for w in body if w != IDLE_WORD] == encode_flits(flits)
    commas = [i for i, w in enumerate(words) if w == IDLE_WORD]
    gaps = [b - a for a, b in zip(commas, commas[1:], strict=False)]
    assert max(gaps) <= 128 + 19 + 1 and body.count(IDLE_WORD) >= len(body) // (128 + 20)
    assert skips == 0


def test_encoder_drops_orphans_and_restarts():
    """Phits before a SOF are dropped; a SOF inside a flit starts a new one: the old one ends there
    (its last phit arrives as EOF, for the link port's length and CRC checks to reject)."""
    rng = _rng(4)
    a, b = [1, 2, 3, 4], [5, 6, 7]
    phits = [(9, PhitCtl.BODY.value), (8, PhitCtl.EOF.value)] + _phits([a])[:2] + _phits([b])
    dut = LineEncoder()
    src = StreamSource(dut.i, rng=rng, idle=0.0)
    out = _WordSampler(dut.o)

    async def bench(ctx):
        ctx.set(dut.en, 1)
        clock = Clock(src, out, limit=200)
        for d, c in phits:
            src.put({"data": d, "ctl": c})
        for _ in range(30):
            await clock.tick(ctx)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    model = LineDecoderModel()
    for d, k in out.words:
        model.word(d, k)
    assert model.phits == [(1, PhitCtl.SOF.value), (2, PhitCtl.EOF.value)] + _phits([b])
    assert model.framing_errors == 0


def test_aligner_byte_shift():
    """A stream whose comma lands in byte 1 is realigned at the first IDLE word; the flits after it
    decode unchanged, and an aligned stream is never shifted."""
    rng = _rng(5)
    flits = _flits(rng, 40)
    words = [IDLE_WORD] * 3 + encode_flits(flits) + [IDLE_WORD] * 3
    for shifted in (False, True):
        stream = shift_bytes(words) if shifted else words
        dut = ByteAligner()
        got, realigned = [], [0]

        async def bench(ctx, stream=stream, dut=dut, got=got, realigned=realigned):
            for d, k in stream:
                ctx.set(dut.i.data, d)
                ctx.set(dut.i.k, k)
                await ctx.tick()
                got.append((ctx.get(dut.o.data), ctx.get(dut.o.k)))
                realigned[0] += ctx.get(dut.realigned)

        sim = Simulator(dut)
        sim.add_clock(1e-8)
        sim.add_testbench(bench)
        sim.run()
        model = LineDecoderModel()
        for d, k in got:
            model.word(d, k)
        assert model.phits == _phits(flits), f"shifted={shifted}"
        assert realigned[0] == int(shifted)
