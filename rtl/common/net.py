"""The stream between a functional unit and the network port (dissertation ch. 7.3).

An EXTOLL network packet, as a functional unit (VELO, RMA) hands it to its network port and receives
it back, is a sequence of 64-bit beats: one *routing word*, one or more *command frame* words, and
zero or more *payload* words.  Each beat says which of the three it is (``kind``) and carries
``first``/``last``, so the network port frames a packet without knowing the unit's command format.

The routing word is the source-path routing string of ch. 7.3 (run-length-encoded routing characters
with per-VC counters); its character layout belongs to the network crossbar and is opaque here.  The
first command word starts with :class:`NetCommandHeader`, whose ``unit`` field names the functional
unit that receives the packet at the destination; the rest of that word and any further command words
are the unit's own format (VELO status word, RMA network descriptor).
"""

from amaranth.lib import data, enum, stream

__all__ = ["NetBeatKind", "NetUnit", "NetBeat", "NetCommandHeader", "NetStreamSignature",
           "MAX_PAYLOAD_WORDS"]

MAX_PAYLOAD_WORDS = 8   # one cache line per network packet, as on the HTAX


class NetBeatKind(enum.Enum, shape=2):
    ROUTE = 0
    COMMAND = 1
    PAYLOAD = 2


class NetUnit(enum.Enum, shape=4):
    VELO = 1
    RMA = 2


class NetBeat(data.Struct):
    data: 64
    kind: NetBeatKind
    first: 1
    last: 1


class NetCommandHeader(data.Struct):
    unit: NetUnit
    payload_words: 4        # 0..MAX_PAYLOAD_WORDS payload beats follow the command frame
    command_words: 2        # command frame length minus one (1..4 words)
    src_node: 16
    specific: 38            # the unit's own fields


assert NetCommandHeader.as_shape().size == 64


def NetStreamSignature():
    """``stream.Signature`` of :class:`NetBeat`: valid/ready/payload."""
    return stream.Signature(NetBeat)
