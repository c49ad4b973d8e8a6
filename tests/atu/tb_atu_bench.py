"""cocotb benchmark of the ATU in its system (``bench/atu.py`` runs it; results to ``params["out"]``).

Cycles are counted at the ATU's own HTAX port through ``probe`` (bit 0: a beat moves into the ATU,
bit 1: out of it, bit 2: flush start, bit 3: flush done), so the HTAX's latency is not included; the
``fu_*`` latencies are counted at the first FU's port (bit 4: a header moves from the FU into the
switch, bit 5: one reaches the FU), so they include both trips through the switch.  With parameter
``fu_only`` only those two latencies are measured.
"""

import json

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from rtl.atu.layout import GATE_INDEX_BITS
from rtl.common.htax import HtaxCmd
from sim.atu_model import gate_word
from sim.driver.atu import AtuDriver
from sim.runner import tb_params

from .tb_atu import CFG, HUGE, REGS, drain, flush, fus, set_gat, setup
from .tb_atu import TLB_CNT as TLB_COUNTERS


class Probe:
    def __init__(self, dut, clk):
        self.sig = dut.probe
        self.clk = clk
        self.cycle = 0
        self.events = []                # (cycle, bits)
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            await ReadOnly()
            v = int(self.sig.value)
            if v:
                self.events.append((self.cycle, v))

    def since(self, c):
        return [(t, v) for t, v in self.events if t >= c]


def first(events, bit):
    return next(t for t, v in events if v >> bit & 1)


async def streams(host, model, u, units):
    """64 KiB from a cold TLB as an RMA engine translates it: 16 consecutive 4 KB pages, one request
    at a time (the next sent when the previous answer arrived), ``next`` on all but the last.  Modes:
    4 KB pages without ``next`` (no look-ahead), with it, and one 2 MB page (a large-page GAT).  Per
    mode: TLB misses, cycles from the first request to the last answer at the FU, and the same stream
    again with the TLB warm."""
    base = model.gat_base[0]
    for i in range(0x2000, 0x2020):                 # pages no request touched before: cold
        host.memory.write64(base + 8 * i, gate_word(ppn=i, vpid=1))
    table = host.memory.alloc(4096)
    await set_gat(host, model, 1, table | 1)
    host.memory.write64(table, gate_word(ppn=0x8_0000, vpid=1, large=1))
    out = {}
    u.window = 1
    for mode, first_page, nxt in (("4k", 0x2000, 0), ("4k_lookahead", 0x2010, 1), ("2m", 1 << 18, 1)):
        for temp in ("cold", "warm"):
            t0 = await host.read64(TLB_COUNTERS)
            n0 = len(u.results)
            for k in range(16):
                u.request(1, first_page + k, 0, next=nxt & int(k < 15))
            await drain(host, units)
            t1 = await host.read64(TLB_COUNTERS)
            res = u.results[n0:]
            assert all(r[1].ok for r in res), res
            misses = (t1 >> 32) - (t0 >> 32)
            if temp == "cold":
                out[f"stream_64k_{mode}_misses"] = misses
            else:
                assert misses == 0, (mode, misses)
            out[f"stream_64k_{mode}_{temp}_cycles"] = res[-1][3] - res[0][2]
    u.window = None
    return out


async def jobs_1g(host):
    """Register and deregister 1 GiB through the driver with bulk jobs (one REGISTER and one DEREGISTER
    job each; the 4 KB-page region fills one GAT, 262,144 GATEs; the 2 MB-page one takes 512 GATEs):
    cycles from the driver's call to its return (its CPU stores, the doorbell, the job, the CPU's polls
    of the completion word every <= 256 cycles; the deregistration's range flush included)."""
    out = {}
    drv = AtuDriver(host, CFG, first_page=2 << GATE_INDEX_BITS, first_level=False)
    assert drv.jobs
    for mode, large in (("4k", False), ("2m", True)):
        t0 = host.now()
        region = await drv.register(1, 1 << 30, large=large)
        t1 = host.now()
        await drv.deregister(region)
        out[f"register_1g_{mode}_job_cycles"] = t1 - t0
        out[f"deregister_1g_{mode}_job_cycles"] = host.now() - t1
    return out


