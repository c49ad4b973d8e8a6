"""Two RMA units cross-connected through network-stream loopback (Amaranth simulator), each with a
small host in the testbench: descriptors posted as HTAX writes, DMA reads answered after a random
latency (out of order with ``reorder``), writes applied with their byte enables, random backpressure.
Random puts, gets, immediate puts, notification puts and locks -- including bad descriptors, disabled
and non-physical VPIDs and out-of-range locks -- run concurrently on disjoint buffers; memories,
notification queues, interrupts and counters must equal :class:`sim.rma_model.RmaNetworkModel` run on
the same operations."""

import os
import random
from collections import Counter

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import Out

from rtl.common.htax import HtaxCmd, HtaxLinkSignature, HtaxStatus
from rtl.rma.formats import PAGE_BYTES, RmaCommand, RmaPageOffset
from rtl.rma.rma import COUNTERS, Rma
from sim.htax_packet import HtaxPacket
from sim.layout import pack
from sim.rma_model import NotificationQueue, RmaNetworkModel, RmaNodeModel, descriptor
from tests.atu.streams import run_sim

VPIDS = 8
BASE = 0x8000_0100_0000
PORT, HOST = 2, 0
NQ, LOCKS, MEM = 0x1_0000, 0x8_0000, 0x10_0000
NQ_SIZE = 64
DISABLED, VIRTUAL = 3, 5        # VPIDs whose completer is off / that have no physical mode
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
        for i, x in enumerate(data):
            if mask is None or mask[i]:
                self.b[addr + i] = x


class Node(wiring.Component):
    htax_tx: Out(HtaxLinkSignature())           # the unit's tx, seen from the host: host reads it
    htax_rx: Out(HtaxLinkSignature()).flip()
    counts: Out(16).array(len(COUNTERS))
    irqs: Out(VPIDS)

    def __init__(self, n, queues):
        self.n, self.queues = n, queues
        self.rma = Rma(vpids=VPIDS, window_base=BASE, htax_port=PORT, host_port=HOST)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.rma = rma = self.rma
        r = rma.regs
        wiring.connect(m, rma.htax.tx, wiring.flipped(self.htax_tx))
        wiring.connect(m, wiring.flipped(self.htax_rx), rma.htax.rx)
        for name, width, init in (("nq_base", 48, [q.base >> 4 for q in self.queues]),
                                  ("nq_rp", 32, [q.rp for q in self.queues])):
            m.submodules[name] = mem = Memory(shape=width, depth=VPIDS, init=init)
            port = mem.read_port()
            m.d.comb += [port.addr.eq(r.nq_addr), getattr(r, name).eq(port.data)]
        m.d.comb += [r.node_id.eq(self.n), r.nq_size.eq(NQ_SIZE), r.lock_base.eq(LOCKS >> 3),
                     r.lock_size.eq(VPIDS * PAGE_BYTES), self.irqs.eq(r.irq),
                     r.enable.eq(sum(int(q.enable) << v for v, q in enumerate(self.queues))),
                     r.phys.eq(sum(int(q.phys) << v for v, q in enumerate(self.queues)))]
        for k, c in enumerate(COUNTERS):
            with m.If(getattr(r, f"{c}_incr")):
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
    return [NotificationQueue(enable=v != DISABLED, phys=v != VIRTUAL, base=NQ + v * PAGE_BYTES)
            for v in range(VPIDS)]


