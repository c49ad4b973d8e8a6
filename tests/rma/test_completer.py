"""The RMA completer with the notifier behind the transmit arbiter (Amaranth simulator) against
:class:`sim.rma_model.RmaNodeModel`: the packets two model nodes exchange for random puts, immediate
puts, notification puts, gets and locks -- including disabled VPIDs, full queues and
malformed packets -- go into the completer of node 1 with random gaps; the HTAX writes it makes, under
random backpressure, must be the model's memory writes in order, and its counters the model's.  A
second test interleaves the packet trains of puts and gets from two source nodes, as the network
may deliver them (in order per source and class only)."""

import os
import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxLinkSignature, HtaxVC
from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.rma.completer import RmaCompleter
from rtl.rma.formats import PAGE_BYTES, RmaCommand, RmaNetFields
from rtl.rma.notifier import RmaNotifier
from rtl.rma.txarb import RmaTxArbiter
from sim.amsim import run_sim, stream_put
from sim.htax_packet import HtaxPacket
from sim.layout import fields, pack, unpack
from sim.rma_model import RmaNodeModel, decode_address, descriptor, encode_address
from tests.rma.test_model import AMAP

VPIDS = 8
NQ = 0x1_0000
MEM = 0x10_0000


class FlatMemory:
    def __init__(self, rng):
        self.b = bytearray(rng.randbytes(MEM))
        self.writes = []

    def read(self, addr, size):
        return bytes(self.b[addr:addr + size])

    def write(self, addr, data):
        self.writes.append((addr, bytes(data)))
        self.b[addr:addr + len(data)] = data


class Harness(wiring.Component):
    net_rx: In(NetStreamSignature())
    tx: Out(HtaxLinkSignature())

    def __init__(self, model):
        self.model = model
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        q = self.model.queues
        m.submodules.cpl = cpl = RmaCompleter(vpids=VPIDS, htax_port=2, host_port=0)
        m.submodules.nt = nt = RmaNotifier(vpids=VPIDS, htax_port=2, host_port=0)
        m.submodules.arb = arb = RmaTxArbiter(sources=2)
        for name, init in (("base", [x.base >> 4 for x in q]), ("rp", [x.rp for x in q])):
            m.submodules[name] = mem = Memory(shape=48 if name == "base" else 32, depth=VPIDS, init=init)
            port = mem.read_port()
            m.d.comb += [port.addr.eq(nt.vpid), getattr(nt, name).eq(port.data)]
        wiring.connect(m, wiring.flipped(self.net_rx), cpl.net_rx)
        wiring.connect(m, cpl.notes, nt.notes)
        wiring.connect(m, cpl.tx, arb.i[0])
        wiring.connect(m, nt.tx, arb.i[1])
        wiring.connect(m, arb.tx, wiring.flipped(self.tx))
        m.d.comb += [cpl.enable.eq(sum(int(x.enable) << v for v, x in enumerate(q))),
                     cpl.phys.eq(sum(int(x.phys) << v for v, x in enumerate(q))), nt.size.eq(self.model.nq_size)]
        m.submodules.counts = counts = _Counters(cpl, nt)
        self.counts = counts
        return m


class _Counters(wiring.Component):
    put: Out(16)
    get: Out(16)
    dropped: Out(16)
    nq_dropped: Out(16)

    def __init__(self, cpl, nt):
        self._src = {"put": cpl.put_incr, "get": cpl.get_incr, "dropped": cpl.dropped_incr,
                     "nq_dropped": nt.dropped_incr}
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        for k, s in self._src.items():
            with m.If(s):
                m.d.sync += getattr(self, k).eq(getattr(self, k) + 1)
        return m


def nodes(rng, count=2):
    out = []
    for n in range(count):
        node = RmaNodeModel(node=n, memory=FlatMemory(rng), vpids=VPIDS, nq_size=6, lock_base=0x8_0000,
                            lock_size=VPIDS * PAGE_BYTES)
        for v, q in enumerate(node.queues):
            # all physical: translated NLAs are tested with an ATU model in test_rma.py
            q.enable, q.phys, q.base = v != 3, True, NQ + v * PAGE_BYTES
        node.queues[6].rp = 2           # a queue whose reader lags: it fills
        out.append(node)
    return out


