# amaranth: UnusedElaboratable=no
"""PhyRegs: random reads and writes with random stalls on both streams against a Python model built
from :func:`register_table` (whose rows are pinned here), random status values that change while it
runs, strobes of exactly one cycle per write of 1, byte enables, reserved and out-of-range words, and
the ``PhyControl``/``PhyStatus`` structs checked against :class:`rtl.phy.SerdesPhy`'s members.

Replay a random run with ``SEED=<seed> pytest tests/board/test_phy_regs.py``."""

import functools
import random

import pytest
from amaranth.hdl import Fragment, Shape
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from rtl.board.phy_regs import LEVELS, STROBES, WORDS_PER_LANE, PhyControl, PhyRegs, PhyStatus, register_table
from rtl.phy import PhyMode, PrbsPattern, RxCounters, SerdesPhy, TxCounters
from sim.amsim import Clock, Clocked, StreamSink, StreamSource, random_seed, run_sim

# --- the structs against SerdesPhy ----------------------------------------------------------------------


@functools.cache
def _phy_members():
    phy = SerdesPhy()
    # elaborated so that the blocks it builds in its constructor count as used (they are created in
    # rtl/phy, where this file's UnusedElaboratable=no does not reach)
    Fragment.get(phy, None)
    return phy.signature.members


def _phy_ports(flow):
    """``{name: shape}`` of SerdesPhy's plain ports of ``flow`` (not ``link`` and ``lane``), in order."""
    return {name: m.shape for name, m in _phy_members().items() if m.is_port and m.flow == flow}


def test_status_matches_serdes_phy():
    ports = _phy_ports(Out)
    fields = dict(data.Layout.cast(PhyStatus))
    assert list(fields) == list(ports)
    for name, shape in ports.items():
        if isinstance(shape, type) and issubclass(shape, data.Struct):
            # the same layout: names, widths and offsets (the board top may assign tx/rx whole)
            assert data.Layout.cast(fields[name].shape) == data.Layout.cast(shape), name
        else:
            assert fields[name].width == Shape.cast(shape).width, name
    assert data.Layout.cast(fields["tx"].shape) == data.Layout.cast(TxCounters)
    assert data.Layout.cast(fields["rx"].shape) == data.Layout.cast(RxCounters)


def test_control_matches_serdes_phy():
    ports = _phy_ports(In)
    fields = dict(data.Layout.cast(PhyControl))
    assert sorted(fields) == sorted(ports) == sorted(LEVELS + STROBES)
    for name, shape in ports.items():
        assert fields[name].width == Shape.cast(shape).width, name


def test_enum_values_are_documented():
    """``mode`` and ``pattern`` are plain bits; the table states each value of the PHY's enums."""
    meaning = {name: text for _, _, name, _, text in register_table()}
    for field, enum in (("mode", PhyMode), ("pattern", PrbsPattern)):
        for member in enum:
            assert f"{member.value} {member.name}" in meaning[field], (field, member)


def test_register_table():
    rows = [(w, bits, name, access) for w, bits, name, access, _ in register_table()]
    assert rows == [
        (0, "0", "mode", "rw"), (0, "1", "pattern", "rw"),
        (0, "8", "loopback", "rw"), (0, "9", "tx_polarity", "rw"), (0, "10", "rx_polarity", "rw"),
        (0, "16", "prbs_clear", "w1p"), (0, "17", "restart", "w1p"),
        (1, "0", "tx_ready", "r"), (1, "1", "rx_ready", "r"), (1, "2", "rx_prbs_locked", "r"),
        (1, "31:16", "tx_retries", "r"), (1, "47:32", "rx_retries", "r"),
        (2, "31:0", "tx_cycles", "r"), (2, "63:32", "rx_cycles", "r"),
        (3, "31:0", "tx_dropped", "r"), (3, "63:32", "rx_underflows", "r"),
        (4, "31:0", "tx_skips", "r"), (4, "63:32", "rx_symbol_errors", "r"),
        (5, "31:0", "rx_framing_errors", "r"), (5, "47:32", "rx_realigns", "r"), (5, "63:48", "rx_dropped", "r"),
        (6, "31:0", "rx_prbs_errors", "r"), (6, "63:32", "rx_prbs_words", "r"),
    ]
    assert all(meaning for *_, meaning in register_table())


