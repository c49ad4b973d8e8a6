"""librma on the host model (dissertation ch. 8.4, ch. 7.5): notification queues, descriptors, locks.

:class:`RmaNode` is one node's RMA as software sees it: the kernel part (:meth:`RmaNode.setup`: queue
size, lock region, node id; :meth:`RmaNode.open`: a VPID's notification queue, completer enable and,
for kernel-level users only, the physical-address mode bit of table 7-7) and the memory registration
of :class:`sim.driver.atu.AtuDriver`.  :meth:`RmaNode.open` returns an :class:`RmaPort`, the user part:

* **post**: one 16-byte store of the descriptor (:func:`sim.rma_model.descriptor`) to the VPID's page
  of the ``rma`` window; the address carries command, notification bits, operand size and interrupt
  bit (:func:`sim.rma_model.encode_address`).  :meth:`RmaPort.put`, :meth:`~RmaPort.get`,
  :meth:`~RmaPort.immediate_put`, :meth:`~RmaPort.notification_put` and :meth:`~RmaPort.lock` build it.
* **notifications**: :meth:`RmaPort.poll` reads the next queue entry (CPU reads of host memory), clears
  it and advances the local read pointer; the read-pointer register on the VPID's user page is written
  lazily (every ``lazy`` entries, or when the queue runs empty).  :meth:`RmaPort.wait` polls until a
  notification matches and keeps the others, in order, for later waits.
* **MPI** (tables 7-3 to 7-6): :func:`mpi_lock`, :func:`mpi_unlock` and :func:`pscw` on the FCAA lock.
"""

from rtl.common.addrmap import AddressMap
from rtl.rma.formats import LINE_BYTES, MAX_UNITS, RmaCommand, RmaNotifyClass
from sim.driver.atu import PAGE, AtuDriver, Region
from sim.regs_model import RegModel
from sim.rma_model import decode_notification, descriptor, encode_address

__all__ = ["RmaNode", "RmaPort", "RmaTimeout", "mpi_lock", "mpi_unlock", "pscw", "PSCW", "MAX_INT",
           "ENTRY_BYTES"]

ENTRY_BYTES = 16
MAX_INT = 0x7FFF_FFFF           # the largest compare operand (FCAA compares signed 32-bit values)
#: table 7-5: (compare, add, side) of MPI post/start/complete/wait; table 7-6: idle 3 -> 2 -> 1 -> 0 -> 3
PSCW = {"post": (3, -1, "local"), "start": (2, -1, "remote"), "complete": (1, -1, "remote"),
        "wait": (0, 3, "local")}


class RmaTimeout(TimeoutError):
    pass


class RmaNode:
    """One node's RMA seen by software: ``host`` (:class:`sim.host.HostModel`), ``cfg``, ``node`` id."""

    def __init__(self, host, cfg, *, node=0, nq_entries=64, atu=None):
        if nq_entries < 2:
            raise ValueError(f"nq_entries must be at least 2, not {nq_entries}")
        self.host, self.cfg, self.node = host, cfg, node
        self.regs = RegModel.from_config(cfg)
        self.amap = AddressMap.from_config(cfg)
        self.atu = atu or AtuDriver(host, cfg, regs=self.regs)
        self.nq_entries = nq_entries
        self.ports = {}
        self.enables = self.phys = 0
        self.lock_base = None

    async def setup(self, *, locks=True, lock_vpids=None):
        """Kernel set-up: node id, queue size, and (``locks``) a lock region of one page per VPID, for
        VPIDs 0 .. ``lock_vpids`` - 1 (default: all; a lock of a VPID beyond is answered ``LOCK_RANGE``
        by the NIC): a small host memory (the board's) holds only the pages it needs."""
        h, r = self.host, self.regs
        vpids = self.cfg["system"]["vpids"]
        lock_vpids = vpids if lock_vpids is None else lock_vpids
        if not 1 <= lock_vpids <= vpids:
            raise ValueError(f"lock_vpids must be between 1 and {vpids}, not {lock_vpids}")
        await h.write64(r.addr("net.node"), self.node)
        await h.write64(r.addr("rma.nq_size"), self.nq_entries)
        if locks:
            size = lock_vpids * PAGE
            self.lock_base = h.memory.alloc(size, owner="rma_locks")
            await h.write64(r.addr("rma.lock_base"), self.lock_base)
            await h.write64(r.addr("rma.lock_size"), size)
        await h.read64(r.addr("rma.nq_size"))          # the posted writes have landed

    def lock_word(self, vpid, lock):
        """Host address of lock ``lock`` of ``vpid`` (fig. 7-11)."""
        return self.lock_base + vpid * PAGE + 4 * lock

    async def open(self, vpid, *, phys=False, irq=False, lazy=None):
        """Open ``vpid``: its notification queue, completer enable, ``phys`` mode (kernel only)."""
        port = RmaPort(self, vpid, lazy=lazy)
        h, r = self.host, self.regs
        await h.write64(r.addr(f"rma.nq_base[{vpid}]"), port.base)
        await h.write64(r.addr(f"rma.nq_wp[{vpid}]"), 0)
        await h.write64(r.addr(f"rma_user.rp[{vpid}].rp"), 0)
        self.phys = self.phys | 1 << vpid if phys else self.phys & ~(1 << vpid)
        await h.write64(r.addr("rma.phys_mode[0]"), self.phys)
        if irq:
            mask = await h.read64(r.addr("irq.rma_mask"))
            await h.write64(r.addr("irq.rma_mask"), mask | 1 << vpid)
        await self.enable(vpid, True)
        self.ports[vpid] = port
        return port

    async def enable(self, vpid, on):
        self.enables = self.enables | 1 << vpid if on else self.enables & ~(1 << vpid)
        await self.host.write64(self.regs.addr("rma.completer_enable[0]"), self.enables)
        await self.host.read64(self.regs.addr("rma.completer_enable[0]"))

    async def counters(self):
        """Every RMA counter by ``register.field`` name (the ``rma`` block of ``rdl/nic_regs.rdl``)."""
        out = {}
        for reg, fields in (("requester_counters", ("put", "get")), ("responder_counters", ("get", "lock")),
                            ("completer_counters", ("put", "get")),
                            ("errors", ("requester", "refused", "responder_dropped", "completer_dropped")),
                            ("drops", ("notifications", "htax", "atu_faults", "atu_flushes"))):
            v = await self.host.read64(self.regs.addr(f"rma.{reg}"))
            for k, f in enumerate(fields):
                out[f"{reg}.{f}"] = v >> (16 * k) & 0xFFFF
        return out


