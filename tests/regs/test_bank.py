# amaranth: UnusedElaboratable=no
"""Counter banks (rtl/regs/bank.py) in the Amaranth simulator: a register file whose counters live in a
bank, with random events on every counter every cycle, random software writes (single words and floods
of whole lines that starve the scan), reads while the counters move, and a reset, against a per-cycle
model of flip-flop counters that count each event a cycle late (the bank registers the strobes)."""

import random

import pytest
from amaranth.hdl import Module, ResetInserter, Signal

from rtl.common.htax import HtaxCmd
from rtl.common.regspec import Block, Field, Reg
from rtl.regs.bank import CounterBank, bank_layout
from rtl.regs.regfile import RegisterFile
from sim.amsim import Clock, Clocked, HtaxSink, HtaxSource, run_sim
from sim.amsim.htax import lane
from sim.htax_packet import HtaxPacket, line_write_packet

WORDS = 12                  # the bank; words 8.. are never written, only the scan updates them
MAX = (1 << 32) - 1


def _regmap():
    regs = [Reg(f"c{i}", 8 * i, (Field("a", 0, 32, counter=True, saturate=True),
                                  Field("b", 32, 32, counter=True)))
            for i in range(WORDS)]
    regs.append(Reg("plain", 8 * WORDS, (Field("x", 0, 64),)))
    return Block("t", 0, tuple(regs))


def test_bank_selection_and_errors():
    rf = RegisterFile(_regmap(), window_base=0, htax_port=1, host_port=0)
    (bank,) = rf.counter_banks
    assert [fl.path for _, fl in bank] == [f"t.c{i}" for i in range(WORDS)]
    assert CounterBank(slots=bank, flops=WORDS + 1, arrays=0, wbits=21).pend_bits == 8     # 18 * 12 + 3 < 256
    assert bank_layout(Reg("p", 0, (Field("x", 0, 64),))) is None
    assert bank_layout(Reg("r", 0, (Field("x", 0, 16, counter=True, saturate=True, onread="rclr", sw="r"),))) \
        is None
    odd = Reg("o", 0, (Field("a", 0, 32, counter=True, saturate=True),))
    assert bank_layout(odd) == ((0, 32, True),) != bank_layout(_regmap().children[0])
    few = RegisterFile(Block("t", 0, _regmap().children[:7]), window_base=0, htax_port=1, host_port=0)
    assert few.counter_banks == []             # fewer than BANK_MIN_WORDS: flip-flops
    mixed = RegisterFile(Block("t", 0, _regmap().children[:9] + (Reg("o", 0x100, odd.fields),)),
                         window_base=0, htax_port=1, host_port=0)
    slots = [(k, fl) for k, fl in enumerate(mixed._flops) if fl.path in ("t.c0", "t.o")]
    with pytest.raises(ValueError, match="one counter layout"):
        CounterBank(slots=slots, flops=10, arrays=0, wbits=21)


