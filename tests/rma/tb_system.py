"""cocotb testbench: RMA in its system (:class:`sim.tops.rma.RmaSystem`: HTAX, register file, ATU and
RMA per node), one node sending to itself or two nodes cross-connected, each with a host model
(``sim/host.py``) and the drivers (``sim/driver/rma.py``, ``sim/driver/atu.py``).

Expected memories and notifications are computed here from the operations' definitions (ch. 7.5,
table 7-2, ``docs/rma.md``), not from the RTL: a put copies, a get copies back, an immediate put
writes its 8 bytes, every notification the table calls for arrives with its class, command, error,
start address and peer.  The host memory's ownership hook refuses any device write outside the
notification queues, the lock region and the pages registered to a VPID, and records every device write
in order: a completer notification must land after the last byte of the data it announces (ch. 7.5.3)."""

import random
from collections import Counter

import cocotb

from rtl.common.addrmap import AddressMap
from rtl.rma.formats import RmaCommand, RmaError
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.driver.rma import MAX_INT, RmaNode, RmaTimeout, mpi_lock, mpi_unlock, pscw
from sim.host import HostModel
from sim.htax_packet import beat_field
from sim.runner import tb_params, tb_seed
from sim.tops.configs import rma_config

CFG = rma_config()
AMAP = AddressMap.from_config(CFG)
RMA_PORT = CFG["rma"]["htax_port"]
REGS_PORT = CFG["regs"]["htax_port"]
PUT, GET, LOCK, IMM, NOTE = (RmaCommand.PUT.value, RmaCommand.GET.value, RmaCommand.LOCK.value,
                             RmaCommand.IMMEDIATE_PUT.value, RmaCommand.NOTIFICATION_PUT.value)


def route(addr):
    hit = AMAP.decode(addr)
    return RMA_PORT if hit and hit[0] == "rma" else REGS_PORT


def allowed(addr, size, owner):
    """The ownership hook: RMA writes only queues, the lock region and VPID memory."""
    return isinstance(owner, str) and owner.startswith(("rma_nq", "rma_locks", "vpid"))


class Node:
    def __init__(self, dut, n, seed, **host_kw):
        self.host = HostModel(dut, cfg=CFG, port=f"htax{n}", host_port=CFG["rma"]["host_port"], route=route,
                              seed=seed + n, **host_kw)
        self.writes = []                    # (addr, size, owner) of every device write, in arrival order
        self.host.memory.write_hook = self._record
        self.rma = RmaNode(self.host, CFG, node=n)

    def _record(self, addr, size, owner):
        self.writes.append((addr, size, owner))
        return allowed(addr, size, owner)

    def check_clean(self):
        assert not self.host.errors, self.host.errors[:5]
        assert not self.host.memory.violations, self.host.memory.violations[:5]


async def setup(dut, nodes=1, **host_kw):
    seed = tb_seed()
    ns = [Node(dut, n, seed, **host_kw) for n in range(nodes)]
    ns[0].host.start_clock()
    await ns[0].host.reset()
    for n in ns:
        await n.host.start()
        await n.rma.setup()
    return ns, random.Random(seed)


def note(cls, command, value, peer_node, peer_vpid, error=RmaError.NONE):
    return (cls.value, command, error.value, value, peer_node, peer_vpid)


def key(n):
    return (n["cls"], n["command"], n["error"], n["value"], n["peer_node"], n["peer_vpid"])


async def collect(ports, expected, timeout_cycles=40000, order=None):
    """Wait until every port has as many notifications as expected; compare them as multisets.
    ``order[port key]``, if given, gets each notification's key in queue order."""
    for pk, port in ports.items():
        want = Counter(expected.get(pk, []))
        got = Counter()
        for _ in range(sum(want.values())):
            try:
                k = key(await port.wait(timeout_cycles=timeout_cycles))
                got[k] += 1
                if order is not None:
                    order.setdefault(pk, []).append(k)
            except RmaTimeout:
                raise AssertionError(f"{pk}: timed out; missing {sorted((want - got).items())}, "
                                     f"unexpected {sorted((got - want).items())}") from None
        assert got == want, f"{pk}: notifications {sorted(got.items())} != expected {sorted(want.items())}"