def test_parameter_messages():
    with pytest.raises(ValueError, match=r"^lanes must be between 1 and 4, not 5$"):
        PhyRegs(lanes=5, word_bits=8)
    with pytest.raises(ValueError, match=r"^lanes must be between 1 and 4, not 0$"):
        PhyRegs(lanes=0, word_bits=8)
    with pytest.raises(TypeError, match=r"^lanes must be an integer, not 2.0$"):
        PhyRegs(lanes=2.0, word_bits=8)
    with pytest.raises(ValueError, match=r"^word_bits must be between 6 and 56, not 5$"):
        PhyRegs(lanes=3, word_bits=5)
    with pytest.raises(ValueError, match=r"^word_bits must be between 4 and 56, not 57$"):
        PhyRegs(lanes=1, word_bits=57)
    with pytest.raises(TypeError, match=r"^lanes must be an integer, not None$"):
        PhyRegs(lanes=None, word_bits=8)


# --- the reference model ------------------------------------------------------------------------------

TABLE = {name: (word, bits) for word, bits, name, *_ in register_table()}


def _span(bits):
    msb, _, lsb = bits.partition(":")
    lsb = int(lsb or msb)
    return lsb, int(msb) - lsb + 1


def _pack(word, values):
    """The 64-bit word ``word`` of a lane from ``{name: value}`` (fields of other words are skipped)."""
    v = 0
    for name, value in values.items():
        w, bits = TABLE[name]
        if w == word:
            lsb, width = _span(bits)
            assert 0 <= value < 1 << width, name
            v |= value << lsb
    return v


def _unpack(word, value, names):
    out = {}
    for name in names:
        w, bits = TABLE[name]
        assert w == word
        lsb, width = _span(bits)
        out[name] = value >> lsb & ((1 << width) - 1)
    return out


def _mask(strb):
    return sum(0xFF << 8 * i for i in range(8) if strb >> i & 1)


def _flat(status):
    """A nested status dict (``PhyStatus.const`` form) flattened to the register names."""
    out = {}
    for name, value in status.items():
        if isinstance(value, dict):
            out.update({f"{name}_{sub}": v for sub, v in value.items()})
        else:
            out[name] = value
    return out


class PhyRegsModel:
    """The registers as the table documents them: ``access(request, status)`` returns the response, the
    strobes the access pulses (``{lane: set}``) and applies writes."""

    def __init__(self, lanes):
        self.lanes = lanes
        self.levels = [dict.fromkeys(LEVELS, 0) for _ in range(lanes)]
        self.bad = 0

    def access(self, req, status):
        lane, word = divmod(req["addr"], WORDS_PER_LANE)
        if lane >= self.lanes:
            self.bad += 1
            return 0, {}
        if not req["write"]:
            if word == 0:
                return _pack(0, self.levels[lane]), {}
            return _pack(word, _flat(status[lane])), {}     # 0 for reserved words
        if word != 0:
            return 0, {}
        old = _pack(0, self.levels[lane])
        new = old & ~_mask(req["strb"]) | req["data"] & _mask(req["strb"])
        self.levels[lane] = _unpack(0, new, LEVELS)
        pulses = {name for name, v in _unpack(0, new, STROBES).items() if v}
        return 0, {lane: pulses} if pulses else {}


def _random_value(rng, width):
    return rng.choice([0, (1 << width) - 1, rng.getrandbits(width), rng.getrandbits(width)])


def _random_status(rng):
    """A random ``PhyStatus`` value as a nested dict, walking the struct's layout."""
    def walk(layout):
        out = {}
        for name, f in data.Layout.cast(layout):
            if isinstance(f.shape, type) and issubclass(f.shape, data.Struct):
                out[name] = walk(f.shape)
            else:
                out[name] = _random_value(rng, f.width)
        return out
    return walk(PhyStatus)


# --- bus models of the lanes' side ---------------------------------------------------------------------


class StatusDriver(Clocked):
    """Drives every lane's ``status``, each lane changing to a random value with probability ``change``
    per cycle; ``history[k]`` is the list of lane values in cycle ``k``."""

    def __init__(self, dut, *, rng, change):
        self.dut, self.rng, self.change = dut, rng, change
        self.current = [_random_status(rng) for _ in dut.status]
        self.history = []
        self._set = False

    def drive(self, ctx, now):
        for lane, port in enumerate(self.dut.status):
            if not self._set or self.rng.random() < self.change:
                if self._set:
                    self.current[lane] = _random_status(self.rng)
                ctx.set(port, PhyStatus.const(self.current[lane]))
        self._set = True
        self.history.append(list(self.current))


class ControlMonitor(Clocked):
    """Samples every lane's ``ctrl`` in every cycle: ``samples[k]`` is a list of ``{field: value}``."""

    def __init__(self, dut):
        self.dut = dut
        self.samples = []

    def signals(self):
        return tuple(self.dut.ctrl)

    def observe(self, now, values):
        assert now == len(self.samples)
        self.samples.append([{name: int(v[name]) for name in LEVELS + STROBES} for v in values])


