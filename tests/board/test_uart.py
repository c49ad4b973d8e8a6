# amaranth: UnusedElaboratable=no
"""UartRx and UartTx: a transmitter into a receiver with random bytes and gaps, both checked at the pin
against a Python UART; framing errors, start-bit glitches and overruns have their defined outcomes."""

import random

import pytest
from amaranth.hdl import Module

from rtl.board import UartRx, UartTx
from sim.amsim import Clock, StreamSink, StreamSource, random_seed, run_sim
from sim.amsim.board import UartPin


@pytest.mark.parametrize("cls", [UartRx, UartTx])
def test_divisor_messages(cls):
    with pytest.raises(ValueError, match=r"^divisor must be at least 4, not 3$"):
        cls(divisor=3)
    with pytest.raises(TypeError, match=r"^divisor must be an integer, not 4\.0$"):
        cls(divisor=4.0)


@pytest.mark.parametrize("divisor", [4, 5, 8])
def test_tx_to_rx_random_bytes_and_gaps(divisor):
    seed = random_seed()
    rng = random.Random(seed)
    m = Module()
    m.submodules.tx = tx = UartTx(divisor=divisor)
    m.submodules.rx = rx = UartRx(divisor=divisor)
    m.d.comb += rx.rx.eq(tx.tx)
    sent = [rng.randrange(256) for _ in range(120)]
    src = StreamSource(tx.i, rng=rng, idle=0.9)         # gaps of random length between bytes
    sink = StreamSink(rx.o, rng=rng, stall=0.5)
    pin = UartPin(divisor=divisor, tx=tx.tx)            # the line, decoded by an independent model

    async def bench(ctx):
        clock = Clock(src, sink, pin, limit=20 * 10 * divisor * len(sent))
        for b in sent:
            src.put(b)
        while len(sink.items) < len(sent) or pin.received != sent:
            await clock.tick(ctx)
        await clock.repeat(ctx, 12 * divisor)
        assert [int(p) for _, p in sink.items] == sent, f"seed {seed}"
        assert pin.received == sent and pin.frame_errors == 0, f"seed {seed}"
        assert (ctx.get(rx.frame_errors), ctx.get(rx.overruns), ctx.get(rx.glitches)) == (0, 0, 0), f"seed {seed}"

    run_sim(m, bench)


def test_back_to_back_bytes_take_ten_bit_times():
    divisor = 6
    tx = UartTx(divisor=divisor)
    src = StreamSource(tx.i)
    pin = UartPin(divisor=divisor, tx=tx.tx)

    async def bench(ctx):
        clock = Clock(src, pin)
        starts = []
        for b in (0x00, 0xFF, 0x55):
            src.put(b)
        while len(pin.received) < 3:
            await clock.tick(ctx)
        starts = [now for now, _ in src.sent]
        assert [b - a for a, b in zip(starts, starts[1:], strict=False)] == [10 * divisor] * 2
        assert pin.received == [0x00, 0xFF, 0x55]

    run_sim(tx, bench)


def test_framing_errors_are_counted_and_dropped():
    seed = random_seed()
    rng = random.Random(seed)
    divisor = 5
    rx = UartRx(divisor=divisor)
    pin = UartPin(divisor=divisor, rx=rx.rx)
    sink = StreamSink(rx.o, rng=rng, stall=0.3)
    expect, bad = [], 0
    for _ in range(60):
        b = rng.randrange(256)
        if rng.random() < 0.25:
            pin.put(b, stop=0)
            bad += 1
        else:
            pin.put(b)
            expect.append(b)
        pin.idle(rng.randrange(3 * divisor))

    async def bench(ctx):
        clock = Clock(pin, sink)
        strobes = 0
        while pin.busy:
            strobes += ctx.get(rx.frame_error)
            await clock.tick(ctx)
        await clock.repeat(ctx, 4 * divisor)
        assert [int(p) for _, p in sink.items] == expect, f"seed {seed}"
        assert ctx.get(rx.frame_errors) == bad == strobes, f"seed {seed}"
        assert ctx.get(rx.overruns) == 0

    run_sim(rx, bench)


def test_a_break_counts_once_and_the_next_byte_is_received():
    divisor = 4
    rx = UartRx(divisor=divisor)
    pin = UartPin(divisor=divisor, rx=rx.rx)
    sink = StreamSink(rx.o)
    pin.glitch(40 * divisor)            # the line low for four frames
    pin.put(0xA5)

    async def bench(ctx):
        clock = Clock(pin, sink)
        while pin.busy:
            await clock.tick(ctx)
        await clock.repeat(ctx, 2 * divisor)
        assert [int(p) for _, p in sink.items] == [0xA5]
        assert ctx.get(rx.frame_errors) == 1

    run_sim(rx, bench)


@pytest.mark.parametrize("divisor", [4, 8])
def test_start_bit_glitches_are_rejected(divisor):
    seed = random_seed()
    rng = random.Random(seed)
    rx = UartRx(divisor=divisor)
    pin = UartPin(divisor=divisor, rx=rx.rx)
    sink = StreamSink(rx.o)
    expect, glitches = [], 0
    for _ in range(40):
        if rng.random() < 0.5:
            # shorter than half a bit after the synchronizer: high again at the start bit's middle
            pin.glitch(rng.randrange(1, divisor // 2))
            glitches += 1
        else:
            b = rng.randrange(256)
            pin.put(b)
            expect.append(b)
        pin.idle(rng.randrange(divisor))

    async def bench(ctx):
        clock = Clock(pin, sink)
        while pin.busy:
            await clock.tick(ctx)
        await clock.repeat(ctx, 2 * divisor)
        assert [int(p) for _, p in sink.items] == expect, f"seed {seed}"
        assert ctx.get(rx.glitches) == glitches, f"seed {seed}"
        assert ctx.get(rx.frame_errors) == 0, f"seed {seed}"

    run_sim(rx, bench)


def test_a_byte_not_taken_in_time_is_an_overrun():
    divisor = 4
    rx = UartRx(divisor=divisor)
    pin = UartPin(divisor=divisor, rx=rx.rx)
    for b in (0x11, 0x22, 0x33):
        pin.put(b)

    async def bench(ctx):
        clock = Clock(pin)
        while pin.busy:                 # nobody takes the first byte
            await clock.tick(ctx)
        await clock.repeat(ctx, 2 * divisor)
        assert ctx.get(rx.o.valid) and ctx.get(rx.o.payload) == 0x11     # the first byte waits, intact
        assert ctx.get(rx.overruns) == 2

    run_sim(rx, bench)
