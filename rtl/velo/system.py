"""Integration top for VELO tests and benchmarks: one or two nodes, each an HTAX switch with the host
port, the generated register file and the VELO unit, joined by network-stream loopback.

Not a unit (no ``UNITS`` entry).  With one node the unit's ``net_tx`` feeds its own ``net_rx`` (a
node sending to itself); with two, node 0's ``net_tx`` feeds node 1's ``net_rx`` and back (two VELO
instances cross-connected), so neither the network port nor a route is involved (the network-layer
issue adds them in the NIC top).  Each node's register file holds its node id (``net.node``).

Members
-------
htax<n> : Out(HtaxPortSignature)
    Node ``n``'s host port, in the orientation :class:`sim.host.HostModel` expects.
probe : Out(4)
    Node 0: bit 0 an HTAX header moves into the requester, 1 a network header leaves it, 2 a network
    header enters the completer, 3 a slot-write header leaves it.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.common.htax import HtaxPortSignature
from rtl.common.params import check_int
from rtl.htax import from_config as htax_from_config
from rtl.regs.generate import build as build_regs

from . import connect_regs, velo_from_config

__all__ = ["VeloSystem"]


class VeloSystem(wiring.Component):
    def __init__(self, cfg, *, nodes=1):
        self.cfg = cfg
        self.n = check_int("nodes", nodes, 1, 2)
        self.htax_ports = cfg["htax"]["ports"]
        ports = {cfg["regs"]["htax_port"], cfg["velo"]["htax_port"], cfg["velo"]["host_port"]}
        if (cfg["regs"]["host_port"] != cfg["velo"]["host_port"] or len(ports) != 3
                or max(ports) >= self.htax_ports):
            raise ValueError("[velo] host_port must be [regs] host_port, and the three HTAX ports "
                             "distinct switch ports")
        members = {f"htax{n}": Out(HtaxPortSignature()) for n in range(nodes)}
        members["probe"] = Out(4)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        host, regs_port, velo_port = cfg["velo"]["host_port"], cfg["regs"]["htax_port"], cfg["velo"]["htax_port"]
        velos = []
        for n in range(self.n):
            sw = htax_from_config(cfg)
            rf = build_regs(cfg, revision=(0, False))   # pinned: the test design must not change per commit
            velo = velo_from_config(cfg)
            m.submodules[f"switch{n}"], m.submodules[f"regs{n}"], m.submodules[f"velo{n}"] = sw, rf, velo
            velos.append(velo)
            wiring.connect(m, rf.htax, sw.ports[regs_port])
            wiring.connect(m, velo.htax, sw.ports[velo_port])
            connect_regs(m, velo, rf)
            ext, port = getattr(self, f"htax{n}"), sw.ports[host]
            for a, b in ((ext.tx, port.rx), (port.tx, ext.rx)):
                m.d.comb += [a.valid.eq(b.valid), a.payload.eq(b.payload), b.ready.eq(a.ready),
                             b.ready2.eq(a.ready2)]
            for p in range(self.htax_ports):
                if p not in (host, regs_port, velo_port):
                    m.d.comb += [sw.ports[p].tx.valid.eq(0), sw.ports[p].rx.ready.eq(0xF),
                                 sw.ports[p].rx.ready2.eq(0xF)]
        for n, velo in enumerate(velos):
            wiring.connect(m, velo.net_tx, velos[(n + 1) % self.n].net_rx)
        v = velos[0]
        m.d.comb += self.probe.eq(Cat(v.htax.rx.header_moves(),
                                      v.net_tx.valid & v.net_tx.ready & v.net_tx.payload.first,
                                      v.net_rx.valid & v.net_rx.ready & v.net_rx.payload.first,
                                      v.htax.tx.header_moves()))
        return m