class RmaPort:
    """An open VPID: notification queue, read pointer, and the operations."""

    def __init__(self, node, vpid, *, lazy=None):
        self.node, self.vpid = node, vpid
        self.entries = node.nq_entries
        self.lazy = max(1, min(lazy or self.entries // 4, self.entries // 2))
        pages = -(-self.entries * ENTRY_BYTES // PAGE)
        self.base = node.host.memory.alloc(pages * PAGE, owner=f"rma_nq{vpid}")
        self.rp = self.released = 0
        self.pending = []           # polled notifications no wait has taken yet
        self.log = []               # every notification polled, in order

    @property
    def phys(self):
        return bool(self.node.phys >> self.vpid & 1)

    async def register(self, size, *, read=True, write=True, owner=None, large=None):
        """Memory for this VPID's operations: NLAs through the ATU (2 MiB pages as
        :meth:`sim.driver.atu.AtuDriver.register` decides with ``large``), or (phys mode) physical
        pages."""
        owner = owner if owner is not None else f"vpid{self.vpid}"
        if self.phys:
            pages = max(1, -(-size // PAGE))
            phys = self.node.host.memory.alloc(pages * PAGE, owner=owner)
            return Region(self.vpid, phys, phys, pages * PAGE, read, write)
        return await self.node.atu.register(self.vpid, size, read=read, write=write, owner=owner, large=large)

    # -- posting ------------------------------------------------------------------------------------
    async def post(self, command, *, dst_node, dst_vpid, notify=(0, 0, 0), cache_line=0, irq=0, **desc):
        """One descriptor store; ``notify`` = (requester, completer, responder) bits."""
        command = getattr(command, "value", command)
        addr = encode_address(self.node.amap, vpid=self.vpid, command=command, req_notify=notify[0],
                              cpl_notify=notify[1], rsp_notify=notify[2], cache_line=cache_line, irq=irq)
        word = descriptor(command=command, dst_node=dst_node, dst_vpid=dst_vpid, **desc)
        await self.node.host.write(addr, word.to_bytes(16, "little"))

    @staticmethod
    def operand(local, remote, nbytes):
        """``(units, cache_line)`` for ``nbytes`` between ``local`` and ``remote``: lines when aligned
        whole lines, else quadwords.  The descriptor holds quadword addresses, so both must be 8-byte
        aligned (a ``ValueError`` otherwise, never a silently truncated address)."""
        if nbytes <= 0 or nbytes % 8 or local % 8 or remote % 8:
            raise ValueError(f"put/get moves whole aligned quadwords, not {nbytes} bytes between {local:#x} "
                             f"and {remote:#x}")
        if nbytes % LINE_BYTES == 0 and local % LINE_BYTES == 0 and nbytes // LINE_BYTES <= MAX_UNITS:
            return nbytes // LINE_BYTES, 1
        if nbytes // 8 <= MAX_UNITS:
            return nbytes // 8, 0
        raise ValueError(f"{nbytes} bytes at {local:#x} fit neither 64 quadwords nor 64 aligned lines")

    async def put(self, dst_node, dst_vpid, local, remote, nbytes, *, notify=(1, 1, 0), irq=0):
        units, line = self.operand(local, remote, nbytes)
        await self.post(RmaCommand.PUT, dst_node=dst_node, dst_vpid=dst_vpid, local=local, remote=remote,
                        units=units, cache_line=line, notify=notify, irq=irq)

    async def get(self, dst_node, dst_vpid, local, remote, nbytes, *, notify=(0, 1, 0), irq=0):
        units, line = self.operand(local, remote, nbytes)
        await self.post(RmaCommand.GET, dst_node=dst_node, dst_vpid=dst_vpid, local=local, remote=remote,
                        units=units, cache_line=line, notify=notify, irq=irq)

    async def immediate_put(self, dst_node, dst_vpid, remote, value, *, notify=False, irq=0):
        if remote % 8:
            raise ValueError(f"an immediate put writes one aligned quadword, not at {remote:#x}")
        await self.post(RmaCommand.IMMEDIATE_PUT, dst_node=dst_node, dst_vpid=dst_vpid, remote=remote,
                        payload=value, notify=(0, int(notify), 0), irq=irq)

    async def notification_put(self, dst_node, dst_vpid, value, *, irq=0):
        await self.post(RmaCommand.NOTIFICATION_PUT, dst_node=dst_node, dst_vpid=dst_vpid, payload=value, irq=irq)

    async def lock(self, dst_node, dst_vpid, lock, compare, add, *, rsp_notify=0, timeout_cycles=20000):
        """FCAA (ch. 7.5.4) on lock ``lock`` of ``dst_vpid`` at ``dst_node``: ``(value after, success)``."""
        await self.post(RmaCommand.LOCK, dst_node=dst_node, dst_vpid=dst_vpid, lock=lock, compare=compare,
                        add=add, notify=(0, 0, rsp_notify))
        n = await self.wait(lambda n: n["cls"] == RmaNotifyClass.COMPLETER.value
                            and n["command"] == RmaCommand.LOCK.value and n["peer_node"] == dst_node
                            and n["peer_vpid"] == dst_vpid, timeout_cycles=timeout_cycles)
        if n["error"]:
            raise RuntimeError(f"lock {lock} of VPID {dst_vpid} at node {dst_node}: error {n['error']}")
        return n["lock"]

    # -- notifications ------------------------------------------------------------------------------
    async def poll(self):
        """The next notification as a dict (:func:`sim.rma_model.decode_notification`), or ``None``."""
        host = self.node.host
        a = self.base + ENTRY_BYTES * self.rp
        raw = await host.mem_read(a, ENTRY_BYTES)
        if not any(raw):
            return None
        await host.mem_write(a, bytes(ENTRY_BYTES))
        self.rp = (self.rp + 1) % self.entries
        n = decode_notification(int.from_bytes(raw, "little"))
        self.log.append(n)
        return n

    async def release(self, force=False):
        pending = (self.rp - self.released) % self.entries
        if pending and (force or pending >= self.lazy):
            await self.node.host.write64(self.node.regs.addr(f"rma_user.rp[{self.vpid}].rp"), self.rp)
            self.released = self.rp

    async def wait(self, match=lambda n: True, *, timeout_cycles=20000, poll_cycles=4):
        """The first notification (kept or new) for which ``match`` holds; raises :class:`RmaTimeout`."""
        for k, n in enumerate(self.pending):
            if match(n):
                return self.pending.pop(k)
        waited = 0
        while True:
            n = await self.poll()
            if n is None:
                await self.release(force=True)
                if waited >= timeout_cycles:
                    raise RmaTimeout(f"VPID {self.vpid}: no matching notification in {timeout_cycles} cycles")
                await self.node.host.cycles(poll_cycles)
                waited += poll_cycles
                continue
            await self.release()
            if match(n):
                return n
            self.pending.append(n)


# -- MPI-2 synchronisation on FCAA (tables 7-3 to 7-6) -------------------------------------------------
async def mpi_lock(port, node, vpid, lock, *, procs, exclusive, retry_cycles=16, tries=1000):
    """MPI_Win_lock (table 7-3): exclusive (compare 0, add n+1) or shared (compare n, add 1); retried
    until it succeeds.  Returns the number of attempts."""
    compare, add = (0, procs + 1) if exclusive else (procs, 1)
    for attempt in range(1, tries + 1):
        _, ok = await port.lock(node, vpid, lock, compare, add)
        if ok:
            return attempt
        await port.node.host.cycles(retry_cycles)
    raise RmaTimeout(f"lock {lock} at node {node} not acquired in {tries} attempts")


async def mpi_unlock(port, node, vpid, lock, *, procs, exclusive):
    """MPI_Win_unlock (table 7-3): add -(n+1) or -1 with compare MAX_INT (always succeeds)."""
    value, ok = await port.lock(node, vpid, lock, MAX_INT, -(procs + 1) if exclusive else -1)
    if not ok:
        raise RuntimeError(f"unlock of lock {lock} at node {node} failed with value {value}")
    return value


async def pscw(port, step, node, vpid, lock, *, retry_cycles=16, tries=1000):
    """One step of MPI post/start/complete/wait (tables 7-5, 7-6) on the window's lock word, retried
    until it succeeds: ``post`` and ``wait`` run on the target's own word, ``start`` and ``complete``
    on the target's word from the origin (``node``/``vpid`` name the target in every case)."""
    compare, add, _ = PSCW[step]
    for attempt in range(1, tries + 1):
        _, ok = await port.lock(node, vpid, lock, compare, add)
        if ok:
            return attempt
        await port.node.host.cycles(retry_cycles)
    raise RmaTimeout(f"{step} on lock {lock} at node {node} did not succeed in {tries} attempts")


