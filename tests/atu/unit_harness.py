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

from rtl.atu.layout import GAT_BASE_SHIFT, GATE_INDEX_BITS
from rtl.common.ats import AtsCmd
from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from sim.amsim import Clock, HtaxSink, HtaxSource, lane, run_sim
from sim.atu_model import AtuModel, decode_ats, flush_response, translation_request
from sim.htax_packet import HtaxPacket

__all__ = ["run_unit"]


def run_unit(atu, gat_base, memory, requests, *, latency=20, jitter=0, seed=1, flush_delay=0, flushes=(),
             window=None, limit=100000, min_cycles=0):
    """Run ``requests`` (list of (fu port, vpid, nla_page, write)) through ``atu``.

    ``gat_base``: {GAT index: physical base}; ``memory``: {address: GATE word} (missing: error response).
    ``flushes``: list of (cycle, nla_page, tlb, ats) register strobes.  ``flush_delay``: an int or
    {fu port: cycles}.  ``window``: at most this many translation requests outstanding per FU.
    ``min_cycles``: run at least this many cycles (to see flushes complete).  An FU's packet starts
    only in a cycle in which ``rx.ready[ATS]`` is high (``ready`` depends on the ATU's state only), so
    memory responses are never held behind a refused ATS request: the HTAX with its hazard fixed.
    Returns ``(results, stats)``: results {fu port: [Translation in arrival order]}; stats dict with
    ``dma_reads``, ``max_outstanding``, ``cycles``, ``flush_done`` (cycles), ``flush_requests``,
    ``ats_refused`` (cycles with ``rx.ready[ATS]`` low), ``ats_in`` (cycles translation-request beats
    moved in), ``rsp_out`` (cycles translation responses moved out).
    """
    rng = random.Random(seed)
    queues = {p: deque() for p in atu.fu_ports}
    for port, vpid, page, write in requests:
        queues[port].append(HtaxPacket(HtaxCmd.ATS, src=port, dst=atu.htax_port, tag=0,
                                       ats=translation_request(vpid=vpid, nla_page=page, write=write)))
    results = {p: [] for p in atu.fu_ports}
    stats = {"dma_reads": 0, "max_outstanding": 0, "cycles": 0, "flush_done": [], "flush_requests": [],
             "ats_refused": 0, "ats_in": [], "rsp_out": []}
    sent = {p: 0 for p in atu.fu_ports}
    flushes = sorted(flushes)

    sched = []                  # (due, seq, packet) memory responses
    flush_q = []                # (due, packet) flush responses
    fl = deque(flushes)
    state = {"seq": 0, "fu_rr": 0}
    clock = Clock(limit=limit + 1)

    def next_packet(ctx, now):
        """Memory responses first, then flush responses, then the FUs round-robin (only while the ATU
        is ready for ATS)."""
        if sched and sched[0][0] <= now:
            return heapq.heappop(sched)[2]
        if flush_q and flush_q[0][0] <= now:
            return flush_q.pop(0)[1]
        if lane(ctx.get(atu.htax.rx.ready), HtaxVC.ATS):
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
        if pkt.cmd == HtaxCmd.READ:
            stats["dma_reads"] += 1
            word = memory.get(pkt.addr)
            rsp = HtaxPacket(HtaxCmd.RESPONSE, src=atu.host_port, dst=atu.htax_port, tag=pkt.tag,
                             addr=pkt.addr, length=1 if word is not None else 0,
                             last_be=0xFF if word is not None else 0,
                             status=HtaxStatus.OK if word is not None else HtaxStatus.TARGET_ERROR,
                             data=[word] if word is not None else [])
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
    clock.add(HtaxSink(atu.htax.tx, on_packet=from_atu))                   # always ready

    async def tb(ctx):
        gat_data = 0
        total = len(requests)
        while sum(len(v) for v in results.values()) < total or fl or flush_q or sched or clock.now < min_cycles:
            if clock.now > limit:
                raise AssertionError(f"hang: {total - sum(len(v) for v in results.values())} translations "
                                     f"outstanding after {limit} cycles, {len(sched)} GATE reads")
            clock.drive(ctx)
            start = bool(fl) and fl[0][0] <= clock.now
            if start:
                _, page, tlb, ats = fl.popleft()
                ctx.set(atu.regs.atu.flush.nla, page)
                ctx.set(atu.regs.atu.flush.tlb, tlb)
                ctx.set(atu.regs.atu.flush.ats, ats)
            ctx.set(atu.regs.atu.flush.start, start)
            ctx.set(atu.regs.atu.gat_base.data.addr, gat_data)
            stats["ats_refused"] += not lane(ctx.get(atu.htax.rx.ready), HtaxVC.ATS)
            if ctx.get(atu.regs.atu.flush.done_set):
                stats["flush_done"].append(clock.now)
            gat_data = gat_base.get(ctx.get(atu.regs.atu.gat_base.addr), 0) >> GAT_BASE_SHIFT
            await clock.tick(ctx)
        stats["cycles"] = clock.now

    run_sim(atu, tb)
    stats["ats_in"] = [h for h, _, p in host.sent
                       if p.cmd == HtaxCmd.ATS and decode_ats(p.ats)[0] == AtsCmd.TRANSLATION_REQUEST]
    return results, stats


def expected(model, requests):
    """{fu port: [Translation]} from :class:`AtuModel` (GATEs fixed during the run)."""
    out = {}
    for port, vpid, page, write in requests:
        out.setdefault(port, []).append(model.translate(vpid, page, write))
    return out


def random_setup(rng, ngats=3, pages_per_gat=40, vpids=32):
    """GAT bases, memory and the list of valid NLA pages for random tests."""
    from sim.atu_model import gate_word
    gat_base, memory, pages = {}, {}, []
    for g in range(ngats):
        base = (0x100 + g) << GAT_BASE_SHIFT
        gat_base[g] = base
        for i in rng.sample(range(1 << GATE_INDEX_BITS), pages_per_gat):
            memory[base + 8 * i] = gate_word(ppn=rng.getrandbits(40), vpid=rng.randrange(vpids),
                                             read=rng.random() < 0.8, write=rng.random() < 0.6,
                                             valid=rng.random() < 0.85)
            pages.append((g << GATE_INDEX_BITS) | i)
    model = AtuModel(gat_entries=512, vpids=vpids, read64=lambda a: memory.get(a))
    for g, b in gat_base.items():
        model.gat_base[g] = b
    return gat_base, memory, pages, model
