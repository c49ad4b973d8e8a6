"""Two RMA units cross-connected through network-stream loopback (Amaranth simulator), each with a
small host and an ATU model in the testbench: descriptors posted as HTAX writes, DMA reads answered
after a random latency (out of order with ``reorder``), writes applied with their byte enables, ATS
translation requests answered from GATE tables (:class:`sim.atu_model.AtuModel`) after a random
latency, in request order, random backpressure.

``test_two_nodes_random``: random puts, gets, immediate puts, notification puts and locks -- through
physical addresses and translated NLAs, including bad descriptors, disabled VPIDs, out-of-range locks
and ATU faults (unregistered NLA, a GATE of another VPID, no write or read permission) -- run
concurrently on disjoint buffers; memories (so no write lands outside a registered page), notification
queues, interrupts and counters must equal :class:`sim.rma_model.RmaNetworkModel` run on the same
operations with the same GATE tables, and every translation request must name a translated side of an
operation (its VPID, access and first page) with the ``next`` bit :func:`next_bit` computes from the
side's address and length (a quarter of the puts and gets end at their page's end, a tenth one
quadword before it).

``test_flush_waits_for_operations``: an ATS flush request (ch. 5.3) for a page that a put, a get and a
put from it use at node 1, sent with the GATE zeroed at the first write into the page; the flush
response must echo the request, come only after the last access to the page, and the operations issued
after it must fault."""

import os
import random
from collections import Counter

import pytest
from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import Out

from rtl.atu.layout import GATE_INDEX_BITS
from rtl.common.ats import AtsCmd, AtsMessage
from rtl.common.htax import HtaxCmd, HtaxLinkSignature
from rtl.rma.formats import (
    LINE_BYTES,
    PAGE_BYTES,
    RmaCommand,
    RmaDescriptor,
    RmaError,
    RmaNotifyClass,
    RmaPageOffset,
    RmaPutGetOperands,
)
from rtl.rma.rma import Rma
from sim.amsim import Clock, HtaxHost, run_sim
from sim.atu_model import AtuModel, decode_ats, gate_word
from sim.htax_packet import HtaxPacket
from sim.layout import pack, unpack
from sim.rma_model import NotificationQueue, RmaNetworkModel, RmaNodeModel, decode_notification, descriptor

VPIDS = 8
BASE = 0x8000_0100_0000
PORT, HOST, ATU = 2, 0, 5
NQ, LOCKS, MEM = 0x1_0000, 0x8_0000, 0x10_0000
NQ_SIZE = 64
DISABLED = 3                    # a VPID whose completer is off
VIRTUAL = (2, 5, 6)             # VPIDs without physical mode: their addresses are NLAs
GAT = 1                         # the GAT of every registered NLA: NLA pages 1 << 18 | index
GAT_BASE = 0x4000_0000          # its (fictitious) physical base; GATEs live in the ATU model only
#: pages whose DMA reads fail (error status): a free page and VPID 7's lock page
POISON = (0x1F * PAGE_BYTES, LOCKS + 7 * PAGE_BYTES)
WATCHDOG = 30_000         # cycles


class FlatMemory:
    def __init__(self, data):
        self.b = bytearray(data)

    def read(self, addr, size):
        """The bytes, or ``None`` for a read touching the poisoned page."""
        if any(addr < p + PAGE_BYTES and addr + size > p for p in POISON):
            return None
        return bytes(self.b[addr:addr + size])

    def write(self, addr, data, mask=None):
        assert addr + len(data) <= len(self.b), f"write beyond memory at {addr:#x}"
        for i, x in enumerate(data):
            if mask is None or mask[i]:
                self.b[addr + i] = x


