"""Bulk jobs (``rtl/atu/jobs.py``, docs/atu.md "Bulk jobs") against :meth:`sim.atu_model.AtuModel.job`:
the :class:`rtl.atu.Atu` alone in the Amaranth simulator (``unit_harness.run_unit``), random jobs, good
and bad, beside random translations, memory reordering and software flushes."""

import random

import pytest

from rtl.atu import Atu
from rtl.atu.layout import GATE_INDEX_BITS, JOB_WORDS, LARGE_PAGE_BITS, JobOp, JobStatus
from sim.atu_model import job_completion, job_descriptor

from .test_atu import _unit_requests
from .unit_harness import expected, first_level_setup, random_setup, run_unit

RING = 0x1000_0000              # 4 KB aligned, below every table
RING_END = RING + (32 << 5)     # a ring of 2^5 descriptors
JOB_GAT, JOB_LARGE_GAT, MISSING_GAT = 9, 10, 11     # GATs no translation of _unit_requests touches
SMALL_BASE, LARGE_BASE = 0x180 << 21, 0x7_9000 << 12


def _job(rng, *, small_gat=JOB_GAT, large_gat=JOB_LARGE_GAT, missing=(MISSING_GAT,), far=600, space=27, vpids=32):
    """A random descriptor (4 words) over GAT ``small_gat`` (4 KB pages) and ``large_gat`` (2 MB pages),
    one in four bad (GATs ``missing`` are not configured or unreadable, GAT ``far`` is beyond the table,
    the NLA space has ``space`` bits)."""
    kind = rng.randrange(16)
    op = rng.choice([JobOp.REGISTER, JobOp.REGISTER, JobOp.DEREGISTER, JobOp.FLUSH])
    vpid, ppn = rng.randrange(vpids), rng.getrandbits(40)
    start = rng.randrange(200)
    kw = dict(op=op, vpid=vpid, ppn=ppn, read=rng.randrange(2), write=rng.randrange(2))
    small = dict(kw, count=rng.randrange(1, 30), nla_page=(small_gat << GATE_INDEX_BITS) + start)
    large = dict(kw, large=1, count=rng.randrange(1, 12), ppn=ppn & ~511,
                 nla_page=(large_gat << GATE_INDEX_BITS) + (start << LARGE_PAGE_BITS))
    bad = [
        dict(small, raw={"op": rng.choice([0, 4, 5, 6, 7])}),
        dict(small, count=0),
        dict(small, raw={rng.choice(["_rsv0", "_rsv1", "_rsv2"]): 1}),
        dict(small, vpid=vpids + rng.randrange(100)),
        dict(large, nla_page=large["nla_page"] + rng.randrange(1, 512)),
        dict(large, op=JobOp.REGISTER, ppn=large["ppn"] | 8),
        dict(small, nla_page=(small_gat + 1 << GATE_INDEX_BITS) - 5,
             op=rng.choice([JobOp.REGISTER, JobOp.DEREGISTER])),
        dict(small, nla_page=(rng.choice(missing) << GATE_INDEX_BITS) + 3, op=JobOp.REGISTER),
        dict(small, large=1, nla_page=small_gat << GATE_INDEX_BITS, op=JobOp.REGISTER, ppn=0),
        dict(small, op=JobOp.FLUSH, nla_page=(1 << space) - 5, count=10),
        dict(small, op=JobOp.REGISTER, ppn=(1 << 40) - 3, count=10),               # PPN beyond 40 bits
    ]
    if far is not None:
        bad.append(dict(small, nla_page=(far << GATE_INDEX_BITS) + 3, op=JobOp.DEREGISTER))
    return job_descriptor(**(rng.choice(bad) if kind < 4 else large if kind < 8 else small))


def _expect(model, memory, descs, ring, size, start):
    """Run the jobs in order on the model over a copy of ``memory``: the WRITEs the ATU must make, the
    ATS flushes (first page, VPID) and the statuses."""
    mem = dict(memory)
    model.read64 = mem.get
    writes, flushes, statuses = [], [], []
    for i, words in enumerate(descs):
        index = (start + i) & 0xFFFF
        addr = ring + 32 * (index % (1 << size))
        r = model.job(None if words is None else words, index)
        for a, w in r.stores:
            mem[a] = w
        writes += list(r.stores) + [(addr + 8 * (JOB_WORDS - 1), r.completion)]
        if r.flush:
            flushes.append((r.flush[0], r.flush[2]))
        statuses.append(r.status)
    return writes, flushes, statuses, mem


