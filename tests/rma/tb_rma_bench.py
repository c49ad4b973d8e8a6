"""cocotb benchmark of RMA between two nodes (``bench/rma.py`` runs it; results to ``params["out"]``).

:class:`sim.tops.rma.RmaSystem` with two cross-connected nodes, each with a host model and the
drivers; node 0 (VPID 1) is the origin, node 1 (VPID 2) the target, both in virtual-address mode
(no phys bit), memory registered through the ATU driver.  Each operation runs five times, on two
pages in turn (so the completer's kept translation, ``rtl/rma/completer.py``, is never reused); the
first two runs warm the TLBs, the last three are measured and must agree on the composition.

* **composition** (table 9-1) per operation: device reads of host memory (``dma_reads``; the ATU's
  GAT reads apart, as ``gat_reads``), ATU translations (TLB hits + misses of both nodes' ATU
  counters), network trips (request and response headers leaving either RMA, ``probe``), device
  writes to host memory (``dma_writes``) and CPU stores (``pio_writes``), summed over both nodes
  from the descriptor store until the system is idle.
* **latency**: from the cycle the CPU store of the descriptor is issued to the cycle the
  operation's last write lands in host memory (the origin's notification for get and lock; the
  target's data or notification for the puts); the largest of the three measured runs.
* **message rate**: 32 descriptors stored back to back; (32 - 1) over the cycles between the
  first and the last operation's final write.
* **bandwidth**: put and get of 64 B to 4 KiB, back to back, no notifications; payload words
  (8 bytes) per cycle between the first and the last operation's completion.

Every data movement is checked byte for byte and no host-model rule may be broken.
"""

import json

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from rtl.common.addrmap import AddressMap
from rtl.rma.formats import RmaCommand
from sim.driver.rma import MAX_INT
from sim.runner import tb_params
from sim.tops.configs import rma_config
from tests.rma.tb_system import Node

CFG = rma_config()
AMAP = AddressMap.from_config(CFG)
ORIGIN_VPID, TARGET_VPID = 1, 2
RATE_OPS = 32
SETTLE = 800                    # idle cycles after which an operation has finished
PAGE = 4096


class Probe:
    """Header counts of both nodes' RMAs from ``probe`` (bits 4n + 1 and 4n + 2: network headers)."""

    def __init__(self, dut, clk):
        self.sig, self.clk, self.trips = dut.probe, clk, 0
        self.task = cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            await ReadOnly()
            v = int(self.sig.value)
            if v:
                self.trips += sum(v >> b & 1 for b in (1, 2, 5, 6))


class Bench:
    def __init__(self, dut, ns, ports, regions):
        self.dut, self.ns, self.ports, self.regions = dut, ns, ports, regions
        self.host = ns[0].host
        self.landed = [[], []]          # per node: (cycle, addr, size, owner) of device writes
        for k, n in enumerate(ns):
            def hook(addr, size, owner, k=k, host=n.host):
                self.landed[k].append((host.now(), addr, size, owner))
                return isinstance(owner, str) and owner.startswith(("rma_nq", "rma_locks", "vpid"))
            n.host.memory.write_hook = hook

    async def tlb(self):
        total = 0
        for n in self.ns:
            v = await n.host.read64(n.rma.regs.addr("atu.tlb_counters"))
            total += (v & 0xFFFF_FFFF) + (v >> 32)
        return total

    async def drain(self):
        """Consume every notification so the queues never fill (outside any measurement)."""
        for p in self.ports:
            while (await p.poll()) is not None:
                pass
            await p.release(force=True)
        for n in self.ns:
            await n.host.idle()

    async def measure(self, post, probe):
        """Run ``post()`` once: its composition and its latency (cycles to the last write)."""
        await self.drain()
        tlb0 = await self.tlb()
        logs = [len(n.host.memory.log) for n in self.ns]
        cpu0 = sum(n.host.stats["cpu_writes"] for n in self.ns)
        for w in self.landed:
            w.clear()
        trips0 = probe.trips
        t0 = self.host.now()
        await post()
        cpu = sum(n.host.stats["cpu_writes"] for n in self.ns) - cpu0
        await self.host.cycles(SETTLE)
        trips = probe.trips - trips0
        accesses = [a for n, k in zip(self.ns, logs, strict=True) for a in n.host.memory.log[k:]
                    if a.source == "device"]
        reads = [a for a in accesses if a.kind == "read"]
        gat = sum(1 for a in reads if not isinstance(a.owner, str))
        writes = [w for node in self.landed for w in node]
        comp = {"dma_reads": len(reads) - gat, "gat_reads": gat, "atu_translations": await self.tlb() - tlb0,
                "net_trips": trips, "dma_writes": len(writes), "pio_writes": cpu}
        return comp, max(t for t, *_ in writes) - t0


OPS = {
    # name: (command, notify (requester, completer, responder))
    "notification_put": (RmaCommand.NOTIFICATION_PUT, (0, 0, 0)),
    "immediate_put": (RmaCommand.IMMEDIATE_PUT, (0, 0, 0)),
    "immediate_put_notif": (RmaCommand.IMMEDIATE_PUT, (0, 1, 0)),
    "put": (RmaCommand.PUT, (0, 0, 0)),
    "put_notif": (RmaCommand.PUT, (0, 1, 0)),
    "get": (RmaCommand.GET, (0, 1, 0)),
    "lock": (RmaCommand.LOCK, (0, 0, 0)),
}


