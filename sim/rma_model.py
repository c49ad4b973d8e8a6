"""Reference model of the RMA unit (dissertation ch. 7.5): requester, completer and responder of one
node, and a loopback network joining nodes.

Pure Python, no simulator.  Every format comes from :mod:`rtl.rma.formats` and :mod:`rtl.common.net`
through :mod:`sim.layout`.  A VPID whose ``phys`` bit is set uses physical addresses (table 7-7);
every other VPID's NLAs are translated page by page through ``translate(vpid, nla_page, write)``, which
returns a :class:`sim.atu_model.Translation` (for instance :meth:`sim.atu_model.AtuModel.translate`
over GATE tables; without one every translation fails).  Translation rules (ch. 5.3, 7.5.5;
``docs/rma.md``):

* the requester translates a put's local NLA (read); a failed translation ends the put with an
  ``ATU_FAULT`` requester notification, whatever the bits say, and nothing is sent;
* the completer translates each data packet's page (write); a failed one writes nothing and counts
  ``atu_fault``; the operation's notification, if due (an error makes a get's due), carries
  ``ATU_FAULT`` when the last packet failed, and ``cpl_put``/``cpl_get`` do not count it;
* the responder translates a get's source (read); a failed one is answered with one ``ATU_FAULT``
  error response (the origin's completer notifies), without a responder notification;
* the lock region is physical (fig. 7-11): locks are never translated.

Rules (``docs/rma.md``):

* put and get move ``units`` (1..64) quadwords or 64-byte lines; neither range may cross a 4 KiB page
  and the local and remote start must share their offset inside a 64-byte line, so every packet
  carries the payload of one line segment on both sides.  Violations, commands 5..7 and a put-class
  command to a destination VPID beyond ``vpids`` (``ATU_FAULT``) end at the requester with an error
  notification in the VPID's queue (whatever the modifier bits) and nothing is sent.
* Notifications follow table 7-2: put -- requester (``req_notify``) and completer (``cpl_notify``);
  get -- completer at the origin (``cpl_notify``) and responder at the target (``rsp_notify``); lock --
  always the completer (it carries the result), the responder with ``rsp_notify``; immediate put --
  the completer with ``cpl_notify``; notification put -- always the completer.  Other bits are ignored.
* A notification goes to ``base + 16 * wp`` of its VPID's queue of ``nq_size`` entries; a full queue
  (``wp + 1 == rp`` modulo the size) drops it and counts ``nq_dropped``: no VPID ever blocks another.
* A put whose DMA read fails (``memory.read`` returns ``None``) sends zero words for that segment and
  ends with a ``DMA_ERROR`` requester notification, whatever the bits say.  A get's failed read sends
  zero words and the last response carries ``DMA_ERROR`` (an error notification at the origin; the
  responder notification carries it too); a lock whose word cannot be read is answered ``DMA_ERROR``.
* Traffic for a VPID whose completer is disabled is dropped and counted (``cpl_dropped``); a get or
  lock request for it, or for a VPID beyond ``vpids``, is answered with a ``DISABLED`` error response,
  which the origin's completer turns into an error notification.
"""

from dataclasses import dataclass, field

from rtl.common.net import NetHeader, NetUnit
from rtl.rma.formats import (
    DATA_COMMAND_WORDS,
    LINE_BYTES,
    NET_COMMAND_WORDS,
    PAGE_BYTES,
    RmaCommand,
    RmaDescriptor,
    RmaError,
    RmaLockOperands,
    RmaLockResult,
    RmaNetDescriptor,
    RmaNetFields,
    RmaNotification,
    RmaNotifyClass,
    RmaPageOffset,
    RmaPutGetOperands,
)

from .layout import fields, pack, unpack

__all__ = ["command_words", "encode_address", "decode_address", "descriptor", "decode_notification",
           "NotificationQueue", "RmaNodeModel", "RmaNetworkModel", "LOCKS_PER_VPID"]

LOCKS_PER_VPID = PAGE_BYTES // 4
MASK64 = (1 << 64) - 1


def _u(layout, word):
    return unpack(layout, word, fields(layout))


_DATA = {RmaCommand.PUT.value, RmaCommand.IMMEDIATE_PUT.value, RmaCommand.GET.value}


