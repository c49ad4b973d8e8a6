"""``make demo``: two simulated NICs back to back, driven through the driver API, step by step.

Run it with ``make demo`` (or ``python -m sim.demo``; ``--seed n`` replays a run; ``make demo BUS=axi``
or ``--bus axi`` runs it on two :class:`rtl.nic.NicAxi`, each with an :class:`sim.axi_host.AxiHostModel`).
It elaborates
:class:`sim.tops.nic.NicSystem` (two :class:`rtl.nic.Nic` of ``configs/test_nic.toml`` ``nic_config``
cabled back to back), builds the Verilator model once (a few minutes on two cores; later
runs reuse it from ``build/sim/nic_system2/``), and runs :func:`demo` under cocotb.  Each node has a
host model (:class:`sim.host.HostModel`) and the NIC driver (:class:`sim.driver.nic.Nic`); the steps:

1. bring both NICs up (:meth:`Nic.init`: version check, node id, route table, RMA set-up);
2. a VELO message from node 0 to node 1 and the answer back (:attr:`Nic.velo`);
3. an RMA put of 512 bytes from node 0 to node 1 with notifications on both sides (:attr:`Nic.rma`,
   memory registered through :attr:`Nic.atu`: virtual addresses, translated by both ATUs);
4. an RMA get of 256 bytes back;
5. a remote lock (FCAA): take it, fail to take it again, release it;
6. the network counters of both NICs.

Every step prints what happened and how long it took: cycles of the 156.25 MHz core clock from the
CPU's first store to the result at the host port, and the end-to-end nanoseconds with table 3-1's host
share added (:class:`sim.host_timing.HostTiming`).  The cocotb side writes the steps as JSON; this
script prints them (the simulator's own log goes to ``build/sim/nic_system2/.../sim.log``).
"""

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import cocotb

from rtl.rma.formats import RmaCommand
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.axi_host import AxiHostModel
from sim.driver.nic import Nic, htax_route
from sim.driver.rma import MAX_INT
from sim.host import HostModel
from sim.runner import tb_params, tb_seed
from sim.tops.nic import topology

__all__ = ["demo", "scenario", "Steps", "print_steps", "main"]


class Steps:
    """The demo's log: one record per step (what, cycles, ns end to end, details).  ``timing``
    (:class:`sim.host_timing.HostTiming`): ns are the cycles with table 3-1's host share added; without
    it, ns are the cycles at ``period_ns`` as measured (a board's UART included)."""

    def __init__(self, timing=None, *, period_ns=None):
        self.t, self.period_ns = timing, period_ns
        self.records = []

    def add(self, what, cycles, detail, *, stores=1, polls=1, ns=True):
        if cycles is None or not ns:
            ns = None
        elif self.t is not None:
            ns = self.t.end_to_end_ns(cycles, stores=stores, polls=polls)
        else:
            ns = cycles * self.period_ns
        self.records.append({"step": what, "cycles": cycles, "ns": None if ns is None else round(ns), "detail": detail})


