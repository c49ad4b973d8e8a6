"""The stream between a functional unit and the network port (dissertation ch. 7.3).

An EXTOLL network packet, as a functional unit (VELO, RMA) hands it to its network port and receives
it back, is a sequence of 64-bit beats: one *network header* (:class:`NetHeader`), zero to three unit
*command* words, and zero to eight *payload* words.  Each beat says which of the three it is
(``kind``) and carries ``first``/``last``, so the network port frames a packet without knowing the
unit's command format; the link (``rtl/net``) sends only the 64 data bits and recovers the framing
from the header's two length fields.

The header's ``route`` is the source path of ch. 7.3 (routing characters consumed hop by hop); its
character layout belongs to the network crossbar and is opaque here.  ``unit`` names the functional
unit that receives the packet at the destination; ``specific`` is that unit's own header (a whole
VELO header fits there, see ``docs/architecture.md``), longer unit formats (the RMA network
descriptor) continue in the command words.
"""

from amaranth.lib import data, enum, stream

__all__ = ["NetBeatKind", "NetUnit", "NetBeat", "NetHeader", "NetStreamSignature",
           "MAX_PAYLOAD_WORDS", "MAX_COMMAND_WORDS"]

MAX_PAYLOAD_WORDS = 8   # one cache line per network packet, as on the HTAX
MAX_COMMAND_WORDS = 3   # the 2-bit command_words field


class NetBeatKind(enum.Enum, shape=2):
    HEADER = 0      # the network header, first beat of every packet
    COMMAND = 1     # a unit command word
    PAYLOAD = 2


class NetUnit(enum.Enum, shape=4):
    VELO = 1
    RMA = 2


class NetBeat(data.Struct):
    data: 64
    kind: NetBeatKind
    first: 1
    last: 1


class NetHeader(data.Struct):
    """First word of every network packet.

    The packet is ``1 + command_words + payload_words`` beats long.  ``payload_words`` above
    :data:`MAX_PAYLOAD_WORDS` is not produced by the units; the link transports such a packet with
    the length the field gives (up to 19 beats).
    """
    route: 16               # source path; the crossbar owns the routing-character layout
    unit: NetUnit
    command_words: 2        # unit command words after the header (0..3)
    payload_words: 4        # payload beats after the command words (0..MAX_PAYLOAD_WORDS)
    src_node: 16
    specific: 22            # the unit's own header fields


assert NetHeader.as_shape().size == 64


def NetStreamSignature():
    """``stream.Signature`` of :class:`NetBeat`: valid/ready/payload."""
    return stream.Signature(NetBeat)
