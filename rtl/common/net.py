"""Network packets: the network header and the beat streams (dissertation ch. 7.3).

One stream carries network packets between a functional unit, its network port, the crossbars and
the link ports: a ``stream.Signature`` of :class:`NetBeat` (64-bit data, the beat's ``kind``,
``first``/``last``).  A packet is one *network header* beat (:class:`NetHeader`), zero to three unit
*command* beats and zero to eight *payload* beats: ``1 + command_words + payload_words`` beats.  The
header names the destination node (``dst_node``) and counts the link hops the packet has taken
(``hops``).

Table routing (``docs/network.md``): every crossbar keeps a route table with one :class:`RouteEntry`
per destination node (the output port, a forced dateline VC) and, per link port, a
:class:`PortRoute` (which link port continues the same ring, and whether the link into the port is
its ring's wrap-around link).  Software writes both (``sim/routing.py``); the crossbar looks the
entry up for the packet at the head of each VC, takes the dateline VC from the port rule, and counts
the hop in the header.  A packet after :data:`MAX_HOPS` link hops is dropped (``LOOP``).

Virtual channels (``docs/network.md``): a packet's message class (:class:`NetClass`) and its dateline
VC together select one of four VCs, ``vc = 2 * class + dateline``, on every link and crossbar port, so
requests never wait behind responses (protocol deadlock) and torus rings are broken at the dateline
(routing deadlock).
"""

from amaranth.hdl import Mux
from amaranth.lib import data, enum, stream

__all__ = ["NetBeatKind", "NetUnit", "NetClass", "RouteError", "NetBeat", "NetHeader",
           "NetStreamSignature", "net_vc", "MAX_PAYLOAD_WORDS", "MAX_COMMAND_WORDS", "EJECT",
           "MAX_HOPS", "MAX_PACKET_BEATS", "RouteEntry", "PortRoute", "NUM_NET_VCS", "NODE_BITS",
           "payload_clamped", "last_index"]

MAX_PAYLOAD_WORDS = 8   # one cache line per network packet, as on the HTAX
MAX_COMMAND_WORDS = 3   # the 2-bit command_words field
EJECT = 8               # RouteEntry.port at or above this names network port ``port - EJECT``
MAX_HOPS = 63           # the 6-bit hop count of the header
NUM_NET_VCS = 4         # 2 message classes x 2 dateline VCs
NODE_BITS = 15          # node ids: every node of a 32 x 32 x 32 torus
#: the longest packet: header, command and payload words
MAX_PACKET_BEATS = 1 + MAX_COMMAND_WORDS + MAX_PAYLOAD_WORDS


class NetBeatKind(enum.Enum, shape=2):
    HEADER = 0      # the network header, a packet's first beat
    COMMAND = 1     # a unit command word
    PAYLOAD = 2


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


def injection_vcs(vcs=NUM_NET_VCS):
    """The VCs a network port injects on and ejects from: dateline VC 0 of each of the ``vcs // 2``
    classes.  A crossbar routes a network port's packets only on these (others are ``MALFORMED``)."""
    return tuple(net_vc(cls, 0) for cls in range(vcs // 2))


class RouteError(enum.Enum, shape=3):
    """Why a crossbar drops a packet (it cannot be routed at this node)."""
    NONE = 0
    MISSING_PORT = 1    # the route table names a link port or network port this crossbar does not have
    MALFORMED = 3       # the packet does not start with a header beat
    NO_ROUTE = 4        # the destination is beyond the route table or its entry is not valid
    LOOP = 5            # the packet has already taken MAX_HOPS link hops


class NetBeat(data.Struct):
    data: 64
    kind: NetBeatKind
    first: 1
    last: 1


class NetHeader(data.Struct):
    """The network header, a packet's first beat.

    The packet is ``1 + command_words + payload_words`` beats long; ``payload_words`` above
    :data:`MAX_PAYLOAD_WORDS` is malformed (the network port drops such a packet, the link clamps it).
    ``hops`` is 0 as a unit sends the packet; every crossbar that sends it over a link counts one.
    """
    dst_node: NODE_BITS     # destination node (every crossbar looks it up in its route table)
    unit: NetUnit
    command_words: 2        # unit command words after the header (0..3)
    payload_words: 4        # payload beats after the command words (0..MAX_PAYLOAD_WORDS)
    src_node: NODE_BITS
    hops: 6                 # link hops taken (set by the crossbars; up to MAX_HOPS)
    specific: 19            # the unit's own header fields


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


def payload_clamped(header):
    """``header.payload_words`` (a :class:`NetHeader` view) is above :data:`MAX_PAYLOAD_WORDS`: malformed,
    carried with 8 payload beats."""
    return header.payload_words > MAX_PAYLOAD_WORDS


def last_index(header):
    """Index of the last beat of the packet whose header is ``header``: header, ``command_words``
    command beats, ``min(payload_words, 8)`` payload beats."""
    pw = Mux(payload_clamped(header), MAX_PAYLOAD_WORDS, header.payload_words)
    return header.command_words + pw


def NetStreamSignature():
    """``stream.Signature`` of :class:`NetBeat`: valid/ready/payload."""
    return stream.Signature(NetBeat)
