# amaranth: UnusedElaboratable=no
"""ATU tests: parameter validation (Amaranth) and the cocotb system testbench ``tb_atu.py``."""

import copy

import pytest

from rtl.atu import Atu
from rtl.common.ats import AtsCause
from rtl.config import load
from sim.atu_model import gate_fields
from sim.runner import run_cocotb
from sim.tops.atu import AtuSystem, with_switch
from sim.tops.configs import atu_config


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(tlb_entries=1000), ValueError, "tlb_entries must be a power of two, not 1000"),
    (dict(tlb_entries=8), ValueError, "tlb_entries must be between 16 and 16384, not 8"),
    (dict(tlb_entries=1 << 15), ValueError, "tlb_entries must be between 16 and 16384, not 32768"),
    (dict(tlb_ways=3), ValueError, "tlb_ways must be 1, 2 or 4, not 3"),
    (dict(reorder_entries=64), ValueError, "reorder_entries must be between 2 and 32, not 64"),
    (dict(reorder_entries=24), ValueError, "reorder_entries must be a power of two, not 24"),
    (dict(request_fifo=2), ValueError, "request_fifo must be between 4 and 4096, not 2"),
    (dict(gat_entries=1), ValueError, "gat_entries must be between 2 and 16384, not 1"),
    (dict(gat_entries=600), ValueError, "gat_entries must be a power of two, not 600"),
    (dict(vpids=33), ValueError, "vpids must be a power of two, not 33"),
    (dict(vpids="32"), TypeError, "vpids must be an integer, not '32'"),
    (dict(htax_port=16), ValueError, "htax_port must be between 0 and 15, not 16"),
    (dict(host_port=2), ValueError, "host_port must differ from htax_port, both are 2"),
    (dict(fu_ports=(3, 3)), ValueError, "fu_ports must be distinct, not [3, 3]"),
    (dict(fu_ports=(2, 3)), ValueError, "fu_ports must not contain the ATU's own port 2"),
    (dict(jobs=True), ValueError, "reorder_entries must be at most 16 with jobs (the job engine's reads take tag "
                                  "31), not 32"),
    (dict(jobs=1, reorder_entries=16), TypeError, "jobs must be a bool, not 1"),
])
def test_parameter_errors(kw, exc, msg):
    with pytest.raises(exc) as e:
        Atu(**kw)
    assert str(e.value) == msg


