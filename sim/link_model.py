"""Reference model of what the link port delivers (rtl/link, docs/link.md).

The link transports per virtual channel the beat stream of well-formed network packets
(``docs/network.md``): the network header (``NetHeader``), ``command_words`` command words and
``min(payload_words, 8)`` payload words.  This model gives, for packets as the network
layer hands them over, the packets the far end delivers: malformed ones padded, cut or clamped the way
:class:`rtl.link.PacketShaper` does, and ``kind``/``first``/``last`` regenerated.  It also holds the
wire-format arithmetic (flit lengths) used by the bench and the tests, derived independently of the RTL
from ``docs/link.md``.  Headers are built with :mod:`sim.netroute`.
"""

import random

from rtl.common.net import MAX_PAYLOAD_WORDS, NUM_NET_VCS, NetBeatKind, NetHeader
from sim.layout import fields
from sim.netroute import fu_packet, net_header

__all__ = ["HEADER", "COMMAND", "PAYLOAD", "random_packet", "beats_of", "shape", "shape_stream",
           "packet_len", "crc_bytes", "flit_phits"]

HEADER, COMMAND, PAYLOAD = NetBeatKind.HEADER.value, NetBeatKind.COMMAND.value, NetBeatKind.PAYLOAD.value
_CW = fields(NetHeader)["command_words"]
_PW = fields(NetHeader)["payload_words"]


def _field(word, f):
    return word >> f[0] & ((1 << f[1]) - 1)


def packet_len(header):
    """Beats of the packet whose network header (beat 0) is ``header``: header, command words,
    payload words clamped to 8."""
    return 1 + _field(header, _CW) + min(_field(header, _PW), MAX_PAYLOAD_WORDS)


def random_packet(rng, *, payload_words=None, command_words=None):
    """A packet as a list of 64-bit words (header, commands, payload); well-formed
    unless ``payload_words`` is above 8, then it has that many payload words."""
    pw = rng.randint(0, MAX_PAYLOAD_WORDS) if payload_words is None else payload_words
    cw = rng.randint(0, 3) if command_words is None else command_words
    f = fields(NetHeader)
    hdr = net_header(dst_node=rng.getrandbits(f["dst_node"][1]), unit=rng.choice((1, 2, 3)), command_words=cw,
                     payload_words=pw, src_node=rng.getrandbits(f["src_node"][1]), hops=rng.getrandbits(6),
                     specific=rng.getrandbits(f["specific"][1]))
    return fu_packet(hdr, [rng.getrandbits(64) for _ in range(cw)], [rng.getrandbits(64) for _ in range(pw)])


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


def shape(beats):
    """``(packets, malformed)`` for a stream of input NetBeat tuples: the packets (lists of words)
    the far end delivers, and how many of them :class:`rtl.link.PacketShaper` counts as malformed
    (``last`` early or late, or ``payload_words`` above 8)."""
    packets, cur, drop, malformed = [], [], False, 0
    for data, _kind, _first, last in beats:
        if drop:
            drop = not last
            continue
        cur.append(data)
        n = packet_len(cur[0])
        if len(cur) == n:
            malformed += (not last) or _field(cur[0], _PW) > MAX_PAYLOAD_WORDS
            packets.append(cur)
            cur, drop = [], not last
        elif last:             # pad with zero words up to the length the header gives
            malformed += 1
            cur += [0] * (n - len(cur))
            packets.append(cur)
            cur = []
    return packets, malformed


def shape_stream(beats):
    """Packets (lists of words) the far end delivers for a stream of input NetBeat tuples."""
    return shape(beats)[0]


def crc_bytes(phits, phit_bits):
    """The byte string over which the flit CRC is defined (docs/link.md): every header and beat phit,
    most significant byte first for 16-bit phits (CRC-16/IBM-3740, not reflected), least significant
    byte first for 32/64-bit phits (CRC-32/ISO-HDLC, reflected)."""
    order = "big" if phit_bits == 16 else "little"
    return b"".join(int(p).to_bytes(phit_bits // 8, order) for p in phits)


def flit_phits(beats, *, phit_bits, seq_bits, ctrl=False, credit_bits=8, vcs=NUM_NET_VCS):
    """Phits of a data flit with ``beats`` beats (or of a control flit), from docs/link.md: data
    header ``type 1 | vc log2(vcs) | seq | ack``, control header ``type 1 | nak 1 | ack | vcs credits``,
    one CRC phit."""
    if ctrl:
        return -(-(2 + seq_bits + vcs * credit_bits) // phit_bits) + 1
    vc_bits = (vcs - 1).bit_length()
    return -(-(1 + vc_bits + 2 * seq_bits) // phit_bits) + beats * (64 // phit_bits) + 1


def _selftest():
    rng = random.Random(1)
    p = random_packet(rng)
    assert shape(beats_of(p)) == ([p], 0)
    long = random_packet(rng, payload_words=11, command_words=1)
    assert shape(beats_of(long)) == ([long[:1 + 1 + 8]], 1)
    cut = random_packet(rng, payload_words=3, command_words=0)
    assert shape(beats_of(cut[:2], last=1)) == ([cut[:2] + [0, 0]], 1)


_selftest()
