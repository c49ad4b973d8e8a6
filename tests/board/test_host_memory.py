# amaranth: UnusedElaboratable=no
"""HostMemory: its AXI4 port against a Python memory with random bursts, strobes, IDs and stalls, the
word port beside it, and the error responses (out of range, unsupported bursts, misplaced WLAST) that
write nothing and are counted."""

import random

import pytest

from rtl.board import HostMemory
from rtl.common.axi import AxiBurst, AxiResp
from sim.amsim import Clock, StreamSink, StreamSource, random_seed, run_sim
from sim.amsim.board import AxiManager

SIZE = 1024
WORDS = SIZE // 8
AXI_WORDS = 96          # the AXI writes stay below this word; the word port writes above it


def test_parameter_messages():
    with pytest.raises(ValueError, match=r"^size must be a power of two, not 1000$"):
        HostMemory(size=1000)
    with pytest.raises(ValueError, match=r"^size must be between 64 and 16777216, not 32$"):
        HostMemory(size=32)
    with pytest.raises(ValueError, match=r"^id_bits must be between 1 and 16, not 0$"):
        HostMemory(id_bits=0)
    with pytest.raises(ValueError, match=r"^addr_bits must be between 16 and 64, not 12$"):
        HostMemory(size=64 * 1024, addr_bits=12)
    with pytest.raises(ValueError, match=r"^base must be a multiple of 8, not 0x1004$"):
        HostMemory(base=0x1004)
    with pytest.raises(ValueError, match=r"^base must be between 0 and 4294901760, not 4294901768$"):
        HostMemory(addr_bits=32, base=(1 << 32) - 64 * 1024 + 8)


def _mask(strb):
    return sum(0xFF << 8 * i for i in range(8) if strb >> i & 1)


def _apply(ref, word, beats):
    for k, (d, strb) in enumerate(beats):
        ref[word + k] = ref[word + k] & ~_mask(strb) | d & _mask(strb)


def _random_write(rng, ref, base):
    """A random write burst and its expected response (applied to ``ref`` if it writes); addresses
    relative to the memory's ``base`` except the burst that starts below it."""
    n = rng.choice([1, 1, 2, 4, 8, 8, rng.randrange(1, 17)])
    kind = rng.random()
    beats = [(rng.getrandbits(64), rng.choice([0xFF, 0xFF, rng.getrandbits(8)])) for _ in range(n)]
    burst = dict(id=rng.randrange(32))
    if kind < 0.1:          # runs past the end of memory
        word = rng.randrange(WORDS - n + 1, WORDS + 4) if n > 1 else WORDS + rng.randrange(4)
        return (word * 8, beats, burst), AxiResp.DECERR
    if kind < 0.15:         # far outside: upper address bits set
        return ((1 << 40) + 8 * rng.randrange(WORDS), beats, burst), AxiResp.DECERR
    if kind < 0.17 and base:    # starts below the memory (and may run into it)
        return (-8 * rng.randrange(1, n + 2), beats, burst), AxiResp.DECERR
    word = rng.randrange(AXI_WORDS - n + 1)
    if kind < 0.2 and n > 1:
        burst["burst"] = rng.choice([AxiBurst.FIXED.value, AxiBurst.WRAP.value])
        return (word * 8, beats, burst), AxiResp.SLVERR
    addr = word * 8 + (rng.randrange(8) if rng.random() < 0.2 else 0)    # misaligned: strobes decide
    _apply(ref, word, beats)
    return (addr, beats, burst), AxiResp.OKAY


def _random_read(rng, base):
    n = rng.choice([1, 2, 8, rng.randrange(1, 33)])
    burst = dict(id=rng.randrange(32))
    if base and rng.random() < 0.03:
        return (-8 * rng.randrange(1, n + 2), n, burst), AxiResp.DECERR
    if rng.random() < 0.1:
        return (rng.randrange(WORDS - n + 1, WORDS + 8) * 8, n, burst), AxiResp.DECERR
    if rng.random() < 0.05 and n > 1:
        burst["size"] = 2
        return (rng.randrange(WORDS - n + 1) * 8, n, burst), AxiResp.SLVERR
    return (rng.randrange(WORDS - n + 1) * 8, n, burst), AxiResp.OKAY


