"""Shared set-up of the NIC system testbenches (``tb_nic.py``, ``tb_system.py``): one host model
(``sim/host.py``) and one NIC driver (``sim/driver/nic.py``) per node of a
:class:`sim.tops.nic.NicSystem`, brought up as the driver does, and the checks every testbench ends
with."""

import random

from cocotb.triggers import SimTimeoutError, with_timeout

from sim.axi_host import AxiHostModel
from sim.clock import start_clock
from sim.driver.nic import Nic, htax_route
from sim.host import HostModel
from sim.runner import tb_params, tb_seed

__all__ = ["REVISION", "allowed", "bring_up", "check_clean", "net_counters_sum",
           "flush_tlb", "bounded"]

REVISION = (0, False)               # NicSystem's default: pinned


def allowed(addr, size, owner):
    """The default ownership hook: the NIC writes only mailboxes, notification queues, locks, VPID
    memory and the ATU's tables (``sim.driver.atu.TABLES``: its bulk jobs' GATE stores and completion
    words)."""
    return isinstance(owner, str) and owner.startswith(("velo", "rma_nq", "rma_locks", "vpid", "atu"))


async def bring_up(dut, cfg, topology, *, seed=None, hook=allowed, **host_kw):
    """Host models and drivers for every node of ``topology``; reset, then ``Nic.init`` on each.

    Returns ``(nics, rng)``, ``rng`` seeded from ``seed`` (default :func:`sim.runner.tb_seed`).  With the
    testbench parameter ``bus`` = ``"axi"`` (a :class:`sim.tops.nic.NicSystem` of ``bus="axi"``) the host
    models are :class:`sim.axi_host.AxiHostModel`, with the testbench parameters ``stall``, ``jitter``,
    ``reorder``, ``interleave`` and ``write_delay`` (its ``stall_probability``, ``jitter_cycles``,
    ``reorder``, ``interleave``, ``write_delay_cycles``); ``host_kw`` is then not used."""
    seed = tb_seed() if seed is None else seed
    p = tb_params()
    if p.get("bus", "htax") == "axi":
        hosts = [AxiHostModel(dut, cfg=cfg, prefix=f"n{n}_", seed=seed + n, stall_probability=p.get("stall", 0.0),
                              jitter_cycles=p.get("jitter", 0), reorder=p.get("reorder", False),
                              interleave=p.get("interleave", False), write_delay_cycles=p.get("write_delay", 0))
                 for n in range(topology.nodes)]
    else:
        hosts = [HostModel(dut, cfg=cfg, port=f"htax{n}", host_port=cfg["rma"]["host_port"],
                           route=htax_route(cfg), seed=seed + n, **host_kw) for n in range(topology.nodes)]
    for h in hosts:
        h.memory.write_hook = hook
    hosts[0].start_clock()
    if hasattr(dut, "line_clk"):        # NicSystem(phy=True): the SerDes models' word clock
        start_clock(dut.line_clk, LINE_PERIOD_NS)
        dut.line_rst.value = 0
    await hosts[0].reset()
    nics = [Nic(h, cfg, node=n, topology=topology, revision=REVISION) for n, h in enumerate(hosts)]
    for nic in nics:
        await nic.host.start()
        await nic.init()
    _used.append(seed)
    return nics, random.Random(seed)


_used = []      # a test in this simulation has brought the NICs up before
LINE_PERIOD_NS = 10.0   # the SerDes word clock at 2.0 Gb/s (docs/phy.md)


async def flush_tlb(nic, regions):
    """Invalidate the TLB sets of every page of ``regions`` (:class:`sim.driver.atu.Region`; one range
    flush each) if the NICs were used before in this simulation.  The TLB is block RAM, which reset does
    not clear: a driver that takes over a used NIC (a second cocotb test on the same simulation) flushes
    the NLA pages it hands out before they are used; the first test finds the RAM empty, as after
    power-up."""
    if len(_used) < 2:
        return
    for r in regions:
        await nic.atu.flush(r.nla >> 12, r.vpid, pages=r.size // 4096, ats=False)


def check_clean(nic):
    assert not nic.host.errors, (nic.node, nic.host.errors[:5])
    assert not nic.host.memory.violations, (nic.node, nic.host.memory.violations[:5])


def net_counters_sum(counters):
    """Sum of a list of :meth:`sim.driver.nic.Nic.net_counters` dicts."""
    out = {}
    for c in counters:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


async def bounded(coro, cycles, cfg, what):
    """Await ``coro`` for at most ``cycles`` clock cycles; an ``AssertionError`` naming ``what`` else."""
    try:
        return await with_timeout(coro, round(cycles * cfg.cycle_ns), "ns")
    except SimTimeoutError:
        raise AssertionError(f"{what}: not done within {cycles} cycles") from None


def dump_handshakes(dut, nodes, log=print):
    """For a run that stopped: every stream of each node's NIC that offers a beat nobody takes
    (``valid`` 1, ``ready`` 0, per the Verilator names ``<path>__valid``/``__ready``), the streams
    whose ``ready`` is low, each state machine's state (three levels below ``nic<k>``) and the HTAX
    links that refuse a VC."""
    def walk(h, path, depth, sigs):
        for obj in h:
            full = f"{path}.{obj._name}" if path else obj._name
            if hasattr(obj, "__iter__") and not hasattr(obj, "value") and depth < 3:
                walk(obj, full, depth + 1, sigs)
                continue
            try:
                sigs[full] = int(obj.value)
            except (ValueError, TypeError, AttributeError):
                pass

    for k in range(nodes):
        sigs = {}
        try:
            walk(getattr(dut, f"nic{k}"), "", 0, sigs)
        except AttributeError:
            pass
        if not any(n.endswith("fsm_state") for n in sigs):
            log(f"node {k}: no inner signals visible; replay with EXTOLL_PUBLIC=all (sim/runner.py PUBLIC)")
            continue
        stalled = sorted(n[:-len("valid")] for n, v in sigs.items()
                         if n.endswith("valid") and v == 1 and sigs.get(n[:-len("valid")] + "ready") == 0)
        ready0 = sorted(n for n, v in sigs.items() if n.endswith("ready") and v == 0)
        states = {n: v for n, v in sigs.items() if n.endswith("fsm_state") and v}
        log(f"node {k}: stalled streams {stalled}")
        log(f"node {k}: ready low {ready0[:60]}")
        log(f"node {k}: states {states}")
        switch = sorted((n, v) for n, v in sigs.items()
                        if n.startswith(("switch", "htax")) and n.endswith(("valid", "ready")) and v not in (0, 15))
        log(f"node {k}: switch links not idle and not ready on every VC {switch}")
