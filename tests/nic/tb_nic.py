"""cocotb testbench: two NICs back to back (:class:`sim.tops.nic.NicSystem`), each with a host model
(``sim/host.py``) and the NIC driver (``sim/driver/nic.py``).

``smoke``: the drivers bring both NICs up (version, node id, routes from :mod:`sim.routing`); a VELO
message each way arrives whole with its source; an RMA put copies node 0's bytes into node 1's memory,
a get copies node 1's bytes back, with the notifications table 7-2 calls for; FCAA on a lock of node 1
succeeds, fails on a taken lock and releases it; a put and a get between VPIDs in virtual mode go
through both ATUs; a region registered and deregistered by bulk jobs takes a put, then faults one.
Every expectation comes from what was sent, not from the RTL; the network counters show the packets
crossed the link (none dropped)."""

import cocotb

from rtl.rma.formats import RmaCommand, RmaError
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.driver.atu import JOB_PAGES
from sim.driver.rma import MAX_INT
from sim.runner import tb_params
from sim.tops.configs import CONFIGS, nic_config
from sim.tops.nic import topology
from tests.nic.harness import bring_up, check_clean

#: the parameter ``config`` = ``"phy"``: the NICs of ``NicSystem(phy=True)`` (``configs/test_phy.toml``)
CFG = nic_config(CONFIGS / "test_phy.toml") if tb_params().get("config") == "phy" else nic_config()
TOPOLOGY = topology("b2b", 2)


async def velo_each_way(nics, rng):
    vpid = 1
    ports = [await nic.velo.open(vpid) for nic in nics]
    sent = {}
    for src, dst, nbytes in ((0, 1, 24), (1, 0, 64)):
        payload = bytes(rng.randrange(256) for _ in range(nbytes))
        await ports[src].send(dst, vpid, payload, mtt=src + 1)
        sent[dst] = (src, payload)
    for dst, (src, payload) in sent.items():
        msg = await ports[dst].recv(timeout_cycles=20000)
        assert (msg.src_node, msg.src_vpid, msg.mtt, msg.payload) == (src, vpid, src + 1, payload), (msg, src)
        assert (await ports[dst].poll()) is None, f"node {dst}: a second message arrived"


