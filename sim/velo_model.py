"""Reference model of the VELO unit (dissertation ch. 7.4, ch. 6.4.4): requester and completer.

Pure Python, no simulator: tests compare the RTL (``rtl/velo``) with it packet for packet and slot for
slot.  Every format comes from :mod:`rtl.velo.formats` and :mod:`rtl.common.net` through
:mod:`sim.layout`, so the model cannot drift from the gateware's bit positions.

* :func:`encode_address` / :func:`decode_address`: the requester address of fig. 7-4.
* :class:`VeloRequesterModel`: one posted HTAX WRITE -> one FU-side network packet (header + payload
  words) or a drop with its reason.  Stateless, as the hardware.
* :class:`VeloCompleterModel`: one network packet -> the slot writes ``(address, [status, payload...])``
  or a discard/reject with its reason; per-VPID enable, base, size, write and read pointer.
"""

from dataclasses import dataclass, field

from rtl.common.htax import HtaxCmd
from rtl.common.net import NetHeader, NetUnit
from rtl.velo.formats import (
    MAX_MSG_WORDS,
    SLOT_BYTES,
    SLOT_WORDS,
    VELO_VPID_BITS,
    VeloLineOffset,
    VeloNetFields,
    VeloStatus,
)

from .layout import fields, pack, unpack


def _u(layout, word):
    return unpack(layout, word, fields(layout))

__all__ = ["encode_address", "decode_address", "net_header", "status_word", "decode_status", "ring_slots",
           "VeloRequesterModel", "VeloCompleterModel", "Drop"]


