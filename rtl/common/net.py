"""Network packets: the route word, the network header and the beat streams (dissertation ch. 7.3).

Two streams carry network packets, both a ``stream.Signature`` of :class:`NetBeat` (64-bit data, the
beat's ``kind``, ``first``/``last``):

* **FU side** (a functional unit and its network port): one *network header* beat
  (:class:`NetHeader`), zero to three unit *command* beats, zero to eight *payload* beats.  The header
  names the destination node (``dst_node``); the unit never sees a route.
* **Network side** (network port, crossbar, link ports): the same packet behind a *route* beat
  (:class:`NetRoute`), which the network port looks up for ``dst_node`` and the crossbars consume hop
  by hop; the destination's network port removes it again.  A network-side packet is
  ``2 + command_words + payload_words`` beats.

The route word is the source path of ch. 7.3: up to four run-length-encoded routing characters
(:class:`RouteChar`), ``chars[0]`` the current one.  A character either names a link port and the
number of hops to take through it on the dateline VC 0 (``hops0``, first) and then on VC 1
(``hops1``) -- every crossbar decrements the running count and consumes the character when both are
zero -- or names a network port (``port >= EJECT``) where the packet leaves the network.  Which
counter runs decides the packet's VC, so the route itself crosses the torus dateline.  Four 16-bit
characters hold a minimal dimension-order route in any 3-D torus up to 64 x 64 x 64 (three link
characters, one per dimension, with at most 32 hops each, and the ejecting one), as in the seed.

Virtual channels (``docs/network.md``): a packet's message class (:class:`NetClass`) and its dateline
VC together select one of four VCs, ``vc = 2 * class + dateline``, on every link and crossbar port, so
requests never wait behind responses (protocol deadlock) and torus rings are broken at the dateline
(routing deadlock).
"""

from amaranth.hdl import Mux
from amaranth.lib import data, enum, stream

__all__ = ["NetBeatKind", "NetUnit", "NetClass", "RouteError", "NetBeat", "NetHeader", "RouteChar", "NetRoute",
           "NetStreamSignature", "net_vc", "MAX_PAYLOAD_WORDS", "MAX_COMMAND_WORDS", "ROUTE_CHARS", "EJECT",
           "MAX_HOPS", "MAX_PACKET_BEATS", "RouteEntry", "PortRoute", "NUM_NET_VCS", "NODE_BITS",
           "payload_clamped", "last_index"]

MAX_PAYLOAD_WORDS = 8   # one cache line per network packet, as on the HTAX
MAX_COMMAND_WORDS = 3   # the 2-bit command_words field
ROUTE_CHARS = 4         # routing characters in a route word
EJECT = 8               # RouteChar.port at or above this names network port ``port - EJECT``
MAX_HOPS = 63           # the 6-bit hop counters
NUM_NET_VCS = 4         # 2 message classes x 2 dateline VCs
NODE_BITS = 18          # node ids: every node of a 64 x 64 x 64 torus
#: the longest network-side packet: route, header, command and payload words
MAX_PACKET_BEATS = 2 + MAX_COMMAND_WORDS + MAX_PAYLOAD_WORDS


class NetBeatKind(enum.Enum, shape=2):
    HEADER = 0      # the network header (first beat on the FU side, second on the network side)
    COMMAND = 1     # a unit command word
    PAYLOAD = 2
    ROUTE = 3       # the route word, first beat of a network-side packet


class NetUnit(enum.Enum, shape=3):
    """The functional unit a packet is for at its destination (0 and 4..7: no unit)."""
    VELO = 1            # VELO completer
    RMA_RESPONDER = 2   # RMA get and lock requests
    RMA_COMPLETER = 3   # RMA put data, get and lock responses, notification puts


class NetClass(enum.Enum, shape=1):
    """Message class: a request's receiver may have to answer it; a response never needs an answer."""
    REQUEST = 0
    RESPONSE = 1


def net_vc(cls, dateline):
    """The VC of a packet of class ``cls`` on dateline VC ``dateline`` (0 or 1)."""
    return 2 * int(getattr(cls, "value", cls)) + dateline


class RouteError(enum.Enum, shape=3):
    """Why a crossbar drops a packet (its route is not usable at this node)."""
    NONE = 0
    MISSING_PORT = 1    # a link port or network port this crossbar does not have
    EXHAUSTED = 2       # a link character with no hops left: the route ends before a network port
    MALFORMED = 3       # the packet does not start with a route beat
    NO_ROUTE = 4        # table routing: the destination is beyond the route table or its entry is not valid
    LOOP = 5            # table routing: the packet has already taken MAX_HOPS link hops


class NetBeat(data.Struct):
    data: 64
    kind: NetBeatKind
    first: 1
    last: 1


class NetHeader(data.Struct):
    """The network header: the FU side's first beat, the network side's second.

    The FU-side packet is ``1 + command_words + payload_words`` beats long; ``payload_words`` above
    :data:`MAX_PAYLOAD_WORDS` is malformed (the network port drops such a packet, the link clamps it).
    """
    dst_node: NODE_BITS     # destination node (the network port looks up its route)
    unit: NetUnit
    command_words: 2        # unit command words after the header (0..3)
    payload_words: 4        # payload beats after the command words (0..MAX_PAYLOAD_WORDS)
    src_node: NODE_BITS
    specific: 19            # the unit's own header fields


class RouteChar(data.Struct):
    """One routing character: ``port`` < :data:`EJECT` a link port, taken ``hops0`` times on dateline
    VC 0 and then ``hops1`` times on VC 1; ``port`` >= :data:`EJECT` the network port ``port - EJECT``
    (hop counts ignored).  A link character with both counts zero is an exhausted route."""
    port: 4
    hops0: 6
    hops1: 6


class NetRoute(data.Struct):
    """The route word: ``chars[0]`` is the current character; consumed characters shift out."""
    chars: data.ArrayLayout(RouteChar, ROUTE_CHARS)


class RouteEntry(data.Struct):
    """Table routing (the reference model :func:`sim.netroute.table_step`, ``sim/routing.py``): one
    entry of a crossbar's route table, indexed by the packet's ``dst_node``.  ``port`` below
    :data:`EJECT` is a link port, at or above it the network port ``port - EJECT``; ``dateline``
    puts the packet on dateline VC 1 for this hop whatever the port rule says."""
    valid: 1
    port: 4
    dateline: 1


class PortRoute(data.Struct):
    """Table routing: a crossbar's routing register of link port ``p``, the dateline rule.  A packet
    that arrived at ``p`` and leaves through link port ``straight`` (``has_straight``: on along the
    same ring) leaves on dateline VC 1 if it arrived on VC 1 or ``wrapped`` (the link into ``p`` is
    its ring's wrap-around link); every other link hop starts on VC 0."""
    straight: 3
    has_straight: 1
    wrapped: 1


assert NetHeader.as_shape().size == 64
assert NetRoute.as_shape().size == 64


def payload_clamped(header):
    """``header.payload_words`` (a :class:`NetHeader` view) is above :data:`MAX_PAYLOAD_WORDS`: malformed,
    carried with 8 payload beats."""
    return header.payload_words > MAX_PAYLOAD_WORDS


def last_index(header):
    """Index of the last beat of the network-side packet whose header is ``header``: route, header,
    ``command_words`` command beats, ``min(payload_words, 8)`` payload beats."""
    pw = Mux(payload_clamped(header), MAX_PAYLOAD_WORDS, header.payload_words)
    return 1 + header.command_words + pw


def NetStreamSignature():
    """``stream.Signature`` of :class:`NetBeat`: valid/ready/payload."""
    return stream.Signature(NetBeat)
