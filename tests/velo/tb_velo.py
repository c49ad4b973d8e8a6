"""cocotb testbench: VELO in its system (:class:`sim.tops.velo.VeloSystem`), one node sending to
itself or two nodes cross-connected, each with a host model (``sim/host.py``) and the VELO driver
(``sim/driver/velo.py``).  Every slot the driver reads is compared with the reference model
(:mod:`sim.velo_model`) fed with the same stores; every message with what was sent, in order per
(source, destination VPID)."""

import random
from collections import defaultdict

import cocotb

from rtl.common.addrmap import AddressMap
from rtl.common.htax import HtaxCmd
from sim.driver.velo import VeloNode, random_payload
from sim.host import HostModel
from sim.htax_packet import HtaxPacket, line_write_packet
from sim.runner import tb_params, tb_seed
from sim.tops.configs import velo_config
from sim.velo_model import VeloCompleterModel, VeloRequesterModel, decode_address, encode_address

CFG = velo_config()
AMAP = AddressMap.from_config(CFG)
VELO_PORT = CFG["velo"]["htax_port"]
REGS_PORT = CFG["regs"]["htax_port"]


def route(addr):
    hit = AMAP.decode(addr)
    return VELO_PORT if hit and hit[0] == "velo" else REGS_PORT


class Node:
    """A node: host model, driver, and the reference model of its requester and completer."""

    def __init__(self, dut, n, seed, **host_kw):
        self.host = HostModel(dut, cfg=CFG, port=f"htax{n}", host_port=CFG["velo"]["host_port"], route=route,
                              seed=seed + n, **host_kw)
        self.host.memory.write_hook = lambda addr, size, owner: isinstance(owner, str) and owner.startswith("velo")
        self.velo = VeloNode(self.host, CFG, node=n)
        self.req_model = VeloRequesterModel(AMAP, node=n)
        self.cpl_model = VeloCompleterModel(vpids=CFG["system"]["vpids"])
        self.expected_slots = defaultdict(list)     # vpid -> [(addr, words)]

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
        await n.velo.set_node_id()
    return ns, random.Random(seed)


async def open_port(node, vpid, **kw):
    port = await node.velo.open(vpid, **kw)
    mb = node.cpl_model.mailboxes[vpid]
    mb.enable, mb.base, mb.size, mb.wp, mb.rp = True, port.base, kw.get("pages", 1) - 1, 0, 0
    return port


def model_store(src, dst, addr, payload, split_at):
    """Feed the reference models with the store(s) the driver makes: returns the packets' outcomes."""
    parts = [(addr, payload)]
    if split_at is not None:
        parts = [(addr, payload[:split_at]), (addr + split_at, payload[split_at:])]
    for a, d in parts:
        pkt = line_write_packet(a, d, src=0, dst=VELO_PORT)
        words = src.req_model.write(pkt)
        out = dst.cpl_model.packet(words)
        if isinstance(out, list):
            vpid = decode_address(AMAP, a)["dst_vpid"]
            dst.expected_slots[vpid] += out


def check_slots(node, port):
    got = [(port.base + 64 * slot, words) for slot, words in port.slot_log]
    exp = node.expected_slots[port.vpid]
    assert got == exp[:len(got)], f"vpid {port.vpid}: slots differ from the model"
    assert len(got) == len(exp), f"vpid {port.vpid}: {len(got)} slots read, model wrote {len(exp)}"