def encode_address(amap, *, dst_node, dst_vpid, src_vpid, nbytes, mtt, word=0):
    """Absolute host address of a VELO store of ``nbytes`` (8..64, multiple of 8); ``word``: word offset
    of a part of a split store."""
    if nbytes % 8 or not 8 <= nbytes <= 64:
        raise ValueError(f"nbytes must be 8..64 in steps of 8, not {nbytes}")
    vb, nb = amap.vpid_bits, amap.node_bits
    for name, v, bits in (("dst_node", dst_node, nb), ("dst_vpid", dst_vpid, vb), ("src_vpid", src_vpid, vb),
                          ("mtt", mtt, 2), ("word", word, 3)):
        if not 0 <= v < 1 << bits:
            raise ValueError(f"{name} must be between 0 and {(1 << bits) - 1}, not {v}")
    line = pack(VeloLineOffset, {"word": word, "words_m1": nbytes // 8 - 1, "mtt": mtt})
    off = line | src_vpid << 12 | dst_vpid << (12 + vb) | dst_node << (12 + 2 * vb)
    return amap["velo"].base + off


def decode_address(amap, addr):
    """``{dst_node, dst_vpid, src_vpid, msg_words, mtt, word}`` of an address in the ``velo`` window, or
    ``None`` outside it."""
    w = amap["velo"]
    if addr not in w:
        return None
    off = addr - w.base
    vb = amap.vpid_bits
    line = _u(VeloLineOffset, off & 0xFFF)
    return {"dst_node": off >> (12 + 2 * vb), "dst_vpid": (off >> (12 + vb)) & ((1 << vb) - 1),
            "src_vpid": (off >> 12) & ((1 << vb) - 1), "msg_words": line["words_m1"] + 1,
            "mtt": line["mtt"], "word": line["word"], "byte": line["byte"]}


def net_header(*, dst_node, src_node, words, dst_vpid, src_vpid, msg_words, mtt, offset):
    spec = pack(VeloNetFields, {"dst_vpid": dst_vpid, "src_vpid": src_vpid, "words_m1": msg_words - 1,
                                "mtt": mtt, "offset": offset})
    return pack(NetHeader, {"dst_node": dst_node, "unit": NetUnit.VELO, "command_words": 0,
                            "payload_words": words, "src_node": src_node, "specific": spec})


def status_word(*, src_node, src_vpid, msg_words, offset, words, mtt, split, second):
    return pack(VeloStatus, {"src_node": src_node, "src_vpid": src_vpid, "msg_words": msg_words,
                             "offset": offset, "words": words, "mtt": mtt, "split": split, "second": second})


def decode_status(word):
    return _u(VeloStatus, word)


def ring_slots(size):
    """Slots of a ring whose MSLT value is ``size``: the thermometer code of ``k`` ones -> ``2**k`` 4-KiB
    pages of 64 slots.  The completer uses any value as the mask ``{size, 6'b111111}`` of the slot
    pointer."""
    return ((size & ((1 << 26) - 1)) << 6 | 0x3F) + 1


@dataclass
class Drop:
    reason: str


class VeloRequesterModel:
    """The requester: posted WRITE -> FU-side network packet (a list of 64-bit words).

    ``node``: this node's id (the ``src_node`` the requester writes; the network port writes the same).
    """

    def __init__(self, amap, *, node=0):
        self.amap = amap
        self.node = node
        self.sent = 0
        self.dropped = 0

    def write(self, pkt):
        """``pkt``: :class:`sim.htax_packet.HtaxPacket`.  Returns the packet's words or a :class:`Drop`."""
        reason = self._check(pkt)
        if reason:
            self.dropped += 1
            return Drop(reason)
        a = decode_address(self.amap, pkt.addr)
        self.sent += 1
        hdr = net_header(dst_node=a["dst_node"], src_node=self.node, words=pkt.length, dst_vpid=a["dst_vpid"],
                         src_vpid=a["src_vpid"], msg_words=a["msg_words"], mtt=a["mtt"], offset=a["word"])
        return [hdr] + list(pkt.data)

    def _check(self, pkt):
        if pkt.cmd != HtaxCmd.WRITE:
            return "not a write"
        if pkt.malformed_reason():
            return "malformed"
        a = decode_address(self.amap, pkt.addr)
        if a is None:
            return "outside the velo window"
        if pkt.first_be != 0xFF or (pkt.length > 1 and pkt.last_be != 0xFF):
            return "partial byte enables"
        if a["word"] + pkt.length > a["msg_words"]:
            return "words beyond the message length"
        return None


@dataclass
class Mailbox:
    enable: bool = False
    base: int = 0
    size: int = 0           # MSLT value (thermometer code)
    wp: int = 0
    rp: int = 0


@dataclass
class VeloCompleterModel:
    """The completer: FU-side network packet -> slot writes ``[(addr, [status, payload...]), ...]``.

    A packet is written only if all its slots are free (``need`` slots: 2 for an 8-word packet, else 1;
    one slot of the ring always stays empty so full and empty differ); otherwise it is discarded whole.
    """
    vpids: int = 32
    mailboxes: list = field(default_factory=list)
    received: int = 0
    discarded: int = 0
    rejected: int = 0

    def __post_init__(self):
        if not self.mailboxes:
            self.mailboxes = [Mailbox() for _ in range(self.vpids)]

    @staticmethod
    def mask(size):
        return ring_slots(size) - 1

    def free(self, vpid):
        mb = self.mailboxes[vpid]
        return (mb.rp - mb.wp - 1) & self.mask(mb.size)

    def packet(self, words):
        h = _u(NetHeader, words[0])
        s = _u(VeloNetFields, h["specific"])
        n = h["payload_words"]
        msg = s["words_m1"] + 1
        if (h["unit"] != NetUnit.VELO.value or h["command_words"] or not 1 <= n <= MAX_MSG_WORDS
                or s["offset"] + n > msg or s["dst_vpid"] >= self.vpids):
            self.rejected += 1
            return Drop("malformed" if s["dst_vpid"] < self.vpids else "vpid out of range")
        mb = self.mailboxes[s["dst_vpid"]]
        if not mb.enable:
            self.rejected += 1
            return Drop("disabled")
        need = 2 if n == SLOT_WORDS else 1
        if self.free(s["dst_vpid"]) < need:
            self.discarded += 1
            return Drop("ring full")
        split = int(n < msg)
        chunks = [(s["offset"], words[1:1 + n], 0)] if need == 1 else [(0, words[1:8], 0), (7, words[8:9], 1)]
        out = []
        for off, payload, second in chunks:
            st = status_word(src_node=h["src_node"], src_vpid=s["src_vpid"], msg_words=msg, offset=off,
                             words=len(payload), mtt=s["mtt"], split=split, second=second)
            out.append((mb.base + mb.wp * SLOT_BYTES, [st] + list(payload)))
            mb.wp = (mb.wp + 1) & self.mask(mb.size)
        self.received += 1
        return out


assert fields(VeloNetFields)["dst_vpid"][1] == VELO_VPID_BITS