def operations(rng, ns, count):
    """Run random operations on the models; return the packets for node 1's completer, in order."""
    captured = []
    # every run reaches each outcome: queue 6 (read pointer 2) fills, VPID 3 is disabled, a get completes
    plan = [None] * count + [(0, RmaCommand.NOTIFICATION_PUT, 6)] * 3 + [(0, RmaCommand.PUT, 3),
                                                                         (1, RmaCommand.GET, 0)]
    rng.shuffle(plan)
    for fixed in plan:
        # node 0 puts into node 1, node 1 gets from and locks at node 0: node 1's memory sees only its
        # completer's writes
        origin = rng.randrange(2)
        cmd = rng.choice([RmaCommand.GET, RmaCommand.LOCK] if origin else
                         [RmaCommand.PUT, RmaCommand.PUT, RmaCommand.IMMEDIATE_PUT, RmaCommand.NOTIFICATION_PUT])
        if fixed:
            origin, cmd = fixed[:2]
        cl = rng.random() < 0.3 and cmd in (RmaCommand.PUT, RmaCommand.GET)
        units = rng.randint(1, 64)
        nbytes = units * (64 if cl else 8)
        off = 8 * rng.randrange(0, (PAGE_BYTES - nbytes) // 8 + 1)
        local = rng.randrange(0x20, MEM // PAGE_BYTES) * PAGE_BYTES + off
        remote = rng.randrange(0x20, MEM // PAGE_BYTES) * PAGE_BYTES + off
        bits = [rng.randrange(2) for _ in range(3)]
        vpid = rng.choice([0, 1, 2, 3, 5, 6, 6, 7]) if rng.random() < 0.3 else rng.choice([0, 1, 2, 4])
        if fixed:
            vpid = fixed[2]
        a = decode_address(AMAP, encode_address(AMAP, vpid=rng.choice([0, 1, 2]), command=cmd, req_notify=bits[0],
                                                cpl_notify=bits[1], rsp_notify=bits[2], cache_line=cl,
                                                irq=rng.randrange(2)))
        d = descriptor(command=cmd, dst_node=1 - origin, dst_vpid=vpid, local=local, remote=remote, units=units,
                       payload=rng.getrandbits(64), lock=rng.randrange(4), compare=rng.getrandbits(32),
                       add=rng.getrandbits(32))
        pending = ns[origin].post(a["vpid"], a, d)
        while pending:
            w = pending.pop(0)
            h = unpack(NetHeader, w[0], fields(NetHeader))
            if h["dst_node"] == 1 and h["unit"] == NetUnit.RMA_COMPLETER.value:
                captured.append(w)
            pending += ns[h["dst_node"]].receive(w)
    return captured


def malformed(rng):
    """Packets the completer must drop whole: unknown command, wrong unit, a put with two command words
    (its first packet carries one), a notification put with one or none (it carries two), a put packet
    without command words from a source with no train, a write across a line, a payload announced but
    missing."""
    spec = pack(RmaNetFields, {"command": 6, "dst_vpid": 1, "last": 1})
    good = pack(RmaNetFields, {"command": RmaCommand.PUT, "dst_vpid": 1, "last": 1})
    note = pack(RmaNetFields, {"command": RmaCommand.NOTIFICATION_PUT, "dst_vpid": 1, "last": 1})

    def hdr(**kw):
        return pack(NetHeader, {"dst_node": 1, "unit": NetUnit.RMA_COMPLETER, "command_words": 1,
                                "payload_words": 1, "specific": good} | kw)
    return [
        [hdr(specific=spec, command_words=2), 0, 0, 5],
        [hdr(unit=NetUnit.RMA_RESPONDER), 0x1000, 5],
        [hdr(command_words=2), 0x1000, 0, 5],
        [hdr(specific=note, payload_words=0), 0],
        [hdr(command_words=0, src_node=2), 5],                  # a train's next packet, no train from node 2
        [hdr(command_words=0, src_node=64), 5],                 # ... from a node beyond the table
        [hdr(specific=note, command_words=0, payload_words=0)],  # no command words on a notification put
        [hdr(payload_words=2), 0x2007 | 7 << 41, 5, 6],        # words 7 and 8 of a line
        [hdr(payload_words=0), 0x3000, 5],                      # payload not announced
        [hdr(), 0x3000],                                        # payload announced, not sent
    ]


@pytest.mark.parametrize("ready_p", [1.0, 0.4])
def test_completer_random(ready_p):
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    ns = nodes(rng)
    b = ns[1]
    start_writes = len(b.memory.writes)
    packets = operations(rng, ns, 60)
    bad = malformed(rng)
    for p in bad:
        packets.insert(rng.randrange(len(packets)), p)
    run_completer(rng, b, packets, b.memory.writes[start_writes:], len(bad), ready_p)
    assert b.counters["cpl_dropped"] > 0 and b.counters["nq_dropped"] > 0 and b.counters["cpl_get"] > 0


def interleaved(rng, ns, count):
    """Random puts from nodes 0 and 2 into node 1 and gets of node 1 from them, their packets for node
    1's completer merged at random, in order per (source, class) only; node 1's model takes them in
    that order.  Returns the merged packets."""
    streams = {}
    for _ in range(count):
        src, cmd = rng.choice([0, 2]), rng.choice([RmaCommand.PUT, RmaCommand.GET])
        cl = rng.random() < 0.5
        units = rng.randint(1, 64 if not cl else 16)
        nbytes = units * (64 if cl else 8)
        off = 8 * rng.randrange(0, (PAGE_BYTES - nbytes) // 8 + 1)
        local = rng.randrange(0x20, MEM // PAGE_BYTES) * PAGE_BYTES + off
        remote = rng.randrange(0x20, MEM // PAGE_BYTES) * PAGE_BYTES + off
        origin = src if cmd == RmaCommand.PUT else 1
        a = decode_address(AMAP, encode_address(AMAP, vpid=0, command=cmd, cpl_notify=rng.randrange(2),
                                                cache_line=cl))
        d = descriptor(command=cmd, dst_node=1 if origin == src else src, dst_vpid=rng.choice([0, 1, 2]),
                       local=local, remote=remote, units=units)
        pkts = ns[origin].post(a["vpid"], a, d)
        if cmd == RmaCommand.GET:
            pkts = [r for w in pkts for r in ns[src].receive(w)]
        streams.setdefault((src, cmd), []).extend(pkts)
    order = [k for k, v in streams.items() for _ in v]
    rng.shuffle(order)
    merged = [streams[k].pop(0) for k in order]
    for w in merged:
        assert ns[1].receive(w) == []
    return merged


@pytest.mark.parametrize("ready_p", [1.0, 0.4])
def test_completer_interleaved_trains(ready_p):
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    ns = nodes(rng, 3)
    b = ns[1]
    start_writes = len(b.memory.writes)
    packets = interleaved(rng, ns, 24)
    assert sum(unpack(NetHeader, p[0], ("command_words",))["command_words"] == 0 for p in packets) >= 10
    run_completer(rng, b, packets, b.memory.writes[start_writes:], 0, ready_p)
    assert b.counters["cpl_get"] > 0 and b.counters["cpl_put"] > 0


def run_completer(rng, b, packets, expect, bad, ready_p):
    """Feed ``packets`` to a completer configured as model ``b``; its HTAX writes must be ``expect`` and
    its counters ``b``'s (with ``bad`` more drops)."""
    dut = Harness(b)
    got = []
    fed = []                                # set when the producer has offered its last beat

    async def producer(ctx):
        for p in packets:
            for i, w in enumerate(p):
                cw = unpack(NetHeader, p[0], ("command_words",))["command_words"]
                kind = NetBeatKind.HEADER if i == 0 else NetBeatKind.COMMAND if i <= cw else NetBeatKind.PAYLOAD
                await stream_put(ctx, dut.net_rx, {"data": w, "kind": kind, "first": i == 0,
                                                   "last": i == len(p) - 1}, rng=rng, idle=0.2)
        fed.append(True)

    async def consumer(ctx):
        pkt = None
        idle = 0
        # dropped packets write nothing: wait for the last packet, not only the last write
        while not fed or len(got) < len(expect) or idle < 300:
            ready = 0xF if rng.random() < ready_p else 0
            ctx.set(dut.tx.ready, ready)
            _, _, valid, beat = await ctx.tick().sample(dut.tx.valid, dut.tx.payload)
            idle = 0 if valid else idle + 1
            if not (valid and ready):
                continue
            if beat.first:
                hp = HtaxPacket.from_header_beat(beat.as_value().value)
                assert pkt is None and hp.malformed_reason() is None, hp.malformed_reason()
                assert (hp.cmd, hp.src, hp.dst, hp.vc) == (HtaxCmd.WRITE, 2, 0, HtaxVC.POSTED)
                pkt = (hp.addr, hp.length, [])
            else:
                pkt[2].append(int(beat.word.data))
                if beat.last:
                    assert len(pkt[2]) == pkt[1]
                    got.append((pkt[0], b"".join(x.to_bytes(8, "little") for x in pkt[2])))
                    pkt = None
        counts = {k: ctx.get(getattr(dut.counts, k)) for k in ("put", "get", "dropped", "nq_dropped")}
        assert counts == {"put": b.counters["cpl_put"], "get": b.counters["cpl_get"],
                          "dropped": b.counters["cpl_dropped"] + bad,
                          "nq_dropped": b.counters["nq_dropped"]}, counts

    run_sim(dut, producer, consumer)
    assert got == expect