def check_data_first(ns, announced, order):
    """Each completer notification in ``announced`` (node, vpid, phys, size, key) was written into its
    queue after every device write into the data it announces.  The i-th notification a port read is
    the i-th device write into its queue (the queue is written in order and read in order)."""
    for d, v, phys, size, k in announced:
        nq = [i for i, w in enumerate(ns[d].writes) if w[2] == f"rma_nq{v}"]
        seen = order[(d, v)]
        at = nq[len(seen) - 1 - seen[::-1].index(k)]    # the latest: slots are unique within a batch
        data = [i for i, (a, n, owner) in enumerate(ns[d].writes)
                if owner.startswith("vpid") and a < phys + size and phys < a + n]
        assert data, f"node {d}: no device write into {phys:#x}+{size}, announced by {k}"
        assert max(data) < at, (f"node {d}: notification {k} (write {at}) landed before data write "
                                f"{max(data)} into {phys:#x}+{size}")


def diagnose(dut, ns):
    """Print what each node's RMA blocks are waiting for (valid/ready/state), for a failed run."""
    for n in ns:
        rma = getattr(dut, f"rma{n.rma.node}", None)
        src = n.host.source
        print(f"node {n.rma.node}: host queued {src.queued()} {[(vc, len(b)) for vc, b, _ in src._queue]}, "
              f"current {src._cur and (src._cur[2], src._cur[1], len(src._cur[0]))}, ready {src._ready:04b}, "
              f"stats {n.host.stats}")
        try:
            beat = int(rma.rx.rx__payload.value)
        except AttributeError:
            print("  (inner signals not visible: replay with EXTOLL_PUBLIC=all, sim/runner.py PUBLIC)")
            continue
        print(f"  rma rx beat vc {beat_field(beat, 'vc')} first {beat_field(beat, 'first')} "
              f"last {beat_field(beat, 'last')} valid {int(rma.rx.rx__valid.value)}")
        for blk in rma:
            vals = {}
            for obj in blk if hasattr(blk, "__iter__") else ():
                name = obj._name
                if name.endswith(("valid", "ready", "fsm_state")) and len(name) < 40:
                    try:
                        vals[name] = int(obj.value)
                    except (ValueError, TypeError):
                        pass
            if vals:
                print(f"  {blk._name}: {vals}")