@cocotb.test()
async def bench(dut):
    p = tb_params()
    host, rng, model = await setup(dut, latency_cycles=p.get("latency", 44))
    base = host.memory.alloc(HUGE, huge=True)
    await set_gat(host, model, 0, base)
    npages = 4096
    for i in range(npages):
        host.memory.write64(base + 8 * i, gate_word(ppn=i + 1, vpid=1))
    units = fus(dut, host, rng)
    u = units[0]
    probe = Probe(dut, host.clk)
    out = {}
    await host.cycles(10)

    # hit latency: warm page 0, then one request (units[0] is the FU the probe watches)
    u.request(1, 0, 0)
    await drain(host, units)
    c = probe.cycle
    u.request(1, 0, 0)
    await drain(host, units)
    ev = probe.since(c)
    out["tlb_hit_latency_cycles"] = first(ev, 1) - first(ev, 0)
    out["fu_hit_latency_cycles"] = first(ev, 5) - first(ev, 4)

    # miss latency: page 1 is cold; ATU cycles = (request in -> READ out) + (GATE in -> response out)
    c = probe.cycle
    h0 = len(host.arrivals)
    s0 = len(host.sent_log)
    u.request(1, 1, 0)
    await drain(host, units)
    ev = probe.since(c)
    t_req = first(ev, 0)
    tx = [t for t, v in ev if v & 2]
    rx = [t for t, v in ev if v & 1]
    t_read, t_rsp = tx[0], tx[-1]
    t_mem = rx[1]                                   # the RESPONSE header moving into the ATU
    out["miss_latency_cycles_total"] = t_rsp - t_req
    out["miss_latency_cycles_excl_memory"] = (t_read - t_req) + (t_rsp - t_mem)
    out["fu_miss_latency_cycles"] = first(ev, 5) - first(ev, 4)
    assert len(host.arrivals) == h0 + 1 and len(host.sent_log) == s0 + 1
    if p.get("fu_only"):
        with open(p["out"], "w") as f:
            json.dump({k: out[k] for k in ("fu_hit_latency_cycles", "fu_miss_latency_cycles")}, f)
        assert not host.errors and not any(x.errors for x in units)
        return

    # hit throughput: back-to-back hits on warmed pages (warm 64 pages first)
    for i in range(2, 66):
        u.request(1, i, 0)
    await drain(host, units)
    n = p.get("hits", 400)
    c = probe.cycle
    for i in range(n):
        u.request(1, 2 + i % 64, 0)
    await drain(host, units)
    rsp = [t for t, v in probe.since(c) if v & 2]
    out["hit_throughput_per_cycle"] = round((len(rsp) - 1) / (rsp[-1] - rsp[0]), 3)

    # misses: distinct cold pages, requests from all FUs back to back
    def miss_run(pages, hit_pages=None, hit_ratio=0.0):
        for k, pg in enumerate(pages):
            fu = units[k % len(units)]
            if hit_pages and rng.random() < hit_ratio:
                fu.request(1, rng.choice(hit_pages), 0)
            else:
                fu.request(1, pg, 0)
    nm = p.get("misses", 256)
    cold = list(range(100, 100 + nm))
    c = probe.cycle
    a0, s0 = len(host.arrivals), len(host.sent_log)
    miss_run(cold)
    await drain(host, units)
    rsp = [t for t, v in probe.since(c) if v & 2]
    req = [t for t, v in probe.since(c) if v & 1]
    reads = sorted(t for t, pk in list(host.arrivals)[a0:] if pk.cmd == HtaxCmd.READ)
    answers = sorted(t for t, b in list(host.sent_log)[s0:])
    outstanding = peak = 0
    evs = sorted([(t, 1) for t in reads] + [(t, -1) for t in answers])
    for _, d in evs:
        outstanding += d
        peak = max(peak, outstanding)
    out["max_outstanding_misses"] = peak
    out["miss_throughput_per_cycle"] = round(nm / (max(rsp) - min(req)), 3)
    out["memory_latency_cycles"] = host.latency_cycles

    # throughput versus hit ratio
    warm = list(range(2, 66))
    curve = {}
    base_page = 1000
    for ratio in (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0):
        pages = list(range(base_page, base_page + 300))
        base_page += 300
        c = probe.cycle
        miss_run(pages, warm, ratio)
        await drain(host, units)
        ev = probe.since(c)
        req = [t for t, v in ev if v & 1]
        rsp_t = [t for t, v in ev if v & 2]
        curve[ratio] = round(300 / (max(rsp_t) - min(req) + 1), 3)
    out["throughput_vs_hit_ratio"] = curve

    # flush: TLB only, then TLB + ATS to every FU answering at once
    for key, ats in (("flush_cycles_tlb_only", 0), ("flush_cycles", 1)):
        c = probe.cycle
        await flush(host, 3, tlb=1, ats=ats)
        ev = probe.since(c)
        out[key] = first(ev, 3) - first(ev, 2)
    # a range flush of 1 GiB of 4 KB pages (the deregistration of 1 GiB): every TLB set once
    c = probe.cycle
    await flush(host, 0, tlb=1, ats=1, extra=(1 << 18) - 1)
    ev = probe.since(c)
    out["flush_cycles_range_1g"] = first(ev, 3) - first(ev, 2)
    await host.write64(REGS.addr("atu.flush_range"), 0)

    out.update(await streams(host, model, u, units))
    out.update(await jobs_1g(host))
    with open(p["out"], "w") as f:
        json.dump(out, f)
    assert not host.errors and not any(x.errors for x in units)
