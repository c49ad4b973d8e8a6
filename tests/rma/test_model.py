"""The RMA reference model (:mod:`sim.rma_model`) against the operations' plain meaning: two nodes on
the loopback network, random puts and gets compared byte for byte with a copy made in Python, every
table 7-2 modifier combination against the notifications it must write, FCAA semantics, and each bad
input's defined outcome."""

import itertools
import os
import random

import pytest

from rtl.common.addrmap import AddressMap
from rtl.config import load
from rtl.rma.formats import PAGE_BYTES, RmaCommand, RmaError, RmaNotifyClass
from sim.atu_model import AtuModel, gate_word
from sim.rma_model import (
    RmaNetworkModel,
    RmaNodeModel,
    decode_address,
    decode_notification,
    descriptor,
    encode_address,
)

AMAP = AddressMap.from_config(load())
NQ_BASE = 0x1_0000          # notification queues: 4 KiB per VPID
LOCKS = 0x8_0000
MEM = 0x10_0000


class Memory:
    """Flat memory that logs every write."""

    def __init__(self, rng):
        self.b = bytearray(rng.randbytes(MEM))
        self.writes = []

    def read(self, addr, size):
        return bytes(self.b[addr:addr + size])

    def write(self, addr, data):
        assert addr + len(data) <= MEM
        self.writes.append((addr, len(data)))
        self.b[addr:addr + len(data)] = data


def rng_from_env():
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    return random.Random(seed)


def system(rng, *, nq_size=16, vpids=8):
    nodes = []
    for n in range(2):
        node = RmaNodeModel(node=n, memory=Memory(rng), vpids=vpids, nq_size=nq_size, lock_base=LOCKS,
                            lock_size=vpids * PAGE_BYTES)
        for v, q in enumerate(node.queues):
            q.enable = q.phys = True
            q.base = NQ_BASE + v * PAGE_BYTES
        nodes.append(node)
    return nodes, RmaNetworkModel(nodes)


def notifications(node, vpid):
    """The entries written since the last call (advances the software read pointer)."""
    q, out = node.queues[vpid], []
    while q.rp != q.wp:
        raw = int.from_bytes(node.memory.read(q.base + 16 * q.rp, 16), "little")
        out.append(decode_notification(raw))
        q.rp = (q.rp + 1) % node.nq_size
    return out


def post(net, node, vpid, command, bits=(0, 0, 0), cache_line=0, irq=0, **desc):
    req, cpl, rsp = bits
    addr = encode_address(AMAP, vpid=vpid, command=command, req_notify=req, cpl_notify=cpl, rsp_notify=rsp,
                          cache_line=cache_line, irq=irq)
    a = decode_address(AMAP, addr)
    assert (a["vpid"], a["command"], a["irq"]) == (vpid, int(getattr(command, "value", command)), irq)
    net.post(node, vpid, a, descriptor(command=command, **desc))


