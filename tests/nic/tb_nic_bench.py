"""cocotb benchmark of two NICs back to back (``bench/system.py`` runs it; results to ``params["out"]``).

:class:`sim.tops.nic.NicSystem` of ``configs/test_nic.toml`` ``nic_config`` (two nodes, one cable of
2 cycles each way), each node with a host model at table 3-1's DMA read latency and the NIC driver.
Every figure is in cycles of the core clock measured at the NICs' host ports (``bench/system.py``
adds the host's share, :mod:`sim.host_timing`).  RMA runs in virtual-address mode (ATU, memory
registered through the driver), as the dissertation's measurements (ch. 9) do.

* **ping-pong** (fig. 9-1): VELO 8..64 B and put 8 B..4 KiB, node 0 -> node 1 -> node 0, each side
  polling every cycle for the message (VELO slot) or the completer notification (put); the figure is
  half the round trip.  Get: one get (a round trip by itself), post to the origin's completer
  notification.  Three rounds per size; the first warms TLBs and caches and is dropped, the figure is
  the mean of the other two.
* **streaming bandwidth** (fig. 9-5): 16 KiB in 4 to 32 operations of one size back to back (VELO 8..64 B, put
  and get 8 B..4 KiB), no notifications; payload bytes over the cycles between the first and the last
  operation's completion in the sink's memory.
* **message rates** (table 9-3): 32 back to back, at the target: VELO 8 B (slot writes), notification
  put and put 8 B with completer notification (notification writes).
* **composition** (table 9-1): per operation, summed over both nodes from the CPU store until idle:
  device reads of host memory (GAT reads apart), ATU translations (TLB hits + misses, TLBs warm),
  network trips (the network ports' ``sent`` request + response counters), device writes, CPU stores;
  and the start-up latency: CPU store issued to the operation's last device write at a host port.
  Five runs, alternating two pages; runs 0 and 1 warm the TLBs, runs 2..4 must agree.
* **breakdown** (fig. 7-15): an 8-byte VELO message and an 8-byte put from node 0 to node 1, with
  timestamps at node 0's host port (store offered), node 0's link output (first phit of the first
  data flit), node 1's link input, node 1's host port (the last write arrives); and the same operation
  sent by node 0 to itself (no link: host interface + NIC units + network port + one crossbar pass).
* **calibration**: a DMA read's round trip at node 0's host port (READ out, RESPONSE in) must be
  table 3-1's ``t_dm`` (280 ns at 156.25 MHz: 44 cycles); a CPU register read's round trip at the port.
* **simulation speed**: simulated cycles per wall-clock second, idle and over the busy phases.

The parameter ``config`` = ``"record"`` runs on :func:`sim.tops.configs.record_config` (the default NIC
with its tables shrunk) instead of ``nic_config``; the parameter ``overrides`` (``{section: {key:
value}}``, e.g. ``{"atu": {"lookahead": 0}}``) goes over either, as the bench applies it to the NIC it
builds.  The parameter ``phases`` (default :data:`PHASES`) leaves out calibration, composition,
breakdown and rates: on ``bus = "axi"`` (two ``nic_axi``, :class:`sim.axi_host.AxiHostModel`) the
first two read the HTAX host model's packet logs, which the AXI model does not keep; ping-pong and
streaming run there.

Every payload is checked byte for byte; no host-model rule may be broken.
"""

import json
import time

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from rtl.common.htax import HtaxCmd
from rtl.rma.formats import RmaCommand
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.driver.rma import MAX_INT
from sim.htax_packet import HtaxPacket
from sim.runner import tb_params, tb_seed
from sim.tops.configs import CONFIGS, nic_config, record_config
from sim.tops.nic import topology
from tests.nic.harness import bring_up

