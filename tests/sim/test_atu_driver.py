"""sim.driver.atu: AtuDriver's GATs and GATEs checked against the reference model (sim.atu_model).

A host without a simulator (:class:`sim.atu_host.AtuModelHost`) applies the driver's GAT base register
writes to an :class:`AtuModel`, keeps the GATEs the CPU writes, answers flushes ``done`` and counts
every access, so each test translates the registered NLA pages the way the ATU would: 4 KiB and 2 MiB
pages, several VPIDs, the page size rule and its fallback, the meeting of the two kinds of GAT,
deregistration.
"""

import asyncio
import copy

import pytest

from rtl.common.ats import AtsCause
from sim.atu_host import AtuModelHost
from sim.atu_model import gate_fields
from sim.board import BoardMemory
from sim.driver.atu import JOB_PAGES, LARGE_PAGE, PAGE, TABLES, AtuDriver
from sim.memory import HostMemory
from sim.regs_model import RegModel
from sim.tops.configs import nic_config

CFG = nic_config()
CFG["atu"]["jobs"] = False          # the CPU stores every GATE (test_bulk_jobs turns the job engine on)
GATS = CFG["atu"]["gat_entries"]            # 16
VPIDS = CFG["system"]["vpids"]
GAT_PAGES = 1 << 18
REGS = RegModel.from_config(CFG)
FLUSH = REGS.addr("atu.flush")


def run(coro):
    return asyncio.run(coro)


def check_region(host, region, pages=None):
    """Every (or the listed) 4 KiB page of ``region`` translates to its physical page with its
    permissions for its VPID, and to ``VPID_MISMATCH`` for another."""
    first = region.nla >> 12
    for k in range(region.size // PAGE) if pages is None else pages:
        ppn = (region.phys >> 12) + k
        for write, allowed in ((0, region.read), (1, region.write)):
            t = host.atu.translate(region.vpid, first + k, write)
            expected = (1, AtsCause.NONE, ppn) if allowed else (0, AtsCause.PERMISSION, 0)
            assert (t.ok, t.cause, t.ppn) == expected, (region, k, write, t)
        assert host.atu.translate((region.vpid + 1) % VPIDS, first + k, 0).cause == AtsCause.VPID_MISMATCH
        assert host.atu.large(first + k) == region.large


def test_small_and_large_regions_translate():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG)

    async def scenario():
        return [await atu.register(0, PAGE),
                await atu.register(1, 2 * LARGE_PAGE, write=False),
                await atu.register(2, 3 * PAGE + 5, read=False, owner="wo"),
                await atu.register(3, LARGE_PAGE),
                await atu.register(1, LARGE_PAGE, large=False),
                await atu.register(4, LARGE_PAGE, large=True, write=False, read=False)]
    regions = run(scenario())
    small0, large1, small2, large3, small1, large4 = regions
    assert [r.large for r in regions] == [False, True, False, True, False, True]
    # 4 KiB pages from NLA page 1 up in GAT 0, 2 MiB pages consecutive in GAT 15 from its start
    assert [r.nla >> 12 for r in (small0, small2, small1)] == [1, 2, 6]
    assert [r.nla for r in (large1, large3, large4)] == [(15 * GAT_PAGES + k * 512) * PAGE for k in (0, 2, 3)]
    assert (small2.size, small1.size, large1.size) == (4 * PAGE, 512 * PAGE, 2 * LARGE_PAGE)
    assert all(r.phys % LARGE_PAGE == 0 for r in (large1, large3, large4))
    assert host.memory.owner(small2.phys) == "wo" and host.memory.owner(large3.phys + LARGE_PAGE - 1) == "vpid3"
    # one base write per GAT: the 4 KiB-page GAT 2 MB aligned, the large-page GAT a 4 KiB table with bit 0
    assert [i for i, _ in host.gat_writes] == [0, 15] and atu.large_gats == {15}
    small_base, large_base = host.gat_writes[0][1], host.gat_writes[1][1]
    assert small_base % (2 << 20) == 0 and large_base & 0xFFF == 1 and host.memory.owner(large_base & ~1) == TABLES
    assert host.mem_writes == 1 + 2 + 4 + 1 + 512 + 1 and len(host.reads) == len(regions)
    for r in regions:
        check_region(host, r)
    # the GATE the driver names is the one the model reads; a large one has its flag and a 2 MB PPN
    for r in regions:
        for k in (0, r.size // PAGE - 1):
            nla = r.nla + k * PAGE
            assert atu.gate(nla) == host.atu.gate_address(nla >> 12)
            g = gate_fields(host.words[atu.gate(nla)])
            assert (g["large"], g["vpid"]) == (int(r.large), r.vpid)
            assert g["ppn"] == (r.phys >> 12) + (k & ~511 if r.large else k)
    # the pages after the last large page are not mapped
    assert host.atu.translate(4, (large4.nla >> 12) + 512, 0).cause == AtsCause.INVALID_GATE


def test_large_region_spans_gats_with_contiguous_nla():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG)

    async def scenario():
        return (await atu.register(1, LARGE_PAGE), await atu.register(2, (512 + 1) * LARGE_PAGE),
                await atu.register(3, 2 * LARGE_PAGE))
    first, big, after = run(scenario())
    # the first takes GAT 15; 513 pages do not fit its rest: a block of GATs 13, 14 from GAT 13's start,
    # and the next region continues in GAT 14 behind it
    assert first.nla == 15 * GAT_PAGES * PAGE
    assert big.nla == 13 * GAT_PAGES * PAGE and after.nla == (14 * GAT_PAGES + 512) * PAGE
    assert [i for i, _ in host.gat_writes] == [15, 13, 14] and atu.large_gats == {13, 14, 15}
    assert host.mem_writes == 1 + 513 + 2
    # the first, a middle and the last 4 KiB page of every 2 MiB page
    check_region(host, big, [p * 512 + k for p in range(513) for k in (0, 255, 511)])
    check_region(host, first)
    check_region(host, after)