def command_words(unit, command, *, first=True, error=0):
    """The command words of an RMA packet for ``unit`` with ``command``: for the data packets to a
    completer (put, immediate put, get response) the first word of ``RmaNetDescriptor`` in an
    operation's first packet and in one that reports an ``error``, none in the others (they continue
    the source's train); both for the rest (get and lock requests, lock responses, notification puts)."""
    unit, command = int(getattr(unit, "value", unit)), int(getattr(command, "value", command))
    if unit == NetUnit.RMA_COMPLETER.value and command in _DATA:
        return DATA_COMMAND_WORDS if first or error else 0
    return NET_COMMAND_WORDS


def encode_address(amap, *, vpid, command, req_notify=0, cpl_notify=0, rsp_notify=0, cache_line=0, irq=0):
    """Absolute host address to which a descriptor for ``command`` of ``vpid`` is stored (fig. 7-6)."""
    vb = amap.vpid_bits
    if not 0 <= vpid < 1 << vb:
        raise ValueError(f"vpid must be between 0 and {(1 << vb) - 1}, not {vpid}")
    off = pack(RmaPageOffset, {"command": command, "req_notify": req_notify, "cpl_notify": cpl_notify,
                               "rsp_notify": rsp_notify, "cache_line": cache_line})
    return amap["rma"].base + off + (vpid << 12) + (int(irq) << (12 + vb))


def decode_address(amap, addr):
    """``{vpid, irq, command, req_notify, ...}`` of an address in the ``rma`` window, or ``None``."""
    w = amap["rma"]
    if addr not in w:
        return None
    off = addr - w.base
    vb = amap.vpid_bits
    out = _u(RmaPageOffset, off & 0xFFF)
    out.update(vpid=(off >> 12) & ((1 << vb) - 1), irq=(off >> (12 + vb)) & 1)
    return out


def descriptor(*, dst_node, dst_vpid, remote=0, local=0, units=1, payload=0, lock=0, compare=0, add=0,
               command=RmaCommand.PUT):
    """The 128-bit descriptor as an integer: byte addresses ``local``/``remote`` (quadword aligned),
    ``payload`` for immediate and notification put, ``lock``/``compare``/``add`` for a lock."""
    command = int(getattr(command, "value", command))
    if command in (RmaCommand.PUT.value, RmaCommand.GET.value):
        op = pack(RmaPutGetOperands, {"local_qw": local >> 3, "size_m1": units - 1})
    elif command == RmaCommand.LOCK.value:
        op = pack(RmaLockOperands, {"compare": compare & 0xFFFF_FFFF, "add": add & 0xFFFF_FFFF})
    else:
        op = payload
    rq = lock if command == RmaCommand.LOCK.value else remote >> 3
    return pack(RmaDescriptor, {"op": op, "remote_qw": rq, "dst_node": dst_node, "dst_vpid": dst_vpid})


def decode_notification(entry):
    """A notification (128-bit integer) as a dict; ``value`` of a lock as ``(value, success)``."""
    n = _u(RmaNotification, entry)
    if n["command"] == RmaCommand.LOCK.value:
        r = _u(RmaLockResult, n["value"])
        n["lock"] = (r["value"], r["success"])
    return n


def _s32(v):
    v &= 0xFFFF_FFFF
    return v - (1 << 32) if v >> 31 else v


@dataclass
class NotificationQueue:
    enable: bool = False        # completer enable of this VPID
    phys: bool = False          # physical-address mode (kernel only)
    base: int = 0
    wp: int = 0
    rp: int = 0


