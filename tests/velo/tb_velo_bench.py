"""cocotb benchmark of VELO's loopback latency (``bench/velo.py`` runs it; results to ``params["out"]``).

One node of :class:`sim.tops.velo.VeloSystem` built from ``configs/default.toml`` as it is (the
five-port ``HtaxPipelined``), sending to itself: from the cycle a CPU store is issued to the cycle
the completer's slot WRITE (status word first) is applied to host memory, for 8- and 56-byte
messages.  Each length is measured three times on an idle system; the figure is the largest, and the
payload is checked."""

import json

import cocotb

from rtl.common.addrmap import AddressMap
from rtl.config import load
from sim.driver.velo import VeloNode
from sim.host import HostModel
from sim.runner import tb_params


@cocotb.test()
async def loopback_latency(dut):
    cfg = load()
    amap = AddressMap.from_config(cfg)

    def route(addr):
        hit = amap.decode(addr)
        return cfg["velo"]["htax_port"] if hit and hit[0] == "velo" else cfg["regs"]["htax_port"]

    host = HostModel(dut, cfg=cfg, port="htax0", host_port=cfg["velo"]["host_port"], route=route, seed=1)
    host.start_clock()
    await host.reset()
    await host.start()
    node = VeloNode(host, cfg, node=0)
    await node.set_node_id()
    port = await node.open(1)
    landed = {}

    def hook(addr, size, owner):
        landed.setdefault(addr, host.now())
        return owner == "velo1"
    host.memory.write_hook = hook
    res = {}
    for nbytes in (8, 56):
        lat = []
        for i in range(3):
            await host.cycles(50)
            landed.clear()
            slot = port.base + 64 * port.rp
            payload = bytes((nbytes + i + j) & 0xFF for j in range(nbytes))
            t0 = host.now()
            await port.send(0, 1, payload)
            msg = await port.recv(poll_cycles=1)
            assert msg.payload == payload
            lat.append(landed[slot] - t0)
        res[f"loopback_latency_cycles_{nbytes}B"] = max(lat)
    assert not host.errors and not host.memory.violations
    with open(tb_params()["out"], "w") as f:
        json.dump(res, f)