def _check_control(monitor, writes, lanes, seed):
    """Every cycle's ``ctrl`` against the model: ``writes`` is ``[(cycle taken, levels after, pulses)]``
    in order; a write's levels and pulses show in the next cycle, a pulse for that cycle only."""
    levels = [dict.fromkeys(LEVELS, 0) for _ in range(lanes)]
    by_cycle = {}
    for cycle, after, pulses in writes:
        by_cycle[cycle] = (after, pulses)
    for k, sample in enumerate(monitor.samples):
        pulses = {}
        if k - 1 in by_cycle:
            after, pulses = by_cycle[k - 1]
            levels = after
        for lane in range(lanes):
            want = {**levels[lane], **{s: int(s in pulses.get(lane, ())) for s in STROBES}}
            assert sample[lane] == want, f"seed {seed}: cycle {k} lane {lane}"


# --- simulations --------------------------------------------------------------------------------------


def _random_request(rng, lanes, word_bits):
    kind = rng.random()
    lane = rng.randrange(lanes)
    if kind < 0.4:
        addr = lane * WORDS_PER_LANE
    elif kind < 0.75:
        addr = lane * WORDS_PER_LANE + rng.randrange(1, 7)
    elif kind < 0.85:
        addr = lane * WORDS_PER_LANE + rng.randrange(7, WORDS_PER_LANE)
    else:
        addr = rng.randrange(lanes * WORDS_PER_LANE, 1 << word_bits)
    data_ = rng.getrandbits(64)
    if rng.random() < 0.5:      # mostly only the defined bits, so that levels go back to 0 too
        data_ &= rng.getrandbits(64) & 0x3_0703
    strb = rng.choice([0xFF, 0xFF, 0, 1, 2, 4, rng.getrandbits(8)])
    return {"write": int(rng.random() < 0.5), "addr": addr, "data": data_, "strb": strb}


@pytest.mark.parametrize("lanes,word_bits,idle,stall", [
    (1, 6, 0.0, 0.0), (2, 7, 0.3, 0.4), (3, 8, 0.5, 0.2), (4, 8, 0.2, 0.6)])
def test_random_accesses_against_a_model(lanes, word_bits, idle, stall):
    seed = random_seed()
    rng = random.Random(seed)
    dut = PhyRegs(lanes=lanes, word_bits=word_bits)
    status = StatusDriver(dut, rng=rng, change=0.3)
    req = StreamSource(dut.word_req, rng=rng, idle=idle)
    rsp = StreamSink(dut.word_rsp, rng=rng, stall=stall)
    monitor = ControlMonitor(dut)
    requests = [_random_request(rng, lanes, word_bits) for _ in range(600)]

    async def bench(ctx):
        clock = Clock(status, req, rsp, monitor, limit=20_000)
        for r in requests:
            req.put(r)
        while len(rsp.items) < len(requests):
            await clock.tick(ctx)
        await clock.repeat(ctx, 3)

        model = PhyRegsModel(lanes)
        writes = []
        assert [p for _, p in req.sent] == requests
        for (cycle, r), (rsp_cycle, got) in zip(req.sent, rsp.items, strict=True):
            want, pulses = model.access(r, status.history[cycle])
            assert rsp_cycle > cycle, f"seed {seed}"
            assert got == want, f"seed {seed}: {r} taken in cycle {cycle}: {got:#x}, not {want:#x}"
            if r["write"] and r["addr"] < lanes * WORDS_PER_LANE and r["addr"] % WORDS_PER_LANE == 0:
                writes.append((cycle, [dict(lv) for lv in model.levels], pulses))
        _check_control(monitor, writes, lanes, seed)
        assert ctx.get(dut.bad_accesses) == model.bad, f"seed {seed}"
        assert model.bad > 0 or lanes * WORDS_PER_LANE == 1 << word_bits
        # the run reached what it is meant to check
        assert sum(bool(p) for *_, p in writes) > 10, f"seed {seed}"
        assert any(lv != dict.fromkeys(LEVELS, 0) for _, after, _ in writes for lv in after)

    run_sim(dut, bench)


def _write(addr, data_, strb=0xFF):
    return {"write": 1, "addr": addr, "data": data_, "strb": strb}


def _read(addr):
    return {"write": 0, "addr": addr, "data": 0, "strb": 0}