async def rma_put_get_lock(nics, rng):
    vpid = 2
    ports = [await nic.rma.open(vpid, phys=True) for nic in nics]
    mems = [nic.host.memory for nic in nics]
    regions = [await p.register(2 * 4096) for p in ports]
    for mem, r in zip(mems, regions, strict=True):
        mem.write(r.phys, bytes(rng.randrange(256) for _ in range(r.size)))

    # put: node 0's first 512 bytes to node 1's second page
    local, remote, nbytes = regions[0].nla, regions[1].nla + 4096, 512
    data = mems[0].read(regions[0].phys, nbytes)
    await ports[0].put(1, vpid, local, remote, nbytes, notify=(1, 1, 0))
    n = await ports[0].wait(lambda n: n["cls"] == Cls.REQUESTER.value)
    assert (n["command"], n["error"], n["value"], n["peer_node"], n["peer_vpid"]) == \
        (RmaCommand.PUT.value, 0, local, 1, vpid), n
    n = await ports[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"], n["value"], n["peer_node"], n["peer_vpid"]) == \
        (RmaCommand.PUT.value, 0, remote, 0, vpid), n
    assert mems[1].read(regions[1].phys + 4096, nbytes) == data, "put: node 1 memory differs"

    # get: node 1's first 192 bytes (24 quadwords) to node 0's second page
    local, remote, nbytes = regions[0].nla + 4096, regions[1].nla, 192
    data = mems[1].read(regions[1].phys, nbytes)
    assert mems[0].read(regions[0].phys + 4096, nbytes) != data
    await ports[0].get(1, vpid, local, remote, nbytes, notify=(0, 1, 1))
    n = await ports[0].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"], n["value"], n["peer_node"], n["peer_vpid"]) == \
        (RmaCommand.GET.value, 0, local, 1, vpid), n
    n = await ports[1].wait(lambda n: n["cls"] == Cls.RESPONDER.value)
    assert (n["command"], n["value"], n["peer_node"]) == (RmaCommand.GET.value, remote, 0), n
    assert mems[0].read(regions[0].phys + 4096, nbytes) == data, "get: node 0 memory differs"

    # FCAA on lock 7 of node 1: take it (compare 0), fail to take it again, release it
    word = nics[1].rma.lock_word(vpid, 7)
    assert await ports[0].lock(1, vpid, 7, 0, 3) == (3, True)
    assert int.from_bytes(mems[1].read(word, 4), "little") == 3
    value, ok = await ports[0].lock(1, vpid, 7, 0, 3)
    assert not ok and value == 3, (value, ok)
    assert await ports[0].lock(1, vpid, 7, MAX_INT, -3) == (0, True)
    assert mems[1].read(word, 4) == bytes(4)


async def rma_virtual(nics, rng):
    """A put and a get between VPIDs without the phys bit: every address an NLA the ATUs translate
    (GATs written by the drivers' memory registration)."""
    vpid = 3
    ports = [await nic.rma.open(vpid) for nic in nics]
    mems = [nic.host.memory for nic in nics]
    regions = [await p.register(2 * 4096) for p in ports]
    for mem, r in zip(mems, regions, strict=True):
        mem.write(r.phys, bytes(rng.randrange(256) for _ in range(r.size)))
    # node 0 puts its first 256 bytes to node 1's second page
    local, remote, nbytes = regions[0].nla, regions[1].nla + 4096, 256
    data = mems[0].read(regions[0].phys, nbytes)
    await ports[0].put(1, vpid, local, remote, nbytes, notify=(0, 1, 0))
    n = await ports[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"], n["value"]) == (RmaCommand.PUT.value, 0, remote), n
    assert mems[1].read(regions[1].phys + 4096, nbytes) == data, "virtual put: node 1 memory differs"
    # node 1 gets node 0's bytes 1024.. into its first page
    local, remote = regions[1].nla + 512, regions[0].nla + 1024
    data = mems[0].read(regions[0].phys + 1024, nbytes)
    assert mems[1].read(regions[1].phys + 512, nbytes) != data
    await ports[1].get(0, vpid, local, remote, nbytes, notify=(0, 1, 0))
    n = await ports[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"], n["value"]) == (RmaCommand.GET.value, 0, local), n
    assert mems[1].read(regions[1].phys + 512, nbytes) == data, "virtual get: node 1 memory differs"
    for nic in nics:                    # both ATUs translated (a miss each at least: fresh TLBs)
        c = await nic.host.read64(nic.regs.addr("atu.tlb_counters"))
        assert c >> 32 > 0, f"node {nic.node}: no TLB miss counted ({c:#x})"


async def rma_bulk_jobs(nics, rng):
    """With the ATU's job engine (``[atu] jobs`` in ``configs/test_nic.toml``): node 1 registers
    ``JOB_PAGES`` pages by one REGISTER job (the ATU's GATE stores through the NIC's HTAX to its host),
    node 0 puts into one of them; node 1 deregisters them by one DEREGISTER job, whose range flush
    reaches node 1's RMA; a put to the same NLA then ends in the completer's ``ATU_FAULT``."""
    vpid = 4
    ports = [await nic.rma.open(vpid) for nic in nics]
    mems = [nic.host.memory for nic in nics]
    jobs = nics[1].regs.addr("atu.job_counters")
    j0 = await nics[1].host.read64(jobs)
    local = await ports[0].register(4096)
    remote = await ports[1].register(JOB_PAGES * 4096)
    assert await nics[1].host.read64(jobs) - j0 == 1, "one REGISTER job, no error"
    data = bytes(rng.randrange(256) for _ in range(256))
    mems[0].write(local.phys, data)
    target = remote.nla + 40 * 4096 + 128
    await ports[0].put(1, vpid, local.nla, target, 256, notify=(0, 1, 0))
    n = await ports[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"], n["value"]) == (RmaCommand.PUT.value, 0, target), n
    assert mems[1].read(remote.phys + 40 * 4096 + 128, 256) == data
    f0 = await nics[1].host.read64(nics[1].regs.addr("atu.flush_counters"))
    await nics[1].atu.deregister(remote)
    assert await nics[1].host.read64(jobs) - j0 == 2, "one DEREGISTER job, no error"
    assert (await nics[1].host.read64(nics[1].regs.addr("atu.flush_counters")) >> 32) - (f0 >> 32) == 1
    await ports[0].put(1, vpid, local.nla, target, 256, notify=(0, 1, 0))
    n = await ports[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value)
    assert (n["command"], n["error"]) == (RmaCommand.PUT.value, RmaError.ATU_FAULT.value), n
    rc = await nics[1].rma.counters()
    assert rc["drops.atu_faults"] > 0 and rc["drops.atu_flushes"] == 1, rc     # the job's flush reached RMA


@cocotb.test()
async def smoke(dut):
    nics, rng = await bring_up(dut, CFG, TOPOLOGY)
    for nic in nics:
        for dst in range(TOPOLOGY.nodes):
            assert await nic.route(dst) == TOPOLOGY.crossbar_table(nic.node)[dst]
    await velo_each_way(nics, rng)
    await rma_put_get_lock(nics, rng)
    await rma_virtual(nics, rng)
    for nic in nics:
        c = await nic.net_counters()
        assert c["delivered.requests"] > 0 and c["delivered.responses"] > 0, (nic.node, c)
        assert all(v == 0 for k, v in c.items() if "drops" in k or "malformed" in k), (nic.node, c)
        rc = await nic.rma.counters()
        assert all(rc[k] == 0 for k in rc if k.startswith(("errors", "drops"))), (nic.node, rc)
    await rma_bulk_jobs(nics, rng)                  # last: it counts an ATU fault on purpose
    for nic in nics:
        check_clean(nic)


@cocotb.test()
async def axi_errors(dut):
    """(``nic_axi`` only) Bad input at the AXI ports gets its defined outcome: CPU accesses outside the
    device window DECERR, a WRAP burst SLVERR, each counted in ``hostbus.errors``; a put whose data the
    host memory answers with SLVERR (unallocated) ends in the requester's DMA_ERROR notification, and
    the remote memory is untouched."""
    from cocotbext.axi import AxiBurstType, AxiResp

    nics, rng = await bring_up(dut, CFG, TOPOLOGY)
    h, base = nics[0].host, CFG["system"]["device_base"]
    cpu = h._cpu                                    # the AXI manager itself: requests the driver never makes
    assert (await cpu.write(base - 64, bytes(8))).resp == AxiResp.DECERR
    assert (await cpu.read(base - 64, 8)).resp == AxiResp.DECERR
    assert (await cpu.read(base, 32, burst=AxiBurstType.WRAP)).resp == AxiResp.SLVERR
    errors = await h.read64(nics[0].regs.addr("hostbus.errors"))
    assert errors == 3, f"{errors:#x}"              # cpu_refused 3, the rest 0
    assert await h.read64(nics[0].regs.addr("hostbus.errors")) == 0     # cleared by reading

    vpid = 5
    ports = [await nic.rma.open(vpid, phys=True) for nic in nics]
    remote = await ports[1].register(4096)
    before = nics[1].host.memory.read(remote.phys, 256)
    nowhere = 0x7F00_0000                           # physical memory nobody allocated
    assert h.memory.owner(nowhere) is None
    await ports[0].put(1, vpid, nowhere, remote.nla, 256, notify=(1, 1, 0))
    n = await ports[0].wait(lambda n: n["cls"] == Cls.REQUESTER.value)
    assert (n["command"], n["error"]) == (RmaCommand.PUT.value, RmaError.DMA_ERROR.value), n
    await h.cycles(500)
    assert nics[1].host.memory.read(remote.phys, 256) == before
    assert h.errors and all("SLVERR" in e or "unallocated" in e for e in h.errors), h.errors[:3]
    h.errors.clear()
    h.memory.violations.clear()
    for nic in nics:
        check_clean(nic)