def random_ops(rng, count):
    # buffers never overlap the notification queues, the lock region or the poisoned page
    pages = [[p for p in range(0x20, MEM // PAGE_BYTES) if not LOCKS <= p * PAGE_BYTES < LOCKS + VPIDS * PAGE_BYTES]
             for _ in range(2)]
    for p in pages:
        rng.shuffle(p)
    ops = []
    for i in range(count):
        origin = rng.randrange(2)
        cmd = rng.choice([RmaCommand.PUT] * 3 + [RmaCommand.GET] * 3 + [RmaCommand.IMMEDIATE_PUT,
                         RmaCommand.NOTIFICATION_PUT, RmaCommand.LOCK, 7])
        cl = rng.random() < 0.3
        units = rng.randint(1, 64)
        nbytes = units * (64 if cl else 8)
        off = 8 * rng.randrange(0, (PAGE_BYTES - nbytes) // 8 + 1)
        local = pages[origin].pop() * PAGE_BYTES + off
        remote = pages[1 - origin].pop() * PAGE_BYTES + off
        r = rng.random()
        if r < 0.05:
            remote += 8                                 # misaligned (or crossing)
        elif r < 0.1 and nbytes < PAGE_BYTES:
            local = local - off + PAGE_BYTES - 8        # crossing
            remote = remote - off + PAGE_BYTES - 8
        vpid = rng.randrange(VPIDS) if rng.random() < 0.2 else rng.choice([0, 1, 2, 4])
        dvpid = rng.randrange(VPIDS) if rng.random() < 0.2 else rng.choice([0, 1, 6, 7])
        fields = {"command": int(getattr(cmd, "value", cmd)), "req_notify": rng.randrange(2),
                  "cpl_notify": rng.randrange(2), "rsp_notify": rng.randrange(2), "cache_line": int(cl),
                  "vpid": vpid, "irq": int(rng.random() < 0.2)}
        lock = i if rng.random() < 0.9 else rng.choice([1024, 2000])
        desc = descriptor(command=cmd, dst_node=1 - origin, dst_vpid=dvpid, local=local, remote=remote, units=units,
                          payload=rng.getrandbits(64), lock=lock, compare=rng.getrandbits(32), add=rng.getrandbits(32))
        ops.append((origin, fields, desc))
    # every run has each bad input at least once: unknown command, page crossing, a get from a disabled
    # VPID, a put to a VPID without physical mode, a lock beyond the region, a put, a get and a lock
    # whose reads fail
    bits = {"req_notify": 0, "cpl_notify": 1, "rsp_notify": 1, "cache_line": 0, "vpid": 1, "irq": 0}
    page = [pages[0].pop() * PAGE_BYTES, pages[1].pop() * PAGE_BYTES]
    good = [pages[0].pop() * PAGE_BYTES, pages[1].pop() * PAGE_BYTES]
    for cmd, kw in ((6, {}), (RmaCommand.PUT, {"local": page[0] + 4088, "remote": page[1] + 4088, "units": 2}),
                    (RmaCommand.GET, {"dst_vpid": DISABLED, "local": page[0], "remote": page[1]}),
                    (RmaCommand.PUT, {"dst_vpid": VIRTUAL, "local": page[0], "remote": page[1]}),
                    (RmaCommand.LOCK, {"lock": 1024}),
                    (RmaCommand.PUT, {"local": POISON[0] + 0x100, "remote": page[1] + 0x100, "units": 20}),
                    (RmaCommand.GET, {"local": page[0] + 0x40, "remote": POISON[0] + 0x40, "units": 9}),
                    (RmaCommand.LOCK, {"dst_vpid": 7, "lock": 5}),
                    # and a put and a get that succeed
                    (RmaCommand.PUT, {"local": good[0], "remote": good[1], "units": 5}),
                    (RmaCommand.GET, {"local": good[0] + 0x800, "remote": good[1] + 0x800, "units": 5})):
        desc = descriptor(command=cmd, dst_node=1, **({"dst_vpid": 0} | kw))
        ops.insert(rng.randrange(len(ops) + 1), (0, bits | {"command": int(getattr(cmd, "value", cmd))}, desc))
    return ops


def store(fields, desc):
    """The descriptor store: one posted HTAX WRITE of two words (fig. 7-6)."""
    off = pack(RmaPageOffset, {k: fields[k] for k in ("command", "req_notify", "cpl_notify", "rsp_notify",
                                                      "cache_line")})
    addr = BASE + off + (fields["vpid"] << 12) + (fields["irq"] << 15)
    return HtaxPacket(HtaxCmd.WRITE, src=HOST, dst=PORT, addr=addr, length=2,
                      data=[desc & (1 << 64) - 1, desc >> 64])


@pytest.mark.parametrize("ready_p, reorder", [(1.0, False), (0.5, True)])
def test_two_nodes_random(ready_p, reorder):
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    models = run_system(rng, random_ops(rng, int(os.environ.get("RMA_OPS", 12))), ready_p=ready_p,
                        reorder=reorder)
    total = Counter()
    for mod in models:
        total.update(mod.counters)
    assert min(total[k] for k in ("req_errors", "cpl_dropped", "cpl_put", "cpl_get", "rsp_get")) > 0, total


@pytest.mark.soak
def test_two_nodes_soak():
    """Many more operations, out-of-order reads and backpressure (``make soak``)."""
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    run_system(rng, random_ops(rng, 200), ready_p=0.6, reorder=True, watchdog=400_000)


def run_system(rng, ops, *, ready_p, reorder, watchdog=None):
    watchdog = watchdog or WATCHDOG
    init = [rng.randbytes(MEM) for _ in range(2)]
    mems = [FlatMemory(x) for x in init]
    models = [RmaNodeModel(node=n, memory=FlatMemory(init[n]), vpids=VPIDS, nq_size=NQ_SIZE, lock_base=LOCKS,
                           lock_size=VPIDS * PAGE_BYTES, queues=queues_for()) for n in range(2)]
    net = RmaNetworkModel(models)
    for origin, fields, desc in ops:
        net.post(origin, fields["vpid"], fields, desc)

    dut = Loop([queues_for(), queues_for()])
    irqs = [Counter(), Counter()]
    state = {"idle": 0, "done": [False, False], "counts": [None, None]}

    def host(n):
        node = dut.nodes[n]
        posted = [store(f, d).beats() for o, f, d in ops if o == n]
        scheduled = []          # (due, seq, beats) of read responses

        async def run(ctx):
            now, seq, cur, pkt = 0, 0, [], []
            while True:
                now += 1
                assert now < watchdog, "no end: the units hang"
                # between packets: a due response first (responses pass posted writes); a descriptor
                # only when the unit is ready for posted beats (a raised valid must hold)
                if not cur:
                    due = [s for s in scheduled if s[0] <= now]
                    if due:
                        pick = rng.choice(due) if reorder else min(due)
                        scheduled.remove(pick)
                        cur = list(pick[2])
                    elif posted and rng.random() < 0.8 and ctx.get(node.htax_rx.ready) & 1:
                        cur = posted.pop(0)
                ready = 0xF if rng.random() < ready_p else 0
                ctx.set(node.htax_tx.ready, ready)
                ctx.set(node.htax_rx.valid, bool(cur))
                if cur:
                    ctx.set(node.htax_rx.payload.as_value(), cur[0])
                _, _, tv, tb, rr, irq = await ctx.tick().sample(node.htax_tx.valid, node.htax_tx.payload,
                                                                  node.htax_rx.ready, node.irqs)
                for v in range(VPIDS):
                    irqs[n][v] += (irq >> v) & 1
                busy = bool(cur) or bool(posted) or bool(scheduled) or bool(pkt)
                if cur and (rr >> ((cur[0] >> 92) & 3)) & 1:
                    cur.pop(0)
                if tv and ready:
                    pkt.append(tb.as_value().value)
                    if tb.last:
                        p = HtaxPacket.from_beats(pkt)
                        pkt = []
                        assert p.malformed_reason() is None, p.malformed_reason()
                        if p.cmd == HtaxCmd.READ:
                            raw = mems[n].read(p.addr, 8 * p.length)
                            if raw is None:
                                rsp = HtaxPacket(HtaxCmd.RESPONSE, src=HOST, dst=PORT, tag=p.tag, addr=p.addr,
                                                 status=HtaxStatus.TARGET_ERROR)
                            else:
                                words = [int.from_bytes(raw[8 * i:8 * i + 8], "little") for i in range(p.length)]
                                rsp = HtaxPacket(HtaxCmd.RESPONSE, src=HOST, dst=PORT, tag=p.tag, addr=p.addr,
                                                 length=p.length, status=HtaxStatus.OK, data=words)
                            seq += 1
                            due = now + rng.randint(4, 40)
                            if not reorder:         # in order: never before an earlier read's answer
                                due = max([due] + [x[0] for x in scheduled])
                            scheduled.append((due, seq, rsp.beats()))
                        else:
                            assert p.cmd == HtaxCmd.WRITE
                            buf = b"".join(d.to_bytes(8, "little") for d in p.data)
                            mask = [(p.byte_mask(i // 8) >> (i % 8)) & 1 for i in range(len(buf))]
                            mems[n].write(p.addr, buf, mask)
                    busy = True
                state["done"][n] = not busy
                if all(state["done"]):
                    state["idle"] += 1
                    if state["idle"] > 400:
                        state["counts"][n] = dict(zip(COUNTERS, (ctx.get(c) for c in node.counts), strict=True))
                        return
                else:
                    state["idle"] = 0
        return run

    run_sim(dut, host(0), host(1))
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
        c = state["counts"][n]
        assert c == {"req_put": mc["req_put"], "req_get": mc["req_get"], "req_error": mc["req_errors"],
                     "rsp_get": mc["rsp_get"], "rsp_refused": c["rsp_refused"], "rsp_dropped": 0,
                     "cpl_put": mc["cpl_put"], "cpl_get": mc["cpl_get"],
                     "cpl_dropped": mc["cpl_dropped"] - c["rsp_refused"], "nq_dropped": mc["nq_dropped"],
                     "rx_dropped": 0}, c
        assert irqs[n] == Counter(mod.interrupts), f"node {n}: interrupts"
    return models