def _post(memory, descs, ring, size, start):
    for i, words in enumerate(descs):
        addr = ring + 32 * (((start + i) & 0xFFFF) % (1 << size))
        for k in range(JOB_WORDS):
            if words is None:
                memory.pop(addr + 8 * k, None)
            else:
                memory[addr + 8 * k] = words[k]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_unit_jobs_random(seed):
    """Random jobs from a ring that wraps (ring index and 16-bit counter), posted in batches, beside
    random translations of other GATs, software flushes and reordered memory: every WRITE, completion
    word and flush as the model says, every translation too."""
    rng = random.Random(seed)
    print(f"seed {seed}")
    gat_base, memory, pages, model = random_setup(rng)
    gat_base[JOB_GAT], gat_base[JOB_LARGE_GAT] = SMALL_BASE, LARGE_BASE | 1
    model.gat_base[JOB_GAT], model.gat_base[JOB_LARGE_GAT] = SMALL_BASE, LARGE_BASE | 1
    atu = Atu(reorder_entries=8, fu_ports=(3, 4), jobs=True)
    descs = [_job(rng) for _ in range(22)]
    descs[rng.randrange(len(descs))] = None                         # an unreadable descriptor
    # slots 22..31, 0..11 of a ring of 32: the ring index and the 16-bit counter wrap
    statuses = _run(rng, seed, atu, gat_base, memory, model, pages, descs, size=5, start=0xFFF6,
                    sw=[(500, 3, 1, 1, 40), (2500, 7, 1, 1, 0)], tx_stall=0.3 if seed % 2 else 0.0)
    assert JobStatus.OK in statuses and JobStatus.MEMORY_ERROR in statuses

def _run(rng, seed, atu, gat_base, memory, model, pages, descs, *, size, start, sw=(), gat_table=0, requests=150,
         tx_stall=0.0):
    """Post ``descs`` in batches beside random translations of ``pages``; check everything against the
    model."""
    n = len(descs)
    writes, flushes, statuses, mem = _expect(model, memory, descs, RING, size, start)
    model.read64 = memory.get
    reqs = _unit_requests(rng, atu, pages, requests, model=model)
    _post(memory, descs, RING, size, start)
    cuts = sorted(rng.sample(range(1, n), 3)) + [n]
    bells = [(0, start)] + [(40 + 300 * k, (start + c) & 0xFFFF) for k, c in enumerate(cuts)]
    results, stats = run_unit(atu, gat_base, memory, reqs, latency=15, jitter=12, seed=seed, flushes=sw,
                              gat_table=gat_table, limit=60000, tx_stall=tx_stall,
                              jobs={"ring": RING | size << 1 | 1, "doorbell": bells, "enable_at": 3})
    assert results == expected(model, reqs)
    assert stats["writes"] == writes
    assert [job_completion(w)["status"] for a, w in writes if RING <= a < RING_END] == statuses
    seen = [(f["flush_request.nla_page"], f["flush_request.vpid"]) for _, dst, f in stats["flush_requests"]
            if dst == atu.fu_ports[0]]
    assert [x for x in seen if x not in [(p, 0) for _, p, *_ in sw]] == flushes
    assert len(stats["flush_requests"]) == len(atu.fu_ports) * (len(flushes) + len(sw))
    assert len(stats["flush_done"]) == len(sw)                      # a job's flush does not set atu.flush.done
    assert stats["jobs_done"] == n
    assert stats["job_errors"] == sum(s != JobStatus.OK for s in statuses)
    assert ({a: w for a, w in memory.items() if not RING <= a < RING_END}
            == {a: w for a, w in mem.items() if not RING <= a < RING_END})
    return statuses


@pytest.mark.parametrize("seed", [1, 2])
def test_unit_jobs_first_level_table(seed):
    """Jobs whose GAT entries come from the first-level table in memory (an entry 0, a misaligned one,
    an unreadable one), beside translations of other GATs through the GAT cache."""
    rng = random.Random(seed)
    print(f"seed {seed}")
    table = 0x40 << 20
    memory, pages, model = first_level_setup(rng, table=table)
    model.first_level = True
    pages = [p for p in pages if p >> GATE_INDEX_BITS not in (19, 700)]
    atu = Atu(gat_entries=16, gat_cache_entries=4, reorder_entries=8, fu_ports=(3,), jobs=True)
    descs = [_job(rng, small_gat=700, large_gat=19, missing=(21, 22, 23), far=None, space=32) for _ in range(16)]
    statuses = _run(rng, seed, atu, {}, memory, model, pages, descs, size=4, start=5, gat_table=table | 1,
                    sw=[(700, 3 << GATE_INDEX_BITS, 1, 1, 0)])
    assert JobStatus.OK in statuses