def test_strobes_last_one_cycle_per_write_of_one():
    dut = PhyRegs(lanes=2, word_bits=6)
    req, rsp = StreamSource(dut.word_req), StreamSink(dut.word_rsp)
    monitor = ControlMonitor(dut)
    clear, restart = 1 << 16, 1 << 17

    async def bench(ctx):
        clock = Clock(req, rsp, monitor, limit=1000)
        for r in [_write(16, clear), _write(16, clear), _write(16, 0), _write(0, restart | clear),
                  _write(0, restart, strb=0xFB), _write(16, restart | 1, strb=0x01), _read(0)]:
            req.put(r)
        while len(rsp.items) < 7:
            await clock.tick(ctx)
        await clock.repeat(ctx, 3)
        taken = [cycle for cycle, _ in req.sent]
        pulses = {(k, lane, s) for k, sample in enumerate(monitor.samples) for lane in range(2)
                  for s in STROBES if sample[lane][s]}
        assert pulses == {(taken[0] + 1, 1, "prbs_clear"), (taken[1] + 1, 1, "prbs_clear"),
                          (taken[3] + 1, 0, "prbs_clear"), (taken[3] + 1, 0, "restart")}
        # back to back without stalls: a request every other cycle, the response in the next cycle
        assert [b - a for a, b in zip(taken, taken[1:], strict=False)] == [2] * 6
        assert [cycle for cycle, _ in rsp.items] == [t + 1 for t in taken]
        assert monitor.samples[-1][1]["mode"] == 1 and monitor.samples[-1][0]["mode"] == 0
        assert [p for _, p in rsp.items] == [0] * 7       # strobes read 0

    run_sim(dut, bench)


def test_byte_enables_change_only_their_bytes():
    dut = PhyRegs(lanes=1, word_bits=4)
    req, rsp = StreamSource(dut.word_req), StreamSink(dut.word_rsp)
    ones = (1 << 64) - 1
    steps = [   # (write data, strobes, the word read back after it)
        (ones, 0x01, 0x0003),               # byte 0: mode and pattern; reserved bits stay 0
        (ones, 0x02, 0x0703),               # byte 1: loopback and polarities
        (0, 0x01, 0x0700),
        (ones, 0xF8, 0x0700),               # bytes 3..7: reserved only
        (ones, 0x04, 0x0700),               # byte 2: the strobes, no level changes, reads 0
        (0x0200, 0x00, 0x0700),             # no byte enabled
        (0x0201, 0x03, 0x0201),             # tx_polarity alone, and mode
    ]

    async def bench(ctx):
        for d, strb, _ in steps:
            req.put(_write(0, d, strb))
            req.put(_read(0))
        clock = Clock(req, rsp, limit=1000)
        while len(rsp.items) < 2 * len(steps):
            await clock.tick(ctx)
        assert [p for _, p in rsp.items[1::2]] == [w for *_, w in steps]
        ctrl = ctx.get(dut.ctrl[0])
        assert (ctrl.mode, ctrl.pattern, ctrl.loopback, ctrl.tx_polarity, ctrl.rx_polarity) == (1, 0, 0, 1, 0)
        assert PhyMode(ctrl.mode) == PhyMode.PRBS

    run_sim(dut, bench)


def test_status_words_and_out_of_range():
    """Every word of every lane, and words past the lanes, with fixed status values."""
    dut = PhyRegs(lanes=3, word_bits=7)
    rng = random.Random(1)
    values = [_random_status(rng) for _ in range(3)]
    req, rsp = StreamSource(dut.word_req), StreamSink(dut.word_rsp)
    addrs = list(range(3 * WORDS_PER_LANE)) + [48, 63, 64, 127]

    async def bench(ctx):
        for port, v in zip(dut.status, values, strict=True):
            ctx.set(port, PhyStatus.const(v))
        for a in addrs:
            req.put(_write(a, (1 << 64) - 1) if a >= 48 else _read(a))
        for a in addrs:
            req.put(_read(a))
        clock = Clock(req, rsp, limit=2000)
        while len(rsp.items) < 2 * len(addrs):
            await clock.tick(ctx)
        got = [p for _, p in rsp.items[len(addrs):]]
        for a, g in zip(addrs, got, strict=True):
            lane, word = divmod(a, WORDS_PER_LANE)
            want = _pack(word, _flat(values[lane])) if lane < 3 and word else 0
            assert g == want, f"address {a}"
        # spot checks written out, independent of the table parser
        assert got[1] == (values[0]["tx_ready"] | values[0]["rx_ready"] << 1 | values[0]["rx"]["prbs_locked"] << 2
                          | values[0]["tx_retries"] << 16 | values[0]["rx_retries"] << 32)
        assert got[16 + 6] == values[1]["rx"]["prbs_errors"] | values[1]["rx"]["prbs_words"] << 32
        assert got[32 + 5] == (values[2]["rx"]["framing_errors"] | values[2]["rx"]["realigns"] << 32
                               | values[2]["rx"]["dropped"] << 48)
        assert ctx.get(dut.bad_accesses) == 2 * 4
        assert all(ctx.get(dut.ctrl[lane]).as_value().value == 0 for lane in range(3))

    run_sim(dut, bench)