@pytest.mark.parametrize("stall,base", [(0.0, 0), (0.4, 0), (0.4, 0x20_0000 - 0x300)])
def test_random_bursts_against_a_model(stall, base):
    """``base``: the memory at an address that is not a multiple of its size (as on the board)."""
    seed = random_seed()
    rng = random.Random(seed)
    dut = HostMemory(size=SIZE, base=base)
    ref = [0] * WORDS
    axi = AxiManager(dut, "s_axi", dut.axi_signature, rng=rng, stall=stall)
    req = StreamSource(dut.word_req, rng=rng, idle=0.5)
    rsp = StreamSink(dut.word_rsp, rng=rng, stall=stall)

    async def bench(ctx):
        clock = Clock(axi, req, rsp, limit=60_000)
        # writes on AXI (words below AXI_WORDS) and on the word port (above) at once
        writes = [_random_write(rng, ref, base) for _ in range(60)]
        for (addr, beats, burst), _ in writes:
            axi.write(base + addr, beats, **burst)
        port = []
        for _ in range(40):
            word, d, strb = rng.randrange(AXI_WORDS, WORDS), rng.getrandbits(64), rng.getrandbits(8)
            req.put({"write": 1, "addr": word, "data": d, "strb": strb})
            port.append(None)
            _apply(ref, word, [(d, strb)])
        while len(axi.b) < len(writes) or len(rsp.items) < len(port):
            await clock.tick(ctx)
        assert [resp for _, resp in axi.b] == [e for _, e in writes], f"seed {seed}"
        assert [i for i, _ in axi.b] == [b["id"] for (_, _, b), _ in writes], f"seed {seed}"
        assert all(int(p) == 0 for _, p in rsp.items), f"seed {seed}"

        # reads on AXI and on the word port at once, every word checked
        reads = [_random_read(rng, base) for _ in range(60)] + [((0, WORDS, {"id": 3}), AxiResp.OKAY)]
        for (addr, n, burst), _ in reads:
            axi.read(base + addr, n, **burst)
        probes = [rng.randrange(WORDS) for _ in range(40)]
        for word in probes:
            req.put({"write": 0, "addr": word, "data": 0, "strb": 0})
        total = sum(n for (_, n, _), _ in reads)
        while len(axi.r) < total or len(rsp.items) < len(port) + len(probes):
            await clock.tick(ctx)
        beats = iter(axi.r)
        for (addr, n, burst), resp in reads:
            got = [next(beats) for _ in range(n)]
            word = addr >> 3
            want = [ref[word + k] if resp == AxiResp.OKAY else 0 for k in range(n)]
            assert [d for _, d, _, _ in got] == want, f"seed {seed}: read of {n} at {addr:#x}"
            assert {(i, r) for i, _, r, _ in got} == {(burst["id"], resp)}, f"seed {seed}"
            assert [last for *_, last in got] == [0] * (n - 1) + [1], f"seed {seed}"
        assert [int(p) for _, p in rsp.items[len(port):]] == [ref[w] for w in probes], f"seed {seed}"
        assert ctx.get(dut.write_errors) == sum(e != AxiResp.OKAY for _, e in writes), f"seed {seed}"
        assert ctx.get(dut.read_errors) == sum(e != AxiResp.OKAY for _, e in reads), f"seed {seed}"

    run_sim(dut, bench)


def _read_all(ctx, dut):
    """A coroutine reading every word through the word port."""
    async def read(clock, req, rsp):
        for w in range(WORDS):
            req.put({"write": 0, "addr": w, "data": 0, "strb": 0})
        while len(rsp.items) < WORDS:
            await clock.tick(ctx)
        return [int(p) for _, p in rsp.items]
    return read


def test_errors_write_nothing_and_a_misplaced_wlast_is_slverr():
    dut = HostMemory(size=SIZE)
    axi = AxiManager(dut, "s_axi", dut.axi_signature, rng=None)
    req, rsp = StreamSource(dut.word_req), StreamSink(dut.word_rsp)
    ones = [(2**64 - 1, 0xFF)] * 4

    async def bench(ctx):
        clock = Clock(axi, req, rsp, limit=5000)
        axi.write((WORDS - 2) * 8, ones)                        # runs past the end
        axi.write(1 << 20, ones)                                # far outside
        axi.write(0, ones, burst=AxiBurst.FIXED.value)          # unsupported
        axi.write(0, ones, size=2)                              # narrow beats
        axi.write(64, ones, last_at=1)                          # WLAST early: written, SLVERR
        while len(axi.b) < 5:
            await clock.tick(ctx)
        assert [r for _, r in axi.b] == [AxiResp.DECERR, AxiResp.DECERR, AxiResp.SLVERR, AxiResp.SLVERR,
                                         AxiResp.SLVERR]
        assert ctx.get(dut.write_errors) == 5 and ctx.get(dut.read_errors) == 0
        words = await _read_all(ctx, dut)(clock, req, rsp)
        assert words == [0] * 8 + [2**64 - 1] * 4 + [0] * (WORDS - 12)

    run_sim(dut, bench)


def test_a_read_burst_streams_one_beat_per_cycle():
    dut = HostMemory(size=SIZE)
    axi = AxiManager(dut, "s_axi", dut.axi_signature, rng=None)

    async def bench(ctx):
        clock = Clock(axi, limit=1000)
        axi.read(0, 64)
        axi.read(8 * 64, 64, id=7)
        while len(axi.r) < 128:
            await clock.tick(ctx)
        cycles = [now for now, _ in axi.rs.items]
        assert cycles[63] - cycles[0] == 63 and cycles[127] - cycles[64] == 63
        assert cycles[64] - cycles[63] <= 4            # the next burst: AR, first read, first beat

    run_sim(dut, bench)