def test_size_rule_and_fallback_to_small_pages():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG)
    odd = run(atu.register(0, LARGE_PAGE + PAGE))
    assert not odd.large and odd.nla == PAGE and odd.size == 513 * PAGE and atu.large_gats == set()
    check_region(host, odd, [0, 1, 512])
    for size in (0, PAGE, LARGE_PAGE + PAGE, 3 * LARGE_PAGE // 2):
        with pytest.raises(ValueError, match=rf"^size must be a positive multiple of 2 MiB \(2097152\) for large "
                                             rf"pages, not {size}$"):
            run(atu.register(0, size, large=True))
    assert host.gat_writes == [(0, host.gat_writes[0][1])] and len(atu.regions) == 1


def test_board_memory_falls_back_to_small_pages():
    """A memory without 2 MiB pages (the board's allocator, here one large enough for 2 MiB of 4 KiB pages
    below its GAT at 6 MB): ``None`` maps 4 KiB pages, ``True`` is a MemoryError."""
    memory = BoardMemory(base=2 << 20, size=(4 << 20) + 8 * 600, gat_base=6 << 20, zeroed=True)
    assert not memory.can_alloc(LARGE_PAGE, huge=True) and memory.can_alloc(LARGE_PAGE)
    host = AtuModelHost(memory, CFG)
    atu = AtuDriver(host, CFG)
    with pytest.raises(MemoryError, match=r"^the host memory cannot allocate 2097152 bytes of 2 MiB pages$"):
        run(atu.register(1, LARGE_PAGE, large=True))
    region = run(atu.register(1, LARGE_PAGE))
    assert not region.large and region.nla == PAGE and region.phys == 2 << 20
    assert host.gat_writes == [(0, 6 << 20)]
    check_region(host, region)


def test_deregister_flushes_each_region_once():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG)

    async def scenario():
        small = await atu.register(5, 3 * PAGE)
        large = await atu.register(6, 2 * LARGE_PAGE)
        keep = await atu.register(7, LARGE_PAGE)
        await atu.deregister(large)
        await atu.deregister(small)
        return small, large, keep
    small, large, keep = run(scenario())
    lp = large.nla >> 12
    # one range flush per region: first page, VPID, pages
    assert host.flushes == [(lp, 6, 1024), (1, 5, 3)]
    for r in (small, large):
        for p in range(r.nla >> 12, (r.nla + r.size) >> 12):
            assert host.atu.translate(r.vpid, p, 0).cause == AtsCause.INVALID_GATE
        assert host.memory.owner(r.phys) is None and host.memory.owner(r.phys + r.size - 1) is None
    check_region(host, keep)
    assert atu.regions == [keep]


def test_one_gib_of_large_pages_is_512_gate_stores():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG)
    region = run(atu.register(2, 1 << 30))
    assert region.large and region.nla == 15 * GAT_PAGES * PAGE
    assert host.mem_writes == 512 and len(host.gat_writes) == 1 and len(host.reads) == 1
    assert host.gat_writes[0][0] == 15 and host.gat_writes[0][1] & 1
    check_region(host, region, [0, 1, 511, 512, 262143])


