"""cocotb testbench: VELO behind a network port (:class:`sim.tops.velo.VeloNetSystem`), one node with a
host model and the VELO driver.  The port's network side is looped back without a crossbar, so a store
to any other node leaves, comes back and is dropped by the port's ejector (``misrouted``)."""

import random

import cocotb

from rtl.common.addrmap import AddressMap
from sim.driver.velo import VeloNode, random_payload
from sim.host import HostModel
from sim.runner import tb_seed
from sim.tops.configs import velo_config

CFG = velo_config()
AMAP = AddressMap.from_config(CFG)
NODES = CFG["system"]["nodes"]


def route(addr):
    hit = AMAP.decode(addr)
    return CFG["velo"]["htax_port"] if hit and hit[0] == "velo" else CFG["regs"]["htax_port"]


async def net_counter(node, reg, field):
    r = node.regs.reg(reg)
    f = r.field(field)
    return (await node.host.read64(node.regs.addr(reg))) >> f.lsb & f.max


@cocotb.test()
async def other_nodes(dut):
    """Stores to other nodes, mixed with stores to this node: the former are counted in
    ``net.rx_drops.misrouted`` and land nowhere, the latter arrive whole and in order."""
    seed = tb_seed()
    rng = random.Random(seed)
    dut._log.info(f"seed {seed}")
    host = HostModel(dut, cfg=CFG, port="htax0", host_port=CFG["velo"]["host_port"], route=route, seed=seed)
    # device writes are admitted only into VELO rings: a dropped message landing anywhere is a violation
    host.memory.write_hook = lambda addr, size, owner: isinstance(owner, str) and owner.startswith("velo")
    host.start_clock()
    await host.reset()
    await host.start()
    node = VeloNode(host, CFG, node=0)
    await node.set_node_id()
    port = await node.open(3, pages=1)
    sent, dropped = [], 0
    for i in range(24):
        payload = random_payload(rng, 8 * rng.randint(1, 8))
        if i % 3 == 1:          # another node
            await port.send(rng.randrange(1, NODES), 3, payload, rng.randrange(4))
            dropped += 1
        else:
            await port.send(0, 3, payload)
            sent.append(payload)
        if rng.random() < 0.3:
            await host.cycles(rng.randrange(1, 30))
    got = [(await port.recv()).payload for _ in sent]
    assert got == sent
    await host.idle()
    await host.cycles(100)
    assert (await port.poll()) is None, "a message for another node arrived"
    assert await net_counter(node, "net.rx_drops", "misrouted") == dropped
    assert await net_counter(node, "net.sent", "requests") == len(sent) + dropped
    assert await net_counter(node, "net.delivered", "requests") == len(sent)
    c = await node.counters()
    assert (c["sent"], c["received"], c["discarded"], c["rejected"]) == (len(sent) + dropped, len(sent), 0, 0), c
    assert not host.errors, host.errors[:5]
    assert not host.memory.violations, host.memory.violations[:5]
