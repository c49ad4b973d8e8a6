"""The network port's receive side for one message class: network packet in, FU packet out.

Dissertation ch. 7.3: the network port hands each incoming packet to the functional unit its header
names.  The ejector takes a packet from the crossbar, checks the network header and passes the
packet to the lane of the unit the header's ``unit`` names.  A packet for a unit this node does not
have (``unknown_unit``), for another node (``misrouted``: its ``dst_node`` is not this node), with
more than 8 payload words, or that does not start with a header beat (``malformed``) is dropped whole
and counted.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import MAX_PAYLOAD_WORDS, NODE_BITS, NetBeatKind, NetHeader, NetStreamSignature

__all__ = ["Ejector", "EjectorEvents"]


class EjectorEvents(data.Struct):
    """One-cycle strobes of an ejector."""
    delivered: 1        # a packet's header went to its unit
    unknown_unit: 1
    misrouted: 1
    malformed: 1


class Ejector(wiring.Component):
    """The receive path of one message class.

    Parameters
    ----------
    units : tuple of NetUnit
        The unit of each output lane.

    Members
    -------
    i : In(NetStreamSignature())
        Packets from the crossbar.
    lanes : Out(NetStreamSignature()).array(len(units))
        FU-side packets for each unit.
    node_id : In(NODE_BITS)
    events : Out(EjectorEvents)
    """

    def __init__(self, *, units):
        self._units = tuple(units)
        super().__init__({"i": In(NetStreamSignature()), "lanes": Out(NetStreamSignature()).array(len(units)),
                          "node_id": In(NODE_BITS), "events": Out(EjectorEvents)})

    def elaborate(self, platform):
        m = Module()
        beat = self.i.payload
        head = NetHeader(beat.data)
        lane = Signal(range(max(len(self._units), 2)))
        known = Signal()
        m.d.comb += known.eq(0)
        for k, unit in enumerate(self._units):
            with m.If(head.unit == unit):
                m.d.comb += [known.eq(1), lane.eq(k)]
        cur = Signal.like(lane)

        def forward(first):
            """The input beat to lane ``cur`` (or ``lane``, with the header)."""
            target = lane if first else cur
            for k in range(len(self._units)):
                with m.If(target == k):
                    m.d.comb += [self.lanes[k].valid.eq(self.i.valid), self.lanes[k].payload.eq(beat),
                                 self.i.ready.eq(self.lanes[k].ready)]
                    if first:
                        m.d.comb += self.lanes[k].payload.first.eq(1)

        with m.FSM():
            with m.State("HEADER"):
                bad = (beat.kind != NetBeatKind.HEADER) | ~beat.first | (head.payload_words > MAX_PAYLOAD_WORDS)
                stray = head.dst_node != self.node_id
                with m.If(self.i.valid & (bad | stray | ~known)):
                    m.d.comb += [self.i.ready.eq(1), self.events.malformed.eq(bad),
                                 self.events.misrouted.eq(~bad & stray),
                                 self.events.unknown_unit.eq(~bad & ~stray & ~known)]
                    with m.If(beat.last):
                        m.next = "HEADER"
                    with m.Else():
                        m.next = "DROP"
                with m.Else():
                    forward(first=True)
                    with m.If(self.i.valid & self.i.ready):
                        m.d.comb += self.events.delivered.eq(1)
                        m.d.sync += cur.eq(lane)
                        with m.If(beat.last):
                            m.next = "HEADER"
                        with m.Else():
                            m.next = "BODY"
            with m.State("BODY"):
                forward(first=False)
                with m.If(self.i.valid & self.i.ready & beat.last):
                    m.next = "HEADER"
            with m.State("DROP"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid & beat.last):
                    m.next = "HEADER"
        return m