class Gates:
    """One node's GATE table (GAT ``GAT``) and the ATU model that translates through it."""

    def __init__(self):
        self.words = {}
        self.next = 1
        self.atu = AtuModel(gat_entries=4, vpids=VPIDS, read64=lambda a: self.words.get(a, 0))
        self.atu.gat_base[GAT] = GAT_BASE

    def register(self, vpid, phys, *, read=1, write=1):
        """A fresh NLA for the page of ``phys`` (same offset), mapped for ``vpid``."""
        index, self.next = self.next, self.next + 1
        self.set(index, gate_word(ppn=phys >> 12, vpid=vpid, read=read, write=write))
        return (GAT << GATE_INDEX_BITS | index) << 12 | phys % PAGE_BYTES

    def unregistered(self, phys):
        index, self.next = self.next, self.next + 1
        return (GAT << GATE_INDEX_BITS | index) << 12 | phys % PAGE_BYTES

    def set(self, index, word):
        self.words[GAT_BASE + 8 * index] = word


#: the test's names of the RMA counter strobes: (register, field) of the register file's ``rma`` block
COUNTERS = {
    "req_put": ("requester_counters", "put"), "req_get": ("requester_counters", "get"),
    "req_error": ("errors", "requester"),
    "rsp_get": ("responder_counters", "get"), "rsp_lock": ("responder_counters", "lock"),
    "rsp_refused": ("errors", "refused"), "rsp_dropped": ("errors", "responder_dropped"),
    "cpl_put": ("completer_counters", "put"), "cpl_get": ("completer_counters", "get"),
    "cpl_dropped": ("errors", "completer_dropped"),
    "nq_dropped": ("drops", "notifications"), "rx_dropped": ("drops", "htax"),
    "atu_fault": ("drops", "atu_faults"), "atu_flush": ("drops", "atu_flushes"),
}


class Node(wiring.Component):
    htax_tx: Out(HtaxLinkSignature())           # the unit's tx, seen from the host: host reads it
    htax_rx: Out(HtaxLinkSignature()).flip()
    counts: Out(16).array(len(COUNTERS))
    irqs: Out(VPIDS)

    def __init__(self, n, queues):
        self.n, self.queues = n, queues
        self.rma = Rma(vpids=VPIDS, window_base=BASE, htax_port=PORT, host_port=HOST, atu_port=ATU)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.rma = rma = self.rma
        r = rma.regs
        b = r.rma
        wiring.connect(m, rma.htax.tx, wiring.flipped(self.htax_tx))
        wiring.connect(m, wiring.flipped(self.htax_rx), rma.htax.rx)
        for name, table, field, width, init in (
                ("nq_base", b.nq_base, "addr", 48, [q.base >> 4 for q in self.queues]),
                ("nq_rp", r.rma_user.rp, "rp", 32, [q.rp for q in self.queues])):
            m.submodules[name] = mem = Memory(shape=width, depth=VPIDS, init=init)
            port = mem.read_port()
            m.d.comb += [port.addr.eq(table.addr), getattr(table.data, field).eq(port.data)]
        m.d.comb += [r.net.node.id.eq(self.n), b.nq_size.size.eq(NQ_SIZE), b.lock_base.addr.eq(LOCKS >> 3),
                     b.lock_size.size.eq(VPIDS * PAGE_BYTES), self.irqs.eq(r.irq.rma_status.vpid_event),
                     Cat(e.enable for e in b.completer_enable).eq(
                         sum(int(q.enable) << v for v, q in enumerate(self.queues))),
                     Cat(p.phys for p in b.phys_mode).eq(sum(int(q.phys) << v for v, q in enumerate(self.queues)))]
        for k, (reg, field) in enumerate(COUNTERS.values()):
            with m.If(getattr(getattr(b, reg), f"{field}_incr")):
                m.d.sync += self.counts[k].eq(self.counts[k] + 1)
        return m


