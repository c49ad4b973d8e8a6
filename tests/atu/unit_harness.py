"""Amaranth-simulator harness for the :class:`rtl.atu.Atu` alone (cheap regression tests).

One testbench process plays the HTAX around the ATU cycle by cycle (an :class:`sim.amsim.HtaxSource`
into ``htax.rx``, an always ready :class:`sim.amsim.HtaxSink` on ``htax.tx``): FUs send translation requests
(whole packets, never interleaved, as the HTAX delivers them), host memory answers GATE READs after
``latency + randrange(jitter + 1)`` cycles (so later reads overtake earlier ones), FUs answer flush
requests after ``flush_delay`` cycles, and ``regs.gat_data`` follows ``regs.gat_addr`` one cycle later.
"""

import heapq
import random
from collections import deque

from rtl.atu.layout import GAT_BASE_SHIFT, GAT_TABLE_SHIFT, GATE_INDEX_BITS, LARGE_PAGE_BITS
from rtl.common.ats import AtsCmd
from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from sim.amsim import Clock, HtaxSink, HtaxSource, lane, run_sim
from sim.atu_model import AtuModel, decode_ats, flush_response, translation_request
from sim.htax_packet import HtaxPacket

__all__ = ["run_unit"]


def run_unit(atu, gat_base, memory, requests, *, latency=20, jitter=0, seed=1, flush_delay=0, flushes=(),
             window=None, limit=100000, min_cycles=0, gat_table=0, jobs=None, tx_stall=0.0):
    """Run ``requests`` (list of (fu port, vpid, nla_page, write[, next])) through ``atu``.

    ``gat_base``: {GAT index: register value (physical base | large)}; ``memory``: {address: GATE word}
    (a read whose first word is missing gets an error response; a missing later word of a look-ahead
    read reads as 0, as a GAT's table is allocated whole).
    ``flushes``: list of (cycle, nla_page, tlb, ats[, extra]) register strobes (``extra``: further pages
    of a range flush, ``atu.flush_range``).  ``flush_delay``: an int or
    {fu port: cycles}.  ``window``: at most this many translation requests outstanding per FU.
    ``min_cycles``: run at least this many cycles (to see flushes complete).  ``tx_stall``: the switch
    refuses each VC of the ATU's output with this probability per cycle (default: always ready).  ``gat_table``: the
    ``atu.gat_table`` register (first-level table base | enable; the ATU needs a GAT cache).  ``jobs``
    (the ATU needs ``jobs``): {"ring": the ``atu.job_ring`` register value, "doorbell": [(cycle, producer)]}
    (the run lasts until the consumer reaches the last producer; the ring's ``enable`` from cycle
    ``jobs["enable_at"]``, default 0); WRITEs from the ATU go into
    ``memory`` (whole words) and are listed in ``stats["writes"]`` as (address, word).  An FU's packet starts
    only in a cycle in which ``rx.ready[ATS]`` is high (``ready`` depends on the ATU's state only), so
    memory responses are never held behind a refused ATS request: the HTAX with its hazard fixed.
    Returns ``(results, stats)``: results {fu port: [Translation in arrival order]}; stats dict with
    ``dma_reads``, ``max_outstanding``, ``cycles``, ``flush_done`` (cycles), ``flush_requests``,
    ``gates_read`` (words of those reads), ``hits``, ``misses``, ``la_filled``, ``la_used`` (the counter
    strobes), ``ats_refused`` (cycles with ``rx.ready[ATS]`` low), ``ats_in`` (cycles translation-request beats
    moved in), ``rsp_out`` (cycles translation responses moved out).
    """
    rng = random.Random(seed)
    queues = {p: deque() for p in atu.fu_ports}
    for port, vpid, page, write, *nxt in requests:
        queues[port].append(HtaxPacket(HtaxCmd.ATS, src=port, dst=atu.htax_port, tag=0,
                                       ats=translation_request(vpid=vpid, nla_page=page, write=write,
                                                               next=nxt[0] if nxt else 0)))
    results = {p: [] for p in atu.fu_ports}
    stats = {"dma_reads": 0, "gates_read": 0, "hits": 0, "misses": 0, "la_filled": 0, "la_used": 0, "gat_misses": 0,
             "max_outstanding": 0, "cycles": 0, "flush_done": [], "flush_requests": [],
             "ats_refused": 0, "ats_in": [], "rsp_out": [], "writes": [], "jobs_done": 0, "job_errors": 0}
    sent = {p: 0 for p in atu.fu_ports}
    flushes = sorted(flushes)

    sched = []                  # (due, seq, packet) memory responses
    flush_q = []                # (due, packet) flush responses
    fl = deque(flushes)
    state = {"seq": 0, "fu_rr": 0}
    clock = Clock(limit=limit + 1)

    def next_packet(ctx, now):
        """Memory responses first, then (only while the ATU is ready for ATS, as the switch's per-VC
        arbitration lets responses pass a refused ATS packet) flush responses, then the FUs
        round-robin."""
        if sched and sched[0][0] <= now:
            return heapq.heappop(sched)[2]
        if not lane(ctx.get(atu.htax.rx.ready), HtaxVC.ATS):
            return None
        if flush_q and flush_q[0][0] <= now:
            return flush_q.pop(0)[1]
        ports = list(queues)
        for i in range(len(ports)):
            p = ports[(state["fu_rr"] + i) % len(ports)]
            if queues[p] and (window is None or sent[p] - len(results[p]) < window):
                sent[p] += 1
                state["fu_rr"] = (state["fu_rr"] + i + 1) % len(ports)
                return queues[p].popleft()
        return None

    def from_atu(rec):
        pkt, cycle = rec.packet, rec.last_cycle
        if pkt.cmd == HtaxCmd.WRITE:
            assert pkt.first_be == 0xFF and (pkt.length == 1 or pkt.last_be == 0xFF), pkt
            for k, word in enumerate(pkt.data):
                memory[pkt.addr + 8 * k] = word
                stats["writes"].append((pkt.addr + 8 * k, word))
            return
        if pkt.cmd == HtaxCmd.READ:
            stats["dma_reads"] += 1
            stats["gates_read"] += pkt.length
            words = [memory.get(pkt.addr + 8 * k, None if k == 0 else 0) for k in range(pkt.length)]
            ok = words[0] is not None
            rsp = HtaxPacket(HtaxCmd.RESPONSE, src=atu.host_port, dst=atu.htax_port, tag=pkt.tag,
                             addr=pkt.addr, length=pkt.length if ok else 0, last_be=0xFF if ok else 0,
                             status=HtaxStatus.OK if ok else HtaxStatus.TARGET_ERROR, data=words if ok else [])
            state["seq"] += 1
            heapq.heappush(sched, (cycle + latency + rng.randrange(jitter + 1), state["seq"], rsp))
            stats["max_outstanding"] = max(stats["max_outstanding"], len(sched))
            return
        assert pkt.cmd == HtaxCmd.ATS, pkt
        cmd, f = decode_ats(pkt.ats)
        if cmd == AtsCmd.TRANSLATION_RESPONSE:
            results[pkt.dst].append(f)
            stats["rsp_out"].append(cycle)
        else:
            assert cmd == AtsCmd.FLUSH_REQUEST, cmd
            stats["flush_requests"].append((cycle, pkt.dst, f))
            delay = flush_delay.get(pkt.dst, 0) if isinstance(flush_delay, dict) else flush_delay
            flush_q.append((cycle + delay, HtaxPacket(
                HtaxCmd.ATS, src=pkt.dst, dst=atu.htax_port, ats=flush_response(pkt.ats))))
            flush_q.sort(key=lambda x: x[0])

    host = clock.add(HtaxSource(atu.htax.rx, next_packet=next_packet))     # FUs and memory into the ATU
    clock.add(HtaxSink(atu.htax.tx, on_packet=from_atu, rng=random.Random(seed + 1), stall=tx_stall,
                       per_vc=True))

    bells = deque(sorted((jobs or {}).get("doorbell", ())))
    final = bells[-1][1] if bells else 0

    def jobs_left(ctx):
        """Jobs still to run, or the last completion word still in the engine's queue or the output
        register: 4 cycles without a beat on tx since the consumer last moved (called every cycle)."""
        if jobs is None:
            return False
        consumer = ctx.get(atu.regs.atu.job_status.consumer_next)
        moved = ctx.get(atu.htax.tx.valid) or consumer != state.get("consumer")
        state["quiet"], state["consumer"] = 0 if moved else state.get("quiet", 0) + 1, consumer
        return bool(bells) or consumer != final or ctx.get(atu.regs.atu.job_status.busy_next) or state["quiet"] < 4

    async def tb(ctx):
        gat_data = 0
        total = len(requests)
        if jobs is not None:
            ring = jobs["ring"]
            ctx.set(atu.regs.atu.job_ring.size, ring >> 1 & 15)
            ctx.set(atu.regs.atu.job_ring.base, ring >> 12)
        while (jobs_left(ctx) or sum(len(v) for v in results.values()) < total or fl or flush_q or sched
               or clock.now < max(min_cycles, state.get("strobe", -64) + 64)):
            if clock.now > limit:
                raise AssertionError(f"hang: {total - sum(len(v) for v in results.values())} translations "
                                     f"outstanding after {limit} cycles, {len(sched)} GATE reads"
                                     + (f" DBG {stats['jobs_done']} {stats['flush_done']} {sched[:2]} {host._pkt} "
                                        f"{ctx.get(atu.htax.tx.valid)} {ctx.get(atu.htax.rx.ready)} "
                                        f"{ctx.get(atu.regs.atu.job_status.busy_next)}"))
            clock.drive(ctx)
            start = bool(fl) and fl[0][0] <= clock.now
            if start:
                state["strobe"] = clock.now             # its flush requests may leave a cycle later
                _, page, tlb, ats, *extra = fl.popleft()
                ctx.set(atu.regs.atu.flush_range.extra, extra[0] if extra else 0)
                ctx.set(atu.regs.atu.flush.nla, page)
                ctx.set(atu.regs.atu.flush.tlb, tlb)
                ctx.set(atu.regs.atu.flush.ats, ats)
            ctx.set(atu.regs.atu.flush.start, start)
            if atu.gat_cache_entries:
                ctx.set(atu.regs.atu.gat_table.enable, gat_table & 1)
                ctx.set(atu.regs.atu.gat_table.base, gat_table >> GAT_TABLE_SHIFT)
            ctx.set(atu.regs.atu.gat_base.data.addr, gat_data >> GAT_BASE_SHIFT)
            ctx.set(atu.regs.atu.gat_base.data.large, gat_data & 1)
            stats["ats_refused"] += not lane(ctx.get(atu.htax.rx.ready), HtaxVC.ATS)
            r = atu.regs.atu
            for key, strobe in (("hits", r.tlb_counters.hits_incr), ("misses", r.tlb_counters.misses_incr),
                                ("la_filled", r.lookahead_counters.filled_incr),
                                ("la_used", r.lookahead_counters.used_incr),
                                ("gat_misses", r.gat_counters.misses_incr)):
                stats[key] += ctx.get(strobe)
            if jobs is not None:
                ctx.set(atu.regs.atu.job_ring.enable, jobs["ring"] & int(clock.now >= jobs.get("enable_at", 0)))
            if bells and bells[0][0] <= clock.now:
                ctx.set(atu.regs.atu.job_doorbell.producer, bells.popleft()[1])
            if jobs is not None:
                stats["jobs_done"] += ctx.get(r.job_counters.done_incr)
                stats["job_errors"] += ctx.get(r.job_counters.errors_incr)
            if ctx.get(atu.regs.atu.flush.done_set):
                stats["flush_done"].append(clock.now)
            gat_data = gat_base.get(ctx.get(atu.regs.atu.gat_base.addr), 0)
            await clock.tick(ctx)
        stats["cycles"] = clock.now

    run_sim(atu, tb)
    stats["ats_in"] = [h for h, _, p in host.sent
                       if p.cmd == HtaxCmd.ATS and decode_ats(p.ats)[0] == AtsCmd.TRANSLATION_REQUEST]
    return results, stats