async def scenario(nics, log, now, *, lock_vpids=None):
    """The demo's steps on two nodes' drivers (``nics``, :class:`sim.driver.nic.Nic`, whose hosts are
    started): any host the driver runs on, a simulated host model or a board behind its UART
    (:class:`sim.board.BoardHost`).  ``now()`` counts the cycles each step's time is taken in;
    ``lock_vpids``: :meth:`Nic.init`'s.  Raises ``AssertionError`` at the first wrong outcome."""
    topo = nics[0].topology
    hosts = [nic.host for nic in nics]

    # 1. bring-up
    for nic in nics:
        t0, st0 = now(), dict(nic.host.stats)
        await nic.init(lock_vpids=lock_vpids)
        cycles, st = now() - t0, nic.host.stats
        version = await nic.version()
        routes = [await nic.route(d) for d in range(topo.nodes)]
        log.add(f"node {nic.node}: init", cycles,
                f"version {version:#x} checked, node id {nic.node}, route table entries "
                + ", ".join(f"{r:#x}" for r in routes)
                + f", RMA queue size and lock region set ({st['cpu_writes'] - st0['cpu_writes']} CPU stores, "
                f"{st['cpu_reads'] - st0['cpu_reads']} CPU reads; ns not given: every read waits 2 t_cd)", ns=False)

    # 2. VELO: node 0 -> node 1 and back
    vpid = 1
    ports = [await nic.velo.open(vpid) for nic in nics]
    hello = b"hello from node 0 via VELO".ljust(32, b".")
    t0 = now()
    await ports[0].send(1, vpid, hello, mtt=2)
    msg = await ports[1].recv(poll_cycles=1)
    assert (msg.src_node, msg.mtt, msg.payload) == (0, 2, hello), msg
    log.add("VELO send 0 -> 1 (32 B)", now() - t0, f"node 1 got {msg.payload.rstrip(b'.').decode()!r} from node "
            f"{msg.src_node}, VPID {msg.src_vpid}, tag {msg.mtt}")
    answer = b"node 1 answers"
    answer += bytes(-len(answer) % 8)
    t0 = now()
    await ports[1].send(0, vpid, answer)
    msg = await ports[0].recv(poll_cycles=1)
    assert msg.payload == answer, msg
    log.add(f"VELO send 1 -> 0 ({len(answer)} B)", now() - t0, f"node 0 got {msg.payload.rstrip(bytes(1)).decode()!r}")

    # 3. RMA put 512 B, virtual addresses (both ATUs translate)
    vpid = 2
    rma = [await nic.rma.open(vpid) for nic in nics]
    regions = [await p.register(8192) for p in rma]
    data = bytes((7 * i + 1) & 0xFF for i in range(512))
    await hosts[0].mem_write(regions[0].phys, data)
    t0 = now()
    await rma[0].put(1, vpid, regions[0].nla, regions[1].nla + 4096, 512, notify=(1, 1, 0))
    n = await rma[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value, poll_cycles=1)
    t_target = now() - t0
    assert (n["command"], n["error"]) == (RmaCommand.PUT.value, 0), n
    assert await hosts[1].mem_read(regions[1].phys + 4096, 512) == data, "put: node 1 memory differs"
    r = await rma[0].wait(lambda n: n["cls"] == Cls.REQUESTER.value, poll_cycles=1)
    assert (r["command"], r["error"], r["value"]) == (RmaCommand.PUT.value, 0, regions[0].nla), r
    log.add("RMA put 0 -> 1 (512 B)", t_target,
            f"node 1's completer notification for NLA {n['value']:#x}: the 512 bytes are in node 1's memory; "
            f"node 0's requester notification for its NLA {r['value']:#x} too")

    # 4. RMA get 256 B back from node 1
    src = bytes((3 * i + 9) & 0xFF for i in range(256))
    await hosts[1].mem_write(regions[1].phys, src)
    t0 = now()
    await rma[0].get(1, vpid, regions[0].nla + 4096, regions[1].nla, 256, notify=(0, 1, 0))
    n = await rma[0].wait(lambda n: n["cls"] == Cls.COMPLETER.value, poll_cycles=1)
    t_get = now() - t0          # before the check: a board reads its memory over the UART
    assert (n["command"], n["error"]) == (RmaCommand.GET.value, 0), n
    assert await hosts[0].mem_read(regions[0].phys + 4096, 256) == src, "get: node 0 memory differs"
    log.add("RMA get 0 <- 1 (256 B)", t_get, "node 0's completer notification: the 256 bytes are in node 0's "
            "memory")

    # 5. lock 7 of node 1 (FCAA): take, fail, release
    for what, compare, add, want in (("take", 0, 1, (1, True)), ("take again", 0, 1, (1, False)),
                                     ("release", MAX_INT, -1, (0, True))):
        t0 = now()
        got = await rma[0].lock(1, vpid, 7, compare, add)
        assert got == want, (what, got, want)
        log.add(f"lock 7 at node 1: {what}", now() - t0,
                f"compare {compare}, add {add}: value now {got[0]}, {'succeeded' if got[1] else 'refused'}")

    # 6. counters
    for nic in nics:
        c = await nic.net_counters()
        log.add(f"node {nic.node}: counters", None,
                f"sent {c['sent.requests']} requests / {c['sent.responses']} responses, delivered "
                f"{c['delivered.requests']} / {c['delivered.responses']}, drops "
                f"{sum(v for k, v in c.items() if 'drops' in k)}")
        assert not nic.host.errors, nic.host.errors[:5]