class _Events(Clocked):
    """Random strobes on every counter, and the model: what flip-flop counters would hold."""

    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.writes = {}            # cycle of effect -> [(word, data, byte mask)]: a data beat's + 1
        self._wr = None             # the WRITE being received: [next word, words left, first_be, last_be, k]
        self.written = []           # (cycle of effect, word) of every write applied
        self.value = {(i, f): 0 for i in range(WORDS) for f in "ab"}
        self.history = []           # the model's values at the end of every cycle
        self.on = True
        self.p = 0.5
        self.strobes = {}
        self.lagged = {}            # the strobes of the cycle before: the bank registers them first

    def _port(self, i, f):
        return getattr(getattr(self.dut.hw, f"c{i}"), f"{f}_incr")

    def drive(self, ctx, now):
        self.strobes = {k: int(self.on and self.rng.random() < self.p) for k in self.value}
        for (i, f), bit in self.strobes.items():
            ctx.set(self._port(i, f), bit)

    def signals(self):
        rx = self.dut.htax.rx
        return (rx.valid, rx.ready, rx.payload)

    def _beat(self, now, beat):
        if beat.first:
            hdr = beat.word.header
            mem = hdr.body.mem
            self._wr = None
            if hdr.cmd == HtaxCmd.WRITE:
                self._wr = [int(mem.addr) // 8, int(mem.length), int(mem.first_be), int(mem.last_be), 0]
        elif self._wr and self._wr[1]:
            word, left, first_be, last_be, k = self._wr
            be = first_be if k == 0 else (last_be if left == 1 else 0xFF)
            mask = sum(0xFF << 8 * b for b in range(8) if be >> b & 1)
            self.writes.setdefault(now + 1, []).append((word, int(beat.word.data), mask))
            self._wr = [word + 1, left - 1, first_be, last_be, k + 1]

    def observe(self, now, values):
        valid, ready, beat = values
        if valid and lane(ready, beat.vc):
            self._beat(now, beat)
        for i, data, mask in self.writes.pop(now, ()):     # a write takes effect before the events
            self.written.append((now, i))
            for f, lsb in (("a", 0), ("b", 32)):
                m = (mask >> lsb) & MAX
                self.value[i, f] = (self.value[i, f] & ~m) | ((data >> lsb) & m)
        for (i, f), bit in self.lagged.items():
            v = self.value[i, f] + bit
            self.value[i, f] = min(v, MAX) if f == "a" else v & MAX
        self.lagged = self.strobes
        self.history.append(dict(self.value))

    def word(self, i, cycle=None):
        vals = self.history[cycle] if cycle is not None else self.value
        return vals[i, "a"] | vals[i, "b"] << 32


@pytest.mark.parametrize("seed", [None])
def test_bank_matches_flip_flop_counters(seed):
    seed = random.randrange(1 << 30) if seed is None else seed
    print(f"seed {seed}")
    rng = random.Random(seed)
    rst = Signal()
    rf = RegisterFile(_regmap(), window_base=0, htax_port=1, host_port=0)
    top = Module()
    top.submodules.rf = ResetInserter(rst)(rf)
    host, unit = HtaxSource(rf.htax.rx), HtaxSink(rf.htax.tx, rng=rng, stall=0.3)
    events = _Events(rf, rng)
    clock = Clock(host, unit, events)
    reads = []                                  # (word, request cycle) in request order

    def write(i, data, be=0xFF):
        lo = next(b for b in range(8) if be >> b & 1)
        n = bin(be).count("1")
        pkt = line_write_packet(8 * i + lo, (data >> 8 * lo).to_bytes(8, "little")[:n], src=0, dst=1)
        host.send(pkt)
        return pkt

    async def settle_writes(ctx, pkts):
        while any(not any(p is q for _, _, q in host.sent) for p in pkts):
            await clock.tick(ctx)

    async def read_all(ctx, words):
        start = len(unit.packets)
        for i in words:
            host.send(HtaxPacket(HtaxCmd.READ, src=0, dst=1, tag=i % 32, addr=8 * i, length=1))
            reads.append((i, clock.now))
        await unit.wait_packets(ctx, start + len(words), clock=clock, limit=400 * len(words))
        return [r.packet.data[0] for r in unit.packets[start:]]

    async def bench(ctx):
        # 1. single writes (random bytes, some near saturation) and reads while every counter counts
        for _ in range(60):
            pkts = []
            if rng.random() < 0.5:
                i = rng.randrange(8)
                lo = rng.randrange(8)
                hi = rng.randrange(lo, 8)
                be = ((1 << (hi + 1)) - 1) & ~((1 << lo) - 1)
                data = rng.choice([rng.getrandbits(64), MAX - rng.randrange(40) | (MAX - rng.randrange(40)) << 32])
                pkts.append(write(i, data, be))
            await settle_writes(ctx, pkts)
            if rng.random() < 0.5:
                i = rng.randrange(WORDS)
                before = clock.now
                (got,) = await read_all(ctx, [i])
                lo, hi = events.word(i, before - 1) if before else 0, events.word(i)
                changed = any(i == w and c >= before - 2 for c, w in events.written)
                if not changed:
                    for sh in (0, 32):
                        g, a, b = (got >> sh) & MAX, (lo >> sh) & MAX, (hi >> sh) & MAX
                        assert a <= g <= b or (b < a), \
                            f"seed {seed}: word {i} field at {sh}: read {g:#x} outside [{a:#x}, {b:#x}]"
            await clock.repeat(ctx, rng.randrange(4))
        # 2. a flood of 8-word writes to words 0..7 (the scan gets one cycle in nine) with every
        # counter counting every cycle: words 8.. rely on the scan alone
        events.p = 1.0
        pkts = []
        for _ in range(40):
            pkt = line_write_packet(0, bytes(rng.getrandbits(8) for _ in range(64)), src=0, dst=1)
            host.send(pkt)
            pkts.append(pkt)
        await settle_writes(ctx, pkts)
        # 3. quiet: every counter read exactly
        events.on = False
        await clock.repeat(ctx, 6)
        got = await read_all(ctx, range(WORDS))
        want = [events.word(i) for i in range(WORDS)]
        assert got == want, f"seed {seed}: read {[hex(g) for g in got]}, model {[hex(w) for w in want]}"
        # 4. a reset clears every counter (block RAM is not cleared: the bank must not show it)
        ctx.set(rst, 1)
        await clock.tick(ctx)
        ctx.set(rst, 0)
        events.value = dict.fromkeys(events.value, 0)
        got = await read_all(ctx, range(WORDS))
        assert got == [0] * WORDS, f"seed {seed}: after reset {[hex(g) for g in got]}"

    run_sim(top, bench)


def test_scan_keeps_up_with_writes_and_reads():
    """The bank alone, driven as the register file drives it at the worst: a software write in 8 of
    every 9 cycles (words 0..7), reads of words 0..7 back to back, every counter counting every cycle.
    Words 8.. are brought up to date by the scan alone; their accumulators must not wrap."""
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    rf = RegisterFile(_regmap(), window_base=0, htax_port=1, host_port=0)
    (slots,) = rf.counter_banks
    nflops = len(rf._flops)
    dut = CounterBank(slots=slots, flops=nflops, arrays=0, wbits=21)
    value = [0] * WORDS                          # the model, field a only (b counts alike, wrapping)
    got = {}

    def incr(i):
        port = getattr(rf.hw, f"c{i}")
        return port.a_incr, port.b_incr

    async def bench(ctx):
        for i in range(WORDS):
            for s in incr(i):
                ctx.set(s, 1)
        in_a, pending_read, reads, lagged = None, None, 0, 0
        for cycle in range(40 * 18 * WORDS):
            flood = cycle < 30 * 18 * WORDS
            w = cycle % 9 != 8 and flood
            word = rng.randrange(8)
            data = rng.getrandbits(31)
            ctx.set(dut.write.fsel, (1 << slots[word][0]) if w else 0)
            ctx.set(dut.write.data, data)
            ctx.set(dut.write.be, 0xFF)
            load = in_a is not None and not ctx.get(dut.wait)
            fill = flood and (in_a is None or load)
            ctx.set(dut.fetch.load, load)
            ctx.set(dut.fetch.fill, fill)
            await ctx.tick()
            if pending_read is not None:            # rdq holds the word loaded in the last cycle
                got[pending_read] = ctx.get(dut.read_data)
                pending_read = None
            if load:
                pending_read, in_a = in_a, None
                reads += 1
            if fill:
                in_a = rng.randrange(8)
                ctx.set(dut.fetch.fsel, 1 << slots[in_a][0])
            for i in range(WORDS):                   # the last cycle's events count after this one's write
                value[i] = data if (w and i == word) else value[i]
                value[i] = min(value[i] + lagged, MAX)
            lagged = flood
            if cycle == 30 * 18 * WORDS - 1:
                for i in range(WORDS):
                    for s in incr(i):
                        ctx.set(s, 0)
        # quiet: read every word
        for i in range(WORDS):
            ctx.set(dut.fetch.fill, 1)
            await ctx.tick()
            ctx.set(dut.fetch.fill, 0)
            ctx.set(dut.fetch.fsel, 1 << slots[i][0])
            for _ in range(20):
                if not ctx.get(dut.wait):
                    break
                await ctx.tick()
            ctx.set(dut.fetch.load, 1)
            await ctx.tick()
            ctx.set(dut.fetch.load, 0)
            got[i] = ctx.get(dut.read_data)
        assert reads > 100
        want = [v | (v - 0) << 32 for v in value]
        assert [g & MAX for g in (got[i] for i in range(WORDS))] == [v & MAX for v in want], \
            f"seed {seed}: {[hex(got[i]) for i in range(WORDS)]} model {[hex(v) for v in value]}"

    run_sim(dut, bench)
