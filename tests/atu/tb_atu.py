"""cocotb testbench: the ATU in its system (HTAX + register file + ATU, :mod:`sim.tops.atu`).

The host model (``sim/host.py``) plays CPU and memory on HTAX port 0: it holds the GATs, answers the
ATU's GATE reads (with jitter and reordering when ``jitter`` > 0) and writes the ATU registers.  One
:class:`FuModel` per FU port sends translation requests on the ATS VC, collects the responses and
answers flush requests (after ``flush_delay`` cycles).  Every response is compared, per FU in request
order, with :class:`sim.atu_model.AtuModel`.
"""

import random
from collections import deque

import cocotb
from cocotb.triggers import RisingEdge

from rtl.atu.layout import GATE_INDEX_BITS, LARGE_PAGE_BITS, JobOp, JobStatus
from rtl.common.ats import AtsCause, AtsCmd
from rtl.common.htax import HtaxCmd
from sim.atu_model import (
    AtuModel,
    decode_ats,
    flush_response,
    gate_word,
    job_completion,
    job_descriptor,
    translation_request,
)
from sim.driver.atu import JOB_PAGES, JOB_RING, AtuDriver
from sim.host import HostModel
from sim.htax_bus import HtaxSink, HtaxSource
from sim.htax_packet import HtaxPacket
from sim.regs_model import RegModel
from sim.runner import tb_params, tb_seed
from sim.tops.configs import atu_config

CFG = atu_config()
A = CFG["atu"]
REGS = RegModel.from_config(CFG)
FLUSH, TLB_CNT, FLUSH_CNT, ERR_CNT = (REGS.addr(f"atu.{r}") for r in ("flush", "tlb_counters", "flush_counters",
                                                                        "errors"))
IRQ_STATUS = REGS.addr("irq.status")
REGS_PORT = CFG["regs"]["htax_port"]
ATU_PORT = A["htax_port"]
VPIDS = CFG["system"]["vpids"]
HUGE = 2 << 20


def gat_base_addr(index):
    """Host address of the ``atu.gat_base[index]`` register."""
    return REGS.addr(f"atu.gat_base[{index}]")


class FuModel:
    """A functional unit on HTAX port ``port``: ATS requests out, responses and flush requests in.

    It sends through an :class:`~sim.htax_bus.HtaxSource` on the switch side of its port
    (``fu<port>__rx``), pulling one packet at a time (flush responses before requests, at most
    ``window`` translation requests outstanding), and receives through an
    :class:`~sim.htax_bus.HtaxSink` (``fu<port>__tx``).
    """

    def __init__(self, dut, port, clk, *, period_ns, flush_delay=0, gap_p=0.0, rng=None, window=None):
        self.port = port
        self.window = window            # at most this many translation requests outstanding (None: no limit)
        self.clk = clk
        self.flush_delay = flush_delay
        self.rng = rng or random.Random(port)
        self.queue = deque()            # (kind, ats word, request info)
        self.pending = deque()          # requests sent, waiting for their response: (info, cycle sent)
        self.results = []               # (info, Translation, cycle sent, cycle answered)
        self.flushes = []               # (cycle, fields) of flush requests received
        self._errors = []
        self._in_flight = 0             # requests handed to the source whose header has not moved
        rst = getattr(dut, "rst", None)
        self.source = HtaxSource(dut, f"fu{port}__rx", clk, rst, period_ns=period_ns, pause=gap_p or None,
                                 rng=self.rng, fetch=self._next, on_header=self._sent, name=f"FU {port} tx")
        self.sink = HtaxSink(dut, f"fu{port}__tx", clk, rst, period_ns=period_ns, callback=self._received,
                             name=f"FU {port} rx")
        self.source.start()
        self.sink.start()

    @property
    def errors(self):
        return self._errors + self.sink.errors

    def request(self, vpid, nla_page, write, info=None, *, next=0):
        self.queue.append(("req", translation_request(vpid=vpid, nla_page=nla_page, write=write, next=next),
                           info if info is not None else (vpid, nla_page, write)))
        self.source.kick()

    def send_raw(self, word):
        """Queue an ATS message that is not a translation request (bad-input tests)."""
        self.queue.append(("junk", word, None))
        self.source.kick()

    def idle(self):
        return not self.queue and not self.pending and not self._in_flight

    def _next(self):
        if not self.queue:
            return None
        if (self.window is not None and self.queue[0][0] == "req"
                and len(self.pending) + self._in_flight >= self.window):
            return None
        kind, word, info = self.queue.popleft()
        if kind == "req":
            self._in_flight += 1
        pkt = HtaxPacket(HtaxCmd.ATS, src=self.port, dst=ATU_PORT, tag=len(self.pending) % 32, ats=word)
        return pkt, (kind, info)

    def _sent(self, tag, cycle):
        kind, info = tag
        if kind == "req":
            self._in_flight -= 1
            self.pending.append((info, cycle))

    def _received(self, record):
        pkt, cycle = record.packet, record.header_cycle
        if pkt is None:
            return
        if pkt.cmd != HtaxCmd.ATS or len(record.beats) != 1:
            self._errors.append(f"FU {self.port}: unexpected packet {pkt}")
            return
        if pkt.src != ATU_PORT:
            self._errors.append(f"FU {self.port}: ATS from port {pkt.src}")
        cmd, f = decode_ats(pkt.ats)
        if cmd == AtsCmd.TRANSLATION_RESPONSE:
            if not self.pending:
                self._errors.append(f"FU {self.port}: response without a request")
                return
            info, sent = self.pending.popleft()
            self.results.append((info, f, sent, cycle))
            self.source.kick()          # the window may have opened
        elif cmd == AtsCmd.FLUSH_REQUEST:
            self.flushes.append((cycle, f))
            cocotb.start_soon(self._answer_flush(pkt.ats))
        else:
            self._errors.append(f"FU {self.port}: unexpected ATS {cmd!r}")

    async def _answer_flush(self, word):
        for _ in range(self.flush_delay):
            await RisingEdge(self.clk)
        self.queue.appendleft(("flush", flush_response(word), None))
        self.source.kick()