def expected(model, requests):
    """{fu port: [Translation]} from :class:`AtuModel` (GATEs fixed during the run)."""
    out = {}
    for port, vpid, page, write, *_ in requests:
        out.setdefault(port, []).append(model.translate(vpid, page, write))
    return out


def _gates(rng, memory, base, indices, vpids, *, large):
    """Random GATEs at ``indices`` of the table at ``base``: runs of one VPID (look-ahead finds
    them), mostly valid and of the GAT's page size, some misaligned large pages."""
    from sim.atu_model import gate_word
    vpid = 0
    for i in indices:
        if rng.random() < 0.3:
            vpid = rng.randrange(vpids)
        big = large if rng.random() < 0.9 else 1 - large
        ppn = rng.getrandbits(40)
        if big and rng.random() < 0.9:
            ppn &= ~((1 << LARGE_PAGE_BITS) - 1)
        memory[base + 8 * i] = gate_word(ppn=ppn, vpid=vpid, read=rng.random() < 0.8, write=rng.random() < 0.6,
                                         valid=rng.random() < 0.85, large=big)


def _runs(rng, limit, count, length=5):
    """``count`` indices below ``limit`` in runs of ``length`` consecutive ones."""
    out = set()
    while len(out) < count:
        start = rng.randrange(limit - length)
        out.update(range(start, start + length))
    return sorted(out)