class Loop(wiring.Component):
    """The system with the two units' network streams cross-connected."""

    def __init__(self, queues):
        self.nodes = [Node(n, queues[n]) for n in range(2)]
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.node0, m.submodules.node1 = self.nodes
        x, y = self.nodes[0].rma, self.nodes[1].rma
        for s, d in ((x, y), (y, x)):
            wiring.connect(m, s.req_tx, d.req_rx)
            wiring.connect(m, s.rsp_tx, d.rsp_rx)
        return m


def queues_for():
    return [NotificationQueue(enable=v != DISABLED, phys=v not in VIRTUAL, base=NQ + v * PAGE_BYTES)
            for v in range(VPIDS)]


def free_pages(rng):
    """Per node, shuffled page addresses that overlap neither the queues, the locks nor the poison."""
    pages = [[p * PAGE_BYTES for p in range(0x20, MEM // PAGE_BYTES)
              if not LOCKS <= p * PAGE_BYTES < LOCKS + VPIDS * PAGE_BYTES] for _ in range(2)]
    for p in pages:
        rng.shuffle(p)
    return pages


def address(rng, gates, vpid, phys, write, fault_p):
    """``phys`` itself for a physical VPID, else an NLA for it: registered with the access it needs, or
    (with probability ``fault_p``) unregistered, of another VPID or without the permission."""
    if vpid not in VIRTUAL:
        return phys
    kind = rng.choice(["none", "vpid", "perm"]) if rng.random() < fault_p else "ok"
    if kind == "none":
        return gates.unregistered(phys)
    if kind == "vpid":
        return gates.register((vpid + 1) % VPIDS, phys)
    perm = {"read": int(write or kind == "ok"), "write": int(not write or kind == "ok")}
    return gates.register(vpid, phys, **perm)


def random_ops(rng, gates, count):
    pages = free_pages(rng)
    ops = []
    for i in range(count):
        origin = rng.randrange(2)
        cmd = rng.choice([RmaCommand.PUT] * 3 + [RmaCommand.GET] * 3 + [RmaCommand.IMMEDIATE_PUT,
                         RmaCommand.NOTIFICATION_PUT, RmaCommand.LOCK, 7])
        cl = rng.random() < 0.3
        units = rng.randint(1, 64)
        nbytes = units * (64 if cl else 8)
        end = rng.random()
        if end < 0.25:
            off = PAGE_BYTES - nbytes                   # ends at the page's end: ``next``
        elif end < 0.35 and nbytes < PAGE_BYTES:
            off = PAGE_BYTES - nbytes - 8               # one quadword before it
        else:
            off = 8 * rng.randrange(0, (PAGE_BYTES - nbytes) // 8 + 1)
        local = pages[origin].pop() + off
        remote = pages[1 - origin].pop() + off
        r = rng.random()
        if r < 0.05:
            remote += 8                                 # misaligned (or crossing)
        elif r < 0.1 and nbytes < PAGE_BYTES:
            local = local - off + PAGE_BYTES - 8        # crossing
            remote = remote - off + PAGE_BYTES - 8
        vpid = rng.randrange(VPIDS) if rng.random() < 0.2 else rng.choice([0, 1, 2, 4])
        dvpid = rng.randrange(VPIDS) if rng.random() < 0.2 else rng.choice([0, 1, 6, 7])
        is_get = cmd == RmaCommand.GET
        local = address(rng, gates[origin], vpid, local, is_get, 0.1)
        if dvpid < VPIDS:
            remote = address(rng, gates[1 - origin], dvpid, remote, not is_get, 0.1)
        fields = {"command": int(getattr(cmd, "value", cmd)), "req_notify": rng.randrange(2),
                  "cpl_notify": rng.randrange(2), "rsp_notify": rng.randrange(2), "cache_line": int(cl),
                  "vpid": vpid, "irq": int(rng.random() < 0.2)}
        lock = i if rng.random() < 0.9 else rng.choice([1024, 2000])
        desc = descriptor(command=cmd, dst_node=1 - origin, dst_vpid=dvpid, local=local, remote=remote, units=units,
                          payload=rng.getrandbits(64), lock=lock, compare=rng.getrandbits(32), add=rng.getrandbits(32))
        ops.append((origin, fields, desc))
    # every run has each bad input at least once: unknown command, page crossing, a get from a disabled
    # VPID, a lock beyond the region, a put, a get and a lock whose reads fail; ATU faults at the
    # requester (unregistered NLA), at the completer (a GATE of another VPID; a get's destination
    # without write permission) and at the responder (a get's source without read permission)
    bits = {"req_notify": 0, "cpl_notify": 1, "rsp_notify": 1, "cache_line": 0, "vpid": 1, "irq": 0}
    page = [pages[0].pop(), pages[1].pop()]
    good = [pages[0].pop(), pages[1].pop()]
    g0, g1 = gates
    for cmd, kw, vpid in (
            (6, {}, 1), (RmaCommand.PUT, {"local": page[0] + 4088, "remote": page[1] + 4088, "units": 2}, 1),
            (RmaCommand.GET, {"dst_vpid": DISABLED, "local": page[0], "remote": page[1]}, 1),
            (RmaCommand.LOCK, {"lock": 1024}, 1),
            (RmaCommand.PUT, {"local": POISON[0] + 0x100, "remote": page[1] + 0x100, "units": 20}, 1),
            (RmaCommand.GET, {"local": page[0] + 0x40, "remote": POISON[0] + 0x40, "units": 9}, 1),
            (RmaCommand.LOCK, {"dst_vpid": 7, "lock": 5}, 1),
            (RmaCommand.PUT, {"local": g0.unregistered(page[0]), "remote": page[1]}, 2),
            (RmaCommand.PUT, {"dst_vpid": 6, "local": page[0], "remote": g1.register(5, page[1] + 0x200)}, 1),
            (RmaCommand.GET, {"local": g0.register(2, page[0] + 0x300, write=0), "remote": page[1] + 0x300}, 2),
            (RmaCommand.GET, {"dst_vpid": 6, "local": page[0] + 0x400, "remote": g1.register(6, page[1] + 0x400,
                                                                                          read=0)}, 1),
            # and a put and a get that succeed, both through NLAs, the get ending at its pages' end
            (RmaCommand.PUT, {"dst_vpid": 6, "local": g0.register(2, good[0]), "remote": g1.register(6, good[1]),
                              "units": 5}, 2),
            (RmaCommand.GET, {"dst_vpid": 6, "local": g0.register(2, good[0] + PAGE_BYTES - 40),
                              "remote": g1.register(6, good[1] + PAGE_BYTES - 40), "units": 5}, 2)):
        desc = descriptor(command=cmd, dst_node=1, **({"dst_vpid": 0} | kw))
        ops.insert(rng.randrange(len(ops) + 1), (0, bits | {"vpid": vpid, "command": int(getattr(cmd, "value", cmd))},
                                                 desc))
    return ops


def next_bit(start, nbytes, page):
    """The ``next`` bit of the translation request for NLA page ``page`` of an operation side on bytes
    ``start .. start + nbytes - 1`` (``docs/rma.md``, "Translation"): 1 when the side's last byte lies
    at or beyond the page's last byte (the access reaches the end of its page)."""
    assert start // PAGE_BYTES <= page <= (start + nbytes - 1) // PAGE_BYTES, (hex(start), nbytes, hex(page))
    return int(start + nbytes - 1 >= (page + 1) * PAGE_BYTES - 1)


def translated_sides(ops):
    """Per node, ``{first NLA page: (VPID, write, start, bytes)}`` of the operation sides it translates
    (their VPID is not physical): a put's local side (requester, read) and remote side (completer,
    write), an immediate put's remote side (completer, 8 bytes), a get's remote side (responder, read)
    and local side (the origin's completer, write).  Every NLA is a fresh GATE index, so a page names
    one side."""
    sides = [{}, {}]
    for origin, fields, desc in ops:
        d = unpack(RmaDescriptor, desc, ["op", "remote_qw", "dst_node", "dst_vpid"])
        o = unpack(RmaPutGetOperands, d["op"], ["local_qw", "size_m1"])
        nbytes = (o["size_m1"] + 1) * (LINE_BYTES if fields["cache_line"] else 8)
        local = (origin, fields["vpid"], 8 * o["local_qw"])
        remote = (d["dst_node"], d["dst_vpid"], 8 * d["remote_qw"])
        cmd = fields["command"]
        found = {RmaCommand.PUT.value: [(local, 0, nbytes), (remote, 1, nbytes)],
                 RmaCommand.GET.value: [(remote, 0, nbytes), (local, 1, nbytes)],
                 RmaCommand.IMMEDIATE_PUT.value: [(remote, 1, 8)]}.get(cmd, [])
        for (node, vpid, start), write, size in found:
            if vpid in VIRTUAL:
                assert start // PAGE_BYTES not in sides[node], hex(start)
                sides[node][start // PAGE_BYTES] = (vpid, write, start, size)
    return sides


def check_requests(ops, hosts):
    """Every recorded translation request is for a translated side of ``ops`` (its VPID, access and
    first page: a side that crosses a page is refused at the requester) with ``next`` from
    :func:`next_bit`; returns the ``next`` values seen."""
    seen = set()
    for n, sides in enumerate(translated_sides(ops)):
        for w in hosts[n].requests:
            r = unpack(AtsMessage, w, [f"translation_request.{k}" for k in ("vpid", "nla_page", "write", "next")])
            vpid, page, write, nxt = r.values()
            assert page in sides, f"node {n}: a translation request for page {page:#x} of no operation"
            side_vpid, side_write, start, nbytes = sides[page]
            assert (vpid, write) == (side_vpid, side_write), (n, hex(page), vpid, write)
            assert nxt == next_bit(start, nbytes, page), \
                f"node {n}: page {page:#x} of the side at {start:#x}, {nbytes} bytes: next {nxt}"
            seen.add(nxt)
    return seen


def store(fields, desc):
    """The descriptor store: one posted HTAX WRITE of two words (fig. 7-6)."""
    off = pack(RmaPageOffset, {k: fields[k] for k in ("command", "req_notify", "cpl_notify", "rsp_notify",
                                                      "cache_line")})
    addr = BASE + off + (fields["vpid"] << 12) + (fields["irq"] << 15)
    return HtaxPacket(HtaxCmd.WRITE, src=HOST, dst=PORT, addr=addr, length=2,
                      data=[desc & (1 << 64) - 1, desc >> 64])


def ats_packet(word):
    return HtaxPacket(HtaxCmd.ATS, src=ATU, dst=PORT, ats=word)


def translation_response(t):
    return pack(AtsMessage, {"translation_response.cmd": AtsCmd.TRANSLATION_RESPONSE.value,
                             "translation_response.ok": t.ok, "translation_response.cause": t.cause.value,
                             "translation_response.ppn": t.ppn})


def flush_request(vpid, nla_page, flush_id):
    return pack(AtsMessage, {"flush_request.cmd": AtsCmd.FLUSH_REQUEST.value, "flush_request.vpid": vpid,
                             "flush_request.nla_page": nla_page, "flush_request.flush_id": flush_id})


def seed_rng():
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    return random.Random(seed)


@pytest.mark.parametrize("ready_p, reorder", [(1.0, False), (0.5, True)])
def test_two_nodes_random(ready_p, reorder):
    rng = seed_rng()
    gates = [Gates(), Gates()]
    # both values of ``next``: random_ops has a put and a get through NLAs, the get ending at its pages' end
    models = run_system(rng, gates, random_ops(rng, gates, int(os.environ.get("RMA_OPS", 12))), ready_p=ready_p,
                        reorder=reorder, nexts={0, 1})
    total = Counter()
    for mod in models:
        total.update(mod.counters)
    assert min(total[k] for k in ("req_errors", "cpl_dropped", "cpl_put", "cpl_get", "rsp_get", "atu_fault")) > 0, total


@pytest.mark.soak
def test_two_nodes_soak():
    """Many more operations, out-of-order reads and backpressure (``make soak``)."""
    rng = seed_rng()
    gates = [Gates(), Gates()]
    run_system(rng, gates, random_ops(rng, gates, 200), ready_p=0.6, reorder=True, watchdog=400_000, nexts={0, 1})


class Host(HtaxHost):
    """One node's host memory (:class:`sim.amsim.HtaxHost`), descriptor source and ATU: descriptors are
    posted writes, translation requests are answered from the node's GATE table after a random latency
    in request order; translation requests and flush responses are recorded."""

    def __init__(self, n, node, rng, mem, gates, posted, *, ready_p, reorder):
        super().__init__(node.htax_tx, node.htax_rx, mem, port=HOST, rng=rng, latency=(4, 40), reorder=reorder,
                         stall=1 - ready_p, post=0.8, on_packet=Host.ats)
        self.n, self.gates = n, gates
        self.flush_responses = []   # (cycle, word)
        self.requests = []          # the translation requests (ATS message words), in order
        for f, d in posted:
            self.post(store(f, d))

    def ats(self, p):
        assert (p.cmd, p.src, p.dst, p.tag) == (HtaxCmd.ATS, PORT, ATU, 0), p
        cmd, f = decode_ats(p.ats)
        if cmd == AtsCmd.FLUSH_RESPONSE:
            self.flush_responses.append((self.now, p.ats))
            return
        assert cmd == AtsCmd.TRANSLATION_REQUEST, cmd
        self.requests.append(p.ats)
        r = unpack(AtsMessage, p.ats, [f"translation_request.{k}" for k in ("vpid", "nla_page", "write")])
        t = self.gates.atu.translate(*r.values())
        due = max([self.now + self.rng.randint(3, 30)] + [d for d, _ in self.later])    # in request order
        self.send_at(due, ats_packet(translation_response(t)))


def simulate(rng, init, gates, ops, *, ready_p, reorder, watchdog=None, hook=None):
    """Run ``ops`` on the RTL; the memories, hosts and the shared state (counters, interrupts)."""
    mems = [FlatMemory(x) for x in init]
    dut = Loop([queues_for(), queues_for()])
    shared = {"counts": [None, None], "irqs": [Counter(), Counter()]}
    hosts = [Host(n, dut.nodes[n], rng, mems[n], gates[n], [(f, d) for o, f, d in ops if o == n], ready_p=ready_p,
                  reorder=reorder) for n in range(2)]
    for h in hosts:
        h.on_cycle = hook

    async def bench(ctx):
        clock = Clock(*hosts, limit=watchdog or WATCHDOG)
        idle = 0
        while idle <= 400:          # both hosts idle for 400 cycles: the units are done
            irqs = await clock.tick(ctx, *(node.irqs for node in dut.nodes))
            for n, irq in enumerate(irqs):
                for v in range(VPIDS):
                    shared["irqs"][n][v] += (irq >> v) & 1
            idle = 0 if any(h.busy for h in hosts) else idle + 1
        for n, node in enumerate(dut.nodes):
            shared["counts"][n] = dict(zip(COUNTERS, (ctx.get(c) for c in node.counts), strict=True))

    run_sim(dut, bench)
    return mems, hosts, shared


def run_system(rng, gates, ops, *, ready_p, reorder, watchdog=None, nexts=None):
    """Run ``ops`` on the RTL and on the model and compare; ``nexts``: the ``next`` values the
    translation requests must show (each checked by :func:`check_requests` anyway)."""
    init = [rng.randbytes(MEM) for _ in range(2)]
    models = [RmaNodeModel(node=n, memory=FlatMemory(init[n]), vpids=VPIDS, nq_size=NQ_SIZE, lock_base=LOCKS,
                           lock_size=VPIDS * PAGE_BYTES, queues=queues_for(), translate=gates[n].atu.translate)
              for n in range(2)]
    net = RmaNetworkModel(models)
    for origin, fields, desc in ops:
        net.post(origin, fields["vpid"], fields, desc)
    mems, hosts, shared = simulate(rng, init, gates, ops, ready_p=ready_p, reorder=reorder, watchdog=watchdog)
    for n in range(2):
        mod, dm = models[n], mems[n]
        for v, q in enumerate(mod.queues):       # queues: the same entries, in any order (operations overlap)
            lo = q.base
            got = sorted(dm.read(lo + 16 * i, 16) for i in range(q.wp))
            exp = sorted(mod.memory.read(lo + 16 * i, 16) for i in range(q.wp))
            assert got == exp, f"node {n} vpid {v}: notifications differ"
            dm.b[lo:lo + 16 * q.wp] = mod.memory.b[lo:lo + 16 * q.wp]
        assert dm.b == mod.memory.b, f"node {n}: memory differs from the model"
        mc = mod.counters
        c = shared["counts"][n]
        assert c == {"req_put": mc["req_put"], "req_get": mc["req_get"], "req_error": mc["req_errors"],
                     "rsp_get": mc["rsp_get"], "rsp_lock": mc["rsp_lock"], "rsp_refused": c["rsp_refused"],
                     "rsp_dropped": 0,
                     "cpl_put": mc["cpl_put"], "cpl_get": mc["cpl_get"],
                     "cpl_dropped": mc["cpl_dropped"] - c["rsp_refused"], "nq_dropped": mc["nq_dropped"],
                     "rx_dropped": 0, "atu_fault": mc["atu_fault"], "atu_flush": 0}, c
        assert shared["irqs"][n] == Counter(mod.interrupts), f"node {n}: interrupts"
    seen = check_requests(ops, hosts)
    assert nexts is None or seen == nexts, f"next values {seen}, not {nexts}"
    return models


def notes_of(mem, vpid):
    """The notifications in ``vpid``'s queue (written entries have a non-zero first word)."""
    out = []
    for i in range(NQ_SIZE):
        raw = mem.b[NQ + vpid * PAGE_BYTES + 16 * i:NQ + vpid * PAGE_BYTES + 16 * i + 16]
        if any(raw):
            out.append(decode_notification(int.from_bytes(raw, "little")))
    return out


def test_flush_waits_for_operations():
    """Node 1's VPID 2 registers page X as NLA page P.  A put from P (requester), a get from P
    (responder) and a put into P (completer), 4 KiB each, start together; at the first write into X
    the GATE of P is zeroed and a flush request for P goes to node 1.  The flush response must echo
    the request, no host access may touch X after it, and some must have happened between request and
    response (the flush waited for them).  Then a put into P, a get from P and a put from P each end
    with ATU_FAULT, and nothing but X and the queues was ever written at node 1."""
    rng = seed_rng()
    gates = [Gates(), Gates()]
    pages = free_pages(rng)
    x = pages[1].pop()
    nla = gates[1].register(2, x)
    page_p = nla >> 12
    bits = {"req_notify": 1, "cpl_notify": 1, "rsp_notify": 0, "cache_line": 1, "irq": 0}
    ops = [(1, bits | {"vpid": 2, "command": RmaCommand.PUT.value},
            descriptor(command=RmaCommand.PUT, dst_node=0, dst_vpid=0, local=nla, remote=pages[0].pop(), units=64)),
           (0, bits | {"vpid": 0, "command": RmaCommand.GET.value},
            descriptor(command=RmaCommand.GET, dst_node=1, dst_vpid=2, local=pages[0].pop(), remote=nla, units=64)),
           (0, bits | {"vpid": 0, "command": RmaCommand.PUT.value},
            descriptor(command=RmaCommand.PUT, dst_node=1, dst_vpid=2, local=pages[0].pop(), remote=nla, units=64))]
    after = [(1, bits | {"vpid": 2, "command": RmaCommand.PUT.value},
              descriptor(command=RmaCommand.PUT, dst_node=0, dst_vpid=0, local=nla, remote=pages[0].pop(), units=2)),
             (0, bits | {"vpid": 0, "command": RmaCommand.GET.value},
              descriptor(command=RmaCommand.GET, dst_node=1, dst_vpid=2, local=pages[0].pop(), remote=nla, units=2)),
             (0, bits | {"vpid": 0, "command": RmaCommand.PUT.value},
              descriptor(command=RmaCommand.PUT, dst_node=1, dst_vpid=2, local=pages[0].pop(), remote=nla, units=2))]
    request = flush_request(2, page_p, 9)
    flush = {"sent": None}
    hosts_of = {}

    def hook(host, now):
        hosts_of[host.n] = host
        if host.n != 1:
            return
        # at the first write into X: the completer then keeps P's translation, and the put from P and the
        # get from P still read X
        if flush["sent"] is None and any(c == HtaxCmd.WRITE and x <= a < x + PAGE_BYTES
                                         for _, c, a, _ in host.accesses[-2:]):
            gates[1].set(page_p & ((1 << GATE_INDEX_BITS) - 1), 0)     # software zeroes the GATE first
            host.send_now(ats_packet(request))
            flush["sent"] = now
        if host.flush_responses and not flush.get("after"):
            flush["after"] = True
            for origin, f, d in after:
                hosts_of[origin].post(store(f, d))

    init = [bytearray(rng.randbytes(MEM)) for _ in range(2)]
    for m in init:                              # empty queues: a written entry is non-zero
        m[NQ:NQ + VPIDS * PAGE_BYTES] = bytes(VPIDS * PAGE_BYTES)
    mems, hosts, shared = simulate(rng, init, gates, ops, ready_p=0.7, reorder=True, hook=hook)
    h1 = hosts[1]
    assert flush["sent"] is not None and len(h1.flush_responses) == 1, h1.flush_responses
    t_rsp, word = h1.flush_responses[0]
    assert word == (request & ~3) | AtsCmd.FLUSH_RESPONSE.value
    on_x = [t for t, _, a, _ in h1.accesses if x <= a < x + PAGE_BYTES]
    assert max(on_x) < t_rsp, "a host access to the flushed page after the flush response"
    assert any(flush["sent"] < t < t_rsp for t in on_x), "the flush did not wait for the operations"
    for _, cmd, a, _ in h1.accesses:
        if cmd == HtaxCmd.WRITE:
            assert x <= a < x + PAGE_BYTES or NQ <= a < NQ + VPIDS * PAGE_BYTES or LOCKS <= a, hex(a)
    c1 = shared["counts"][1]
    assert c1["atu_flush"] == 1 and c1["atu_fault"] >= 3, c1
    # every operation ended with its notification; the three after the flush with ATU_FAULT
    n1, n0 = notes_of(mems[1], 2), notes_of(mems[0], 0)
    put, get, req, cpl = RmaCommand.PUT.value, RmaCommand.GET.value, RmaNotifyClass.REQUESTER.value, \
        RmaNotifyClass.COMPLETER.value
    fault = RmaError.ATU_FAULT.value
    for notes, cls, cmd, late in ((n1, req, put, fault), (n1, cpl, put, fault), (n0, cpl, get, fault),
                                  (n0, req, put, 0)):
        mine = {n["size_m1"]: n["error"] for n in notes if (n["cls"], n["command"]) == (cls, cmd)}
        assert sorted(mine) == [1, 63] and mine[1] == late, (cls, cmd, mine)
