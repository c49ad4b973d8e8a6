"""cocotb testbenches: NIC systems (:class:`sim.tops.nic.NicSystem`) of 2 to 8 nodes, every node with
a host model and the drivers (``tests/nic/harness.py``), every cable through a bit-error channel.

* ``all_pairs``: the drivers write the routes of :mod:`sim.routing` (read back); every node sends
  VELO messages to every other node, which arrive whole, once and in order per pair; the network and
  VELO counters match what was sent, no drops.
* ``traffic``: random VELO messages and RMA operations (put, get, immediate put, notification put,
  fetch-and-add and failing compare-and-add on locks) between several VPIDs of every node, some
  physical and some through the ATUs, with bit errors on every link (``flit_error``), in phases of
  ``cycles`` cycles; with ``large``, some of the ATU VPIDs have their memory on one 2 MiB page
  (first, last and other 4 KiB pages of it used) instead of 4 KiB pages.  Application-level flow
  control (as a library would) keeps every mailbox ring and notification queue from overflowing.
  Checked against a model of what was sent: every message once, in order per (source, destination)
  VPID pair; every notification table 7-2 calls for, once; every byte of every put and get written
  once by the NIC and equal to the source; lock results that are a serialisation of the adds; per
  phase the network, VELO and RMA counters equal the packets and operations sent, no drops or
  errors; at the end link replays under bit errors and no link in the link-error state.
* ``isolation``: random VELO stores and RMA descriptors with random addresses, VPIDs and destination
  nodes (unregistered NLAs, other VPIDs' pages, read-only pages, disabled VPIDs, nodes without a route,
  lock numbers out of range; with ``large``, also 4 KiB pages inside 2 MiB pages, first and last
  included), one at a time: the host memory's ownership hook admits only the destination VPID's own
  pages, mailbox, queue and lock page (and the origin's queue and destination pages for what comes
  back), and every operation ends in its defined outcome (delivery, an error notification, or a
  counter: ``xbar[net port].drops.no_route``, ``velo.counters.rejected``, RMA ``cpl_dropped``,
  ``atu_faults``).

Parameters come from :func:`sim.runner.tb_params` (``config``, ``topology``, ``nodes``, ``shape``,
``flit_error``, ``large`` (default 0: 4 KiB pages only; 1: 2 MiB pages too) and the sizes named in each
test); the seed from :func:`sim.runner.tb_seed`, printed, so ``SEED=<n>`` replays a run.
"""

import random
import time
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field

import cocotb

from rtl.rma.formats import RmaCommand, RmaError
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.driver.atu import LARGE_PAGE
from sim.driver.rma import MAX_INT
from sim.runner import tb_params, tb_seed
from sim.tops.configs import nic_config, system_config
from sim.tops.nic import flip_threshold, topology
from tests.nic.harness import bounded, bring_up, check_clean, flush_tlb

PUT, GET, LOCK, IMM, NOTE = (RmaCommand.PUT.value, RmaCommand.GET.value, RmaCommand.LOCK.value,
                             RmaCommand.IMMEDIATE_PUT.value, RmaCommand.NOTIFICATION_PUT.value)
SLOT = 1024                 # bytes of one put/get buffer; 4 per page, so no operation crosses a page
PAGE = 4096
REQ, RSP = "requests", "responses"


def system_from_params(p):
    """``(cfg, topology)`` of the system the pytest side elaborated (same parameters)."""
    links, nodes = p.get("link_ports"), p.get("nodes", 2)
    cfg = nic_config() if links is None else system_config(links, nodes=max(4, nodes))
    topo = topology(p.get("topology", "b2b"), nodes, shape=tuple(p["shape"]) if p.get("shape") else None)
    return cfg, topo


def lines(addr, nbytes):
    """Network packets of a put or get segment: one per 64-byte line touched."""
    return (addr % 64 + nbytes + 63) // 64


async def start(dut, p, *, hook=None):
    cfg, topo = system_from_params(p)
    seed = tb_seed()
    flit_error = p.get("flit_error", 0.0)
    flip = flip_threshold(flit_error, cfg["link"]["flit_phits"]) if flit_error else 0
    dut._log.info(f"seed {seed} (replay with SEED={seed}), {topo}, flit error {flit_error} -> flip {flip:#x}, "
                  f"params {p}")
    dut.flip.value = flip
    kw = {} if hook is None else {"hook": hook}
    nics, rng = await bring_up(dut, cfg, topo, seed=seed, wc_split_probability=0.0, **kw)
    for nic in nics:
        nic.host.memory.log_enabled = False     # long runs: the checks below keep their own records
    return cfg, topo, nics, rng


# ------------------------------------------------------------------------------------------------------
@cocotb.test()
async def all_pairs(dut):
    """Every node sends ``messages`` VELO messages to every other node; each arrives once, whole and in
    order per pair; counters match."""
    p = tb_params()
    cfg, topo, nics, rng = await start(dut, p)
    n, k, vpid = topo.nodes, p.get("messages", 3), 1
    for nic in nics:
        for dst in range(n):
            assert await nic.route(dst) == topo.crossbar_table(nic.node)[dst], (nic.node, dst)
    ports = [await nic.velo.open(vpid) for nic in nics]
    sent = defaultdict(list)                # (src, dst) -> payloads in order
    for i in range(k):
        for src in range(n):
            for dst in rng.sample([d for d in range(n) if d != src], n - 1):
                payload = bytes([src, dst, i]) + bytes(rng.randrange(256) for _ in range(8 * rng.randint(1, 8) - 3))
                await ports[src].send(dst, vpid, payload, mtt=i % 4)
                sent[src, dst].append(payload)
        await nics[0].host.cycles(rng.randrange(1, 40))

    async def receive(dst):
        got = defaultdict(list)
        for _ in range(k * (n - 1)):
            msg = await ports[dst].recv(timeout_cycles=50000)
            got[msg.src_node].append((msg.src_vpid, msg.payload))
        return got

    tasks = [cocotb.start_soon(receive(d)) for d in range(n)]
    for dst, t in enumerate(tasks):
        got = await t
        for src in range(n):
            want = [(vpid, pl) for pl in sent[src, dst]]
            assert got.get(src, []) == want, f"node {src} -> {dst}: got {got.get(src)}, sent {want}"
    await nics[0].host.cycles(500)
    for nic, port in zip(nics, ports, strict=True):
        assert (await port.poll()) is None, f"node {nic.node}: a message arrived twice"
        c = await nic.net_counters()
        assert (c["sent.requests"], c["delivered.requests"]) == (k * (n - 1), k * (n - 1)), (nic.node, c)
        assert all(v == 0 for key, v in c.items() if "drops" in key or "malformed" in key), (nic.node, c)
        v = await nic.velo.counters()
        assert v == {"sent": k * (n - 1), "received": k * (n - 1), "discarded": 0, "rejected": 0, "dropped": 0}, \
            (nic.node, v)
        for port_no, lc in (await nic.link_counters()).items():
            if topo.peer(nic.node, port_no) is not None:
                assert lc["state"] == 0 and lc["link_errors"] == 0, (nic.node, port_no, lc)
        check_clean(nic)
    dut._log.info(f"all pairs: {n * (n - 1) * k} messages between {n} nodes, cycle {nics[0].host.now()}")


