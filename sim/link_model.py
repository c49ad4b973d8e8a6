"""Reference model of what the link port delivers (rtl/net, docs/link.md).

The link transports per virtual channel the beat stream of well-formed packets: one network header
(``NetHeader``), ``command_words`` command words, ``payload_words`` payload words (``rtl.common.net``).  This model
gives, for packets as a functional unit hands them over, the packets the far end delivers: malformed
ones padded or cut the way :class:`rtl.net.PacketShaper` does, and ``kind``/``first``/``last``
regenerated.  It also holds the wire-format arithmetic (flit lengths, efficiency) used by the bench
and the tests, derived independently of the RTL from ``docs/link.md``.
"""

import random

from rtl.common.net import NetHeader
from sim.layout import fields, pack

__all__ = ["HEADER", "COMMAND", "PAYLOAD", "net_header", "random_packet", "shape_stream",
           "packet_len", "crc_bytes", "flit_phits"]

HEADER, COMMAND, PAYLOAD = 0, 1, 2      # rtl.common.net.NetBeatKind
_CW = fields(NetHeader)["command_words"]
_PW = fields(NetHeader)["payload_words"]


def net_header(*, route=0, unit=1, command_words=0, payload_words=0, src_node=0, specific=0):
    """The network header word (``rtl.common.net.NetHeader``)."""
    return pack(NetHeader, {"route": route, "unit": unit, "command_words": command_words,
                            "payload_words": payload_words, "src_node": src_node, "specific": specific})


def _field(word, f):
    return word >> f[0] & ((1 << f[1]) - 1)


def packet_len(header):
    """Beats of the packet that starts with network header ``header``."""
    return 1 + _field(header, _CW) + _field(header, _PW)


def random_packet(rng, *, payload_words=None, command_words=None):
    """A well-formed packet as a list of 64-bit words."""
    pw = rng.randint(0, 8) if payload_words is None else payload_words
    cw = rng.randint(0, 3) if command_words is None else command_words
    hdr = net_header(route=rng.getrandbits(16), unit=rng.choice((1, 2)), command_words=cw,
                     payload_words=pw, src_node=rng.getrandbits(16), specific=rng.getrandbits(22))
    return [hdr] + [rng.getrandbits(64) for _ in range(cw + pw)]


def beats_of(words, last=None):
    """NetBeat tuples (data, kind, first, last) for a list of words, marked as a well-formed packet
    (``last`` overrides the index of the beat that carries ``last``)."""
    n = len(words)
    cmd_end = 1 + _field(words[0], _CW)
    out = []
    for i, w in enumerate(words):
        kind = HEADER if i == 0 else COMMAND if i < cmd_end else PAYLOAD
        out.append((w, kind, int(i == 0), int(i == (n - 1 if last is None else last))))
    return out


def shape_stream(beats):
    """Packets (lists of words) the far end delivers for a stream of input NetBeat tuples."""
    packets, cur, drop = [], [], False
    for data, _kind, _first, last in beats:
        if drop:
            drop = not last
            continue
        cur.append(data)
        if len(cur) == packet_len(cur[0]):
            packets.append(cur)
            cur, drop = [], not last
        elif last:             # pad with zero words up to the length the header gives
            cur += [0] * (packet_len(cur[0]) - len(cur))
            packets.append(cur)
            cur = []
    return packets


def crc_bytes(phits, phit_bits):
    """The byte string over which the flit CRC is defined (docs/link.md): every header and beat phit,
    most significant byte first for 16-bit phits (CRC-16/IBM-3740, not reflected), least significant
    byte first for 32/64-bit phits (CRC-32/ISO-HDLC, reflected)."""
    order = "big" if phit_bits == 16 else "little"
    return b"".join(int(p).to_bytes(phit_bits // 8, order) for p in phits)


def flit_phits(beats, *, phit_bits, seq_bits, ctrl=False, credit_bits=8):
    """Phits of a data flit with ``beats`` beats (or of a control flit), from docs/link.md."""
    if ctrl:
        return -(-(2 + seq_bits + 2 * credit_bits) // phit_bits) + 1
    return -(-(2 + 2 * seq_bits) // phit_bits) + beats * (64 // phit_bits) + 1


def _selftest():
    rng = random.Random(1)
    p = random_packet(rng)
    assert shape_stream(beats_of(p)) == [p]


_selftest()