def random_range(rng, cache_line):
    unit = 64 if cache_line else 8
    units = rng.randint(1, 64)
    nbytes = units * unit
    page = rng.randrange(0x20, MEM // PAGE_BYTES)
    off = 8 * rng.randrange(0, (PAGE_BYTES - nbytes) // 8 + 1)
    return units, nbytes, page * PAGE_BYTES + off


def test_random_put_get():
    rng = rng_from_env()
    (a, b), net = system(rng, nq_size=256)
    for _ in range(300):
        get = rng.random() < 0.5
        cl = rng.random() < 0.3
        units, nbytes, local = random_range(rng, cl)
        remote = rng.randrange(0x20, MEM // PAGE_BYTES) * PAGE_BYTES + local % PAGE_BYTES
        src, dst = (b, a) if get else (a, b)
        src_addr, dst_addr = (remote, local) if get else (local, remote)
        expect = src.memory.read(src_addr, nbytes)
        sv, dv = rng.randrange(8), rng.randrange(8)
        bits = (0, 1, 0) if get else (1, 1, 0)
        post(net, 0, sv, RmaCommand.GET if get else RmaCommand.PUT, bits, cl, dst_node=1, dst_vpid=dv,
             local=local, remote=remote, units=units)
        assert dst.memory.read(dst_addr, nbytes) == expect
        na, nb = notifications(a, sv), notifications(b, dv)
        if get:
            assert nb == [] and [(n["cls"], n["value"], n["size_m1"], n["error"]) for n in na] == [
                (RmaNotifyClass.COMPLETER.value, local, units - 1, 0)]
        else:
            assert [(n["cls"], n["value"]) for n in na] == [(RmaNotifyClass.REQUESTER.value, local)]
            assert [(n["cls"], n["value"], n["peer_node"], n["peer_vpid"]) for n in nb] == [
                (RmaNotifyClass.COMPLETER.value, remote, 0, sv)]


EXPECTED = {    # command -> bits -> classes written at (origin, target); table 7-2, ignored bits ignored
    RmaCommand.PUT: lambda r, c, s: ([RmaNotifyClass.REQUESTER] * r, [RmaNotifyClass.COMPLETER] * c),
    RmaCommand.GET: lambda r, c, s: ([RmaNotifyClass.COMPLETER] * c, [RmaNotifyClass.RESPONDER] * s),
    RmaCommand.LOCK: lambda r, c, s: ([RmaNotifyClass.COMPLETER], [RmaNotifyClass.RESPONDER] * s),
    RmaCommand.IMMEDIATE_PUT: lambda r, c, s: ([], [RmaNotifyClass.COMPLETER] * c),
    RmaCommand.NOTIFICATION_PUT: lambda r, c, s: ([], [RmaNotifyClass.COMPLETER]),
}


@pytest.mark.parametrize("command", list(EXPECTED), ids=lambda c: c.name)
def test_table_7_2(command):
    rng = random.Random(1)
    (a, b), net = system(rng)
    for bits in itertools.product((0, 1), repeat=3):
        post(net, 0, 2, command, bits, dst_node=1, dst_vpid=5, local=0x4_0000, remote=0x5_0000, units=2,
             payload=0x1234_5678_9ABC_DEF0, lock=3, compare=0x7FFF_FFFF, add=1)
        origin, target = EXPECTED[command](*bits)
        got_o, got_t = notifications(a, 2), notifications(b, 5)
        assert [n["cls"] for n in got_o] == [c.value for c in origin], bits
        assert [n["cls"] for n in got_t] == [c.value for c in target], bits
        assert all(n["command"] == command.value and n["error"] == 0 for n in got_o + got_t)
    if command == RmaCommand.NOTIFICATION_PUT:
        assert got_t[0]["value"] == 0x1234_5678_9ABC_DEF0
    if command == RmaCommand.IMMEDIATE_PUT:
        assert b.memory.read(0x5_0000, 8) == (0x1234_5678_9ABC_DEF0).to_bytes(8, "little")


def test_fcaa_lock_sequences():
    """Tables 7-3/7-4 (MPI lock) and 7-5/7-6 (post/start/complete/wait) through FCAA, and exact sums."""
    rng = random.Random(2)
    (a, b), net = system(rng)
    n = 4
    b.memory.write(LOCKS + PAGE_BYTES * 1 + 4 * 7, (0).to_bytes(4, "little"))

    def lock(compare, add):
        post(net, 0, 3, RmaCommand.LOCK, (0, 1, 0), dst_node=1, dst_vpid=1, lock=7, compare=compare, add=add)
        (note,) = notifications(a, 3)
        return note["lock"]

    assert lock(0, n + 1) == (n + 1, 1)                 # exclusive
    assert lock(n, 1) == (n + 1, 0)                     # shared fails while exclusive
    assert lock(0x7FFF_FFFF, -(n + 1)) == (0, 1)        # unlock exclusive
    assert lock(n, 1) == (1, 1) and lock(n, 1) == (2, 1)
    assert lock(0, n + 1) == (2, 0)                     # exclusive fails while shared
    assert lock(0x7FFF_FFFF, -1) == (1, 1)
    total = 1
    for _ in range(50):
        add = rng.randrange(100)
        total += add
        assert lock(0x7FFF_FFFF, add) == (total, 1)    # fetch-and-add
    assert b.memory.read(LOCKS + PAGE_BYTES + 28, 4) == total.to_bytes(4, "little")


def test_bad_input():
    rng = random.Random(3)
    (a, b), net = system(rng, nq_size=4)
    cases = [
        (RmaCommand.PUT, dict(local=0x4_0FF8, remote=0x5_0FF8, units=2), RmaError.PAGE_CROSSING),
        (RmaCommand.GET, dict(local=0x4_0000, remote=0x5_0FC0, units=2, cache_line=1), RmaError.PAGE_CROSSING),
        (RmaCommand.PUT, dict(local=0x4_0008, remote=0x5_0010, units=1), RmaError.MISALIGNED),
        (6, dict(), RmaError.UNKNOWN_COMMAND),
    ]
    writes = len(b.memory.writes)
    for cmd, kw, err in cases:
        post(net, 0, 1, cmd, (0, 0, 0), dst_node=1, dst_vpid=1, **kw)
        (note,) = notifications(a, 1)       # an error notification even with no modifier bit set
        assert (note["cls"], note["error"]) == (RmaNotifyClass.REQUESTER.value, err.value)
    assert len(b.memory.writes) == writes and a.counters["req_errors"] == 4
    # a VPID without physical mode and no ATU to translate its NLA: ATU fault at the requester
    a.queues[6].phys = False
    post(net, 0, 6, RmaCommand.PUT, dst_node=1, dst_vpid=1, local=0x4_0000, remote=0x5_0000)
    assert notifications(a, 6)[0]["error"] == RmaError.ATU_FAULT.value
    # disabled completer: put dropped and counted; get answered with an error notification
    b.queues[2].enable = False
    post(net, 0, 1, RmaCommand.PUT, (1, 1, 0), dst_node=1, dst_vpid=2, local=0x4_0000, remote=0x5_0000)
    assert len(b.memory.writes) == writes and b.counters["cpl_dropped"] == 1
    assert [n["cls"] for n in notifications(a, 1)] == [RmaNotifyClass.REQUESTER.value]
    post(net, 0, 1, RmaCommand.GET, dst_node=1, dst_vpid=2, local=0x4_0000, remote=0x5_0000)
    (note,) = notifications(a, 1)
    assert (note["cls"], note["error"]) == (RmaNotifyClass.COMPLETER.value, RmaError.DISABLED.value)
    # lock outside the region
    for lock in (1024, 1 << 40):
        post(net, 0, 1, RmaCommand.LOCK, dst_node=1, dst_vpid=1, lock=lock, compare=0, add=1)
        (note,) = notifications(a, 1)
        assert (note["cls"], note["error"]) == (RmaNotifyClass.COMPLETER.value, RmaError.LOCK_RANGE.value)
    b.lock_size = PAGE_BYTES        # VPID 1's page lies beyond a one-page region
    post(net, 0, 1, RmaCommand.LOCK, dst_node=1, dst_vpid=1, lock=0, compare=0, add=1)
    assert notifications(a, 1)[0]["error"] == RmaError.LOCK_RANGE.value
    assert len(b.memory.writes) == writes
    # a full queue drops and counts, and never blocks the other VPIDs
    for i in range(5):
        post(net, 0, 4, RmaCommand.NOTIFICATION_PUT, dst_node=1, dst_vpid=3, payload=i)
    assert [n["value"] for n in notifications(b, 3)] == [0, 1, 2] and b.counters["nq_dropped"] == 2
    post(net, 0, 4, RmaCommand.NOTIFICATION_PUT, dst_node=1, dst_vpid=4, payload=9)
    assert [n["value"] for n in notifications(b, 4)] == [9]


def test_interrupt_bit():
    rng = random.Random(4)
    (a, b), net = system(rng)
    post(net, 0, 1, RmaCommand.PUT, (1, 1, 0), irq=1, dst_node=1, dst_vpid=2, local=0x4_0000, remote=0x5_0000)
    post(net, 0, 1, RmaCommand.PUT, (1, 1, 0), dst_node=1, dst_vpid=2, local=0x4_0000, remote=0x5_0000)
    assert (a.interrupts, b.interrupts) == ([1], [2])


def test_translated_put_get_and_faults():
    """A VPID without physical mode: NLAs translated page by page through GATE tables
    (:class:`sim.atu_model.AtuModel`); data lands in the mapped pages, and each fault has its outcome."""
    rng = rng_from_env()
    (a, b), net = system(rng)
    gates = [{}, {}]
    for node, g in zip((a, b), gates, strict=True):
        node.queues[2].phys = False
        atu = AtuModel(gat_entries=2, vpids=8, read64=lambda addr, g=g: g.get(addr, 0))
        atu.gat_base[1] = 0x4000_0000
        node.translate = atu.translate

    def nla(g, index, phys, vpid=2, **perm):
        g[0x4000_0000 + 8 * index] = gate_word(ppn=phys >> 12, vpid=vpid, **perm)
        return (1 << 18 | index) << 12 | phys % PAGE_BYTES
    src, dst = 0x4_0000 + 0x140, 0x5_0000 + 0x140
    put = dict(dst_node=1, dst_vpid=2, local=nla(gates[0], 1, src), remote=nla(gates[1], 1, dst), units=20)
    post(net, 0, 2, RmaCommand.PUT, (1, 1, 0), **put)
    assert b.memory.b[dst:dst + 160] == a.memory.b[src:src + 160]
    assert [n["error"] for n in notifications(a, 2) + notifications(b, 2)] == [0, 0]
    get = dict(dst_node=1, dst_vpid=2, local=nla(gates[0], 2, 0x6_0000), remote=nla(gates[1], 2, 0x7_0000), units=3)
    post(net, 0, 2, RmaCommand.GET, (0, 1, 0), cache_line=1, **get)
    assert a.memory.b[0x6_0000:0x6_00C0] == b.memory.b[0x7_0000:0x7_00C0]
    assert [(n["cls"], n["error"]) for n in notifications(a, 2)] == [(RmaNotifyClass.COMPLETER.value, 0)]
    writes = (len(a.memory.writes), len(b.memory.writes))
    fault = RmaError.ATU_FAULT.value
    # requester: unregistered local NLA; completer: GATE of another VPID; responder: no read permission
    post(net, 0, 2, RmaCommand.PUT, (0, 0, 0), **(put | {"local": (1 << 18 | 9) << 12}))
    assert [(n["cls"], n["error"]) for n in notifications(a, 2)] == [(RmaNotifyClass.REQUESTER.value, fault)]
    post(net, 0, 2, RmaCommand.PUT, (0, 1, 0), **(put | {"remote": nla(gates[1], 3, dst, vpid=4)}))
    assert [(n["cls"], n["error"]) for n in notifications(b, 2)] == [(RmaNotifyClass.COMPLETER.value, fault)]
    post(net, 0, 2, RmaCommand.GET, **(get | {"remote": nla(gates[1], 4, 0x7_0000, read=0)}))
    assert [(n["cls"], n["error"]) for n in notifications(a, 2)] == [(RmaNotifyClass.COMPLETER.value, fault)]
    assert (len(a.memory.writes), len(b.memory.writes)) == (writes[0] + 2, writes[1] + 1)    # notifications only
    # three packets of the put fault at the completer, one get at the responder
    assert (a.counters["atu_fault"], b.counters["atu_fault"], a.counters["req_errors"]) == (1, 4, 1)
