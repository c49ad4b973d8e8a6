"""ATU tests: parameter validation (Amaranth) and the cocotb system testbench ``tb_atu.py``."""

import pytest

from rtl.atu import Atu
from rtl.atu.system import AtuSystem
from rtl.config import load
from sim.runner import run_cocotb


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
])
def test_parameter_errors(kw, exc, msg):
    with pytest.raises(exc) as e:
        Atu(**kw)
    assert str(e.value) == msg


@pytest.mark.parametrize("ways, entries", [(1, 16), (2, 1024), (4, 16384)])
def test_tlb_organisations_elaborate(ways, entries):
    from amaranth.back import rtlil
    atu = Atu(tlb_entries=entries, tlb_ways=ways, reorder_entries=4, request_fifo=4)
    assert atu.set_bits == (entries // ways).bit_length() - 1
    rtlil.convert(atu)


def _system(**kw):
    return AtuSystem(load(), **kw)


@pytest.mark.parametrize("testcase, params", [
    ("random_translations", {"jitter": 30, "requests": 500}),
    ("random_translations", {"jitter": 0, "requests": 300, "gap_p": 0.3}),
    ("vpid_isolation", {}),
    ("bad_input", {}),
    ("flush_storm", {"jitter": 20, "flushes": 10, "late": 80}),
    ("registration_sequence", {}),
])
def test_atu_cocotb(testcase, params):
    run_cocotb(_system(), name="atu_system", test_module="tests.atu.tb_atu", testcase=testcase, params=params)


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


# ------------------------------------------------------------------------------------------------
# Amaranth-simulator regressions on the Atu alone (tests/atu/unit_harness.py): cheap, no Verilator.

def _unit_requests(rng, atu, pages, n, vpids=32):
    hot = rng.sample(pages, 12)
    out = []
    for _ in range(n):
        r = rng.random()
        page = rng.choice(hot) if r < 0.5 else rng.choice(pages) if r < 0.95 else (5 << 18) | 7
        out.append((rng.choice(atu.fu_ports), rng.randrange(vpids + 2), page, rng.getrandbits(1)))
    return out


@pytest.mark.parametrize("seed", [543733194, 864846777])
def test_unit_reordered_memory_under_fu_contract(seed):
    """Regression for the random_translations(jitter 30) / flush_storm hang: with the FUs together below
    ``request_fifo`` outstanding requests (the FU contract) the request FIFO never refuses an ATS beat, so
    the HTAX can never park one in front of the GATE responses; about 32 misses are outstanding and
    every answer matches the model, per FU in request order, although memory answers out of order."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(seed)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    reqs = _unit_requests(rng, atu, pages, 400)
    window = (atu.request_fifo - 1) // len(atu.fu_ports)
    res, st = run_unit(atu, gat_base, memory, reqs, latency=44, jitter=30, seed=seed, window=window, limit=20000)
    assert res == expected(model, reqs)
    assert st["ats_refused"] == 0
    assert st["max_outstanding"] >= atu.reorder_entries - 4      # the reorder buffer is kept full


def test_unit_flushes_with_late_fu_under_fu_contract():
    """Flushes (TLB + ATS, one FU answering 80 cycles late) while the FUs stream misses and hits with
    reordered memory: every flush completes, the ATS VC is never refused, answers match the model."""
    import random

    from tests.atu.unit_harness import expected, random_setup, run_unit
    rng = random.Random(864846777)
    gat_base, memory, pages, model = random_setup(rng)
    atu = Atu()
    reqs = _unit_requests(rng, atu, pages, 300)
    fl = [(60 * (k + 1), rng.choice(pages), 1, 1) for k in range(8)]
    res, st = run_unit(atu, gat_base, memory, reqs, latency=44, jitter=20, seed=3, window=21, flushes=fl,
                       flush_delay={atu.fu_ports[-1]: 80}, limit=20000)
    # GATEs do not change here, so every answer equals the model's; flushes only cost TLB hits
    assert res == expected(model, reqs)
    assert st["ats_refused"] == 0
    assert len(st["flush_done"]) <= len(fl) and len(st["flush_requests"]) == 3 * len(st["flush_done"])