async def setup(dut, **kw):
    p = tb_params()
    seed = tb_seed()
    dut._log.info(f"seed {seed}, params {p}")
    jitter = p.get("jitter", 0)
    opts = dict(cfg=CFG, port="htax", host_port=0, route=lambda a: REGS_PORT, seed=seed,
                jitter_cycles=jitter, reorder=jitter > 0)
    opts.update(kw)
    host = HostModel(dut, **opts)
    host.start_clock()
    await host.reset()
    await host.start()
    rng = random.Random(seed)
    model = AtuModel(gat_entries=A["gat_entries"], vpids=VPIDS, read64=lambda a: _read64(host, a),
                     first_level=A["gat_cache_entries"] > 0)
    return host, rng, model


def _read64(host, addr):
    raw = host.memory.read(addr, 8) if host.memory.owner(addr) is not None else None
    return None if raw is None else int.from_bytes(raw, "little")


async def set_gat(host, model, index, base):
    await host.write64(gat_base_addr(index), base)
    assert await host.read64(gat_base_addr(index)) == base     # the posted write has landed
    model.gat_base[index] = base


def fus(dut, host, rng, delays=None):
    """One :class:`FuModel` per FU port; test parameter ``window``: at most this many translation
    requests outstanding per FU (default: no limit, the FUs fill the ATU's request FIFO)."""
    delays = delays or {}
    window = tb_params().get("window")
    return [FuModel(dut, p, host.clk, period_ns=host.period_ns, flush_delay=delays.get(p, 0),
                    gap_p=tb_params().get("gap_p", 0.0), rng=random.Random(rng.getrandbits(32)), window=window)
            for p in A["fu_ports"]]


