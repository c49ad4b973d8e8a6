"""Integration tops for VELO tests and benchmarks.  Not units (no ``UNITS`` entry).

A node is an HTAX switch with the host port, the generated register file and the VELO unit; the
register file holds the node's id (``net.node``).  Switch ports other than host, register file and
VELO are idle.

* :class:`VeloSystem`: one or two nodes joined by network-stream loopback, without a network port.
  With one node the unit's ``net_tx`` feeds its own ``net_rx`` (a node sending to itself); with two,
  node 0's ``net_tx`` feeds node 1's ``net_rx`` and back (two VELO instances cross-connected).
* :class:`VeloNetSystem`: one node whose VELO streams pass a network port (:class:`rtl.netport.
  NetworkPort` with VELO's request stream and VELO as the only unit; node id and
  counters in the register file's ``net`` block, :func:`rtl.netport.connect_regs`).  The port's
  network side is looped back without a crossbar: the header is not routed,
  so every packet that leaves comes back to this node's ejector.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxLinkSignature, HtaxPortSignature, expose_port
from rtl.common.net import NUM_NET_VCS, NetClass, NetStreamSignature, NetUnit
from rtl.common.params import check_int
from rtl.common.portplan import HtaxPortPlan
from rtl.htax import from_config as htax_from_config
from rtl.netport import connect_regs as connect_netport_regs
from rtl.netport import from_config as netport_from_config
from rtl.regs.generate import build as build_regs
from rtl.velo import VeloCompleter, VeloWritePointers, connect_regs, velo_from_config

__all__ = ["VeloSystem", "VeloNetSystem", "VeloCompleterTop"]


def _check_ports(cfg):
    ports = {cfg["regs"]["htax_port"], cfg["velo"]["htax_port"], cfg["velo"]["host_port"]}
    if (cfg["regs"]["host_port"] != cfg["velo"]["host_port"] or len(ports) != 3
            or max(ports) >= cfg["htax"]["ports"]):
        raise ValueError("[velo] host_port must be [regs] host_port, and the three HTAX ports "
                         "distinct switch ports")


def _node(m, cfg, n, ext):
    """Node ``n``: switch, register file and VELO as submodules, the switch's host port wired to the
    top's port ``ext``; returns ``(velo, register file)``."""
    host, regs_port, velo_port = cfg["velo"]["host_port"], cfg["regs"]["htax_port"], cfg["velo"]["htax_port"]
    sw = htax_from_config(cfg)
    rf = build_regs(cfg, revision=(0, False))   # pinned: the test design must not change per commit
    velo = velo_from_config(cfg)
    m.submodules[f"switch{n}"], m.submodules[f"regs{n}"], m.submodules[f"velo{n}"] = sw, rf, velo
    wiring.connect(m, rf.htax, sw.ports[regs_port])
    wiring.connect(m, velo.htax, sw.ports[velo_port])
    connect_regs(m, velo, rf)
    expose_port(m, ext, sw.ports[host])
    HtaxPortPlan(ports=cfg["htax"]["ports"], units={"host": host, "regs": regs_port, "velo": velo_port}) \
        .tie_off(m, sw.ports)
    return velo, rf


def _probe(velo):
    return Cat(velo.htax.rx.header_moves(), velo.net_tx.valid & velo.net_tx.ready & velo.net_tx.payload.first,
               velo.net_rx.valid & velo.net_rx.ready & velo.net_rx.payload.first, velo.htax.tx.header_moves())


class VeloSystem(wiring.Component):
    """One or two nodes joined by network-stream loopback.

    Members
    -------
    htax<n> : Out(HtaxPortSignature)
        Node ``n``'s host port, in the orientation :class:`sim.host.HostModel` expects.
    probe : Out(4)
        Node 0: bit 0 an HTAX header moves into the requester, 1 a network header leaves it, 2 a network
        header enters the completer, 3 a slot-write header leaves it.
    """

    def __init__(self, cfg, *, nodes=1):
        _check_ports(cfg)
        self.cfg = cfg
        self.n = check_int("nodes", nodes, 1, 2)
        members = {f"htax{n}": Out(HtaxPortSignature()) for n in range(nodes)}
        members["probe"] = Out(4)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        velos = [_node(m, self.cfg, n, getattr(self, f"htax{n}"))[0] for n in range(self.n)]
        for n, velo in enumerate(velos):
            wiring.connect(m, velo.net_tx, velos[(n + 1) % self.n].net_rx)
        m.d.comb += self.probe.eq(_probe(velos[0]))
        return m


class VeloNetSystem(wiring.Component):
    """One node, VELO behind a network port whose network side is looped back.

    Members
    -------
    htax0 : Out(HtaxPortSignature)
        The host port, in the orientation :class:`sim.host.HostModel` expects.
    probe : Out(4)
        As :class:`VeloSystem`'s.
    """

    htax0: Out(HtaxPortSignature())
    probe: Out(4)

    def __init__(self, cfg):
        _check_ports(cfg)
        self.cfg = cfg
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        velo, rf = _node(m, self.cfg, 0, self.htax0)
        m.submodules.netport = np = netport_from_config(self.cfg, sources=(NetClass.REQUEST,), sinks=(NetUnit.VELO,))
        connect_netport_regs(m, np, rf)
        wiring.connect(m, velo.net_tx, np.fu_tx[0])
        wiring.connect(m, np.fu_rx[0], velo.net_rx)
        for v in range(NUM_NET_VCS):
            wiring.connect(m, np.xbar_o[v], np.xbar_i[v])
        m.d.comb += self.probe.eq(_probe(velo))
        return m


class VeloCompleterTop(wiring.Component):
    """The VELO completer alone with its mailbox tables as memories holding ``mailboxes``
    (:class:`sim.velo_model.Mailbox`: ``enable``, ``base``, ``size``, ``rp``), ports ``htax_port`` 2 and
    ``host_port`` 0: the completer's unit tests and ``bench/velo.py`` drive it.

    Members
    -------
    net_rx : In(NetStreamSignature())
    tx : Out(HtaxLinkSignature())
    """

    net_rx: In(NetStreamSignature())
    tx: Out(HtaxLinkSignature())

    def __init__(self, mailboxes, *, vpids=8):
        self.mb = mailboxes
        self.vpids = vpids
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.cpl = cpl = VeloCompleter(vpids=self.vpids, htax_port=2, host_port=0)
        m.submodules.wplt = wplt = VeloWritePointers(vpids=self.vpids)
        tables = {}
        for name, width, key in (("mslt", 64, "size"), ("balt", 40, "base"), ("rp", 32, "rp")):
            init = [getattr(mb, key) >> (12 if key == "base" else 0) for mb in self.mb]
            m.submodules[name] = mem = Memory(shape=width, depth=self.vpids, init=init)
            tables[name] = mem.read_port()
            m.d.comb += [tables[name].addr.eq(cpl.vpid), getattr(cpl, name).eq(tables[name].data)]
        wiring.connect(m, wiring.flipped(self.net_rx), cpl.net_rx)
        wiring.connect(m, cpl.tx, wiring.flipped(self.tx))
        m.d.comb += [cpl.enable.eq(sum(int(mb.enable) << i for i, mb in enumerate(self.mb))),
                     wplt.addr.eq(cpl.vpid), cpl.wp.eq(wplt.data), wplt.w_en.eq(cpl.wp_we),
                     wplt.w_addr.eq(cpl.vpid), wplt.w_data.eq(cpl.wp_next)]
        return m