def test_the_two_kinds_of_gat_meet():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG, first_page=15 * GAT_PAGES - 3)

    async def scenario():
        await atu.register(0, PAGE)                         # GAT 14 maps 4 KiB pages
        await atu.register(1, 1 << 30)                      # GAT 15, full
        with pytest.raises(MemoryError, match=r"^1 pages of 2 MiB need large-page GATs from 14 up, but GATs "
                                              r"below 15 map 4 KiB pages: the large-page GATs \(from 15 down\) "
                                              r"have met the 4 KiB-page GATs \(from 0 up\)$"):
            await atu.register(1, LARGE_PAGE)
        await atu.register(0, 2 * PAGE)                     # the rest of GAT 14
        with pytest.raises(MemoryError, match=r"^NLA page 0x3c0000 is in GAT 15, a large-page GAT: the 4 KiB-page "
                                              r"GATs \(from 0 up\) have met the large-page GATs \(from 15 down\)$"):
            await atu.register(0, PAGE)
    run(scenario())
    assert atu.next_page == 15 * GAT_PAGES and atu.large_floor == 15 and len(atu.regions) == 3
    assert [i for i, _ in host.gat_writes] == [14, 15]


def test_small_pages_beyond_the_gats():
    host = AtuModelHost(HostMemory(), CFG)
    atu = AtuDriver(host, CFG, first_page=GATS * GAT_PAGES - 1)
    run(atu.register(0, PAGE))
    with pytest.raises(MemoryError, match=r"^NLA page 0x400000 is beyond the 16 GATs$"):
        run(atu.register(0, PAGE))


def test_first_level_table():
    """With the first-level table (the configuration's ATU has a GAT cache) the GAT base entries go into
    host memory: 4 KiB-page GATs from 0 up, large-page GATs from 2^14 - 1 down, all translating."""
    cfg = copy.deepcopy(CFG)
    cfg["atu"]["gat_cache_entries"] = 8
    host = AtuModelHost(HostMemory(), cfg)
    atu = AtuDriver(host, cfg)

    async def scenario():
        return [await atu.register(1, 3 * PAGE), await atu.register(2, 2 * LARGE_PAGE)]
    small, large = run(scenario())
    assert host.gat_writes == [] and host.atu.gat_table == atu.table | 1 and atu.table % (128 << 10) == 0
    assert large.large and large.nla >> 30 == (1 << 14) - 1            # the last GAT
    for r in (small, large):
        check_region(host, r)


@pytest.mark.parametrize("first_level", [0, 8])
def test_bulk_jobs(first_level):
    """With the job engine (``[atu] jobs``) a registration of at least JOB_PAGES GATEs is one REGISTER
    job per GAT it touches (a 4 KiB-page region across a GAT boundary: two) and every deregistration
    DEREGISTER jobs with their range flushes: the pages translate as with CPU stores, the CPU stores 4
    words per job, and after deregistration every GATE is 0."""
    cfg = copy.deepcopy(CFG)
    cfg["atu"]["jobs"] = True
    cfg["atu"]["gat_cache_entries"] = first_level
    host = AtuModelHost(HostMemory(), cfg)
    atu = AtuDriver(host, cfg, first_page=GAT_PAGES - 100)

    async def scenario():
        small = await atu.register(3, 300 * PAGE, write=False)             # GATs 0 and 1
        stores = host.mem_writes
        large = await atu.register(4, JOB_PAGES * LARGE_PAGE)
        few = await atu.register(5, 2 * PAGE)                              # below JOB_PAGES: CPU stores
        return small, stores, large, few
    small, stores, large, few = run(scenario())
    assert [r.status.name for r in host.jobs] == ["OK"] * 3
    assert host.job_stores == 300 + JOB_PAGES
    assert stores == 8 + (2 if first_level else 0)          # 2 descriptors (and 2 first-level entries)
    for r in (small, large, few):
        check_region(host, r, pages=range(0, r.size // PAGE, 97))
    gates = [atu.gate(small.nla + k * PAGE) for k in range(300)]
    run(atu.deregister(small))
    run(atu.deregister(large))
    assert [r.status.name for r in host.jobs[3:]] == ["OK"] * 3
    assert all(host.words.get(g, 0) == 0 for g in gates)
    assert host.flushes == [(small.nla >> 12, 3, 100), ((small.nla >> 12) + 100, 3, 200),
                            (large.nla >> 12, 4, JOB_PAGES << 9)]
    assert host.atu.translate(3, small.nla >> 12, 0).cause == AtsCause.INVALID_GATE