def poster(origin, local, remote, name, i, nbytes=8):
    """A coroutine function storing operation ``name``'s descriptor (8 bytes, round ``i``)."""
    command, notify = OPS[name]
    kw = dict(dst_node=1, dst_vpid=TARGET_VPID, notify=notify)
    if command in (RmaCommand.PUT, RmaCommand.GET):
        units, line = origin.operand(local, remote, nbytes)
        kw.update(local=local, remote=remote, units=units, cache_line=line)
    elif command == RmaCommand.LOCK:
        kw.update(lock=3, compare=MAX_INT, add=1)
    elif command == RmaCommand.IMMEDIATE_PUT:
        kw.update(remote=remote, payload=0x1111 * (i + 1))
    else:
        kw.update(payload=0x2222 * (i + 1))
    return lambda: origin.post(command, **kw)


async def message_rate(b, name):
    """``RATE_OPS`` descriptors of ``name`` back to back: operations per cycle at the target."""
    origin, target = b.ports
    src, dst = b.regions
    await b.drain()
    for w in b.landed:
        w.clear()
    for i in range(RATE_OPS):
        await poster(origin, src.nla + 8 * i, dst.nla + 8 * i, name, i)()
    def notes():
        return sorted(t for t, _, _, owner in b.landed[1] if owner == f"rma_nq{TARGET_VPID}")
    for _ in range(200):
        if len(notes()) == RATE_OPS:
            break
        await b.host.cycles(100)
    await b.host.cycles(SETTLE)
    done = notes()
    assert len(done) == RATE_OPS, f"{name}: {len(done)} of {RATE_OPS} notifications"
    for i in range(RATE_OPS):
        if name == "put_notif":
            got = b.ns[1].host.memory.read(dst.phys + 8 * i, 8)
            assert got == b.ns[0].host.memory.read(src.phys + 8 * i, 8), f"put {i}"
    return round((RATE_OPS - 1) / (done[-1] - done[0]), 4)


async def bandwidth(b, kind, nbytes):
    """Back-to-back ``kind`` (put/get) of ``nbytes``: payload words per cycle at the data's sink."""
    origin, _ = b.ports
    src, dst = b.regions
    count = max(4, min(32, 32 * 1024 // nbytes))
    n = count * nbytes
    fresh = bytes((nbytes + 5 * i + (kind == "get")) & 0xFF for i in range(n))
    b.ns[0 if kind == "put" else 1].host.memory.write((src if kind == "put" else dst).phys, fresh)
    await b.drain()
    for w in b.landed:
        w.clear()
    for i in range(count):
        local, remote = src.nla + i * nbytes, dst.nla + i * nbytes
        await (origin.put if kind == "put" else origin.get)(1, TARGET_VPID, local, remote, nbytes, notify=(0, 0, 0))
    sink, sink_region = (1, dst) if kind == "put" else (0, src)
    lo, hi = sink_region.phys, sink_region.phys + n
    for _ in range(400):
        if sum(s for _, a, s, _ in b.landed[sink] if lo <= a < hi) >= n:
            break
        await b.host.cycles(100)
    await b.host.cycles(SETTLE)
    done = []
    for i in range(count):
        lo = sink_region.phys + i * nbytes
        ts = [t for t, a, s, _ in b.landed[sink] if lo <= a < lo + nbytes]
        assert sum(s for t, a, s, _ in b.landed[sink] if lo <= a < lo + nbytes) == nbytes, f"{kind} {nbytes} B op {i}"
        done.append(max(ts))
    for k, region in ((0, src), (1, dst)):
        assert b.ns[k].host.memory.read(region.phys, n) == fresh, f"{kind} {nbytes} B: node {k} data"
    return round((count - 1) * nbytes / 8 / (done[-1] - done[0]), 4)


@cocotb.test()
async def rma_bench(dut):
    p = tb_params()
    ns = [Node(dut, n, 1) for n in range(2)]
    ns[0].host.start_clock()
    await ns[0].host.reset()
    for n in ns:
        await n.host.start()
        await n.rma.setup()
    origin = await ns[0].rma.open(ORIGIN_VPID)
    target = await ns[1].rma.open(TARGET_VPID)
    src = await origin.register(32 * 1024)
    dst = await target.register(32 * 1024)
    ns[0].host.memory.write(src.phys, bytes((7 * i + 3) & 0xFF for i in range(src.size)))
    b = Bench(dut, ns, (origin, target), (src, dst))
    probe = Probe(dut, ns[0].host.clk)
    out = {}
    for name in OPS:
        lat, comps = [], []
        for i in range(5):              # runs 0 and 1 warm the TLBs for both pages
            at = PAGE * (i % 2) + 8 * i
            comp, cycles = await b.measure(poster(origin, src.nla + at, dst.nla + at, name, i), probe)
            lat.append(cycles)
            comps.append(comp)
        assert comps[2] == comps[3] == comps[4], f"{name}: composition changed between runs: {comps}"
        out.update({f"{name}_{k}": v for k, v in comps[2].items()})
        out[f"latency_cycles_{name}"] = max(lat[2:])
        print(f"{name}: first {comps[0]}, measured {comps[2]}, latency {lat}")
    probe.task.cancel()
    out["message_rate_per_cycle_notification_put"] = await message_rate(b, "notification_put")
    out["message_rate_per_cycle_put_8B"] = await message_rate(b, "put_notif")
    for kind in ("put", "get"):
        for nbytes in p.get("sizes", (64, 4096)):
            out[f"{kind}_words_per_cycle_{nbytes}B"] = await bandwidth(b, kind, nbytes)
            print(kind, nbytes, out[f"{kind}_words_per_cycle_{nbytes}B"])
    for n in ns:
        assert not n.host.errors, n.host.errors[:5]
        assert not n.host.memory.violations, n.host.memory.violations[:5]
    with open(p["out"], "w") as f:
        json.dump(out, f)
