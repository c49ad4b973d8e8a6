"""Integration top for RMA tests and benchmarks: one or two nodes, each an HTAX switch with the host
port, the generated register file, the ATU and the RMA unit, joined by network-stream loopback.

Not a unit (no ``UNITS`` entry).  With one node the unit's request and response streams feed its own
(a node sending to itself); with two, node 0's feed node 1's and back (two RMA units cross-connected),
so neither the network port nor a route is involved (the NIC top adds them).  Each node's register
file holds its node id (``net.node``); every register the driver (:mod:`sim.driver.rma`) writes is the
NIC's.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.atu import atu_from_config
from rtl.atu import connect_regs as connect_atu_regs
from rtl.common.htax import HtaxPortSignature, expose_port
from rtl.common.params import check_distinct, check_int
from rtl.common.portplan import HtaxPortPlan
from rtl.htax import from_config as htax_from_config
from rtl.regs.generate import build as build_regs
from rtl.rma import connect_regs, rma_from_config

__all__ = ["RmaSystem"]


class RmaSystem(wiring.Component):
    """One or two RMA nodes (the module docstring says how they are joined).

    Parameters
    ----------
    cfg : rtl.config.Config
        Host, register file, ATU and RMA HTAX ports distinct; ``[atu] fu_ports`` is ``[rma htax_port]``.
    nodes : int
        1 (a node sending to itself) or 2 (cross-connected).

    Members
    -------
    htax<n> : Out(HtaxPortSignature)
        Node ``n``'s host port, in the orientation :class:`sim.host.HostModel` expects.
    probe : Out(4 * nodes)
        Bits ``4n`` to ``4n + 3`` for node ``n``: a descriptor header moves into its RMA, a request-class
        network header leaves it, a response-class one leaves it, a header its RMA sends to the host
        moves.
    """
    def __init__(self, cfg, *, nodes=1):
        self.cfg = cfg
        self.n = check_int("nodes", nodes, 1, 2)
        host, rma_port = cfg["rma"]["host_port"], cfg["rma"]["htax_port"]
        self.used = (host, cfg["regs"]["htax_port"], cfg["atu"]["htax_port"], rma_port)
        check_distinct("host, register file, ATU and RMA HTAX ports", self.used)
        if cfg["regs"]["host_port"] != host or cfg["atu"]["host_port"] != host:
            raise ValueError("[rma], [atu] and [regs] host_port must agree")
        if list(cfg["atu"]["fu_ports"]) != [rma_port]:
            raise ValueError(f"[atu] fu_ports must be [{rma_port}] (the RMA port) in an RMA system, "
                             f"not {cfg['atu']['fu_ports']}")
        if max(self.used) >= cfg["htax"]["ports"]:
            raise ValueError(f"the HTAX has {cfg['htax']['ports']} ports, the system uses {self.used}")
        members = {f"htax{n}": Out(HtaxPortSignature()) for n in range(nodes)}
        members["probe"] = Out(4 * nodes)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        host, regs_port, atu_port, rma_port = self.used
        rmas = []
        for n in range(self.n):
            sw = htax_from_config(cfg)
            rf = build_regs(cfg, revision=(0, False))   # pinned: the test design must not change per commit
            atu = atu_from_config(cfg)
            rma = rma_from_config(cfg)
            for name, sub in (("switch", sw), ("regs", rf), ("atu", atu), ("rma", rma)):
                m.submodules[f"{name}{n}"] = sub
            rmas.append(rma)
            wiring.connect(m, rf.htax, sw.ports[regs_port])
            wiring.connect(m, atu.htax, sw.ports[atu_port])
            wiring.connect(m, rma.htax, sw.ports[rma_port])
            connect_regs(m, rma, rf)
            connect_atu_regs(m, atu, rf)
            expose_port(m, getattr(self, f"htax{n}"), sw.ports[host])
            HtaxPortPlan(ports=cfg["htax"]["ports"],
                         units=dict(zip(("host", "regs", "atu", "rma"), self.used, strict=True))).tie_off(m, sw.ports)
        for n, rma in enumerate(rmas):
            peer = rmas[(n + 1) % self.n]
            wiring.connect(m, rma.req_tx, peer.req_rx)
            wiring.connect(m, rma.rsp_tx, peer.rsp_rx)
        m.d.comb += self.probe.eq(Cat(*(Cat(r.htax.rx.header_moves(),
                                            r.req_tx.valid & r.req_tx.ready & r.req_tx.payload.first,
                                            r.rsp_tx.valid & r.rsp_tx.ready & r.rsp_tx.payload.first,
                                            r.htax.tx.header_moves()) for r in rmas)))
        return m