class Slots:
    """Disjoint ``size``-byte chunks of a port's registered memory, handed out round robin."""

    def __init__(self, region, size):
        self.region, self.size, self.next = region, size, 0

    def take(self):
        addr = self.region.nla + self.next * self.size
        self.next = (self.next + 1) % (self.region.size // self.size)
        return addr


def phys_of(port_region, addr):
    return port_region.phys + (addr - port_region.nla)


@cocotb.test()
async def random_ops(dut):
    """Random puts, gets, immediate and notification puts with random notification bits between every
    open VPID of two cross-connected nodes (or one node to itself): memories byte for byte,
    notifications per table 7-2, counters."""
    p = tb_params()
    ns, rng = await setup(dut, nodes=p.get("nodes", 2), tx_ready_probability=p.get("ready_p", 1.0))
    vpids = [0, 3, 17, 31]
    phys = set(p.get("phys", [0, 3]))              # these VPIDs use physical addresses, the others NLAs
    ports, regions, slots = {}, {}, {}
    for n in ns:
        for v in vpids:
            port = await n.rma.open(v, phys=v in phys)
            ports[(n.rma.node, v)] = port
            regions[(n.rma.node, v)] = r = await port.register(16 * 4096)
            slots[(n.rma.node, v)] = Slots(r, 1024)
            n.host.memory.write(r.phys, bytes(rng.randrange(256) for _ in range(r.size)))
    expected = {}
    writes = []                                     # (node, vpid, addr, bytes) the test expects
    announced, order = [], {}                       # completer notifications and their data; queue order
    counts = Counter()
    total_ops, batch = p.get("ops", 24), 32     # a batch never takes a slot twice (64 per region),
    for first in range(0, total_ops, batch):     # so no two operations in flight share memory
        for _ in range(min(batch, total_ops - first)):
                src = rng.choice(ns)
                dst = ns[(src.rma.node + 1) % len(ns)]
                s, d = src.rma.node, dst.rma.node
                sv, dv = rng.choice(vpids), rng.choice(vpids)
                sp = ports[(s, sv)]
                cmd = rng.choice([PUT, PUT, GET, GET, IMM, NOTE])
                bits = (rng.randrange(2), rng.randrange(2), rng.randrange(2))
                if cmd in (PUT, GET):
                    nbytes = rng.choice([8, 8 * rng.randint(1, 64), 64 * rng.randint(1, 16)])
                    if nbytes > 1024:
                        nbytes = 1024
                    step = 64 if nbytes > 512 else 8            # more than 64 quadwords: whole aligned lines
                    off = step * rng.randrange((1024 - nbytes) // step + 1)
                    local, remote = slots[(s, sv)].take() + off, slots[(d, dv)].take() + off
                    lr, rr = regions[(s, sv)], regions[(d, dv)]
                    if cmd == PUT:
                        data = src.host.memory.read(phys_of(lr, local), nbytes)
                        writes.append((d, phys_of(rr, remote), data))
                        await sp.put(d, dv, local, remote, nbytes, notify=bits)
                        counts["put"] += 1
                        if bits[0]:
                            expected.setdefault((s, sv), []).append(note(Cls.REQUESTER, PUT, local, d, dv))
                        if bits[1]:
                            expected.setdefault((d, dv), []).append(note(Cls.COMPLETER, PUT, remote, s, sv))
                            announced.append((d, dv, phys_of(rr, remote), nbytes, expected[(d, dv)][-1]))
                    else:
                        data = dst.host.memory.read(phys_of(rr, remote), nbytes)
                        writes.append((s, phys_of(lr, local), data))
                        await sp.get(d, dv, local, remote, nbytes, notify=bits)
                        counts["get"] += 1
                        if bits[1]:
                            expected.setdefault((s, sv), []).append(note(Cls.COMPLETER, GET, local, d, dv))
                            announced.append((s, sv, phys_of(lr, local), nbytes, expected[(s, sv)][-1]))
                        if bits[2]:
                            expected.setdefault((d, dv), []).append(note(Cls.RESPONDER, GET, remote, s, sv))
                elif cmd == IMM:
                    remote = slots[(d, dv)].take() + 8 * rng.randrange(128)
                    value = rng.getrandbits(64)
                    writes.append((d, phys_of(regions[(d, dv)], remote), value.to_bytes(8, "little")))
                    await sp.immediate_put(d, dv, remote, value, notify=bits[1])
                    counts["put"] += 1
                    if bits[1]:
                        expected.setdefault((d, dv), []).append(note(Cls.COMPLETER, IMM, remote, s, sv))
                        announced.append((d, dv, phys_of(regions[(d, dv)], remote), 8, expected[(d, dv)][-1]))
                else:
                    value = rng.getrandbits(64)
                    await sp.notification_put(d, dv, value)
                    expected.setdefault((d, dv), []).append(note(Cls.COMPLETER, NOTE, value, s, sv))
                if rng.random() < 0.3:
                    await src.host.cycles(rng.randrange(1, 60))
        try:
            await collect(ports, expected, order=order)
        except AssertionError:
            diagnose(dut, ns)
            raise
        for _ in range(200):                            # puts without a notification may still be landing
            if all(ns[n].host.memory.read(a, len(b)) == b for n, a, b in writes):
                break
            await ns[0].host.cycles(50)
        for n, a, b in writes:
            got = ns[n].host.memory.read(a, len(b))
            assert got == b, f"node {n} {a:#x}+{len(b)}: {got.hex()} != {b.hex()}"
        check_data_first(ns, announced, order)
        announced.clear()
        expected.clear()
        writes.clear()
    total = Counter()
    for n in ns:
        c = await n.rma.counters()
        assert all(c[k] == 0 for k in c if k.startswith(("errors", "drops"))), c
        total.update(c)
    assert total["requester_counters.put"] == counts["put"], total
    assert total["requester_counters.get"] == total["responder_counters.get"] == counts["get"], total
    assert total["completer_counters.get"] == counts["get"], total
    for n in ns:
        n.check_clean()


@cocotb.test()
async def lock_contention(dut):
    """Eight VPIDs on one node (which sends to itself) share one lock: MPI lock/unlock, shared and
    exclusive (tables 7-3, 7-4), keep the reader/writer invariant; fetch-and-add sums are exact; the
    post/start/complete/wait cycle of tables 7-5/7-6 orders a put."""
    p = tb_params()
    (node,), rng = await setup(dut, nodes=1)
    procs, target_vpid, lock = p.get("procs", 8), 0, 5
    ports = [await node.rma.open(v, phys=True) for v in range(procs)]
    word = node.rma.lock_word(target_vpid, lock)
    state = {"ex": 0, "sh": 0, "max_sh": 0}
    rounds = p.get("rounds", 3)

    async def worker(k):
        port, wrng = ports[k], random.Random(rng.getrandbits(32))
        for _ in range(rounds):
            exclusive = wrng.random() < 0.5
            await mpi_lock(port, 0, target_vpid, lock, procs=procs, exclusive=exclusive)
            if exclusive:
                assert state["ex"] == 0 and state["sh"] == 0, (k, state)
                state["ex"] += 1
            else:
                assert state["ex"] == 0, (k, state)
                state["sh"] += 1
                state["max_sh"] = max(state["max_sh"], state["sh"])
            await node.host.cycles(wrng.randrange(1, 40))
            state["ex" if exclusive else "sh"] -= 1          # leave before the unlock is sent
            await mpi_unlock(port, 0, target_vpid, lock, procs=procs, exclusive=exclusive)

    tasks = [cocotb.start_soon(worker(k)) for k in range(procs)]
    for t in tasks:
        await t
    assert node.host.memory.read(word, 4) == bytes(4), "lock word not back to unlocked"

    # fetch-and-add: compare MAX_INT always succeeds; the values returned are all distinct
    faa_lock, adds = 9, [rng.randint(1, 1000) for _ in range(procs)]
    seen = []

    async def faa(k):
        for _ in range(2):
            value, ok = await ports[k].lock(0, target_vpid, faa_lock, MAX_INT, adds[k])
            assert ok
            seen.append(value)

    tasks = [cocotb.start_soon(faa(k)) for k in range(procs)]
    for t in tasks:
        await t
    total = 2 * sum(adds)
    got = int.from_bytes(node.host.memory.read(node.rma.lock_word(target_vpid, faa_lock), 4), "little")
    assert got == total and max(seen) == total and len(set(seen)) == len(seen), (got, total, seen)

    # post/start/complete/wait: target VPID 0 exposes a window, origin VPID 1 puts into it
    pscw_lock = 11
    node.host.memory.write(node.rma.lock_word(0, pscw_lock), (3).to_bytes(4, "little"))   # idle
    tr = await ports[0].register(4096)
    org = await ports[1].register(4096)
    payload = bytes(rng.randrange(256) for _ in range(256))
    node.host.memory.write(org.phys, payload)

    async def origin():
        await pscw(ports[1], "start", 0, 0, pscw_lock)              # fails until the target posted
        await ports[1].put(0, 0, org.nla, tr.nla, 256, notify=(0, 1, 0))
        await pscw(ports[1], "complete", 0, 0, pscw_lock)

    task = cocotb.start_soon(origin())
    await node.host.cycles(300)                                     # start is being retried meanwhile
    assert int.from_bytes(node.host.memory.read(node.rma.lock_word(0, pscw_lock), 4), "little") == 3
    await pscw(ports[0], "post", 0, 0, pscw_lock)
    await pscw(ports[0], "wait", 0, 0, pscw_lock)                   # fails until the origin completed
    await task
    done = await ports[0].wait(lambda n: n["cls"] == Cls.COMPLETER.value and n["command"] == PUT)
    assert done["value"] == tr.nla and done["peer_vpid"] == 1
    assert node.host.memory.read(tr.phys, 256) == payload
    assert int.from_bytes(node.host.memory.read(node.rma.lock_word(0, pscw_lock), 4), "little") == 3
    node.check_clean()



@cocotb.test()
async def bad_input(dut):
    """Every refused operation through the driver, NLAs translated by the real ATU: each ends in its
    defined error notification and counter, nothing is written outside registered pages (the
    ownership hook and the freed pages of a deregistered region), and a full notification queue drops
    and counts."""
    ns, rng = await setup(dut, nodes=2)
    a, b = ns
    pa = await a.rma.open(0)                        # NLAs through the ATU
    pb = await b.rma.open(0)
    pb2 = await b.rma.open(2)
    la = await pa.register(2 * 4096)
    lb = await pb.register(4096)
    other = await pb2.register(4096)                # node 1, VPID 2's page
    ro = await pb.register(4096, read=False)        # node 1, VPID 0, write only
    for r, n in ((la, a), (lb, b), (other, b), (ro, b)):
        n.host.memory.write(r.phys, bytes(rng.randrange(256) for _ in range(r.size)))
    snapshot = {n.rma.node: {r.phys: n.host.memory.read(r.phys, r.size) for r in regs}
                for n, regs in ((a, (la,)), (b, (lb, other, ro)))}
    err = {e.name: e.value for e in RmaError}

    async def expect(port, cls, command, error):
        n = await port.wait(lambda n: n["cls"] == cls.value and n["command"] == command)
        assert n["error"] == err[error], (error, n)
        return n

    # requester side: nothing leaves the node
    await pa.put(1, 0, la.nla + 12 * 4096, lb.nla, 64, notify=(0, 1, 0))       # unregistered local NLA
    await expect(pa, Cls.REQUESTER, PUT, "ATU_FAULT")
    await pa.put(1, 0, la.nla + 4096 - 8, lb.nla + 4096 - 8, 16)                # crosses a page
    await expect(pa, Cls.REQUESTER, PUT, "PAGE_CROSSING")
    await pa.post(5, dst_node=1, dst_vpid=0)                                    # unknown command
    await expect(pa, Cls.REQUESTER, 5, "UNKNOWN_COMMAND")
    # completer side: a put into VPID 2's page named as VPID 0's; the data is not written
    await pa.put(1, 0, la.nla, other.nla, 128, notify=(1, 1, 0))
    await expect(pa, Cls.REQUESTER, PUT, "NONE")
    await expect(pb, Cls.COMPLETER, PUT, "ATU_FAULT")
    # responder side: a get from a page without read permission, and from a disabled VPID
    await pa.get(1, 0, la.nla, ro.nla, 64)
    await expect(pa, Cls.COMPLETER, GET, "ATU_FAULT")
    await pa.get(1, 5, la.nla, 0, 64)
    await expect(pa, Cls.COMPLETER, GET, "DISABLED")
    # a lock beyond the region (1024 locks per VPID)
    await pa.post(RmaCommand.LOCK, dst_node=1, dst_vpid=0, lock=1024, compare=0, add=1)
    await expect(pa, Cls.COMPLETER, LOCK, "LOCK_RANGE")
    # deregistration flushes the ATU; a put into the freed pages faults and writes nothing
    await pa.put(1, 0, la.nla, lb.nla, 64, notify=(0, 1, 0))
    await expect(pb, Cls.COMPLETER, PUT, "NONE")
    expected_lb = a.host.memory.read(la.phys, 64)
    assert b.host.memory.read(lb.phys, 64) == expected_lb
    await b.rma.atu.deregister(lb)
    await pa.put(1, 0, la.nla, lb.nla, 64, notify=(0, 1, 0))
    await expect(pb, Cls.COMPLETER, PUT, "ATU_FAULT")
    for phys, data in snapshot[1].items():
        if phys != lb.phys:
            assert b.host.memory.read(phys, len(data)) == data, f"node 1 page {phys:#x} was written"
    for phys, data in snapshot[0].items():
        assert a.host.memory.read(phys, len(data)) == data, f"node 0 page {phys:#x} was written"
    # a full notification queue drops and counts; nothing blocks
    await pb.release(force=True)
    extra = 5
    for k in range(pb.entries - 1 + extra):
        await pa.notification_put(1, 0, k + 1)
    await a.host.cycles(3000)
    got = [n["value"] for n in [await pb.poll() for _ in range(pb.entries)] if n]
    assert got == list(range(1, pb.entries)), got
    ca, cb = await a.rma.counters(), await b.rma.counters()
    assert ca["errors.requester"] == 3, ca
    # node 1's faults: the completer translates each packet of the two-line put into VPID 2's page (a
    # failed translation is not kept), the responder the read-protected get, the completer the put
    # into the freed pages
    assert cb["drops.atu_faults"] == 2 + 1 + 1, cb
    assert cb["errors.refused"] == 1 and cb["drops.notifications"] == extra, cb
    assert ca["drops.atu_faults"] == 1, ca
    for n in ns:
        n.check_clean()