# ------------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Op:
    """One RMA operation in flight: the notifications still due and the bytes it must write."""
    kind: str
    src: tuple
    dst: tuple
    due: int = 0
    issued: int = 0
    target: tuple = None        # (node, phys, expected bytes): the bytes the NIC must write
    counts: bytearray = None    # writes seen per target byte
    slots: list = field(default_factory=list)
    lock: tuple = None          # (node, vpid, lock number, compare, add)
    results: list = field(default_factory=list)

    def __repr__(self):
        return f"{self.kind} {self.src}->{self.dst} issued at cycle {self.issued}, {self.due} notifications due"


class Traffic:
    """Random VELO and RMA traffic between the VPIDs of every node, and its scoreboard.

    Every (node, VPID) has one region of ``region_pages`` 4 KiB pages, cut into slots of
    :data:`SLOT` bytes.  With ``large``, every other ATU VPID (:meth:`large_vpids`) has one 2 MiB page
    instead (``register(..., large=True)``), of which it uses the slots of ``region_pages`` 4 KiB pages:
    the first, the last and random ones between; a NIC write anywhere else in it is an error."""

    def __init__(self, dut, cfg, topo, nics, rng, p):
        self.dut, self.cfg, self.topo, self.nics, self.rng = dut, cfg, topo, nics, rng
        self.vpids = list(p.get("vpids", [1, 2, 5, 6]))
        self.phys = set(p.get("phys", [1, 2]))
        self.region_pages = p.get("region_pages", 8)
        self.large = p.get("large", 0)              # some NLA VPIDs on 2 MiB pages (large_vpids)
        self.weights = p.get("weights", {"velo": 40, "put": 20, "get": 20, "imm": 5, "note": 5, "lock": 10})
        self.gap = p.get("gap", 30)
        self.max_ops = p.get("max_ops", 6)          # RMA operations in flight per origin VPID
        self.max_velo = p.get("max_velo", 20)       # messages in flight per destination mailbox
        self.locks = p.get("locks", 2)              # lock words per VPID
        self.errors = []
        self.mbox, self.nq, self.region = {}, {}, {}
        self.free = {}                              # (node, vpid) -> free slot numbers
        self.page_of = {}                           # (node, page) -> (vpid, region)
        self.slot_op = {}                           # (node, vpid, slot) -> Op writing into it
        self.expect = defaultdict(lambda: defaultdict(deque))    # port -> key -> ops
        self.in_flight = Counter()                  # origin port -> RMA ops
        self.nq_due = Counter()                     # port -> notifications due or read, not yet released
        self.credit_wait_max = 0                    # cycles from a release to the NIC holding it, the most
        self.velo_due = defaultdict(deque)          # (src port, dst port) -> payloads in flight
        self.velo_in = Counter()                    # dst port -> messages in flight
        self.lock_busy = set()                      # (origin port, target port) with a lock in flight
        self.lock_words = defaultdict(lambda: {"adds": [], "after": [], "probes": []})
        self.ops = set()
        self.phase = Counter()                      # (node, counter name) -> expected this phase
        self.totals = Counter()
        self.stop = False

    # -- set-up -------------------------------------------------------------------------------------
    async def open(self):
        for nic in self.nics:
            for v in self.vpids:
                key = (nic.node, v)
                self.mbox[key] = await nic.velo.open(v)
                port = await nic.rma.open(v, phys=v in self.phys)
                self.nq[key] = port
                if v in self.large_vpids(nic.node):
                    r = await port.register(LARGE_PAGE, large=True)
                    assert r.large, r
                    last = r.size // PAGE - 1       # pages used: the first, the last, some between
                    pages = [0, last, *self.rng.sample(range(1, last), max(0, self.region_pages - 2))]
                else:
                    r = await port.register(self.region_pages * PAGE)
                    pages = range(r.size // PAGE)
                self.region[key] = r
                if v not in self.phys:
                    await flush_tlb(nic, [r])
                self.free[key] = [pg * (PAGE // SLOT) + k for pg in sorted(pages) for k in range(PAGE // SLOT)]
                for pg in range(r.size // PAGE):    # every page: a write outside the slots used is an error
                    self.page_of[nic.node, (r.phys >> 12) + pg] = (v, r)
            self._track(nic)

    def large_vpids(self, node):
        """With ``large``: the NLA VPIDs of ``node`` on one 2 MiB page, every other one (the first at odd
        nodes, the second at even ones), so 4 KiB and 2 MiB regions exchange traffic both ways."""
        if not self.large:
            return set()
        virtual = [v for v in self.vpids if v not in self.phys]
        return {v for i, v in enumerate(virtual) if (i + node) % 2}

    def _track(self, nic):
        """Count the NIC's writes into VPID memory byte by byte (exactly once per put/get byte)."""
        mem = nic.host.memory
        orig = mem.device_write

        def device_write(addr, data, mask=None):
            ok = orig(addr, data, mask)
            if ok:
                self.on_write(nic.node, addr, data, mask)
            return ok
        mem.device_write = device_write

    def on_write(self, node, addr, data, mask):
        hit = self.page_of.get((node, addr >> 12))
        if hit is None:
            return                                  # mailboxes, queues, locks: checked elsewhere
        vpid, r = hit
        slot = (addr - r.phys) // SLOT
        op = self.slot_op.get((node, vpid, slot))
        if op is None:
            self.error(f"node {node}: NIC write at {addr:#x}+{len(data)} into VPID {vpid} slot {slot}, "
                               f"which no operation in flight writes")
            return
        _, base, want = op.target
        for i in range(len(data)):
            if mask is not None and not mask[i]:
                continue
            off = addr + i - base
            if not 0 <= off < len(want):
                self.error(f"{op}: NIC write of byte {addr + i:#x} outside its target "
                                   f"{base:#x}+{len(want)}")
                return
            op.counts[off] += 1
            if op.counts[off] == 2:
                self.error(f"{op}: byte {addr + i:#x} written twice")

    # -- helpers ------------------------------------------------------------------------------------
    def count(self, node, name, n=1):
        self.phase[node, name] += n
        self.totals[name] += n

    def ports(self):
        return [(n, v) for n in range(self.topo.nodes) for v in self.vpids]

    def addr(self, port, slot, off):
        r = self.region[port]
        return r.nla + slot * SLOT + off, r.phys + slot * SLOT + off

    def take(self, port):
        free = self.free[port]
        return free.pop(self.rng.randrange(len(free))) if free else None

    def expect_note(self, op, port, key):
        self.expect[port][key].append(op)
        self.nq_due[port] += 1
        op.due += 1

    def now(self):
        return self.nics[0].host.now()

    # -- operations ---------------------------------------------------------------------------------
    async def velo(self, src, dst):
        if self.velo_in[dst] >= self.max_velo:
            return False
        rng = self.rng
        nbytes = 8 * rng.randint(1, 8)
        payload = bytes(rng.randrange(256) for _ in range(nbytes))
        split = 8 * rng.randint(1, nbytes // 8 - 1) if nbytes > 8 and rng.random() < 0.2 else None
        mtt = rng.randrange(4)
        self.velo_due[src, dst].append((mtt, payload))
        self.velo_in[dst] += 1
        await self.mbox[src].send(dst[0], dst[1], payload, mtt, split_at=split)
        packets = 2 if split else 1
        self.count(src[0], "sent.requests", packets)
        self.count(dst[0], "delivered.requests", packets)
        self.count(src[0], "velo.sent", packets)
        self.count(dst[0], "velo.received", packets)
        self.totals["velo messages"] += 1
        self.totals["velo bytes"] += nbytes
        return True

    def _rma_ok(self, src, dst, notes):
        return (self.in_flight[src] < self.max_ops and self.nq_due[src] + notes <= 40
                and self.nq_due[dst] + notes <= 40)

    async def put_get(self, kind, src, dst):
        if not self._rma_ok(src, dst, 2) or not self.free[src]:
            return False
        rng = self.rng
        ls, rs = self.take(src), self.take(dst)
        if rs is None:
            self.free[src].append(ls)
            return False
        nbytes = min(1024, rng.choice([8, 8 * rng.randint(1, 64), 64 * rng.randint(1, 16)]))
        step = 64 if nbytes > 512 else 8
        off = step * rng.randrange((SLOT - nbytes) // step + 1)
        (lnla, lphys), (rnla, rphys) = self.addr(src, ls, off), self.addr(dst, rs, off)
        op = Op(kind, src, dst, issued=self.now(), slots=[(src, ls), (dst, rs)])
        s, d = src[0], dst[0]
        bits = (rng.randrange(2), 1, rng.randrange(2))     # the completer's notification ends the op
        smem, dmem = self.nics[s].host.memory, self.nics[d].host.memory
        data = bytes(rng.randrange(256) for _ in range(nbytes))
        if kind == "put":
            smem.write(lphys, data)
            dmem.write(rphys, bytes(rng.randrange(256) for _ in range(nbytes)))    # stale contents
            op.target = (d, rphys, data)
            self.slot_op[d, dst[1], rs] = op
            if bits[0]:
                self.expect_note(op, src, (Cls.REQUESTER.value, PUT, 0, lnla, d, dst[1]))
            self.expect_note(op, dst, (Cls.COMPLETER.value, PUT, 0, rnla, s, src[1]))
            pk = lines(lnla, nbytes)
            self.count(s, "sent.responses", pk)
            self.count(d, "delivered.responses", pk)
            self.count(s, "rma.requester_counters.put")
            self.count(d, "rma.completer_counters.put")
        else:
            dmem.write(rphys, data)
            smem.write(lphys, bytes(rng.randrange(256) for _ in range(nbytes)))
            op.target = (s, lphys, data)
            self.slot_op[s, src[1], ls] = op
            self.expect_note(op, src, (Cls.COMPLETER.value, GET, 0, lnla, d, dst[1]))
            if bits[2]:
                self.expect_note(op, dst, (Cls.RESPONDER.value, GET, 0, rnla, s, src[1]))
            pk = lines(rnla, nbytes)
            self.count(s, "sent.requests")
            self.count(d, "delivered.requests")
            self.count(d, "sent.responses", pk)
            self.count(s, "delivered.responses", pk)
            self.count(s, "rma.requester_counters.get")
            self.count(d, "rma.responder_counters.get")
            self.count(s, "rma.completer_counters.get")
        op.counts = bytearray(nbytes)
        self.in_flight[src] += 1
        self.ops.add(op)
        self.totals[f"{kind}s"] += 1
        self.totals["2 MiB page ops"] += self.region[src].large or self.region[dst].large
        self.totals[f"{kind} bytes"] += nbytes
        port = self.nq[src]
        await (port.put if kind == "put" else port.get)(d, dst[1], lnla, rnla, nbytes, notify=bits)
        return True

    async def immediate(self, src, dst):
        if not self._rma_ok(src, dst, 1) or not self.free[dst]:
            return False
        rng = self.rng
        rs = self.take(dst)
        rnla, rphys = self.addr(dst, rs, 8 * rng.randrange(SLOT // 8))
        value = rng.getrandbits(64)
        s, d = src[0], dst[0]
        self.nics[d].host.memory.write(rphys, (value ^ (1 << 64) - 1).to_bytes(8, "little"))
        op = Op("imm", src, dst, issued=self.now(), slots=[(dst, rs)], target=(d, rphys, value.to_bytes(8, "little")),
                counts=bytearray(8))
        self.slot_op[d, dst[1], rs] = op
        self.expect_note(op, dst, (Cls.COMPLETER.value, IMM, 0, rnla, s, src[1]))
        self.in_flight[src] += 1
        self.ops.add(op)
        for name in ("sent.responses", "rma.requester_counters.put"):
            self.count(s, name)
        self.count(d, "delivered.responses")
        self.count(d, "rma.completer_counters.put")
        self.totals["imms"] += 1
        self.totals["2 MiB page ops"] += self.region[dst].large
        await self.nq[src].immediate_put(d, dst[1], rnla, value, notify=True)
        return True

    async def note(self, src, dst):
        if not self._rma_ok(src, dst, 1):
            return False
        value = self.rng.getrandbits(64)
        op = Op("note", src, dst, issued=self.now())
        self.expect_note(op, dst, (Cls.COMPLETER.value, NOTE, 0, value, src[0], src[1]))
        self.in_flight[src] += 1
        self.ops.add(op)
        self.count(src[0], "sent.responses")
        self.count(dst[0], "delivered.responses")
        self.totals["notes"] += 1
        await self.nq[src].notification_put(dst[0], dst[1], value)
        return True

    async def lock(self, src, dst):
        if not self._rma_ok(src, dst, 2) or (src, dst) in self.lock_busy:
            return False
        rng = self.rng
        number = rng.randrange(self.locks)
        probe = rng.random() < 0.25             # compare -1: never succeeds (the words stay >= 0)
        compare, add = (-1, rng.randint(1, 50)) if probe else (MAX_INT, rng.randint(1, 50))
        rsp = rng.randrange(2)
        op = Op("lock", src, dst, issued=self.now(), lock=(dst[0], dst[1], number, compare, add))
        self.expect_note(op, src, (Cls.COMPLETER.value, LOCK, 0, None, dst[0], dst[1]))
        if rsp:
            self.expect_note(op, dst, (Cls.RESPONDER.value, LOCK, 0, None, src[0], src[1]))
        self.lock_busy.add((src, dst))
        self.in_flight[src] += 1
        self.ops.add(op)
        self.count(src[0], "sent.requests")
        self.count(dst[0], "delivered.requests")
        self.count(dst[0], "sent.responses")
        self.count(src[0], "delivered.responses")
        self.count(dst[0], "rma.responder_counters.lock")
        self.totals["locks"] += 1
        await self.nq[src].post(RmaCommand.LOCK, dst_node=dst[0], dst_vpid=dst[1], lock=number, compare=compare,
                                add=add, notify=(0, 0, rsp))
        return True

    # -- completion ---------------------------------------------------------------------------------
    def on_note(self, port, n):
        value = None if n["command"] == LOCK else n["value"]
        key = (n["cls"], n["command"], n["error"], value, n["peer_node"], n["peer_vpid"])
        q = self.expect[port].get(key)
        if not q:
            self.error(f"port {port}: unexpected notification {n} at cycle {self.now()}")
            return
        op = q.popleft()
        if op.kind == "lock":
            op.results.append(n["lock"])
        op.due -= 1
        if op.due == 0:
            self.complete(op)

    def complete(self, op):
        self.ops.discard(op)
        self.in_flight[op.src] -= 1
        if op.target is not None:
            node, base, want = op.target
            got = self.nics[node].host.memory.read(base, len(want))
            if got != want:
                self.error(f"{op}: node {node} {base:#x}+{len(want)} holds {got.hex()}, "
                                   f"expected {want.hex()}")
            if any(c != 1 for c in op.counts):
                self.error(f"{op}: bytes written {sorted(Counter(op.counts).items())} times "
                                   f"(count: number of bytes), each must be written once")
        for port, slot in op.slots:
            self.slot_op.pop((port[0], port[1], slot), None)
            self.free[port].append(slot)
        if op.kind == "lock":
            self.lock_busy.discard((op.src, op.dst))
            node, vpid, number, compare, add = op.lock
            word = self.lock_words[node, vpid, number]
            if len(set(op.results)) != 1:
                self.error(f"{op}: completer and responder report {op.results}")
            value, ok = op.results[0]
            if compare == -1:
                if ok:
                    self.error(f"{op}: compare -1 succeeded on a word that is never negative")
                word["probes"].append(value)
            elif not ok:
                self.error(f"{op}: compare MAX_INT failed (value {value})")
            else:
                word["adds"].append(add)
                word["after"].append(value)

    async def poller(self, nic, period):
        """Every ``period`` cycles: take whole messages from every mailbox and notifications from every
        queue of ``nic``, as the receiving processes would."""
        node = nic.node
        while True:
            for v in self.vpids:
                port = self.mbox[node, v]
                rp, read = port.rp, 0
                while True:
                    try:
                        msg = await port.recv(timeout_cycles=0)
                    except TimeoutError:
                        break
                    src, dst = (msg.src_node, msg.src_vpid), (node, v)
                    q = self.velo_due.get((src, dst))
                    if not q:
                        self.error(f"node {node} VPID {v}: unexpected message {msg} at cycle {self.now()}")
                        continue
                    mtt, payload = q.popleft()
                    if (msg.mtt, msg.payload) != (mtt, payload):
                        later = [k for k, x in enumerate(q) if x == (msg.mtt, msg.payload)]
                        self.error(f"{src} -> {dst} at cycle {self.now()}: got mtt {msg.mtt} payload "
                                   f"{msg.payload.hex()}, expected mtt {mtt} payload {payload.hex()}; the "
                                   f"message got is {f'number {later[0] + 1} behind' if later else 'not'} "
                                   f"among the {len(q)} still due (lost, duplicated, reordered or corrupted)")
                    read += 1
                if port.rp != rp:
                    await port.release(force=True)
                    cocotb.start_soon(self.credit(nic, f"velo_user.rp[{v}].rp", port.released, port.slots,
                                                  self.velo_in, (node, v), read))
                nq = self.nq[node, v]
                taken = 0
                while (n := await nq.poll()) is not None:
                    self.on_note((node, v), n)
                    taken += 1
                if taken:
                    await nq.release(force=True)
                    cocotb.start_soon(self.credit(nic, f"rma_user.rp[{v}].rp", nq.released, nq.entries,
                                                  self.nq_due, (node, v), taken))
            await nic.host.cycles(period)

    async def credit(self, nic, reg, value, size, counter, port, n):
        """Return ``n`` credits of ``counter[port]`` once the NIC's read pointer ``reg`` (a ring of
        ``size``) has reached ``value``.  A release is a posted store that queues behind the host's other
        stores (descriptors, messages), so the NIC can see a ring as full long after its reader emptied
        it; the senders' flow control (``max_velo`` messages per mailbox, 40 notifications per queue)
        counts slots as free only once the NIC sees them free, as a library would, or a message could
        reach a ring the NIC thinks full and be discarded.  The read behind the release (HyperTransport
        order: a read does not pass posted writes) waits as long as the host's backlog: the wait is
        counted in ``credit_wait_max``, not limited."""
        t0 = self.now()
        addr = nic.regs.addr(reg)
        while True:
            behind = (value - (await nic.host.read64(addr) & 0xFFFF_FFFF)) % size
            if behind == 0 or behind > size // 2:       # there, or past it (a later release landed)
                break
            await nic.host.cycles(8)
        counter[port] -= n
        self.credit_wait_max = max(self.credit_wait_max, self.now() - t0)

    async def agent(self, port, until):
        """One process: random operations from ``port`` (node, VPID) until cycle ``until``."""
        rng = random.Random(self.rng.getrandbits(32))
        kinds, weights = zip(*self.weights.items(), strict=True)
        host = self.nics[port[0]].host
        while host.now() < until and not self.errors:
            kind = rng.choices(kinds, weights)[0]
            dst = (rng.randrange(self.topo.nodes), rng.choice(self.vpids))
            done = await {"velo": self.velo, "put": lambda s, d: self.put_get("put", s, d),
                          "get": lambda s, d: self.put_get("get", s, d), "imm": self.immediate, "note": self.note,
                          "lock": self.lock}[kind](port, dst)
            await host.cycles(rng.randint(1, self.gap) if done else rng.randint(4, 16))

    def error(self, text):
        """Record a scoreboard error and log it whole, when it happens."""
        self.errors.append(text)
        self.dut._log.error(text)

    def pending(self):
        return len(self.ops) + sum(len(q) for q in self.velo_due.values())

    def describe_pending(self):
        velo = {k: len(q) for k, q in self.velo_due.items() if q}
        hosts = {nic.node: dict(nic.host.stats, queued=nic.host.queued()) for nic in self.nics[:4]}
        return (f"{len(self.ops)} RMA operations in flight, e.g. {sorted(self.ops, key=lambda o: o.issued)[:6]}; "
                f"VELO messages missing per (source, destination): {dict(list(velo.items())[:8])}; "
                f"host models {hosts}")

    async def drain(self, limit):
        start = self.now()
        while self.pending() and not self.errors:
            if self.now() - start > limit:
                from tests.nic.harness import dump_handshakes
                dump_handshakes(self.dut, len(self.nics))
                raise AssertionError(f"no progress: not drained {limit} cycles after the traffic stopped: "
                                     f"{self.describe_pending()}")
            if (self.now() - start) % 2000 < 200:
                self.dut._log.info(f"draining at cycle {self.now()}: {self.describe_pending()}")
            await self.nics[0].host.cycles(200)
        assert not self.errors, self.errors[:8]

    async def check_counters(self, phase):
        """The phase's counters against what the model sent (net 32-bit cumulative, RMA 16-bit
        wrapping, VELO cleared by reading)."""
        for nic in self.nics:
            node = nic.node
            c = await nic.net_counters()
            for k in ("sent.requests", "sent.responses", "delivered.requests", "delivered.responses"):
                want = self.phase[node, k] + self.net_base[node].get(k, 0)
                assert c[k] == want, f"phase {phase}, node {node}: net {k} {c[k]}, sent {want}"
            assert all(v == 0 for k, v in c.items() if "drops" in k or "malformed" in k), (phase, node, c)
            self.net_base[node] = c
            v = await nic.velo.counters()
            want = {"sent": self.phase[node, "velo.sent"], "received": self.phase[node, "velo.received"],
                    "discarded": 0, "rejected": 0, "dropped": 0}
            assert v == want, f"phase {phase}, node {node}: VELO counters {v}, expected {want}"
            r = await nic.rma.counters()
            for k in r:
                if k.startswith(("errors", "drops")):
                    assert r[k] == 0, f"phase {phase}, node {node}: RMA {k} = {r[k]}"
                    continue
                want = (self.rma_base[node].get(k, 0) + self.phase[node, f"rma.{k}"]) & 0xFFFF
                assert r[k] == want, f"phase {phase}, node {node}: RMA {k} {r[k]}, expected {want}"
            self.rma_base[node] = r
        self.phase.clear()

    def check_locks(self):
        """Fetch-and-add on every word: the values after are the prefix sums of one order of the adds
        (distinct, their steps a permutation of the adds), the word holds their sum, and every failed
        compare saw a value the word had."""
        for (node, vpid, number), w in self.lock_words.items():
            word = int.from_bytes(self.nics[node].host.memory.read(self.nics[node].rma.lock_word(vpid, number), 4),
                                  "little")
            after = sorted(w["after"])
            steps = [b - a for a, b in zip([0] + after, after, strict=False)]
            where = f"lock {number} of node {node} VPID {vpid}"
            assert word == sum(w["adds"]), f"{where}: word {word}, adds sum to {sum(w['adds'])}"
            assert sorted(steps) == sorted(w["adds"]), \
                f"{where}: values after {after} are not prefix sums of {w['adds']}"
            seen = {0, *after}
            bad = [v for v in w["probes"] if v not in seen]
            assert not bad, f"{where}: failed compares saw {bad}, never a value of the word"


@cocotb.test()
async def traffic(dut):
    p = tb_params()
    cfg, topo, nics, rng = await start(dut, p)
    t = Traffic(dut, cfg, topo, nics, rng, p)
    for nic in nics:        # a read behind the host's backlog of stores waits as long as the backlog
        nic.host.read_timeout_cycles = p.get("drain", 100000)
    await t.open()
    large = [(n, v) for n, v in t.ports() if t.region[n, v].large]
    dut._log.info(f"opened {len(t.ports())} VPIDs at cycle {t.now()}, {large} on a 2 MiB page")
    t.net_base = {nic.node: await nic.net_counters() for nic in nics}
    t.rma_base = {nic.node: await nic.rma.counters() for nic in nics}
    for nic in nics:
        await nic.velo.counters()           # cleared by reading
    links0 = [await nic.link_counters() for nic in nics]
    pollers = [cocotb.start_soon(t.poller(nic, p.get("poll", 16))) for nic in nics]
    wall, first = time.perf_counter(), t.now()
    for phase in range(p.get("phases", 1)):
        until = t.now() + p.get("cycles", 5000)
        dut._log.info(f"phase {phase}: traffic from cycle {t.now()} to {until}")
        agents = [cocotb.start_soon(t.agent(port, until)) for port in t.ports()]
        for a in agents:
            await bounded(a, p.get("cycles", 5000) + 50000, cfg, f"phase {phase}: an agent")
        assert not t.errors, t.errors[:8]
        await t.drain(p.get("drain", 100000))
        await t.nics[0].host.cycles(300)        # anything duplicated would arrive now
        assert not t.errors, t.errors[:8]
        await t.check_counters(phase)
        dut._log.info(f"phase {phase} done at cycle {t.now()}: {dict(t.totals)}")
    for task in pollers:
        task.cancel()
    t.check_locks()
    replays = crc = 0
    for nic, before in zip(nics, links0, strict=True):
        for port_no, lc in (await nic.link_counters()).items():
            if topo.peer(nic.node, port_no) is None:
                continue
            assert lc["state"] == 0 and lc["link_errors"] == 0, (nic.node, port_no, lc)
            replays += lc["retransmissions"] - before[port_no]["retransmissions"]
            crc += lc["crc_errors"] - before[port_no]["crc_errors"]
        check_clean(nic)
    if p.get("flit_error", 0.0) > 0:
        # (a flipped control flit -- credits, acknowledgements -- counts as a CRC error and needs no replay)
        assert crc > 0, f"bit errors injected, yet {crc} CRC errors ({replays} replays)"
    else:
        assert crc == 0, f"no bit errors injected, yet {crc} CRC errors"
    cycles = t.now() - first
    dut._log.info(f"traffic: {cycles} cycles in {time.perf_counter() - wall:.1f} s, {dict(t.totals)}, "
                  f"{crc} CRC errors, {replays} flits replayed, read pointers landed up to "
                  f"{t.credit_wait_max} cycles after their release")
    print(f"NIC traffic summary: seed {tb_seed()}, {topo}, {cycles} cycles, {time.perf_counter() - wall:.1f} s, "
          f"{dict(t.totals)}, crc_errors {crc}, retransmissions {replays}")


# ------------------------------------------------------------------------------------------------------
class Fuzz:
    """Random VELO stores and RMA descriptors, one at a time, with the outcome each must have.

    VPIDs of every node: 1, 2, 3 through the ATU (VPID 1 also has a read-only page, VPID 2 a write-only
    page, each with its own owner), 4 in physical mode (a victim: its page must never be written; as a
    destination of puts and gets it is left out, since a physical-mode VPID takes any physical address
    by design, table 7-7), 5 opened and then disabled (mailbox and completer), 0, 6 and 7 never
    opened.  With ``large``, VPIDs 1 and 3 (:data:`LARGE`) also have one 2 MiB page, whose 4 KiB pages
    the fuzz picks as it picks those of the others (the first and last often), and whose every byte is
    checked after every operation.  The expected outcome of an operation comes from the rules of
    ``docs/rma.md`` and ``docs/velo.md`` applied to the GATEs the drivers wrote, never from the RTL."""

    SOURCES = (1, 2, 3)
    VIRTUAL = (1, 2, 3, 5)
    LARGE = (1, 3)              # with ``large``: also one 2 MiB page each
    PHYS = 4
    DISABLED = 5

    def __init__(self, cfg, topo, nics, rng, *, large=False):
        self.cfg, self.topo, self.nics, self.rng = cfg, topo, nics, rng
        self.large = large                              # VPIDs of LARGE also get a 2 MiB page
        self.entries = cfg["system"]["nodes"]           # route-table entries: ids >= topo.nodes have no route
        self.vpids = cfg["system"]["vpids"]
        self.allow = {n.node: (set(), set()) for n in nics}     # node -> (owners, lock pages)
        self.gates = {n.node: {} for n in nics}         # node -> NLA page -> (vpid, read, write)
        self.regions = []                               # (node, Region, owner)
        self.image = {}                                 # (node, phys base) -> the bytes the region must hold
        self.mbox, self.nq, self.enabled = {}, {}, set()
        self.lock_model = defaultdict(int)              # (node, vpid, lock) -> word
        self.counts = Counter()                         # (node, counter) -> expected
        self.stats = Counter()

    def hook(self, node):
        def allowed(addr, size, owner):
            owners, lock_pages = self.allow[node]
            return owner in owners or (addr >> 12 in lock_pages and (addr + size - 1) >> 12 == addr >> 12)
        return allowed

    async def open(self):
        rng = self.rng
        for nic in self.nics:
            n = nic.node
            for v in (1, 2, 3, self.PHYS, self.DISABLED):
                self.mbox[n, v] = await nic.velo.open(v)
                self.nq[n, v] = port = await nic.rma.open(v, phys=v == self.PHYS)
                regs = [(await port.register(2 * PAGE), f"vpid{v}")]
                if v == 1:
                    regs.append((await port.register(PAGE, write=False, owner="ro1"), "ro1"))
                if v == 2:
                    regs.append((await port.register(PAGE, read=False, owner="wo2"), "wo2"))
                if self.large and v in self.LARGE:
                    r = await port.register(LARGE_PAGE, large=True)
                    assert r.large, r
                    regs.append((r, f"vpid{v}"))
                for r, owner in regs:
                    self.regions.append((n, r, owner))
                    if v != self.PHYS:
                        await flush_tlb(nic, [r])
                        for k in range(r.size // PAGE):
                            self.gates[n][(r.nla >> 12) + k] = (v, r.read, r.write)
                    data = rng.randbytes(r.size) if r.large else bytes(rng.randrange(256) for _ in range(r.size))
                    nic.host.memory.write(r.phys, data)
                    self.image[n, r.phys] = bytearray(data)
            await nic.velo.enable(self.DISABLED, False)
            await nic.rma.enable(self.DISABLED, False)
            self.enabled |= {(n, v) for v in (1, 2, 3, self.PHYS)}
            nic.host.memory.write_hook = self.hook(n)

    # -- the model ----------------------------------------------------------------------------------
    def gate(self, node, vpid, nla, access):
        g = self.gates[node].get(nla >> 12)
        return g is not None and g[0] == vpid and g[1 if access == "read" else 2]

    def phys(self, node, nla):
        """Host address of the registered NLA ``nla`` at ``node``."""
        for n, r, _ in self.regions:
            if n == node and r.nla <= nla < r.nla + r.size and r.vpid != self.PHYS:
                return r.phys + nla - r.nla
        raise KeyError(nla)

    def pick_nla(self, node, vpid):
        """An NLA page for ``vpid`` at ``node``: its own (often), a read- or write-only one, another
        VPID's, or one nobody registered."""
        rng = self.rng
        own = [r for n, r, _ in self.regions if n == node and r.vpid == vpid and r.vpid != self.PHYS]
        other = [r for n, r, _ in self.regions if n == node and r.vpid != vpid and r.vpid != self.PHYS]
        x = rng.random()
        if x < 0.55 and own:
            return self.pick_page(rng.choice(own))
        if x < 0.8 and other:
            return self.pick_page(rng.choice(other))
        while True:
            page = rng.choice([rng.randrange(64), rng.randrange(1 << 20)])
            if page not in self.gates[node]:
                return page * PAGE

    def pick_page(self, r):
        """The NLA of a 4 KiB page of region ``r``: any; of a 2 MiB page often its first or last 4 KiB."""
        n = r.size // PAGE
        if r.large:
            return r.nla + PAGE * self.rng.choice((0, 1, n // 2, n - 2, n - 1, self.rng.randrange(n)))
        return r.nla + PAGE * self.rng.randrange(n)

    def in_large(self, node, nla):
        return any(n == node and r.large and nla in r for n, r, _ in self.regions)

    def expect_write(self, node, addr, data):
        for (m, base), image in self.image.items():
            if m == node and base <= addr and addr + len(data) <= base + len(image):
                image[addr - base:addr - base + len(data)] = data
                return
        raise KeyError(f"node {node}: {addr:#x}+{len(data)} is in no region")

    def note(self, out, port, peer, cls, cmd, error=RmaError.NONE, lock=None):
        out.append((port, (cls.value, cmd, error.value, *peer), lock))

    # -- one operation ------------------------------------------------------------------------------
    async def velo_op(self):
        rng = self.rng
        s, sv = rng.randrange(self.topo.nodes), rng.choice(self.SOURCES)
        d, dv = self.dest()
        payload = bytes(rng.randrange(256) for _ in range(8 * rng.randint(1, 8)))
        msg = None
        if d >= self.topo.nodes:
            self.counts[s, "no_route"] += 1
            self.allow_only({})
        elif (d, dv) in self.enabled:
            msg = ((d, dv), (s, sv, payload))
            self.allow_only({d: [f"velo{dv}"]})
            self.counts[d, "velo.received"] += 1
        else:
            self.counts[d, "velo.rejected"] += 1
            self.allow_only({})
        await self.mbox[s, sv].send(d, dv, payload)
        self.stats["velo"] += 1
        return [], msg, f"VELO {payload.hex()} from {(s, sv)} to {(d, dv)}"

    def dest(self):
        rng = self.rng
        d = rng.randrange(self.topo.nodes) if rng.random() < 0.85 else rng.randrange(self.topo.nodes, self.entries)
        return d, rng.randrange(self.vpids)

    def allow_only(self, owners, locks=()):
        for n in self.allow:
            self.allow[n] = (set(owners.get(n, ())), {p for m, p in locks if m == n})

    async def rma_op(self):
        rng = self.rng
        s, sv = rng.randrange(self.topo.nodes), rng.choice(self.SOURCES)
        cmd = rng.choice([PUT, PUT, PUT, GET, GET, GET, IMM, NOTE, LOCK, LOCK, rng.randrange(5, 8)])
        while True:
            d, dv = self.dest()
            if not (dv == self.PHYS and cmd in (PUT, GET, IMM)):
                break
        nbytes = 8 * rng.randint(1, 32)
        off = 8 * rng.randrange((PAGE - nbytes) // 8 + 1)
        local, remote = self.pick_nla(s, sv) + off, self.pick_nla(d, dv) + off if d < self.topo.nodes else \
            rng.randrange(1 << 20) * PAGE + off
        bits = (rng.randrange(2), rng.randrange(2), rng.randrange(2))
        routed, enabled = d < self.topo.nodes, (d, dv) in self.enabled
        notes, owners, locks = [], defaultdict(list), []
        owners[s].append(f"rma_nq{sv}")
        if routed:
            owners[d].append(f"rma_nq{dv}")
        pk = lines(remote, nbytes)
        port = self.nq[s, sv]
        what = (f"command {cmd} from {(s, sv)} to {(d, dv)}, local {local:#x} remote {remote:#x} {nbytes} bytes, "
                f"bits {bits}")
        self.stats[cmd] += 1
        self.stats["2 MiB page"] += self.in_large(s, local) or self.in_large(d, remote)
        if cmd not in (PUT, GET, IMM, NOTE, LOCK):
            self.note(notes, (s, sv), (d, dv), Cls.REQUESTER, cmd, RmaError.UNKNOWN_COMMAND)
            self.counts[s, "errors.requester"] += 1
            self.allow_only(owners)
            await port.post(cmd, dst_node=d, dst_vpid=dv)
            return notes, None, what
        if cmd == PUT and not self.gate(s, sv, local, "read"):
            self.note(notes, (s, sv), (d, dv), Cls.REQUESTER, PUT, RmaError.ATU_FAULT)
            self.counts[s, "errors.requester"] += 1
            self.counts[s, "drops.atu_faults"] += 1
            self.allow_only(owners)
            await port.put(d, dv, local, remote, nbytes, notify=bits)
            return notes, None, what
        if cmd == PUT and bits[0]:
            self.note(notes, (s, sv), (d, dv), Cls.REQUESTER, PUT)
        packets = {PUT: pk, IMM: 1, NOTE: 1, GET: 1, LOCK: 1}[cmd]
        if not routed:
            self.counts[s, "no_route"] += packets
        elif cmd in (PUT, IMM, NOTE) and not enabled:
            self.counts[d, "errors.completer_dropped"] += packets
        elif cmd in (PUT, IMM):
            if self.gate(d, dv, remote, "write"):
                data = (self.nics[s].host.memory.read(self.phys(s, local), nbytes) if cmd == PUT
                        else rng.getrandbits(64).to_bytes(8, "little"))
                self.expect_write(d, self.phys(d, remote), data)
                owners[d].append(next(o for n, r, o in self.regions if n == d and remote in r))
                if bits[1]:
                    self.note(notes, (d, dv), (s, sv), Cls.COMPLETER, cmd)
            else:
                self.counts[d, "drops.atu_faults"] += packets
                if bits[1]:
                    self.note(notes, (d, dv), (s, sv), Cls.COMPLETER, cmd, RmaError.ATU_FAULT)
        elif cmd == NOTE:
            self.note(notes, (d, dv), (s, sv), Cls.COMPLETER, NOTE)
        elif cmd == GET:
            if not enabled:
                self.counts[d, "errors.refused"] += 1
                self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, GET, RmaError.DISABLED)
            elif not self.gate(d, dv, remote, "read"):
                self.counts[d, "drops.atu_faults"] += 1
                self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, GET, RmaError.ATU_FAULT)
            else:
                if bits[2]:
                    self.note(notes, (d, dv), (s, sv), Cls.RESPONDER, GET)
                if self.gate(s, sv, local, "write"):
                    data = self.nics[d].host.memory.read(self.phys(d, remote), nbytes)
                    self.expect_write(s, self.phys(s, local), data)
                    owners[s].append(next(o for n, r, o in self.regions if n == s and local in r))
                    if bits[1]:                 # table 7-2: cpl_notify (an error makes it due)
                        self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, GET)
                else:
                    self.counts[s, "drops.atu_faults"] += pk
                    self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, GET, RmaError.ATU_FAULT)
        else:                                   # LOCK
            number = rng.choice([rng.randrange(8), rng.randrange(1024, 1 << 10 + 3)])
            compare, add = rng.randint(-5, 40), rng.randint(-20, 20)
            if not enabled:
                self.counts[d, "errors.refused"] += 1
                self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, LOCK, RmaError.DISABLED)
            elif number >= 1024:
                self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, LOCK, RmaError.LOCK_RANGE)
            else:
                key = (d, dv, number)
                word = self.lock_model[key]
                ok = word <= compare
                if ok:
                    word = self.lock_model[key] = word + add
                result = (word & 0xFFFF_FFFF, int(ok))
                self.note(notes, (s, sv), (d, dv), Cls.COMPLETER, LOCK, lock=result)
                if bits[2]:
                    self.note(notes, (d, dv), (s, sv), Cls.RESPONDER, LOCK, lock=result)
                locks.append((d, (self.nics[d].rma.lock_word(dv, number)) >> 12))
            self.allow_only(owners, locks)
            await port.post(RmaCommand.LOCK, dst_node=d, dst_vpid=dv, lock=number, compare=compare, add=add,
                            notify=(0, 0, bits[2]))
            return notes, None, what + f", lock {number} compare {compare} add {add}"
        self.allow_only(owners, locks)
        if cmd == PUT:
            await port.put(d, dv, local, remote, nbytes, notify=bits)
        elif cmd == GET:
            await port.get(d, dv, local, remote, nbytes, notify=bits)
        elif cmd == IMM:
            value = int.from_bytes(data, "little") if routed and enabled and self.gate(d, dv, remote, "write") \
                else rng.getrandbits(64)
            await port.immediate_put(d, dv, remote, value, notify=bits[1])
        else:
            await port.notification_put(d, dv, rng.getrandbits(64))
        return notes, None, what

    # -- checking -----------------------------------------------------------------------------------
    async def take_notes(self):
        got = []
        for (n, v), port in self.nq.items():
            while (x := await port.poll()) is not None:
                got.append(((n, v), (x["cls"], x["command"], x["error"], x["peer_node"], x["peer_vpid"]),
                            None if x["error"] else x.get("lock")))     # an error carries no result
        return got

    async def take_messages(self):
        got = []
        for (n, v), port in self.mbox.items():
            while True:
                f = await port.poll()
                if f is None:
                    break
                got.append(((n, v), f))
        return got

    async def run(self, ops, settle):
        host = self.nics[0].host
        for i in range(ops):
            notes, msg, what = await (self.velo_op() if self.rng.random() < 0.3 else self.rma_op())
            host.dut._log.info(f"op {i} at cycle {host.now()}: {what}")
            want = Counter((port, key, lock) for port, key, lock in notes)
            got, msgs = Counter(), []
            waited = 0
            while True:
                await host.cycles(8)
                waited += 8
                got.update(await self.take_notes())
                msgs += await self.take_messages()
                if (got >= want and (msg is None or msgs)) and waited >= settle:
                    break
                if waited > 20000:
                    from tests.nic.harness import dump_handshakes
                    dump_handshakes(host.dut, len(self.nics))
                    for nic in self.nics:
                        host.dut._log.info(f"node {nic.node}: net {await nic.net_counters()}, "
                                           f"RMA {await nic.rma.counters()}, VELO {await nic.velo.counters()}")
                    raise AssertionError(f"op {i} ({what}): no outcome in 20000 cycles: notifications {dict(got)}, "
                                         f"expected {dict(want)}; messages {msgs}")
            await host.cycles(settle)                   # anything more would arrive now
            got.update(await self.take_notes())
            msgs += await self.take_messages()
            assert got == want, f"op {i} ({what}): notifications {dict(got)}, expected {dict(want)}"
            if msg is None:
                assert not msgs, f"op {i} ({what}): unexpected VELO slots {msgs}"
            else:
                (port, (s, sv, payload)) = msg
                assert len(msgs) == 1 + (len(payload) == 64) and all(m[0] == port for m in msgs), \
                    f"op {i} ({what}): VELO slots {msgs}"
                f, raw = msgs[0][1]
                body = b"".join(m[1][1] for m in msgs)
                assert (f["src_node"], f["src_vpid"], body) == (s, sv, payload), f"op {i} ({what}): got {msgs}"
            for nic in self.nics:
                assert not nic.host.memory.violations, f"op {i} ({what}): {nic.host.memory.violations[:4]}"
            for port in list(self.nq.values()) + list(self.mbox.values()):
                await port.release(force=True)
            await self.settle_memory(f"op {i} ({what})", host)

    async def settle_memory(self, what, host, limit=20000):
        """Every page as expected, within ``limit`` cycles: an operation without notifications gives no
        sign that it ended, and a flit lost on a link delays its packets by a replay time-out
        (``docs/link.md``), so the image is checked until it matches (a write that should not happen
        shows in every later check too)."""
        waited = 0
        while True:
            for nic in self.nics:       # (an AXI memory may apply writes after their data: write_delay)
                await nic.host.idle()
            try:
                self.check_memory(what)
                return
            except AssertionError:
                if waited >= limit:
                    raise
            await host.cycles(64)
            waited += 64

    def check_memory(self, what):
        for (n, base), want in self.image.items():
            got = self.nics[n].host.memory.read(base, len(want))
            if got != want:     # (cheap: settle_memory calls this until the image matches)
                at = next(k for k in range(0, len(want), PAGE) if got[k:k + PAGE] != want[k:k + PAGE])
                diff = [i for i in range(PAGE) if got[at + i] != want[at + i]]
                raise AssertionError(f"{what}: node {n} page {base + at:#x} differs at {len(diff)} bytes from "
                                     f"offset {diff[0]:#x}")

    async def check_counters(self):
        for nic in self.nics:
            n = nic.node
            c, r, v = await nic.net_counters(), await nic.rma.counters(), await nic.velo.counters()
            xbar = {}                               # every crossbar port's drops: links first, then the network port
            for port in range(self.cfg["xbar"]["link_ports"] + 1):
                x = await nic.xbar_counters(port)
                xbar |= {f"xbar[{port}].{k}": val for k, val in x.items() if not k.startswith("packets.")}
            net_port = self.cfg["xbar"]["link_ports"]
            no_route = c["tx_drops.no_route"] + xbar.pop(f"xbar[{net_port}].drops.no_route")
            got = {"no_route": no_route, "velo.received": v["received"], "velo.rejected": v["rejected"],
                   **{k: r[k] for k in ("errors.requester", "errors.refused", "errors.completer_dropped",
                                        "drops.atu_faults")}}
            want = {k: self.counts[n, k] for k in got}
            assert got == want, f"node {n}: counters {got}, expected {want}"
            rest = {**c, **r, **xbar, "velo.discarded": v["discarded"], "velo.dropped": v["dropped"]}
            others = {k: val for k, val in rest.items()
                      if ("drops" in k or "errors" in k or "malformed" in k or k.startswith("velo.")) and
                      k not in got and k != "tx_drops.no_route"}
            assert all(val == 0 for val in others.values()), f"node {n}: {others}"


@cocotb.test()
async def isolation(dut):
    p = tb_params()
    cfg, topo, nics, rng = await start(dut, p)
    f = Fuzz(cfg, topo, nics, rng, large=bool(p.get("large", 0)))
    await f.open()
    await f.run(p.get("ops", 40), p.get("settle", 200))
    await f.check_counters()
    for nic in nics:
        check_clean(nic)
    dut._log.info(f"isolation: {dict(f.stats)} (commands by number), cycle {nics[0].host.now()}")