@dataclass
class RmaNodeModel:
    """One node's RMA unit.  ``memory`` has ``read(addr, size) -> bytes`` and ``write(addr, data)``."""
    node: int
    memory: object
    vpids: int = 32
    nodes: int = 64             # source nodes with a packet train at the completer
    nq_size: int = 16
    lock_base: int = 0
    lock_size: int = 0
    queues: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    translate: object = None    # (vpid, nla_page, write) -> sim.atu_model.Translation
    interrupts: list = field(default_factory=list)   # VPIDs, in order
    dma_reads: int = 0
    dma_writes: int = 0
    trains: dict = field(default_factory=dict)      # (src_node, get) -> the next data packet's descriptor

    def __post_init__(self):
        if not self.queues:
            self.queues = [NotificationQueue() for _ in range(self.vpids)]
        for k in ("req_put", "req_get", "req_errors", "rsp_get", "rsp_lock", "cpl_put", "cpl_get", "cpl_dropped",
                  "nq_dropped", "atu_fault"):
            self.counters.setdefault(k, 0)

    # -- notifications ---------------------------------------------------------------------------
    def _notify(self, vpid, irq, **f):
        q = self.queues[vpid]
        if (q.wp + 1) % self.nq_size == q.rp:
            self.counters["nq_dropped"] += 1
            return
        word = pack(RmaNotification, f)
        self.memory.write(q.base + 16 * q.wp, word.to_bytes(16, "little"))
        self.dma_writes += 1
        q.wp = (q.wp + 1) % self.nq_size
        if irq:
            self.interrupts.append(vpid)

    def _accepts(self, vpid):
        return vpid < self.vpids and self.queues[vpid].enable

    def _physical(self, vpid, addr, write):
        """The physical address of ``addr`` (an NLA unless ``vpid`` is physical), or ``None``."""
        if self.queues[vpid].phys:
            return addr
        t = self.translate(vpid, addr >> 12, write) if self.translate else None
        if t is None or not t.ok:
            self.counters["atu_fault"] += 1
            return None
        return t.ppn << 12 | addr & (PAGE_BYTES - 1)

    # -- requester -----------------------------------------------------------------------------------
    def post(self, vpid, address_fields, desc):
        """One descriptor store: ``address_fields`` as :func:`decode_address` returns them, ``desc`` the
        128-bit integer.  Returns the network packets (lists of 64-bit words) in order."""
        a, d = address_fields, _u(RmaDescriptor, desc)
        cmd = a["command"]
        irq = a["irq"]
        peer = {"peer_node": d["dst_node"], "peer_vpid": d["dst_vpid"]}
        error = RmaError.NONE
        if cmd > RmaCommand.NOTIFICATION_PUT.value:
            error = RmaError.UNKNOWN_COMMAND
        elif vpid >= self.vpids or (cmd not in (RmaCommand.GET.value, RmaCommand.LOCK.value)
                                    and d["dst_vpid"] >= self.vpids):
            error = RmaError.ATU_FAULT      # a put-class command to a VPID beyond vpids: nothing is sent
        if cmd in (RmaCommand.PUT.value, RmaCommand.GET.value):
            op = _u(RmaPutGetOperands, d["op"])
            nbytes = (op["size_m1"] + 1) * (LINE_BYTES if a["cache_line"] else 8)
            local, remote = op["local_qw"] * 8, d["remote_qw"] * 8
            if error == RmaError.NONE:
                if local % PAGE_BYTES + nbytes > PAGE_BYTES or remote % PAGE_BYTES + nbytes > PAGE_BYTES:
                    error = RmaError.PAGE_CROSSING
                elif local % LINE_BYTES != remote % LINE_BYTES:
                    error = RmaError.MISALIGNED
            size = {"size_m1": op["size_m1"], "cache_line": a["cache_line"]}
        else:
            local, remote, nbytes, size = 0, d["remote_qw"] * 8, 8, {}
        if error != RmaError.NONE:
            self.counters["req_errors"] += 1
            self._notify(vpid, irq, command=cmd & 7, cls=RmaNotifyClass.REQUESTER, error=error, value=local,
                         **size, **peer)
            return []
        spec = {"command": cmd, "req_notify": a["req_notify"], "cpl_notify": a["cpl_notify"],
                "rsp_notify": a["rsp_notify"], "cache_line": a["cache_line"] and "size_m1" in size, "irq": irq,
                "src_vpid": vpid, "dst_vpid": d["dst_vpid"]}
        if cmd == RmaCommand.PUT.value:
            src = self._physical(vpid, local, 0)
            if src is None:
                self.counters["req_errors"] += 1
                self._notify(vpid, irq, command=cmd, cls=RmaNotifyClass.REQUESTER, error=RmaError.ATU_FAULT,
                             value=local, **size, **peer)
                return []
            self.counters["req_put"] += 1
            pkts = []
            read_err = False
            for off, n in _segments(local, nbytes):
                data = self.memory.read(src + off, n)
                self.dma_reads += 1
                if data is None:            # the read failed: zero words go out instead
                    read_err, data = True, bytes(n)
                words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, n, 8)]
                pkts.append(self._packet(d["dst_node"], NetUnit.RMA_COMPLETER, spec | {"last": off + n == nbytes},
                                         dst_qw=d["remote_qw"], size_m1=size["size_m1"], offset_qw=off // 8,
                                         payload=words, first=off == 0))
            if read_err:
                self.counters["req_errors"] += 1
            if a["req_notify"] or read_err:
                self._notify(vpid, irq, command=cmd, cls=RmaNotifyClass.REQUESTER, value=local,
                             error=RmaError.DMA_ERROR if read_err else RmaError.NONE, **size, **peer)
            return pkts
        if cmd == RmaCommand.GET.value:
            self.counters["req_get"] += 1
            return [self._packet(d["dst_node"], NetUnit.RMA_RESPONDER, spec | {"last": 1}, dst_qw=d["remote_qw"],
                                 size_m1=size["size_m1"], arg=local >> 3)]
        if cmd == RmaCommand.LOCK.value:
            return [self._packet(d["dst_node"], NetUnit.RMA_RESPONDER, spec | {"last": 1},
                                 dst_qw=d["remote_qw"], arg=d["op"])]
        if cmd == RmaCommand.IMMEDIATE_PUT.value:
            self.counters["req_put"] += 1
            return [self._packet(d["dst_node"], NetUnit.RMA_COMPLETER, spec | {"last": 1}, dst_qw=d["remote_qw"],
                                 payload=[d["op"]])]
        return [self._packet(d["dst_node"], NetUnit.RMA_COMPLETER, spec | {"last": 1}, arg=d["op"])]

    def _packet(self, dst_node, unit, spec, *, payload=(), first=True, **cmd):
        words = command_words(unit, spec["command"], first=first, error=cmd.get("error", 0))
        assert words == NET_COMMAND_WORDS or "arg" not in cmd, cmd
        hdr = pack(NetHeader, {"dst_node": dst_node, "unit": unit, "command_words": words,
                               "payload_words": len(payload), "src_node": self.node,
                               "specific": pack(RmaNetFields, spec)})
        c = pack(RmaNetDescriptor, cmd)
        return [hdr, *((c >> 64 * i) & MASK64 for i in range(words)), *payload]

    # -- receiving side ------------------------------------------------------------------------------
    def receive(self, words):
        """One network packet for this node; returns the response packets it causes."""
        h = _u(NetHeader, words[0])
        s = _u(RmaNetFields, h["specific"])
        cw = h["command_words"]
        c = _u(RmaNetDescriptor, sum(w << 64 * i for i, w in enumerate(words[1:1 + cw])))
        if h["unit"] == NetUnit.RMA_RESPONDER.value:
            return self._respond(h, s, c)
        key = (h["src_node"], s["command"] == RmaCommand.GET.value)
        if cw == 0:                 # a train's next packet: where the previous one ended
            t = self.trains.get(key)
            if t is None:
                self.counters["cpl_dropped"] += 1
                return []
            c = {**c, **t, "error": 0}
        if self._complete(h, s, c, words[1 + cw:]) and s["command"] in _DATA and h["src_node"] < self.nodes:
            self.trains.pop(key, None)
            if not s["last"]:
                self.trains[key] = {"dst_qw": c["dst_qw"], "size_m1": c["size_m1"],
                                    "offset_qw": c["offset_qw"] + len(words[1 + cw:])}
        return []

    def _complete(self, h, s, c, payload):
        """Take one packet for the completer; ``False`` if it was dropped."""
        vpid, cmd = s["dst_vpid"], s["command"]
        peer = {"peer_node": h["src_node"], "peer_vpid": s["src_vpid"]}
        if not self._accepts(vpid):
            self.counters["cpl_dropped"] += 1
            return False
        start = c["dst_qw"] * 8
        fault = False
        if payload:
            dst = self._physical(vpid, start + 8 * c["offset_qw"], 1)
            fault = dst is None
            if not fault:
                self.memory.write(dst, b"".join(w.to_bytes(8, "little") for w in payload))
                self.dma_writes += 1
        if not s["last"]:
            return True
        error = RmaError.ATU_FAULT.value if fault else c["error"]
        size = {"size_m1": c["size_m1"], "cache_line": s["cache_line"]}
        if cmd in (RmaCommand.PUT.value, RmaCommand.IMMEDIATE_PUT.value):
            self.counters["cpl_put"] += not fault
            if s["cpl_notify"]:
                self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.COMPLETER, value=start, error=error,
                             **size, **peer)
        elif cmd == RmaCommand.NOTIFICATION_PUT.value:
            self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.COMPLETER, value=c["arg"], **peer)
        elif cmd == RmaCommand.GET.value:
            self.counters["cpl_get"] += not error
            if s["cpl_notify"] or error:
                self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.COMPLETER, error=error,
                             value=start, **size, **peer)
        else:   # lock: the notification carries the result, whatever the bits say
            self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.COMPLETER, error=c["error"],
                         value=c["arg"], **peer)
        return True

    def _respond(self, h, s, c):
        vpid, cmd = s["dst_vpid"], s["command"]
        back = {"command": cmd, "cpl_notify": s["cpl_notify"], "cache_line": s["cache_line"], "irq": s["irq"],
                "src_vpid": vpid, "dst_vpid": s["src_vpid"]}
        peer = {"peer_node": h["src_node"], "peer_vpid": s["src_vpid"]}
        if not self._accepts(vpid):
            self.counters["cpl_dropped"] += 1
            if cmd == RmaCommand.GET.value:
                return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=c["arg"],
                                     size_m1=c["size_m1"], error=RmaError.DISABLED)]
            return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=c["dst_qw"],
                                 error=RmaError.DISABLED)]
        if cmd == RmaCommand.GET.value:
            nbytes = (c["size_m1"] + 1) * (LINE_BYTES if s["cache_line"] else 8)
            start = c["dst_qw"] * 8
            src = self._physical(vpid, start, 0)
            if src is None:
                return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=c["arg"],
                                     size_m1=c["size_m1"], error=RmaError.ATU_FAULT)]
            self.counters["rsp_get"] += 1
            pkts = []
            read_err = False
            for off, n in _segments(start, nbytes):
                data = self.memory.read(src + off, n)
                self.dma_reads += 1
                if data is None:            # the read failed: zero words; the last packet says so
                    read_err, data = True, bytes(n)
                last = off + n == nbytes
                pkts.append(self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": last},
                                         dst_qw=c["arg"], size_m1=c["size_m1"], offset_qw=off // 8,
                                         error=RmaError.DMA_ERROR if last and read_err else 0,
                                         payload=[int.from_bytes(data[i:i + 8], "little") for i in range(0, n, 8)]))
            if s["rsp_notify"]:
                self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.RESPONDER, value=start,
                             size_m1=c["size_m1"], cache_line=s["cache_line"],
                             error=RmaError.DMA_ERROR if read_err else RmaError.NONE, **peer)
            return pkts
        # lock (FCAA, ch. 7.5.4): the lock word is lock_base + 4 KiB * VPID + 4 * lock number
        self.counters["rsp_lock"] += 1
        lock = c["dst_qw"]
        addr = self.lock_base + PAGE_BYTES * vpid + 4 * lock
        if lock >= LOCKS_PER_VPID or PAGE_BYTES * vpid + 4 * lock + 4 > self.lock_size:
            return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=lock,
                                 error=RmaError.LOCK_RANGE)]
        ops = _u(RmaLockOperands, c["arg"])
        raw = self.memory.read(addr & ~7, 8)
        self.dma_reads += 1
        if raw is None:
            return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=lock,
                                 error=RmaError.DMA_ERROR)]
        value = int.from_bytes(raw[addr & 4:(addr & 4) + 4], "little")
        ok = _s32(value) <= _s32(ops["compare"])
        if ok:
            value = (value + ops["add"]) & 0xFFFF_FFFF
            self.memory.write(addr, value.to_bytes(4, "little"))
            self.dma_writes += 1
        result = pack(RmaLockResult, {"value": value, "success": ok})
        if s["rsp_notify"]:
            self._notify(vpid, s["irq"], command=cmd, cls=RmaNotifyClass.RESPONDER, value=result, **peer)
        return [self._packet(h["src_node"], NetUnit.RMA_COMPLETER, back | {"last": 1}, dst_qw=lock, arg=result)]


def _segments(start, nbytes):
    """``(offset, bytes)`` of the 64-byte-line segments of ``[start, start + nbytes)``."""
    off = 0
    while off < nbytes:
        n = min(LINE_BYTES - (start + off) % LINE_BYTES, nbytes - off)
        yield off, n
        off += n


class RmaNetworkModel:
    """Nodes joined by an ideal in-order network: :meth:`post` runs an operation to completion."""

    def __init__(self, nodes):
        self.nodes = {n.node: n for n in nodes}
        self.packets = 0

    def post(self, node, vpid, address_fields, desc):
        pending = list(self.nodes[node].post(vpid, address_fields, desc))
        while pending:
            words = pending.pop(0)
            self.packets += 1
            pending += self.nodes[_u(NetHeader, words[0])["dst_node"]].receive(words)