#: the NICs' configuration as the bench built them (the driver's ports and addresses come from it): by
#: the parameter ``config``, ``nic_config`` (none), the NIC of record (``"record"``) or the NIC of record
#: over ``configs/phit32.toml`` (``"record_phit32"``) or over ``configs/test_phy.toml`` (``"record_phy"``: the
#: cables through the SerDes PHY, or the same NICs on the channel model, ``"record_channel"``)
_CONFIGS = {None: nic_config, "record": record_config, "record_phit32": lambda: record_config(CONFIGS / "phit32.toml"),
            "record_phy": lambda: record_config(CONFIGS / "test_phy.toml"),
            "record_channel": lambda: record_config(CONFIGS / "test_phy.toml")}
if tb_params().get("config") not in _CONFIGS:
    raise ValueError(f"config must be one of {sorted(k for k in _CONFIGS if k)} or absent, "
                     f"not {tb_params().get('config')!r}")
CFG = _CONFIGS[tb_params().get("config")]()
for _section, _values in tb_params().get("overrides", {}).items():
    CFG[_section].update(_values)
TOPOLOGY = topology("b2b", 2)
VELO_VPID, RMA_VPID, SELF_VPID = 1, 2, 3
VELO_SIZES = (8, 16, 32, 64)
STREAM_VELO_SIZES = (8, 16, 32, 56, 64)
RMA_SIZES = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
RATE_OPS = 32
#: the phases of the bench, in order (ping-pong and streaming always run)
PHASES = ("calibration", "composition", "breakdown", "rates")
STREAM_BYTES = 16 * 1024        # bytes per streaming run (4..32 operations)
SETTLE = 600
PAGE = 4096
REGION = 64 * 1024


def allowed(owner):
    return isinstance(owner, str) and owner.startswith(("velo", "rma_nq", "rma_locks", "vpid"))