async def traffic(ns, rng, *, messages, vpids, split_p, pages=1):
    """Random messages between every node and VPID in ``vpids``; returns nothing, checks everything."""
    ports = {(n.velo.node, v): await open_port(n, v, pages=pages, lazy=rng.choice([1, 3, 8]))
             for n in ns for v in vpids}
    sent = defaultdict(list)
    for _ in range(messages):
        src = rng.choice(ns)
        dst = ns[(src.velo.node + 1) % len(ns)]     # cross-connected: every packet reaches the other node
        sv, dv = rng.choice(vpids), rng.choice(vpids)
        nbytes = 8 * rng.randint(1, 8)
        mtt = rng.randrange(4)
        payload = random_payload(rng, nbytes)
        split_at = 8 * rng.randrange(1, nbytes // 8) if nbytes > 8 and rng.random() < split_p else None
        sp = ports[(src.velo.node, sv)]
        addr = sp.address(dst.velo.node, dv, nbytes, mtt)
        model_store(src, dst, addr, payload, split_at)
        await sp.send(dst.velo.node, dv, payload, mtt, split_at=split_at)
        sent[(dst.velo.node, dv, src.velo.node, sv)].append((mtt, payload))
        if rng.random() < 0.2:
            await src.host.cycles(rng.randrange(1, 40))
    # receive everything
    for (dn, dv), port in ports.items():
        expect = sum(len(v) for k, v in sent.items() if k[:2] == (dn, dv))
        got = defaultdict(list)
        for _ in range(expect):
            msg = await port.recv()
            got[(dn, dv, msg.src_node, msg.src_vpid)].append((msg.mtt, msg.payload))
        for k, v in got.items():
            assert v == sent[k], f"messages {k} differ"
        check_slots(ns[dn], port)
    return sent


@cocotb.test()
async def random_messages(dut):
    """Random lengths, MTTs, VPIDs and split points, one or two nodes; counters checked."""
    p = tb_params()
    ns, rng = await setup(dut, nodes=p.get("nodes", 1), tx_ready_probability=p.get("ready_p", 1.0))
    await traffic(ns, rng, messages=p.get("messages", 60), vpids=[0, 1, 5, 31], split_p=0.3, pages=4)
    for n in ns:
        c = await n.velo.counters()
        assert c == {"sent": n.req_model.sent, "received": n.cpl_model.received, "discarded": 0, "rejected": 0,
                     "dropped": 0}, c
        n.check_clean()


@cocotb.test()
async def splits_everywhere(dut):
    """Every length and every split point, through the driver, split flag set in the status."""
    ns, rng = await setup(dut)
    (node,) = ns
    port = await open_port(node, 2, pages=2)
    for nbytes in range(16, 65, 8):
        for cut in range(8, nbytes, 8):
            payload = random_payload(rng, nbytes)
            model_store(node, node, port.address(0, 2, nbytes, 1), payload, cut)
            await port.send(0, 2, payload, 1, split_at=cut)
            msg = await port.recv()
            assert (msg.payload, msg.split, msg.mtt, msg.src_vpid) == (payload, True, 1, 2), (nbytes, cut)
    check_slots(node, port)
    node.check_clean()


@cocotb.test()
async def ring_full(dut):
    """A reader that does not read: the ring fills, later messages are discarded and counted, no
    unreleased slot is overwritten; after the reader releases, messages arrive again; ring wrap."""
    ns, rng = await setup(dut)
    (node,) = ns
    port = await open_port(node, 7, pages=1, lazy=64)
    sent = []
    for i in range(70):
        nbytes = 64 if i % 9 == 4 else 8 * rng.randint(1, 7)
        payload = random_payload(rng, nbytes)
        model_store(node, node, port.address(0, 7, nbytes, 0), payload, None)
        await port.send(0, 7, payload)
        sent.append(payload)
    await node.host.idle()                  # every store has left the host
    await node.host.cycles(200)
    c = await node.velo.counters()
    assert c["discarded"] == node.cpl_model.discarded > 0 and c["received"] == node.cpl_model.received, c
    kept = node.cpl_model.received
    got = [(await port.recv()).payload for _ in range(kept)]
    assert got == sent[:kept]       # the ring filled in order; everything after the first discard is lost
    assert (await port.poll()) is None
    await port.release(force=True)
    node.cpl_model.mailboxes[7].rp = port.rp
    for _ in range(3 * port.slots // 2):        # more than a ring's worth: wraps
        payload = random_payload(rng, 8 * rng.randint(1, 8))
        model_store(node, node, port.address(0, 7, len(payload), 3), payload, None)
        await port.send(0, 7, payload, 3)
        msg = await port.recv()
        node.cpl_model.mailboxes[7].rp = port.released
        assert msg.payload == payload
    check_slots(node, port)
    node.check_clean()


@cocotb.test()
async def bad_input(dut):
    """Disabled mailbox, never-opened mailbox, and HTAX packets that are not VELO stores."""
    ns, rng = await setup(dut)
    (node,) = ns
    port = await open_port(node, 4)
    await node.velo.enable(4, False)
    await port.send(0, 4, b"x" * 16)
    await port.send(0, 9, b"y" * 8)                     # mailbox 9 never opened
    await node.host.cycles(100)
    c = await node.velo.counters()
    assert (c["sent"], c["received"], c["rejected"]) == (2, 0, 2), c
    assert (await port.poll()) is None
    h = node.host
    addr = port.address(0, 4, 16, 0)
    h.send(HtaxPacket(HtaxCmd.READ, src=0, dst=VELO_PORT, addr=addr, length=1))        # no response
    h.send(line_write_packet(addr + 2, b"abcdef", src=0, dst=VELO_PORT))               # partial bytes
    h.send(line_write_packet(port.address(0, 4, 16, 0, word=1), b"z" * 16, src=0, dst=VELO_PORT))  # beyond length
    h.send(line_write_packet(AMAP["rma"].base, b"w" * 8, src=0, dst=VELO_PORT))        # outside the window
    await h.cycles(100)
    c = await node.velo.counters()
    assert (c["sent"], c["dropped"]) == (0, 4), c
    await node.velo.enable(4, True)                     # re-enabled: works again
    await port.send(0, 4, b"k" * 24)
    assert (await port.recv()).payload == b"k" * 24
    node.check_clean()


@cocotb.test()
async def interrupt(dut):
    """Asynchronous mode: a message into a mailbox whose interrupt is unmasked raises an MSI."""
    ns, rng = await setup(dut)
    (node,) = ns
    h, r = node.host, node.velo.regs
    await h.write64(r.addr("irq.msi_data"), 0x5E10)
    port = await open_port(node, 3, irq=True)
    other = await open_port(node, 6)
    await other.send(0, 6, b"q" * 8)
    assert (await other.recv()).payload == b"q" * 8
    assert h.interrupts == []                            # masked VPID: no interrupt
    await port.send(0, 3, b"i" * 8)
    await h.wait_interrupt()
    assert await h.read64(r.addr("irq.velo_status")) == 1 << 3 | 1 << 6
    assert (await port.recv()).payload == b"i" * 8
    node.check_clean()


@cocotb.test()
async def source_vpid_from_page(dut):
    """Isolation: the source VPID a receiver sees is the one of the page the store went to, whatever
    the payload says; a process holds only its own VPID's pages, so it cannot claim another."""
    ns, rng = await setup(dut)
    (node,) = ns
    rx = await open_port(node, 6, pages=2)
    h = node.host
    for i in range(24):
        page_vpid = rng.randrange(32)
        forged = page_vpid ^ rng.randrange(1, 32)      # another VPID, written all over the payload
        nbytes = 8 * rng.randint(1, 8)
        payload = bytes([forged] * nbytes)
        addr = encode_address(AMAP, dst_node=0, dst_vpid=6, src_vpid=page_vpid, nbytes=nbytes, mtt=i % 4)
        model_store(node, node, addr, payload, None)
        await h.write(addr, payload)
        msg = await rx.recv()
        assert (msg.src_vpid, msg.src_node, msg.payload) == (page_vpid, 0, payload), (i, page_vpid, forged)
    check_slots(node, rx)
    node.check_clean()


async def fillers(node, port, src_vpid, n):
    """``n`` one-word messages from ``src_vpid`` into ``port`` (payload: their index)."""
    addr = encode_address(AMAP, dst_node=0, dst_vpid=port.vpid, src_vpid=src_vpid, nbytes=8, mtt=0)
    for i in range(n):
        await node.host.write(addr, i.to_bytes(8, "little"))


@cocotb.test()
async def split_half_lost(dut):
    """A split message one part of which was discarded at a full ring: the driver drops the other part
    (``orphans``) and the next message from the same source arrives whole, not merged with it."""
    ns, rng = await setup(dut)
    (node,) = ns
    h = node.host
    port = await open_port(node, 3, pages=1, lazy=64)
    src = 9
    for lost in ("second", "first"):
        await node.velo.counters()                      # clear
        payload = random_payload(rng, 24)
        addr = encode_address(AMAP, dst_node=0, dst_vpid=3, src_vpid=src, nbytes=24, mtt=2)
        full = port.slots - 1
        if lost == "second":
            await fillers(node, port, src, full - 1)
            await h.write(addr, payload[:8])            # the last free slot
            await h.write(addr + 8, payload[8:])        # ring full: discarded
        else:
            await fillers(node, port, src, full)
            await h.write(addr, payload[:8])            # ring full: discarded
        await h.idle()
        await h.cycles(50)
        c = await node.velo.counters()
        assert (c["received"], c["discarded"]) == (full, 1), (lost, c)
        n = full - 1 if lost == "second" else full
        for i in range(n):
            assert (await port.recv()).payload == i.to_bytes(8, "little"), (lost, i)
        await port.release(force=True)
        if lost == "first":
            await h.write(addr + 8, payload[8:])        # room again: the second part is written
        whole = random_payload(rng, 16)
        await h.write(encode_address(AMAP, dst_node=0, dst_vpid=3, src_vpid=src, nbytes=16, mtt=1), whole)
        before = port.orphans
        msg = await port.recv()
        assert (msg.payload, msg.mtt, msg.split) == (whole, 1, False), lost
        assert port.orphans - before == 1, (lost, port.orphans - before)
        assert (await port.poll()) is None
        await port.release(force=True)
    node.check_clean()