def random_setup(rng, ngats=3, pages_per_gat=40, vpids=32):
    """GAT bases, memory and the list of NLA pages for random tests: ``ngats`` 4 KB-page GATs, then a
    large-page GAT (4 KB aligned table), then a 4 KB-page GAT whose base is not 2 MB aligned."""
    gat_base, memory, pages = {}, {}, []
    for g in range(ngats):
        base = (0x100 + g) << 21
        gat_base[g] = base
        idx = _runs(rng, 1 << GATE_INDEX_BITS, pages_per_gat)
        _gates(rng, memory, base, idx, vpids, large=0)
        pages += [(g << GATE_INDEX_BITS) | i for i in idx]
    g = ngats
    base = (0x7_1234 + 0x100 * g) << 12
    gat_base[g] = base | 1
    idx = _runs(rng, 1 << (GATE_INDEX_BITS - LARGE_PAGE_BITS), pages_per_gat // 2)
    _gates(rng, memory, base, idx, vpids, large=1)
    pages += [(g << GATE_INDEX_BITS) | (i << LARGE_PAGE_BITS) | rng.getrandbits(LARGE_PAGE_BITS) for i in idx]
    gat_base[ngats + 1] = 0x300 << 21 | 0x5000     # misaligned: GAT_NOT_CONFIGURED
    pages.append(((ngats + 1) << GATE_INDEX_BITS) | 3)
    model = AtuModel(gat_entries=512, vpids=vpids, read64=lambda a: memory.get(a))
    for g, b in gat_base.items():
        model.gat_base[g] = b
    return gat_base, memory, pages, model


def first_level_setup(rng, *, table=0x40 << 20, gats=(3, 19, 700, 5000, 16383), pages_per_gat=24, vpids=32):
    """The first-level table in memory at ``table``: 4 KB-page GATs at ``gats`` (the second one a
    large-page GAT), one index whose entry is 0 (not configured), one whose 4 KB-page GAT is not 2 MB
    aligned, and one whose entry is missing from ``memory`` (its read fails); returns (memory, pages,
    model) with the model's ``gat_table`` set."""
    memory, pages = {}, []
    for k, g in enumerate(gats):
        big = int(k == 1)
        base = (0x200 + 0x10 * k) << 21
        memory[table + 8 * g] = base | big
        idx = _runs(rng, 1 << (GATE_INDEX_BITS - LARGE_PAGE_BITS * big), pages_per_gat)
        _gates(rng, memory, base, idx, vpids, large=big)
        pages += [(g << GATE_INDEX_BITS) | (i << (LARGE_PAGE_BITS * big)) | (rng.getrandbits(9) if big else 0)
                  for i in idx]
    memory[table + 8 * 21] = 0                              # not configured
    memory[table + 8 * 22] = (0x300 << 21) | 0x7000         # a 4 KB-page GAT not 2 MB aligned
    pages += [(21 << GATE_INDEX_BITS) | 5, (22 << GATE_INDEX_BITS) | 5, (23 << GATE_INDEX_BITS) | 5]
    model = AtuModel(gat_entries=16, vpids=vpids, read64=lambda a: memory.get(a), first_level=True)
    model.gat_table = table | 1
    return memory, pages, model