class Rig:
    """Both nodes, their open ports and memory, and the device-write log of each host."""

    def __init__(self, dut, nics):
        self.dut, self.nics = dut, nics
        self.hosts = [n.host for n in nics]
        self.landed = [[], []]          # per node: (cycle, addr, size, owner) of device writes
        for k, h in enumerate(self.hosts):
            def hook(addr, size, owner, k=k, h=h):
                self.landed[k].append((h.now(), addr, size, owner))
                return allowed(owner)
            h.memory.write_hook = hook
        self.busy_cycles = 0
        self.busy_seconds = 0.0

    def now(self):
        return self.hosts[0].now()

    async def cycles(self, n):
        await self.hosts[0].cycles(n)

    async def drain(self):
        """Consume every notification and VELO slot so no queue fills (outside any measurement)."""
        for p in self.rma + [self.rma_self]:
            while (await p.poll()) is not None:
                pass
            p.pending.clear()
            await p.release(force=True)
        for h in self.hosts:
            await h.idle()
        await self.cycles(SETTLE // 4)

    def clear(self):
        for w in self.landed:
            w.clear()


async def setup(dut):
    print(f"tb_nic_bench: seed {tb_seed()}")
    nics, _ = await bring_up(dut, CFG, TOPOLOGY, hook=None)
    r = Rig(dut, nics)
    r.velo = [await nic.velo.open(VELO_VPID, pages=2) for nic in nics]
    r.velo_self = await nics[0].velo.open(SELF_VPID)
    r.rma = [await nic.rma.open(RMA_VPID) for nic in nics]
    r.rma_self = await nics[0].rma.open(SELF_VPID)
    r.regions = [await p.register(REGION) for p in r.rma]
    r.self_region = await r.rma_self.register(4 * PAGE)
    for k, (h, reg) in enumerate(zip(r.hosts, r.regions, strict=True)):
        h.memory.write(reg.phys, bytes((7 * i + 3 + 101 * k) & 0xFF for i in range(reg.size)))
    return r


def pattern(nbytes, salt):
    return bytes((salt * 31 + 5 * i) & 0xFF for i in range(nbytes))


def busy(fn):
    """Count a phase's simulated cycles and wall time towards the busy simulation speed."""
    async def run(r, *args, **kw):
        t0, w0 = r.now(), time.perf_counter()
        out = await fn(r, *args, **kw)
        r.busy_cycles += r.now() - t0
        r.busy_seconds += time.perf_counter() - w0
        return out
    return run


# -- ping-pong (fig. 9-1) --------------------------------------------------------------------------
@busy
async def pingpong_velo(r, nbytes, rounds=3):
    p0, p1 = r.velo
    await r.drain()
    rts = []
    for i in range(rounds):
        payload = pattern(nbytes, i + nbytes)
        t0 = r.now()
        await p0.send(1, VELO_VPID, payload)
        m = await p1.recv(poll_cycles=1)
        assert (m.src_node, m.payload) == (0, payload), (m, payload)
        await p1.send(0, VELO_VPID, m.payload)
        m = await p0.recv(poll_cycles=1)
        assert (m.src_node, m.payload) == (1, payload), (m, payload)
        rts.append(r.now() - t0)
    return rts


def completer(n):
    return n["cls"] == Cls.COMPLETER.value


@busy
async def pingpong_put(r, nbytes, rounds=3):
    o, t = r.rma
    m0, (g0, g1) = r.hosts[0].memory, r.regions
    await r.drain()
    rts = []
    for i in range(rounds):
        ping, pong = 0, REGION // 2          # node 0's data at ping goes to node 1's ping, back to node 0's pong
        m0.write(g0.phys + ping, pattern(nbytes, i + 3 * nbytes))
        t0 = r.now()
        await o.put(1, RMA_VPID, g0.nla + ping, g1.nla + ping, nbytes, notify=(0, 1, 0))
        n = await t.wait(completer, poll_cycles=1)
        assert (n["command"], n["error"]) == (RmaCommand.PUT.value, 0), n
        await t.put(0, RMA_VPID, g1.nla + ping, g0.nla + pong, nbytes, notify=(0, 1, 0))
        n = await o.wait(completer, poll_cycles=1)
        rts.append(r.now() - t0)
        assert (n["command"], n["error"]) == (RmaCommand.PUT.value, 0), n
        assert m0.read(g0.phys + pong, nbytes) == m0.read(g0.phys + ping, nbytes), f"put ping-pong {nbytes} B"
    return rts


@busy
async def get_latency(r, nbytes, rounds=3):
    o, _ = r.rma
    (m0, m1), (g0, g1) = [h.memory for h in r.hosts], r.regions
    await r.drain()
    lat = []
    for i in range(rounds):
        m1.write(g1.phys, pattern(nbytes, i + 7 * nbytes))
        t0 = r.now()
        await o.get(1, RMA_VPID, g0.nla, g1.nla, nbytes, notify=(0, 1, 0))
        n = await o.wait(completer, poll_cycles=1)
        lat.append(r.now() - t0)
        assert (n["command"], n["error"]) == (RmaCommand.GET.value, 0), n
        assert m0.read(g0.phys, nbytes) == m1.read(g1.phys, nbytes), f"get {nbytes} B"
    return lat


# -- streaming bandwidth (fig. 9-5) and message rates (table 9-3) ---------------------------------
def completions(writes, per):
    """Completion cycle of each operation: every ``per``-th write of the sorted list."""
    ts = sorted(writes)
    return ts[per - 1::per]


@busy
async def stream_velo(r, nbytes, count=RATE_OPS):
    p0, p1 = r.velo
    await r.drain()
    r.clear()
    payloads = [pattern(nbytes, 50 + i) for i in range(count)]
    for p in payloads:
        await p0.send(1, VELO_VPID, p)
    per = 2 if nbytes > 56 else 1
    owner = f"velo{VELO_VPID}"
    for _ in range(200):
        if sum(1 for *_, o in r.landed[1] if o == owner) >= per * count:
            break
        await r.cycles(50)
    done = completions([t for t, _, _, o in r.landed[1] if o == owner], per)
    assert len(done) == count, f"VELO {nbytes} B: {len(done)} of {count} messages"
    for p in payloads:
        m = await p1.recv(poll_cycles=4)
        assert m.payload == p, f"VELO stream {nbytes} B"
    await p1.release(force=True)
    span = done[-1] - done[0]
    return round((count - 1) * nbytes / span, 4), round((count - 1) / span, 5)


async def rma_train(r, kind, regions, nbytes, count, salt):
    """``count`` operations ``kind`` (put or get) of ``nbytes`` posted back to back by node 0 through
    consecutive addresses of ``regions`` (node 0's, node 1's; fresh data of ``salt`` in the source), no
    notifications.  Returns ``(t0, done)``: the cycle of the first post and each operation's completion,
    the cycle of its last write into the sink's memory; every byte is checked."""
    o, _ = r.rma
    g0, g1 = regions
    n = count * nbytes
    src_node, src_reg, sink_node, sink_reg = (0, g0, 1, g1) if kind == "put" else (1, g1, 0, g0)
    fresh = pattern(n, salt)
    r.hosts[src_node].memory.write(src_reg.phys, fresh)
    await r.drain()
    r.clear()
    t0 = r.now()
    for i in range(count):
        local, remote = g0.nla + i * nbytes, g1.nla + i * nbytes
        await (o.put if kind == "put" else o.get)(1, RMA_VPID, local, remote, nbytes, notify=(0, 0, 0))
    lo, hi = sink_reg.phys, sink_reg.phys + n
    for _ in range(400 + n // 16):          # a limit far above the link's 2 bytes per cycle
        if sum(s for _, a, s, _ in r.landed[sink_node] if lo <= a < hi) >= n:
            break
        await r.cycles(50)
    done = []
    for i in range(count):
        a0 = sink_reg.phys + i * nbytes
        ws = [(t, s) for t, a, s, _ in r.landed[sink_node] if a0 <= a < a0 + nbytes]
        assert sum(s for _, s in ws) == nbytes, f"{kind} {nbytes} B op {i}: {ws}"
        done.append(max(t for t, _ in ws))
    assert r.hosts[sink_node].memory.read(sink_reg.phys, n) == fresh, f"{kind} {nbytes} B stream data"
    return t0, done


@busy
async def stream_rma(r, kind, nbytes):
    count = max(4, min(32, STREAM_BYTES // nbytes))
    _, done = await rma_train(r, kind, r.regions, nbytes, count, nbytes + (kind == "get"))
    return round((count - 1) * nbytes / (done[-1] - done[0]), 4)


@busy
async def rma_rate(r, name):
    """``RATE_OPS`` notification puts (or 8-byte puts with completer notification) back to back:
    operations per cycle at the target's notification queue."""
    o, _ = r.rma
    g0, g1 = r.regions
    await r.drain()
    r.clear()
    for i in range(RATE_OPS):
        if name == "notification_put":
            await o.notification_put(1, RMA_VPID, 0x5000 + i)
        else:
            await o.put(1, RMA_VPID, g0.nla + 8 * i, g1.nla + 8 * i, 8, notify=(0, 1, 0))
    owner = f"rma_nq{RMA_VPID}"
    for _ in range(200):
        if sum(1 for *_, ow in r.landed[1] if ow == owner) >= RATE_OPS:
            break
        await r.cycles(50)
    done = sorted(t for t, _, _, ow in r.landed[1] if ow == owner)
    assert len(done) == RATE_OPS, f"{name}: {len(done)} of {RATE_OPS} notifications"
    if name == "put_8B":
        assert r.hosts[1].memory.read(g1.phys, 8 * RATE_OPS) == r.hosts[0].memory.read(g0.phys, 8 * RATE_OPS)
    return round((RATE_OPS - 1) / (done[-1] - done[0]), 5)


# -- composition and start-up latency (table 9-1) ---------------------------------------------------
OPS = {
    # name: (command, notify (requester, completer, responder)); None: VELO
    "velo": (None, None),
    "notification_put": (RmaCommand.NOTIFICATION_PUT, (0, 0, 0)),
    "immediate_put": (RmaCommand.IMMEDIATE_PUT, (0, 0, 0)),
    "immediate_put_notif": (RmaCommand.IMMEDIATE_PUT, (0, 1, 0)),
    "put": (RmaCommand.PUT, (0, 0, 0)),
    "put_notif": (RmaCommand.PUT, (0, 1, 0)),
    "get": (RmaCommand.GET, (0, 1, 0)),
    "lock": (RmaCommand.LOCK, (0, 0, 0)),
}


def poster(r, name, i):
    """A coroutine function storing operation ``name`` (8 bytes, round ``i``, page ``i % 2``)."""
    command, notify = OPS[name]
    o = r.rma[0]
    at = PAGE * (i % 2) + 8 * i
    if command is None:
        return lambda: r.velo[0].send(1, VELO_VPID, pattern(8, i))
    g0, g1 = r.regions
    kw = dict(dst_node=1, dst_vpid=RMA_VPID, notify=notify)
    if command in (RmaCommand.PUT, RmaCommand.GET):
        kw.update(local=g0.nla + at, remote=g1.nla + at, units=1, cache_line=0)
    elif command == RmaCommand.LOCK:
        kw.update(lock=3, compare=MAX_INT, add=1)
    elif command == RmaCommand.IMMEDIATE_PUT:
        kw.update(remote=g1.nla + at, payload=0x1111 * (i + 1))
    else:
        kw.update(payload=0x2222 * (i + 1))
    return lambda: o.post(command, **kw)


async def atu_counters(nic):
    """The node's ATU counters: TLB ``hits`` and ``misses``, look-ahead GATEs ``filled`` and ``used``."""
    tlb = await nic.host.read64(nic.regs.addr("atu.tlb_counters"))
    ahead = await nic.host.read64(nic.regs.addr("atu.lookahead_counters"))
    return {"hits": tlb & 0xFFFF_FFFF, "misses": tlb >> 32, "filled": ahead & 0xFFFF_FFFF, "used": ahead >> 32}


async def counts(r):
    tlb = trips = 0
    for nic in r.nics:
        c = await atu_counters(nic)
        tlb += c["hits"] + c["misses"]
        c = await nic.net_counters()
        trips += c["sent.requests"] + c["sent.responses"]
    return tlb, trips


@busy
async def measure(r, post):
    await r.drain()
    for p in r.velo:                        # VELO slots are consumed here, outside the window
        while (await p.poll()) is not None:
            pass
        await p.release(force=True)
    await r.drain()
    tlb0, trips0 = await counts(r)
    logs = [len(h.memory.log) for h in r.hosts]
    cpu0 = sum(h.stats["cpu_writes"] for h in r.hosts)
    r.clear()
    t0 = r.now()
    await post()
    cpu = sum(h.stats["cpu_writes"] for h in r.hosts) - cpu0
    await r.cycles(SETTLE)
    writes = [w for node in r.landed for w in node]
    tlb1, trips1 = await counts(r)
    reads = [a for h, k in zip(r.hosts, logs, strict=True) for a in h.memory.log[k:]
             if a.source == "device" and a.kind == "read"]
    gat = sum(1 for a in reads if not isinstance(a.owner, str))
    comp = {"dma_reads": len(reads) - gat, "gat_reads": gat, "atu_translations": tlb1 - tlb0,
            "net_trips": trips1 - trips0, "dma_writes": len(writes), "pio_writes": cpu}
    return comp, max(t for t, *_ in writes) - t0


# -- breakdown (fig. 7-15) ------------------------------------------------------------------------
class LinkProbe:
    """First phit of the first data flit (SOF with flit type DATA, bit 0 of the header phit) on node
    0's link output and on node 1's link input, per cycle while armed."""

    def __init__(self, r):
        self.r = r
        self.tx = (r.dut.probe__tx_ctl, r.dut.probe__tx_phit)     # NicSystem's probe: node 0's cable
        self.rx = (r.dut.probe__rx_ctl, r.dut.probe__rx_phit)
        self.seen = {}
        self.task = None

    @staticmethod
    def _data_sof(sig):
        ctl, phit = sig
        return int(ctl.value) == 1 and int(phit.value) & 1 == 0

    async def _run(self):
        clk = self.r.hosts[0].clk
        while True:
            await RisingEdge(clk)
            await ReadOnly()
            now = self.r.now()
            for name, sig in (("tx", self.tx), ("rx", self.rx)):
                if name not in self.seen and self._data_sof(sig):
                    self.seen[name] = now

    def arm(self):
        self.seen = {}
        self.task = cocotb.start_soon(self._run())

    def disarm(self):
        self.task.cancel()


async def breakdown(r, name):
    """``(segments, self_loop_cycles)`` of an 8-byte ``name`` (velo or put) from node 0 to node 1."""
    g0, g1 = r.regions
    probe = LinkProbe(r)
    h0 = r.hosts[0]

    async def one(remote):
        await r.drain()
        for p in r.velo + [r.velo_self]:
            while (await p.poll()) is not None:
                pass
            await p.release(force=True)
        r.clear()
        if remote:
            probe.arm()
        t0 = r.now()
        if name == "velo":
            await (r.velo[0].send(1, VELO_VPID, pattern(8, 9)) if remote
                   else r.velo[0].send(0, SELF_VPID, pattern(8, 9)))
        elif remote:
            await r.rma[0].put(1, RMA_VPID, g0.nla + 64, g1.nla + 64, 8, notify=(0, 0, 0))
        else:
            s = r.self_region
            await r.rma_self.put(0, SELF_VPID, s.nla, s.nla + PAGE, 8, notify=(0, 0, 0))
        await r.cycles(SETTLE)
        if remote:
            probe.disarm()
        offered = min(c for c, _ in h0.sent_log if c >= t0)
        node = 1 if remote else 0
        last = max(t for t, *_ in r.landed[node])
        return t0, offered, last

    t0, offered, last = await one(True)
    seg = {"host_model_send": offered - t0, "sender_nic": probe.seen["tx"] - offered,
           "cable": probe.seen["rx"] - probe.seen["tx"], "receiver_nic": last - probe.seen["rx"]}
    await one(False)                    # warms node 0's TLB for the self-addressed put
    s0, _, s_last = await one(False)
    return seg, last - t0, s_last - s0


# -- calibration ----------------------------------------------------------------------------------
async def finish(r, out, path):
    """Check that no node saw an RMA error or drop, a host error or a memory violation, then write
    ``out`` as JSON to ``path``."""
    for nic in r.nics:
        rc = await nic.rma.counters()
        assert all(rc[k] == 0 for k in rc if k.startswith(("errors", "drops"))), (nic.node, rc)
        assert not nic.host.errors, nic.host.errors[:5]
        assert not nic.host.memory.violations, nic.host.memory.violations[:5]
    with open(path, "w") as f:
        json.dump(out, f)


async def calibration(r):
    """DMA read round trip and CPU register read round trip at node 0's host port."""
    h0, nic = r.hosts[0], r.nics[0]
    await r.drain()
    t0 = r.now()
    await h0.read64(nic.regs.addr("rf.version"))
    req = [c for c, b in h0.sent_log if c >= t0 and HtaxPacket.from_header_beat(b).cmd == HtaxCmd.READ]
    rsp = [c for c, p in h0.arrivals if c >= t0 and p.cmd == HtaxCmd.RESPONSE]
    reg_rt = rsp[0] - req[0]
    # one 8-byte put: the requester's DMA read of the payload
    await r.drain()
    t0 = r.now()
    g0, g1 = r.regions
    await r.rma[0].put(1, RMA_VPID, g0.nla + 128, g1.nla + 128, 8, notify=(0, 0, 0))
    await r.cycles(SETTLE)
    reads = [(c, p.tag) for c, p in h0.arrivals
             if c >= t0 and p.cmd == HtaxCmd.READ and p.src == CFG["rma"]["htax_port"]]
    rsps = {HtaxPacket.from_header_beat(b).tag: c for c, b in h0.sent_log
            if c >= t0 and HtaxPacket.from_header_beat(b).cmd == HtaxCmd.RESPONSE}
    assert reads, "the put made no DMA read"
    dma_rt = rsps[reads[0][1]] - reads[0][0]
    return reg_rt, dma_rt


@cocotb.test()
async def nic_bench(dut):
    p = tb_params()
    wall0 = time.perf_counter()
    r = await setup(dut)
    out = {}
    # idle simulation speed: nothing moves on the host ports (the links exchange nothing either)
    t0, w0 = r.now(), time.perf_counter()
    await r.cycles(p.get("idle_cycles", 20000))
    out["sim_cycles_per_s_idle"] = round((r.now() - t0) / (time.perf_counter() - w0))

    phases = p.get("phases", PHASES)
    if "calibration" in phases:
        reg_rt, dma_rt = await calibration(r)
        out["register_read_port_cycles"] = reg_rt
        out["dma_read_port_cycles"] = dma_rt

    velo_sizes = p.get("velo_sizes", VELO_SIZES)
    rma_sizes = p.get("rma_sizes", RMA_SIZES)
    for n in velo_sizes:
        rts = await pingpong_velo(r, n)
        out[f"pingpong_velo_{n}B"] = sum(rts[1:]) / len(rts[1:]) / 2
        print(f"ping-pong VELO {n} B: round trips {rts}")
    for n in rma_sizes:
        rts = await pingpong_put(r, n)
        out[f"pingpong_put_{n}B"] = sum(rts[1:]) / len(rts[1:]) / 2
        lat = await get_latency(r, n)
        out[f"pingpong_get_{n}B"] = sum(lat[1:]) / len(lat[1:])
        print(f"ping-pong put {n} B: round trips {rts}; get: {lat}")

    for name in p.get("ops", list(OPS)) if "composition" in phases else ():
        lat, comps = [], []
        for i in range(5):
            comp, cycles = await measure(r, poster(r, name, i))
            lat.append(cycles)
            comps.append(comp)
        assert comps[2] == comps[3] == comps[4], f"{name}: composition changed between runs: {comps}"
        out.update({f"{name}_{k}": v for k, v in comps[2].items()})
        out[f"startup_{name}"] = max(lat[2:])
        print(f"{name}: first {comps[0]}, measured {comps[2]}, latency {lat}")

    for name in ("velo", "put") if "breakdown" in phases else ():
        seg, total, self_loop = await breakdown(r, name)
        out.update({f"breakdown_{name}_{k}": v for k, v in seg.items()})
        out[f"breakdown_{name}_total"] = total
        out[f"breakdown_{name}_self_loop"] = self_loop
        assert sum(seg.values()) == total, (seg, total)
        print(f"breakdown {name}: {seg}, total {total}, to itself {self_loop}")

    for n in p.get("stream_velo_sizes", STREAM_VELO_SIZES):
        bw, rate = await stream_velo(r, n)
        out[f"stream_velo_{n}B"] = bw
        if n == 8:
            out["rate_velo_8B"] = rate
    for kind in ("put", "get"):
        for n in rma_sizes:
            out[f"stream_{kind}_{n}B"] = await stream_rma(r, kind, n)
            print(f"stream {kind} {n} B: {out[f'stream_{kind}_{n}B']} B/cycle")
    if "rates" in phases:
        out["rate_notification_put"] = await rma_rate(r, "notification_put")
        out["rate_put_8B"] = await rma_rate(r, "put_8B")

    out["sim_cycles_per_s_busy"] = round(r.busy_cycles / r.busy_seconds)
    out["sim_cycles_total"] = r.now()
    out["sim_wall_s"] = round(time.perf_counter() - wall0, 1)
    for nic in r.nics:
        c = await nic.net_counters()
        assert all(v == 0 for k, v in c.items() if "drops" in k or "malformed" in k), (nic.node, c)
    await finish(r, out, p["out"])