@pytest.mark.parametrize("ways, entries", [(1, 16), (2, 1024), (4, 16384)])
def test_tlb_organisations_elaborate(ways, entries):
    from amaranth.back import rtlil
    atu = Atu(tlb_entries=entries, tlb_ways=ways, reorder_entries=4, request_fifo=4)
    assert atu.formats.small.set_bits == (entries // ways).bit_length() - 1
    rtlil.convert(atu)


def _system(*, switch=None, **kw):
    """The ATU system of the default configuration; ``switch``: ``"pipelined"`` or ``"direct"``
    instead of the configuration's switch."""
    cfg = atu_config()
    return AtuSystem(cfg if switch is None else with_switch(cfg, switch), **kw)


def test_switch_choice():
    """``with_switch`` is the one place that selects the switch; it leaves the configuration alone."""
    from amaranth.hdl import Fragment

    from rtl.htax import Htax, HtaxPipelined, from_config
    cfg = load()
    before = copy.deepcopy(cfg)
    for switch, cls in (("direct", Htax), ("pipelined", HtaxPipelined)):
        # two ports, elaborated: the switch is built in rtl.htax, out of this file's linter setting
        sw = from_config(with_switch(cfg, switch), ports=2)
        Fragment.get(sw, None)
        assert type(sw) is cls
    assert cfg == before
    with pytest.raises(ValueError, match=r"^switch must be 'pipelined' or 'direct', not 'fast'$"):
        with_switch(cfg, "fast")


@pytest.mark.parametrize("testcase, params", [
    pytest.param("random_translations", {"jitter": 30, "requests": 300}, marks=pytest.mark.long_build),
    ("random_translations", {"jitter": 0, "requests": 300, "gap_p": 0.3}),
    ("flush_storm", {"jitter": 20, "flushes": 10, "late": 80}),
    ("vpid_isolation", {}),
    # four testcases in one simulation: one elaboration (15 s) instead of four.  cocotb runs them in
    # the module's order; bad_input, first, expects GATs that are not configured (the GAT base
    # table is block RAM, which the reset leaves as it is), so vpid_isolation runs alone
    (["bad_input", "registration_sequence", "first_level_table", "bulk_jobs"], {}),
])
def test_atu_cocotb(testcase, params):
    run_cocotb(_system(), name="atu_system", test_module="tests.atu.tb_atu", testcase=testcase, params=params)


@pytest.mark.parametrize("testcase, params", [
    ("random_translations", {"jitter": 30, "requests": 300}),
    ("bad_input", {}),
])
@pytest.mark.soak       # the optional 2-cycle switch: one more build of the whole system
def test_atu_cocotb_direct_htax(testcase, params):
    """The same system with the 2-cycle Htax instead of the default HtaxPipelined."""
    run_cocotb(_system(switch="direct"), name="atu_system_htaxd", test_module="tests.atu.tb_atu",
               testcase=testcase, params=params)


@pytest.mark.soak      # a second design: one more Verilator build of the whole system (~9 min on 2 cores)
def test_atu_cocotb_two_way_small_tlb():
    """TLB aliasing stress: a 2-way 16-entry TLB and a 4-slot reorder buffer with reordered memory."""
    run_cocotb(_system(tlb_entries=16, tlb_ways=2, reorder_entries=4), name="atu_system_small",
               test_module="tests.atu.tb_atu", testcase="random_translations",
               params={"jitter": 40, "requests": 400})


@pytest.mark.soak
@pytest.mark.parametrize("testcase, params", [
    ("random_translations", {"jitter": 60, "requests": 5000}),
    ("flush_storm", {"jitter": 40, "flushes": 80, "late": 200}),
])
def test_atu_soak(testcase, params):
    run_cocotb(_system(), name="atu_system", test_module="tests.atu.tb_atu", testcase=testcase, params=params)


@pytest.mark.soak
def test_atu_flush_storm_host_read_not_starved():
    """The seed whose flush register read starved behind the host's responses to the ATU (a withdrawn
    response went back ahead of the older read; ``tests/sim/test_htax_source.py``)."""
    run_cocotb(_system(), name="atu_system", test_module="tests.atu.tb_atu", testcase="flush_storm",
               params={"jitter": 40, "flushes": 80, "late": 200}, seed=121421370)


# ------------------------------------------------------------------------------------------------
# Amaranth-simulator regressions on the Atu alone (tests/atu/unit_harness.py): cheap, no Verilator.

def _unit_requests(rng, atu, pages, n, vpids=32, model=None):
    """Hot pages, random pages, out-of-range pages and sequential streams (``next`` set on all but a
    stream's last page, so look-ahead fills the TLB ahead of them)."""
    hot = rng.sample(pages, 12)
    out = []
    while len(out) < n:
        r = rng.random()
        port, vpid, write = rng.choice(atu.fu_ports), rng.randrange(vpids + 2), rng.getrandbits(1)
        if r < 0.15:
            first = rng.choice(pages)
            big = (model.gat_entry(first >> 18) or 0) & 1 if model else first >> 18 == 3
            gate = model.read64(model.gate_address(first)) if model and model.gat_entry(first >> 18) else None
            if gate is not None and rng.random() < 0.8:
                vpid = gate_fields(gate)["vpid"]         # mostly the stream's owner
            k = rng.randrange(2, 9)
            step = 1 << 9 if big else 1                     # a large-page GAT: the next 2 MB page
            out += [(port, vpid, first + j * step, write, int(j < k - 1)) for j in range(k)]
            continue
        page = rng.choice(hot) if r < 0.55 else rng.choice(pages) if r < 0.95 else (6 << 18) | 7
        out.append((port, vpid, page, write, rng.getrandbits(1)))
    return out[:n]


@pytest.mark.parametrize("seed", [543733194, 864846777])
def test_unit_reordered_memory_without_fu_window(seed):
    """The seeds that hung random_translations(jitter 30) / flush_storm before the HTAX hazard fix: FUs
    without a window of outstanding requests; the harness never starts an ATS packet while
    ``rx.ready[ATS]`` is low (the fixed HTAX), so GATE responses always get through;
    about 32 misses are outstanding and every answer matches the model, per FU in request order,
    although memory answers out of order."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(seed)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    reqs = _unit_requests(rng, atu, pages, 400, model=model)
    res, st = run_unit(atu, gat_base, memory, reqs, latency=44, jitter=30, seed=seed, limit=20000)
    assert res == expected(model, reqs)
    assert st["max_outstanding"] >= atu.reorder_entries - 4      # the reorder buffer is kept full


def test_unit_flushes_with_late_fu():
    """Flushes (TLB + ATS, some of page ranges that sweep TLB sets, one FU answering 80 cycles late) while
    the FUs stream misses and hits with reordered memory and no window: every flush completes, answers
    match the model."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(864846777)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    reqs = _unit_requests(rng, atu, pages, 300, model=model)
    fl = [(60 * (k + 1), rng.choice(pages), 1, 1, rng.choice((0, 5, 3000))) for k in range(8)]
    res, st = run_unit(atu, gat_base, memory, reqs, latency=44, jitter=20, seed=3, flushes=fl,
                       flush_delay={atu.fu_ports[-1]: 80}, limit=20000)
    # GATEs do not change here, so every answer equals the model's; flushes only cost TLB hits
    assert res == expected(model, reqs)
    assert len(st["flush_done"]) <= len(fl) and len(st["flush_requests"]) == 3 * len(st["flush_done"])


@pytest.mark.parametrize("seed", [1, 2])
def test_unit_fifo_bypass_and_backpressure(seed):
    """A 4-entry request FIFO under FUs without a window (memory answers have priority in this harness,
    so nothing deadlocks): the FIFO fills, ``rx.ready[ATS]`` drops, requests alternate between the FIFO
    and the bypass into the lookup; every FU still gets its answers in request order, equal to the model."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(seed)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu(request_fifo=4, reorder_entries=8)
    reqs = _unit_requests(rng, atu, pages, 300, model=model)
    res, st = run_unit(atu, gat_base, memory, reqs, latency=30, jitter=20, seed=seed, limit=20000)
    assert res == expected(model, reqs)
    assert st["ats_refused"] > 0                                  # backpressure was exercised


def test_unit_hit_latency_and_flush_timing():
    """Cycle counts at the ATU's ports in the Amaranth simulator.  A TLB hit leaves 3 cycles after its
    request beat moved in (FIFO bypassed: s1 TLB read, s2 registered compare, output register).  A flush
    started in cycle X sends its three flush requests in X+1, X+2, X+3 (the first one straight from the
    register fields); the harness's FUs answer one cycle later, and ``done`` strobes in the cycle the
    last response arrives (X+4)."""
    import random

    from sim.atu_model import gate_fields
    from tests.atu.unit_harness import random_setup, run_unit
    rng = random.Random(5)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    page, vpid = next((p, v) for p in pages for v in range(32) if model.translate(v, p, 0).ok)
    assert gate_fields(memory[model.gate_address(page)])["vpid"] == vpid
    reqs = [(3, vpid, page, 0)] * 3           # a miss, then two hits (one outstanding at a time)
    res, st = run_unit(atu, gat_base, memory, reqs, latency=20, window=1, flushes=[(200, page, 1, 1)],
                       min_cycles=260)
    assert res[3] == [model.translate(vpid, page, 0)] * 3
    assert [o - i for i, o in zip(st["ats_in"], st["rsp_out"], strict=True)][1:] == [3, 3], st
    assert [c for c, _, _ in st["flush_requests"]] == [201, 202, 203], st["flush_requests"]
    assert [d for _, d, _ in st["flush_requests"]] == list(atu.fu_ports)
    assert st["flush_done"] == [204], st["flush_done"]


@pytest.mark.parametrize("seed", [11, 12])
def test_unit_mixed_pages_and_lookahead(seed):
    """FUs with two requests outstanding each mix 4 KB and 2 MB pages, streams with ``next`` (look-ahead
    fills the TLB ahead of them), a misaligned GAT, bad large-page GATEs and out-of-range pages, with
    reordered memory: every answer equals the model's, and look-ahead GATEs are fetched and used."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(seed)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    reqs = _unit_requests(rng, atu, pages, 300, model=model)
    res, st = run_unit(atu, gat_base, memory, reqs, latency=30, jitter=20, seed=seed, window=2, limit=40000)
    assert res == expected(model, reqs)
    assert 0 < st["la_used"] <= st["la_filled"], st
    causes = {t.cause for r in res.values() for t in r}
    assert {AtsCause.PAGE_SIZE, AtsCause.GAT_NOT_CONFIGURED, AtsCause.NONE} <= causes, causes


@pytest.mark.parametrize("lookahead, first, misses, filled", [
    (7, 0x10, 2, 14), (7, 0x13, 3, 18), (0, 0x10, 16, 0), (3, 0x10, 4, 12)])
def test_unit_lookahead_stream(lookahead, first, misses, filled):
    """A FU translates 16 consecutive pages one at a time (``next`` on all but the last): with look-ahead
    a miss's read also fetches up to ``lookahead`` more GATEs of its 64-byte line, so only the pages
    that start a line's fetch miss; every look-ahead GATE is used.  Without ``next`` nothing is fetched
    ahead."""
    from sim.atu_model import AtuModel, gate_word
    from tests.atu.unit_harness import expected, run_unit
    base = 0x40 << 21
    memory = {base + 8 * i: gate_word(ppn=0x1000 + i, vpid=5) for i in range(64)}
    model = AtuModel(gat_entries=512, vpids=32, read64=memory.get)
    model.gat_base[0] = base
    reqs = [(3, 5, first + k, 0, int(k < 15)) for k in range(16)]
    atu = Atu(lookahead=lookahead)
    res, st = run_unit(atu, {0: base}, memory, reqs, latency=20, window=1)
    assert res[3] == expected(model, reqs)[3]
    assert (st["misses"], st["hits"]) == (misses, 16 - misses)
    # the last miss also fetches the rest of its line (wasted beyond the stream's end)
    assert (st["la_filled"], st["la_used"]) == (filled, 16 - misses)
    res, st = run_unit(atu, {0: base}, memory, [r[:4] for r in reqs], latency=20, window=1)
    assert (st["misses"], st["gates_read"]) == (16, 16)


def test_unit_large_page_stream():
    """16 consecutive 4 KB pages of one 2 MB page: one miss, 15 hits in the large-page TLB, each with
    the GATE's PPN plus the page's index."""
    from sim.atu_model import AtuModel, gate_word
    from tests.atu.unit_harness import expected, run_unit
    table = 0x7_3000 << 12                      # a large-page GAT: 4 KB aligned
    memory = {table + 8 * 5: gate_word(ppn=0x2_0000, vpid=2, large=1)}
    model = AtuModel(gat_entries=512, vpids=32, read64=memory.get)
    model.gat_base[1] = table | 1
    reqs = [(3, 2, (1 << 18) | (5 << 9) | (0x30 + k), 1, 1) for k in range(16)]
    res, st = run_unit(Atu(), {1: table | 1}, memory, reqs, latency=20, window=1)
    assert res[3] == expected(model, reqs)[3]
    assert [t.ppn for t in res[3]] == [0x2_0000 + 0x30 + k for k in range(16)]
    assert (st["misses"], st["hits"]) == (1, 15)


@pytest.mark.parametrize("seed", [21, 22])
def test_unit_first_level_table(seed):
    """The first-level table in host memory through a 4-entry GAT cache: GAT indices far beyond the
    16-entry on-chip table (which stays empty), cache conflicts, a large-page GAT, entries not
    configured, misaligned or unreadable, streams with look-ahead, reordered memory: every answer equals
    the model's, and first-level misses happen (one more read each)."""
    import random

    from tests.atu.unit_harness import expected, first_level_setup, run_unit
    rng = random.Random(seed)
    memory, pages, model = first_level_setup(rng)
    atu = Atu(gat_entries=16, gat_cache_entries=4)
    reqs = _unit_requests(rng, atu, pages, 300, model=model)
    res, st = run_unit(atu, {}, memory, reqs, latency=30, jitter=20, seed=seed, window=2, limit=40000,
                       gat_table=model.gat_table)
    assert res == expected(model, reqs)
    causes = {t.cause for r in res.values() for t in r}
    assert {AtsCause.NONE, AtsCause.GAT_NOT_CONFIGURED, AtsCause.MEMORY_ERROR} <= causes, causes
    assert st["gat_misses"] > 0 and st["dma_reads"] > st["misses"] - st["gat_misses"]


def test_unit_first_level_table_off():
    """The same ATU with ``gat_table`` off: the on-chip table decides, GAT indices beyond it are
    ``NLA_RANGE``."""
    import random

    from tests.atu.unit_harness import expected, first_level_setup, run_unit
    rng = random.Random(5)
    memory, pages, model = first_level_setup(rng)
    model.gat_table = 0
    atu = Atu(gat_entries=16, gat_cache_entries=4)
    reqs = _unit_requests(rng, atu, pages, 60, model=model)
    res, _ = run_unit(atu, {3: 0x200 << 21}, memory, reqs, latency=20, window=2)
    model.gat_base[3] = 0x200 << 21
    assert res == expected(model, reqs)
    assert any(t.cause == AtsCause.NLA_RANGE for r in res.values() for t in r)