@cocotb.test()
async def demo(dut):
    from sim.tops.configs import nic_config
    cfg = nic_config()
    topo = topology("b2b", 2)
    seed = tb_seed()
    if tb_params().get("bus", "htax") == "axi":
        hosts = [AxiHostModel(dut, cfg=cfg, prefix=f"n{n}_", seed=seed + n) for n in range(2)]
    else:
        hosts = [HostModel(dut, cfg=cfg, port=f"htax{n}", host_port=cfg["rma"]["host_port"],
                           route=htax_route(cfg), seed=seed + n) for n in range(2)]
    hosts[0].start_clock()
    await hosts[0].reset()
    for h in hosts:
        await h.start()
    nics = [Nic(h, cfg, node=n, topology=topo, revision=(0, False)) for n, h in enumerate(hosts)]
    log = Steps(hosts[0].timing)
    await scenario(nics, log, hosts[0].now)
    for h in hosts:
        assert not h.memory.violations, h.memory.violations[:5]
    with open(tb_params()["out"], "w") as f:
        json.dump({"steps": log.records, "cycles": hosts[0].now(), "seed": seed}, f)


def _ticker(stop, start):
    while not stop.wait(20):
        print(f"  ... still building / running ({time.perf_counter() - start:.0f} s)", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Two simulated EXTOLL NICs through the driver API.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bus", choices=("htax", "axi"), default="htax",
                    help="the NICs' host side: HTAX (nic.v) or AXI4 (nic_axi.v, docs/hostbus.md)")
    ap.add_argument("--debug", action="store_true", help="a configuration error shows its traceback")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from rtl.config import config_errors
    from sim.host_timing import HostTiming
    from sim.runner import run_cocotb
    from sim.tops.configs import nic_config
    from sim.tops.nic import NicSystem

    with config_errors(args.debug) as state:
        cfg = state["cfg"] = nic_config()
        t = HostTiming.from_config(cfg)
        start = time.perf_counter()
        print(f"elaborating two NICs back to back (sim.tops.nic.NicSystem, configs/test_nic.toml nic_config, "
              f"host bus {args.bus}) ...", flush=True)
        system = NicSystem(cfg, bus=args.bus)
    name = "nic_system2" if args.bus == "htax" else "nic_system2_axi"
    print(f"building the Verilator model if needed (first time: a few minutes; then cached in "
          f"build/sim/{name}/) and running the demo ...", flush=True)
    stop = threading.Event()
    threading.Thread(target=_ticker, args=(stop, start), daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "demo.json"
            with config_errors(args.debug) as state:        # the units' checks run as they elaborate
                state["cfg"] = cfg
                run_cocotb(system, name=name, test_module="sim.demo", testcase="demo",
                           params={"out": str(out), "bus": args.bus}, seed=args.seed)
            res = json.loads(out.read_text())
    finally:
        stop.set()
    print(f"\ndone in {time.perf_counter() - start:.0f} s wall clock, {res['cycles']} simulated cycles "
          f"(seed {res['seed']})")
    print(f"times: cycles at {1000 / t.cycle_ns:.2f} MHz from the first CPU store to the result at the host port; "
          f"ns adds table 3-1's host share ({t.store_ns:.0f} ns store, {t.dma_write_ns:.0f} ns write to memory, "
          f"{t.poll_ns:.0f} ns poll)\n")
    print_steps(res["steps"])


def print_steps(steps):
    """The demo's records as a table."""
    print(f"{'step':34} {'cycles':>9} {'ns':>11}  what happened")
    for s in steps:
        cyc = "" if s["cycles"] is None else s["cycles"]
        ns = "" if s["ns"] is None else s["ns"]
        print(f"{s['step']:34} {cyc:>9} {ns:>11}  {s['detail']}")


if __name__ == "__main__":
    sys.exit(main())
