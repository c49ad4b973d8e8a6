"""libvelo on the host model (dissertation ch. 8.3, ch. 7.4): mailboxes ("ports"), send, receive.

:class:`VeloNode` is one node's VELO as software sees it (the host model of that node, its register
map and address map); :meth:`VeloNode.open` opens a mailbox and returns a :class:`VeloPort`:

* **open**: allocate the ring (whole 4 KiB pages owned by ``"velo<vpid>"`` in the host memory), write
  base (BALT), size (MSLT, thermometer code), write and read pointer 0, then set the enable bit.
* **send**: one write-combined CPU store of the payload at the encoded requester address
  (:func:`sim.velo_model.encode_address`); the host model splits it with its split probability, or the
  caller splits it at ``split_at`` bytes (two stores, the second at the split offset, fig. 6-5).
* **recv**: poll the status word of the next slot (CPU reads of host memory, no bus traffic), copy the
  slot, zero its status word, collect the parts of a message (two-slot 64-byte messages, split stores)
  per source until ``msg_words`` have arrived, and release slots lazily: the read pointer register is
  written only every ``lazy`` slots (at most half the ring) or when the ring runs empty.

  Parts of one message arrive in offset order, one after the other per source.  A slot that does not
  continue the message collected for its source (offset, length or MTT differ) means the rest of that
  message was discarded at a full ring: the collected parts are dropped; a slot with a non-zero offset
  and nothing collected is the rest of a message whose first part was discarded, and is dropped too.
  :attr:`VeloPort.orphans` counts the dropped slots.  The status word has no sequence number, so a
  first part and the second part of a later message of the same length, MTT and split point, each the
  survivor of a discard, cannot be told from one message.
"""

import random
from collections import defaultdict
from dataclasses import dataclass

from rtl.common.addrmap import AddressMap
from rtl.velo.formats import SLOT_BYTES
from sim.regs_model import RegModel
from sim.velo_model import decode_status, encode_address, ring_slots

__all__ = ["VeloNode", "VeloPort", "Message"]

PAGE = 4096


@dataclass
class Message:
    src_node: int
    src_vpid: int
    mtt: int
    payload: bytes
    split: bool = False


class VeloNode:
    """One node's VELO seen by software: ``host`` (:class:`sim.host.HostModel`), ``cfg``, ``node`` id."""

    def __init__(self, host, cfg, *, node=0):
        self.host, self.cfg, self.node = host, cfg, node
        self.regs = RegModel.from_config(cfg)
        self.amap = AddressMap.from_config(cfg)
        self.ports = {}
        self._enables = 0

    async def set_node_id(self):
        await self.host.write64(self.regs.addr("net.node"), self.node)

    async def open(self, vpid, *, pages=1, lazy=None, irq=False):
        """Open mailbox ``vpid`` with a ring of ``pages`` 4 KiB pages (a power of two)."""
        if pages & (pages - 1) or pages < 1:
            raise ValueError(f"pages must be a power of two, not {pages}")
        port = VeloPort(self, vpid, pages=pages, lazy=lazy)
        h, r = self.host, self.regs
        await h.write64(r.addr(f"velo.balt[{vpid}]"), port.base)
        await h.write64(r.addr(f"velo.mslt[{vpid}]"), pages - 1)       # k ones: 2**k pages
        await h.write64(r.addr(f"velo.wplt[{vpid}]"), 0)
        await h.write64(r.addr(f"velo_user.rp[{vpid}].rp"), 0)
        if irq:
            mask = await h.read64(r.addr("irq.velo_mask"))
            await h.write64(r.addr("irq.velo_mask"), mask | 1 << vpid)
        await self.enable(vpid, True)
        self.ports[vpid] = port
        return port

    async def enable(self, vpid, on):
        self._enables = self._enables | 1 << vpid if on else self._enables & ~(1 << vpid)
        await self.host.write64(self.regs.addr("velo.mbox_enable"), self._enables)
        # a read behind the posted writes: the mailbox is configured when it returns
        await self.host.read64(self.regs.addr("velo.mbox_enable"))

    async def counters(self):
        """``{sent, received, discarded, rejected, dropped}``; reading clears them."""
        c = await self.host.read64(self.regs.addr("velo.counters"))
        d = await self.host.read64(self.regs.addr("velo.req_drops"))
        return {"sent": c & 0xFFFF, "received": c >> 16 & 0xFFFF, "discarded": c >> 32 & 0xFFFF,
                "rejected": c >> 48 & 0xFFFF, "dropped": d & 0xFFFF}


