"""cocotb simulation-speed run of eight NICs in a ring (``bench/system.py`` runs it; results to
``params["out"]``).

:class:`sim.tops.nic.NicSystem` with ``topology="ring"`` and 8 nodes of :func:`ring_config` (the
small configuration with two link ports and 8 route-table entries).  Every driver brings its NIC up;
then the wall-clock speed of the simulation is measured idle (no host port moves, the links idle) and
busy: every node sends ``messages`` 64-byte VELO messages to the node four hops away (the farthest,
over three crossbars in between) and receives the ones sent to it; every payload is checked.
"""

import json
import time

import cocotb

from sim.driver.nic import Nic, htax_route
from sim.host import HostModel
from sim.runner import tb_params, tb_seed
from sim.tops.configs import ring_config
from sim.tops.nic import topology

NODES = 8
CFG = ring_config(NODES)
TOPOLOGY = topology("ring", NODES)
VPID = 1


@cocotb.test()
async def ring_speed(dut):
    p = tb_params()
    seed = tb_seed()
    print(f"tb_nic_ring_speed: seed {seed}")
    hosts = [HostModel(dut, cfg=CFG, port=f"htax{n}", host_port=CFG["rma"]["host_port"], route=htax_route(CFG),
                       seed=seed + n) for n in range(NODES)]
    hosts[0].start_clock()
    await hosts[0].reset()
    nics = [Nic(h, CFG, node=n, topology=TOPOLOGY, revision=(0, False)) for n, h in enumerate(hosts)]
    for nic in nics:
        await nic.host.start()
    w0 = time.perf_counter()
    for nic in nics:
        await nic.init()
    init_s = time.perf_counter() - w0
    ports = [await nic.velo.open(VPID) for nic in nics]
    out = {"init_cycles": hosts[0].now(), "init_wall_s": round(init_s, 2)}

    t0, w0 = hosts[0].now(), time.perf_counter()
    await hosts[0].cycles(p.get("idle_cycles", 5000))
    out["idle_cycles_per_s"] = round((hosts[0].now() - t0) / (time.perf_counter() - w0))

    messages = p.get("messages", 8)
    t0, w0 = hosts[0].now(), time.perf_counter()
    sent = {}
    for k in range(NODES):
        dst = (k + NODES // 2) % NODES
        for i in range(messages):
            payload = bytes((k * 17 + i * 5 + j) & 0xFF for j in range(64))
            sent.setdefault(dst, []).append((k, payload))
            await ports[k].send(dst, VPID, payload)
    for dst, msgs in sent.items():
        got = [await ports[dst].recv(timeout_cycles=50000) for _ in msgs]
        assert sorted((m.src_node, m.payload) for m in got) == sorted(msgs), f"node {dst}"
    out["busy_cycles"] = hosts[0].now() - t0
    out["busy_cycles_per_s"] = round(out["busy_cycles"] / (time.perf_counter() - w0))
    for h in hosts:
        assert not h.errors, h.errors[:5]
    with open(p["out"], "w") as f:
        json.dump(out, f)
