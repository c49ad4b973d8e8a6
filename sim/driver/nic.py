"""The NIC driver on the host model (dissertation ch. 8.1): one node's NIC as the kernel sees it.

:class:`Nic` brings a NIC up and hands out the unit drivers:

* :meth:`Nic.init`: check the version register against the register model built from the same RDL
  (a stale or foreign bitstream is refused, as the seed's driver refuses one), write the node id, the
  crossbar's route look-up table and the link ports' dateline rules (from :mod:`sim.routing`: one
  entry per node of the topology, the SERU step of ch. 8.2), then the RMA kernel set-up (queue size,
  lock region);
* :attr:`Nic.velo` (:class:`~sim.driver.velo.VeloNode`), :attr:`Nic.rma`
  (:class:`~sim.driver.rma.RmaNode`) and :attr:`Nic.atu` (:class:`~sim.driver.atu.AtuDriver`, shared
  with RMA's memory registration).

:func:`htax_route` is the host's address decoder: which HTAX port a CPU access to an address goes to
(the ``rma`` and ``velo`` windows to their units, everything else to the register file).
"""

from rtl.common.addrmap import AddressMap
from sim.driver.atu import AtuDriver
from sim.driver.rma import RmaNode
from sim.driver.velo import VeloNode
from sim.regs_model import RegModel

__all__ = ["Nic", "NicVersionError", "htax_route"]


class NicVersionError(RuntimeError):
    pass


def htax_route(cfg):
    """``route(addr) -> HTAX port`` for :class:`sim.host.HostModel`: the unit whose window holds ``addr``."""
    amap = AddressMap.from_config(cfg)
    ports = {"rma": cfg["rma"]["htax_port"], "velo": cfg["velo"]["htax_port"]}
    regs = cfg["regs"]["htax_port"]

    def route(addr):
        hit = amap.decode(addr)
        return ports.get(hit[0], regs) if hit else regs
    return route


class Nic:
    """One node's NIC: ``host`` (:class:`sim.host.HostModel`), ``cfg``, ``node`` id and the
    ``topology`` (:class:`sim.routing.Topology`) whose routes it uses.

    Parameters
    ----------
    revision : (int, bool), optional
        The version the register file must report (:func:`rtl.regs.generate.build`); default from the
        configuration or git, as the gateware's.
    nq_entries : int
        RMA notification queue entries per VPID.
    """

    def __init__(self, host, cfg, *, node, topology, revision=None, nq_entries=64):
        self.host, self.cfg, self.node, self.topology = host, cfg, node, topology
        self.regs = RegModel.from_config(cfg, revision=revision)
        self.atu = AtuDriver(host, cfg, regs=self.regs)
        self.velo = VeloNode(host, cfg, node=node)
        self.rma = RmaNode(host, cfg, node=node, nq_entries=nq_entries, atu=self.atu)

    async def version(self):
        return await self.host.read64(self.regs.addr("rf.version"))

    async def init(self, *, locks=True, lock_vpids=None):
        """Version check, node id, route table, RMA set-up (:meth:`RmaNode.setup
        <sim.driver.rma.RmaNode.setup>`'s ``locks`` and ``lock_vpids``).  Raises :class:`NicVersionError`."""
        h, r = self.host, self.regs
        want, got = r.peek("rf.version"), await self.version()
        if got != want:
            raise NicVersionError(f"node {self.node}: the NIC reports version {got:#018x}, "
                                  f"the driver was built for {want:#018x}")
        await h.write64(r.addr("net.node"), self.node)
        for dst, entry in enumerate(self.topology.crossbar_table(self.node)):
            await h.write64(r.addr(f"net.route[{dst}]"), entry)
        for port, rule in enumerate(self.topology.port_routes(self.node)):
            await h.write64(r.addr(f"xbar[{port}].route"), rule)
        await self.rma.setup(locks=locks, lock_vpids=lock_vpids)   # ends with a read: every write has landed

    async def route(self, dst):
        """The route table entry (a packed :class:`~rtl.common.net.RouteEntry`) the NIC holds for ``dst``."""
        return await self.host.read64(self.regs.addr(f"net.route[{dst}]"))

    async def _counters(self, block, regs):
        out = {}
        for reg, fields in regs:
            v = await self.host.read64(self.regs.addr(f"{block}.{reg}"))
            for k, f in enumerate(fields):
                out[f"{reg}.{f}"] = v >> (32 * k) & 0xFFFF_FFFF
        return out

    async def net_counters(self):
        """``{sent.requests, ..., rx_malformed.malformed}`` of the ``net`` block (32-bit fields)."""
        return await self._counters("net", (
            ("sent", ("requests", "responses")), ("delivered", ("requests", "responses")),
            ("tx_drops", ("malformed", "no_route")), ("rx_drops", ("unknown_unit", "misrouted")),
            ("rx_malformed", ("malformed",))))

    async def link_counters(self):
        """``{port: {crc_errors, retransmissions, naks_sent, naks_received, replay_timeouts, link_errors,
        state}}`` of every link port (32-bit saturating registers; ``state`` bit 0: the link-error
        state)."""
        out = {}
        for p in range(self.cfg["xbar"]["link_ports"]):
            c = await self._counters(f"link[{p}]", (
                ("errors", ("crc_errors", "retransmissions")), ("naks", ("naks_sent", "naks_received")),
                ("timeouts", ("replay_timeouts", "link_errors"))))
            out[p] = {k.split(".")[1]: v for k, v in c.items()}
            out[p]["state"] = await self.host.read64(self.regs.addr(f"link[{p}].status")) & 0xF
        return out

    async def xbar_counters(self, port):
        """``{packets.packets_in, ..., malformed.loop}`` of crossbar port ``port`` (the link ports
        first, then the network port; 32-bit fields)."""
        return await self._counters(f"xbar[{port}]", (
            ("packets", ("packets_in", "packets_out")), ("drops", ("missing_port", "no_route")),
            ("malformed", ("malformed", "loop"))))
