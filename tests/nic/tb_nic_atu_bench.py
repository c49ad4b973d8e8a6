"""cocotb benchmark of translation from a cold TLB on two NICs back to back (``bench/system.py --atu``
runs it; results to ``params["out"]``).

The nodes, ports and parameters of :mod:`tests.nic.tb_nic_bench` (``config`` = ``"record"``: the NIC of
record; ``overrides`` ``{"atu": {"lookahead": 0}}``: the same NIC without look-ahead).  For each page
size of the parameter ``pages`` (``"4k"``, ``"2m"``; default both) and each of put and get:

1. fresh regions on both nodes (4 KiB pages: 64 KiB, ``large=False``; 2 MiB pages: one 2 MiB page,
   ``large=True``), NLA pages no operation used before; their first 16 pages flushed from both ATUs'
   TLBs anyway (a range flush, TLB only: the TLB is block RAM that reset does not clear);
2. **cold**: 64 KiB as 16 page-sized operations posted back to back by node 0, no notifications
   (:func:`tests.nic.tb_nic_bench.rma_train`, as the streaming bandwidth posts them);
3. **warm**: the same 64 KiB again (fresh data), which must not miss.

Per run: both nodes' deltas of ``atu.tlb_counters`` and ``atu.lookahead_counters``: node 0 is the
origin (a put's requester translates the source there, a get's completer the destination), node 1 the
target (a put's completer, a get's responder); and the cycles from the first post to the last write of
the last operation into the sink's memory.  Every payload is checked byte for byte.

Keys ``<put|get>_<case>_<figure>``, ``case`` = ``4k`` (4 KiB pages, ``[atu] lookahead`` = 0),
``4k_lookahead`` (4 KiB pages, look-ahead on) or ``2m``; figures ``misses_origin``, ``misses_target``,
``la_filled``, ``la_used`` (look-ahead GATEs, both nodes), ``cycles_cold``, ``cycles_warm``.
"""

import time

import cocotb

from sim.driver.atu import LARGE_PAGE
from sim.runner import tb_params
from tests.nic.tb_nic_bench import CFG, PAGE, REGION, atu_counters, finish, rma_train, setup

OPS = REGION // PAGE            # 16 page-sized operations: 64 KiB
SIDES = ("origin", "target")    # node 0, node 1


def case_name(pages):
    if pages == "2m":
        return "2m"
    return "4k_lookahead" if CFG["atu"]["lookahead"] else "4k"


async def fresh_cold_regions(r, pages):
    """A new region on each node (``pages``: ``"4k"`` or ``"2m"``), its first :data:`OPS` pages flushed
    from the node's TLBs."""
    large = pages == "2m"
    regions = [await port.register(LARGE_PAGE if large else REGION, large=large) for port in r.rma]
    for nic, reg in zip(r.nics, regions, strict=True):
        assert reg.large == large, reg
        await nic.atu.flush(reg.nla // PAGE, reg.vpid, pages=OPS, ats=False)
    return regions


async def counter_deltas(r, run):
    """Run ``run()`` between two readings of both nodes' ATU counters: ``(its result, [per node
    {counter: delta}])``."""
    before = [await atu_counters(nic) for nic in r.nics]
    out = await run()
    after = [await atu_counters(nic) for nic in r.nics]
    return out, [{k: a[k] - b[k] for k in a} for a, b in zip(after, before, strict=True)]


async def cold_and_warm(r, kind, pages, salt):
    regions = await fresh_cold_regions(r, pages)

    def train(k):
        return lambda: rma_train(r, kind, regions, PAGE, OPS, salt + k)

    (t0, done), cold = await counter_deltas(r, train(0))
    (w0, warm_done), warm = await counter_deltas(r, train(1))
    assert all(d["misses"] == 0 for d in warm), f"{kind} {pages}: the warm run missed: {warm}"
    if not CFG["atu"]["lookahead"]:
        assert all(d["filled"] == 0 for d in cold), cold
    res = {f"misses_{side}": d["misses"] for side, d in zip(SIDES, cold, strict=True)}
    res.update(la_filled=sum(d["filled"] for d in cold), la_used=sum(d["used"] for d in cold),
               cycles_cold=max(done) - t0, cycles_warm=max(warm_done) - w0)
    return res


@cocotb.test()
async def nic_atu_bench(dut):
    p = tb_params()
    wall0 = time.perf_counter()
    r = await setup(dut)
    out = {"lookahead": CFG["atu"]["lookahead"]}
    for i, pages in enumerate(p.get("pages", ("4k", "2m"))):
        for j, kind in enumerate(("put", "get")):
            res = await cold_and_warm(r, kind, pages, salt=16 * i + 4 * j)
            print(f"{kind} 64 KiB, {case_name(pages)}: {res}")
            out.update({f"{kind}_{case_name(pages)}_{k}": v for k, v in res.items()})
    out["sim_wall_s"] = round(time.perf_counter() - wall0, 1)
    await finish(r, out, p["out"])