async def drain(host, units, limit=200000):
    for _ in range(limit // 16):
        if all(u.idle() for u in units):
            await host.cycles(8)
            return
        await host.cycles(16)
    raise AssertionError(f"translations outstanding: {[len(u.pending) + len(u.queue) for u in units]}")


def check_clean(host, units):
    errs = host.errors + [e for u in units for e in u.errors]
    assert not errs, errs[:10]


async def read_counters(host):
    t = await host.read64(TLB_CNT)
    f = await host.read64(FLUSH_CNT)
    return t & 0xFFFF_FFFF, t >> 32, f & 0xFFFF_FFFF, f >> 32


async def read_errors(host):
    """``(failed, dropped)`` of ``atu.errors``."""
    e = await host.read64(ERR_CNT)
    return e & 0xFFFF_FFFF, e >> 32


def build_gats(host, rng, ngats, pages_per_gat, *, large=0):
    """Allocate ``ngats`` GATs with random GATEs (in runs of consecutive ones, so look-ahead finds them),
    then ``large`` large-page GATs (4 KiB tables, mostly 2 MB-aligned large GATEs); returns (GAT base
    register values, {nla_page: gate word}: every 4 KB page of a large GATE's 2 MB page maps to it)."""
    bases, gates = [], {}
    for g in range(ngats + large):
        big = int(g >= ngats)
        base = host.memory.alloc(4096) if big else host.memory.alloc(HUGE, huge=True)
        bases.append(base | big)
        idx = set()
        while len(idx) < pages_per_gat:
            start = rng.randrange((1 << (GATE_INDEX_BITS - LARGE_PAGE_BITS * big)) - 4)
            idx.update(range(start, start + rng.randrange(1, 5)))
        vpid = rng.randrange(VPIDS)
        for i in sorted(idx):
            vpid = rng.randrange(VPIDS) if rng.random() < 0.3 else vpid
            size = big if rng.random() < 0.9 else 1 - big
            ppn = rng.getrandbits(40) & ~(((1 << LARGE_PAGE_BITS) - 1) if size and rng.random() < 0.9 else 0)
            word = gate_word(ppn=ppn, vpid=vpid, read=rng.random() < 0.8, write=rng.random() < 0.6,
                             valid=rng.random() < 0.85, large=size)
            host.memory.write64(base + 8 * i, word)
            page = (g << GATE_INDEX_BITS) | (i << (LARGE_PAGE_BITS * big))
            gates[page] = word
            if big:
                gates[page | rng.getrandbits(LARGE_PAGE_BITS)] = word
    return bases, gates


def compare(units, model_of, label):
    n = 0
    for u in units:
        for info, got, sent, _ in u.results:
            exp = model_of(info, sent)
            assert got in exp if isinstance(exp, (list, set)) else got == exp, \
                f"{label}: FU {u.port} request {info} sent at {sent}: got {got}, expected {exp}"
            n += 1
    return n


def dma_reads_inside(host, bases):
    """Every DMA read lies in a GAT's table (2 MB, or 4 KB for a large-page GAT: bit 0 of ``bases``)."""
    for acc in host.memory.log:
        if acc.kind == "read":
            assert any(b & ~1 <= acc.addr < (b & ~1) + (4096 if b & 1 else HUGE) for b in bases), \
                f"DMA read outside every GAT: {acc.addr:#x}"


@cocotb.test()
async def random_translations(dut):
    """Several FUs, random VPIDs, permissions, (in)valid GATEs, 4 KB and 2 MB pages (good and bad large
    GATEs), TLB aliasing, bad NLAs, requests with ``next`` (look-ahead), reordered memory."""
    host, rng, model = await setup(dut)
    n = tb_params().get("requests", 600)
    bases, gates = build_gats(host, rng, 2, 40, large=1)
    for g, b in enumerate(bases):
        await set_gat(host, model, g, b)
    # pages that alias in the TLB: same low index bits, different GATs/upper bits
    pages = list(gates)
    alias = [(p ^ (A["tlb_entries"] * k)) & ((3 << GATE_INDEX_BITS) | ((1 << GATE_INDEX_BITS) - 1))
             for p in pages[:8] for k in (1, 2)]
    bad = [(5 << GATE_INDEX_BITS) | 7, (A["gat_entries"] << GATE_INDEX_BITS), (1 << 31) | 3]
    await host.cycles(20)
    units = fus(dut, host, rng)
    hot = rng.sample(pages, 12)
    for _ in range(n):
        u = rng.choice(units)
        r = rng.random()
        page = (rng.choice(hot) if r < 0.5 else rng.choice(pages) if r < 0.85 else rng.choice(alias) if r < 0.95
                else rng.choice(bad))
        gate = gates.get(page)
        vpid = ((gate >> 8) & 0xFFFF) if gate is not None and rng.random() < 0.7 else rng.randrange(VPIDS + 4)
        u.request(vpid, page, rng.getrandbits(1), next=rng.getrandbits(1))
    await drain(host, units)
    count = compare(units, lambda info, _: model.translate(*info), "random")
    assert count == n
    check_clean(host, units)
    dma_reads_inside(host, bases)
    hits, misses, _, _ = await read_counters(host)
    lookups = sum(1 for u in units for (v, p, _), *_ in u.results
                  if v < VPIDS and (p >> GATE_INDEX_BITS) < 3)
    assert hits + misses == lookups, (hits, misses, lookups)
    assert misses <= host.stats["dma_reads"] + 0 and misses == host.stats["dma_reads"], \
        (misses, host.stats["dma_reads"])
    failed = sum(1 for u in units for info, *_ in u.results if not model.translate(*info).ok)
    assert await read_errors(host) == (failed, 0), (await read_errors(host), failed)
    filled, used = divmod(await host.read64(REGS.addr("atu.lookahead_counters")), 1 << 32)[::-1]
    assert used <= filled, (used, filled)
    dut._log.info(f"{n} translations, {hits} hits, {misses} misses, look-ahead {filled} filled {used} used")


@cocotb.test()
async def vpid_isolation(dut):
    """Every VPID against every GATE (one 4 KB GATE and one 2 MB GATE per VPID, each large page at one of
    its 4 KB pages): OK only for the owner, never its page otherwise; look-ahead on every request."""
    host, rng, model = await setup(dut)
    base = host.memory.alloc(HUGE, huge=True)
    await set_gat(host, model, 1, base)
    table = host.memory.alloc(4096)
    await set_gat(host, model, 2, table | 1)
    pages = {}
    for v in range(VPIDS):
        idx = rng.randrange(1 << GATE_INDEX_BITS)
        while (1 << GATE_INDEX_BITS) | idx in pages:
            idx = rng.randrange(1 << GATE_INDEX_BITS)
        host.memory.write64(base + 8 * idx, gate_word(ppn=rng.getrandbits(40), vpid=v))
        pages[(1 << GATE_INDEX_BITS) | idx] = v
        # the VPID's 2 MB page: GATE v of the large-page GAT, seen at one of its 4 KB pages
        host.memory.write64(table + 8 * v, gate_word(ppn=rng.getrandbits(31) << LARGE_PAGE_BITS, vpid=v, large=1))
        pages[(2 << GATE_INDEX_BITS) | (v << LARGE_PAGE_BITS) | rng.randrange(1 << LARGE_PAGE_BITS)] = v
    units = fus(dut, host, rng)
    order = [(v, p, w) for v in range(VPIDS) for p in pages for w in (0, 1)]
    rng.shuffle(order)
    for i, (v, p, w) in enumerate(order):
        units[i % len(units)].request(v, p, w, next=1)
    # second pass: now owners' GATEs (and look-ahead neighbours) sit in the TLBs; other VPIDs must still
    # be refused
    for i, (v, p, w) in enumerate(order):
        units[i % len(units)].request(v, p, w, next=1)
    await drain(host, units)
    for u in units:
        for (v, p, _w), got, *_ in u.results:
            if v != pages[p]:
                assert not got.ok and got.ppn == 0 and got.cause == AtsCause.VPID_MISMATCH, (v, p, got)
            else:
                assert got.ok, (v, p, got)
    compare(units, lambda info, _: model.translate(*info), "isolation")
    check_clean(host, units)


@cocotb.test()
async def bad_input(dut):
    """Unconfigured GAT, out-of-range NLA and VPID, memory errors, unknown ATS commands: defined answers."""
    host, rng, model = await setup(dut)
    base = host.memory.alloc(HUGE, huge=True)
    await set_gat(host, model, 0, base)
    host.memory.write64(base + 8 * 3, gate_word(ppn=0x123, vpid=2))
    hole = host.memory.alloc(HUGE, huge=True)
    host.memory.free(hole, HUGE)                        # a GAT base pointing at unallocated memory
    await set_gat(host, model, 2, hole)
    # page-size faults: a large GATE in a 4 KB-page GAT; in a large-page GAT a misaligned large GATE and
    # a 4 KB GATE; a 4 KB-page GAT whose base is not 2 MB aligned
    host.memory.write64(base + 8 * 5, gate_word(ppn=0x200, vpid=2, large=1))
    table = host.memory.alloc(4096)
    await set_gat(host, model, 3, table | 1)
    host.memory.write64(table + 8 * 1, gate_word(ppn=0x201, vpid=2, large=1))
    host.memory.write64(table + 8 * 2, gate_word(ppn=0x400, vpid=2))
    await set_gat(host, model, 4, base + 0x1000)
    big = 3 << GATE_INDEX_BITS
    units = fus(dut, host, rng)
    u = units[0]
    cases = [(2, 3, 0, AtsCause.NONE), (2, (1 << GATE_INDEX_BITS) | 3, 0, AtsCause.GAT_NOT_CONFIGURED),
             (2, (A["gat_entries"] << GATE_INDEX_BITS) | 3, 0, AtsCause.NLA_RANGE),
             (VPIDS, 3, 0, AtsCause.NLA_RANGE), (0xFFFF, 3, 1, AtsCause.NLA_RANGE),
             (2, (2 << GATE_INDEX_BITS) | 9, 0, AtsCause.MEMORY_ERROR), (2, 4, 0, AtsCause.INVALID_GATE),
             (2, 5, 0, AtsCause.PAGE_SIZE), (2, big | (1 << LARGE_PAGE_BITS) | 7, 0, AtsCause.PAGE_SIZE),
             (2, big | (2 << LARGE_PAGE_BITS), 1, AtsCause.PAGE_SIZE),
             (2, (4 << GATE_INDEX_BITS) | 1, 0, AtsCause.GAT_NOT_CONFIGURED)]
    for v, p, w, _ in cases:
        u.request(v, p, w)
    # ATS messages the ATU does not take (a translation response, a flush request, a stray flush
    # response): consumed and dropped; the next request is answered normally
    for word in (AtsCmd.TRANSLATION_RESPONSE.value | 0xABC0, AtsCmd.FLUSH_REQUEST.value | 0x5550,
                 AtsCmd.FLUSH_RESPONSE.value | 0x7770):
        u.send_raw(word)
    u.request(2, 3, 1)
    cases.append((2, 3, 1, AtsCause.NONE))
    await drain(host, units)
    assert [r[1].cause for r in u.results] == [c[3] for c in cases], [r[1] for r in u.results]
    for r in u.results:
        assert r[1].ok == (r[1].cause == AtsCause.NONE) and (r[1].ok or r[1].ppn == 0), r
    compare(units, lambda info, _: model.translate(*info), "bad input")
    # every failed check counts once, every dropped ATS message once
    assert await read_errors(host) == (sum(c[3] != AtsCause.NONE for c in cases), 3)
    assert all("unallocated" in v for v in host.memory.violations), host.memory.violations
    host.memory.violations.clear()
    check_clean(host, units)


async def flush(host, nla, *, tlb=1, ats=1, vpid=0, extra=None, gat=0):
    """Write the flush register (fig. 5-11; with ``extra``, ``atu.flush_range`` first: a range of
    ``extra + 1`` pages; ``gat``: invalidate the GAT cache entry of ``nla``'s GAT) and poll ``done``;
    return the cycle it was seen set."""
    if extra is not None:
        await host.write64(REGS.addr("atu.flush_range"), extra)
    await host.write64(FLUSH, nla | (tlb << 32) | (ats << 33) | (vpid << 34) | (gat << 50) | (1 << 62))
    for _ in range(2000):
        v = await host.read64(FLUSH)
        if v >> 63:
            await host.write64(FLUSH, 1 << 63)          # woclr
            return host.now()
    raise AssertionError("flush did not complete")


@cocotb.test()
async def flush_storm(dut):
    """GATEs change (zero / new page) and are flushed while FUs stream requests with misses in flight;
    one FU answers flush requests late.  A request sent after ``done`` must see the new GATE."""
    p = tb_params()
    host, rng, model = await setup(dut)
    late = A["fu_ports"][-1]
    base = host.memory.alloc(HUGE, huge=True)
    await set_gat(host, model, 0, base)
    pages = rng.sample(range(1 << GATE_INDEX_BITS), 6)
    history = {}                                     # page -> [(cycle written, cycle done, gate)]
    for pg in pages:
        g = gate_word(ppn=rng.getrandbits(40), vpid=1)
        host.memory.write64(base + 8 * pg, g)
        history[pg] = [(0, 0, g)]
    units = fus(dut, host, rng, delays={late: p.get("late", 60)})
    flushes = p.get("flushes", 12)
    stop = False

    async def stream():
        while not stop:
            for u in units:
                if len(u.queue) < 4:
                    u.request(1, rng.choice(pages), 0)
            await host.cycles(2)
    task = cocotb.start_soon(stream())
    for _ in range(flushes):
        await host.cycles(rng.randrange(5, 60))
        pg = rng.choice(pages)
        new = 0 if rng.random() < 0.4 else gate_word(ppn=rng.getrandbits(40), vpid=1)
        host.memory.write64(base + 8 * pg, 0)        # deregistration zeroes the GATE first (ch. 5.3)
        written = host.now()                         # the FU models count the host's cycles
        done = await flush(host, pg, vpid=1, extra=rng.choice((0, 0, 3, 2000)))   # ranges sweep TLB sets
        history[pg].append((written, done, 0))
        if new:     # registration needs no flush: the TLB never holds an invalid GATE
            host.memory.write64(base + 8 * pg, new)
            history[pg].append((host.now(), host.now(), new))
    stop = True
    await drain(host, units)
    task.cancel()

    def expected(info, sent, rsp_cycle):
        v, pg, w = info
        hist = history[pg]
        committed = max((h for h in hist if h[1] <= sent), key=lambda h: h[1])
        allowed = {committed[2]} | {h[2] for h in hist if h[0] >= committed[0] and h[0] <= rsp_cycle}
        return {AtuModel.check(g, v, w) for g in allowed}

    n = 0
    for u in units:
        for info, got, sent, answered in u.results:
            exp = expected(info, sent, answered)
            assert got in exp, f"FU {u.port} {info} sent {sent} answered {answered}: {got}, allowed {exp}"
            n += 1
        assert len(u.flushes) == flushes, (u.port, len(u.flushes))
        assert all(f["flush_request.nla_page"] in pages and f["flush_request.vpid"] == 1 for _, f in u.flushes)
    _, _, tlb_flushes, atu_flushes = await read_counters(host)
    assert (tlb_flushes, atu_flushes) == (flushes, flushes)
    check_clean(host, units)
    dut._log.info(f"{n} translations across {flushes} flushes")


@cocotb.test()
async def registration_sequence(dut):
    """Fig. 5-9 through the host model: register a page, translate, deregister (zero + flush), translate."""
    host, rng, model = await setup(dut)
    units = fus(dut, host, rng)
    u = units[0]
    gat = host.memory.alloc(HUGE, huge=True)            # kernel: one GAT in a huge page
    await set_gat(host, model, 7, gat)
    user = host.memory.alloc(4096, owner=5)              # the user page to register
    idx = 1234
    host.memory.write64(gat + 8 * idx, gate_word(ppn=user >> 12, vpid=5, read=1, write=0))
    nla_page = (7 << GATE_INDEX_BITS) | idx              # returned to the user as its NLA
    c0 = await read_counters(host)
    u.request(5, nla_page, 0)           # a miss; the GATE fills the TLB
    await drain(host, units)
    for w in (0, 1):                    # two hits (the write is refused by the cached GATE)
        u.request(5, nla_page, w)
    await drain(host, units)
    got = [r[1] for r in u.results]
    assert got[0].ok and got[0].ppn == user >> 12 and got[1] == got[0], got
    assert not got[2].ok and got[2].cause == AtsCause.PERMISSION, got
    hits, misses, _, _ = await read_counters(host)
    assert (hits - c0[0], misses - c0[1]) == (2, 1), (hits, misses, c0)
    host.memory.write64(gat + 8 * idx, 0)                # deregistration
    await flush(host, nla_page, vpid=5)
    assert [(f["flush_request.nla_page"], f["flush_request.vpid"]) for _, f in u.flushes] == [(nla_page, 5)]
    u.request(5, nla_page, 0)
    await drain(host, units)
    assert u.results[-1][1].cause == AtsCause.INVALID_GATE and not u.results[-1][1].ok
    _, _, tf, af = await read_counters(host)
    assert (tf, af) == (1, 1)
    # a completed flush also sets irq.status.atu_flush_done (write one to clear); with its mask bit set,
    # the next one sends an interrupt; a flush of the TLB only, without FUs
    assert await host.read64(IRQ_STATUS) & 1
    await host.write64(IRQ_STATUS, 1)
    assert not await host.read64(IRQ_STATUS) & 1
    await host.write64(REGS.addr("irq.mask"), 1)
    await flush(host, nla_page, tlb=1, ats=0)
    assert len(u.flushes) == 1
    irqs = await host.wait_interrupt()
    assert len(irqs) == 1 and irqs[0][0] == CFG["system"]["msi_address"], irqs
    assert await host.read64(IRQ_STATUS) & 1
    check_clean(host, units)


@cocotb.test()
async def first_level_table(dut):
    """The first-level table in host memory (``atu.gat_table``) through the GAT cache: GATs far beyond
    the on-chip table (a 4 KB-page and a large-page GAT, the last index), an entry not configured; then
    a GAT's entry re-pointed to another GAT and flushed (``gat`` + a range over the GAT's pages): later
    requests see the new GATEs.  Leaves the first-level table off and its GATs' cached entries
    invalidated."""
    host, rng, model = await setup(dut)
    table = host.memory.alloc(HUGE, huge=True)                  # 128 KB aligned (2 MB here)
    gats = {600: 0, 9000: 1, (1 << 14) - 1: 0}                  # GAT index -> large
    pages = []
    for g, big in gats.items():
        base = host.memory.alloc(4096) if big else host.memory.alloc(HUGE, huge=True)
        host.memory.write64(table + 8 * g, base | big)
        for i in range(6):
            ppn = rng.getrandbits(31) << LARGE_PAGE_BITS if big else rng.getrandbits(40)
            host.memory.write64(base + 8 * i, gate_word(ppn=ppn, vpid=4, large=big))
            pages.append((g << GATE_INDEX_BITS) | (i << (LARGE_PAGE_BITS * big)) | (rng.getrandbits(9) if big else 0))
    pages.append((700 << GATE_INDEX_BITS) | 3)                   # first-level entry 0: not configured
    await host.write64(REGS.addr("atu.gat_table"), table | 1)
    assert await host.read64(REGS.addr("atu.gat_table")) == table | 1     # the posted write has landed
    model.gat_table = table | 1
    units = fus(dut, host, rng)
    order = [(4, p, w) for p in pages for w in (0, 1)] * 2 + [(5, p, 0) for p in pages]
    for i, (v, p, w) in enumerate(order):
        units[i % len(units)].request(v, p, w, next=rng.getrandbits(1))
    await drain(host, units)
    compare(units, lambda info, _: model.translate(*info), "first level")
    assert sum(r[1].ok for u in units for r in u.results) >= len(pages)
    gat_misses = await host.read64(REGS.addr("atu.gat_counters")) & 0xFFFF_FFFF
    assert 0 < gat_misses < len(order), gat_misses
    # re-point GAT 600 to a new GAT, then flush its cache entry and its pages' TLB sets
    new = host.memory.alloc(HUGE, huge=True)
    for i in range(6):
        host.memory.write64(new + 8 * i, gate_word(ppn=0x55_0000 + i, vpid=4))
    host.memory.write64(table + 8 * 600, new)
    await flush(host, 600 << GATE_INDEX_BITS, vpid=4, extra=(1 << GATE_INDEX_BITS) - 1, gat=1)
    n0 = sum(len(u.results) for u in units)
    for i in range(6):
        units[0].request(4, (600 << GATE_INDEX_BITS) | i, 0)
    await drain(host, units)
    assert [r[1].ppn for r in units[0].results[-6:]] == [0x55_0000 + i for i in range(6)]
    assert sum(len(u.results) for u in units) == n0 + 6
    await host.write64(REGS.addr("atu.gat_table"), 0)
    await host.write64(REGS.addr("atu.flush_range"), 0)
    for g in gats:                      # the next table starts with a clean GAT cache
        await flush(host, g << GATE_INDEX_BITS, ats=0, gat=1)
    model.gat_table = 0
    check_clean(host, units)


@cocotb.test()
async def bulk_jobs(dut):
    """Bulk jobs through the driver (``sim/driver/atu.py``, the configuration's first-level table): a
    4 KiB-page and a 2 MiB-page registration each by one REGISTER job, translated from the FUs; the large
    region's DEREGISTER job runs while the FUs translate the other region; then the other's; then bad
    descriptors complete with their status and count in ``atu.job_counters``.  Leaves the first-level
    table off."""
    host, rng, model = await setup(dut)
    drv = AtuDriver(host, CFG)
    assert drv.jobs and drv.first_level
    c0 = await host.read64(REGS.addr("atu.job_counters"))
    small = await drv.register(6, 100 * 4096, write=False)
    large = await drv.register(7, JOB_PAGES * HUGE)
    model.gat_table = drv.table | 1
    units = fus(dut, host, rng)
    pages = [(small.nla >> 12) + k for k in rng.sample(range(100), 30)]
    pages += [(large.nla >> 12) + rng.randrange(JOB_PAGES << LARGE_PAGE_BITS) for _ in range(30)]
    for i, p in enumerate(pages):
        units[i % len(units)].request(6 if p < large.nla >> 12 else 7, p, rng.getrandbits(1), next=1)
    await drain(host, units)
    assert compare(units, lambda info, _: model.translate(*info), "registered") == len(pages)
    assert sum(r[1].ok for u in units for r in u.results) >= 30
    # deregister the large region while the FUs translate the small one, then the small one
    task = cocotb.start_soon(drv.deregister(large))
    before = [len(u.results) for u in units]
    for i in range(60):
        units[i % len(units)].request(6, (small.nla >> 12) + rng.randrange(100), 0)
    await drain(host, units)
    await task
    during = [r[1] for u, n in zip(units, before, strict=True) for r in u.results[n:]]
    assert len(during) == 60 and all(t.ok for t in during), during
    await drv.deregister(small)
    before = [len(u.results) for u in units]
    for i, p in enumerate(pages):
        units[i % len(units)].request(6 if p < large.nla >> 12 else 7, p, 0)
    await drain(host, units)
    after = [r[1] for u, n in zip(units, before, strict=True) for r in u.results[n:]]
    assert len(after) == len(pages) and all(t.cause == AtsCause.INVALID_GATE for t in after), after
    # bad descriptors, posted by hand after the driver's jobs
    ring, first = drv.ring, drv.producer
    bad = [(job_descriptor(op=JobOp.REGISTER, count=0, nla_page=small.nla >> 12), JobStatus.MALFORMED),
           (job_descriptor(op=JobOp.REGISTER, count=4, nla_page=(700 << GATE_INDEX_BITS) | 3),
            JobStatus.GAT_NOT_CONFIGURED),
           (job_descriptor(op=JobOp.DEREGISTER, count=4, nla_page=(large.nla >> 12) + 1, large=1), JobStatus.PAGE_SIZE),
           (job_descriptor(op=JobOp.FLUSH, count=2, nla_page=small.nla >> 12), JobStatus.OK)]
    for k, (words, _) in enumerate(bad):
        for w, word in enumerate(words):
            host.memory.write64(ring + 32 * ((first + k) % JOB_RING) + 8 * w, word)
    await host.write64(REGS.addr("atu.job_doorbell"), first + len(bad))
    for _ in range(200):
        if await host.read64(REGS.addr("atu.job_status")) & 0xFFFF == first + len(bad):
            break
        await host.cycles(16)
    got = [job_completion(host.memory.read64(ring + 32 * ((first + k) % JOB_RING) + 24)) for k in range(len(bad))]
    assert [(g["done"], g["status"], g["index"]) for g in got] == [(1, s, first + k) for k, (_, s) in enumerate(bad)]
    c1 = await host.read64(REGS.addr("atu.job_counters"))
    assert ((c1 & 0xFFFF_FFFF) - (c0 & 0xFFFF_FFFF), (c1 >> 32) - (c0 >> 32)) == (4 + len(bad), 3)
    await host.write64(REGS.addr("atu.gat_table"), 0)
    check_clean(host, units)