class VeloPort:
    """An open mailbox: ring buffer, local read pointer, reassembly state."""

    def __init__(self, node, vpid, *, pages, lazy):
        self.node, self.vpid = node, vpid
        self.slots = ring_slots(pages - 1)
        self.lazy = max(1, min(lazy or self.slots // 4, self.slots // 2))
        self.base = node.host.memory.alloc(pages * PAGE, owner=f"velo{vpid}")
        self.rp = 0                 # next slot to read
        self.released = 0           # read pointer as last written to the register
        self.partial = defaultdict(list)    # (src_node, src_vpid) -> [(offset, payload, split, msg_words, mtt)]
        self.orphans = 0            # slots dropped: parts of messages whose other part was discarded
        self.slot_log = []          # every slot read: (slot, [status, payload words])

    def address(self, dst_node, dst_vpid, nbytes, mtt, word=0):
        return encode_address(self.node.amap, dst_node=dst_node, dst_vpid=dst_vpid, src_vpid=self.vpid,
                              nbytes=nbytes, mtt=mtt, word=word)

    async def send(self, dst_node, dst_vpid, payload, mtt=0, *, split_at=None):
        """Send 8..64 bytes (a multiple of 8) as one store; ``split_at``: bytes of the first of two stores."""
        payload = bytes(payload)
        addr = self.address(dst_node, dst_vpid, len(payload), mtt)
        host = self.node.host
        if split_at is None:
            await host.write(addr, payload)
        else:
            if split_at % 8 or not 0 < split_at < len(payload):
                raise ValueError(f"split_at must be a multiple of 8 inside the message, not {split_at}")
            await host.write(addr, payload[:split_at])
            await host.write(addr + split_at, payload[split_at:])

    def _slot_addr(self, slot):
        return self.base + slot * SLOT_BYTES

    async def poll(self):
        """One slot if its status word is non-zero: ``(status fields, payload bytes)``; else ``None``."""
        host = self.node.host
        a = self._slot_addr(self.rp)
        st = await host.mem_read64(a)
        if st == 0:
            return None
        f = decode_status(st)
        raw = await host.mem_read(a + 8, 8 * f["words"])
        self.slot_log.append((self.rp, [st] + [int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw), 8)]))
        await host.mem_write64(a, 0)
        self.rp = (self.rp + 1) % self.slots
        return f, raw

    async def release(self, force=False):
        """Write the read pointer if ``lazy`` slots were read since the last write (or ``force``)."""
        pending = (self.rp - self.released) % self.slots
        if pending and (force or pending >= self.lazy):
            await self.node.host.write64(self.node.regs.addr(f"velo_user.rp[{self.vpid}].rp"), self.rp)
            self.released = self.rp

    async def recv(self, *, timeout_cycles=20000, poll_cycles=4):
        """The next whole message (:class:`Message`), reassembled; raises ``TimeoutError``."""
        host = self.node.host
        waited = 0
        while True:
            got = await self.poll()
            if got is None:
                await self.release(force=True)
                if waited >= timeout_cycles:
                    raise TimeoutError(f"VELO port {self.vpid}: no message within {timeout_cycles} cycles")
                await host.cycles(poll_cycles)
                waited += poll_cycles
                continue
            await self.release()
            f, raw = got
            key = (f["src_node"], f["src_vpid"])
            parts = self.partial[key]
            have = sum(len(p[1]) for p in parts) // 8
            if parts and (f["offset"] != have or (f["msg_words"], f["mtt"]) != parts[0][3:]):
                # not the continuation: the rest of the collected message was discarded (ring full)
                self.orphans += len(parts)
                parts.clear()
                have = 0
            if f["offset"] != have:
                self.orphans += 1           # a later part whose first part was discarded
                continue
            parts.append((f["offset"], raw, f["split"], f["msg_words"], f["mtt"]))
            if have + len(raw) // 8 < f["msg_words"]:
                continue
            del self.partial[key]
            data = b"".join(p[1] for p in parts)
            return Message(f["src_node"], f["src_vpid"], f["mtt"], data, split=any(p[2] for p in parts))


def random_payload(rng: random.Random, nbytes):
    return bytes(rng.randrange(256) for _ in range(nbytes))
