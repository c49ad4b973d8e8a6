"""The network port's receive side for one message class: network packet in, FU packet out.

Dissertation ch. 7.3: the network port hands each incoming packet to the functional unit its header
names.  The ejector takes a packet from the crossbar, checks the network header and passes the
packet to the lane of the unit the header's ``unit`` names.  A packet for a unit this node does not
have (``unknown_unit``), for another node (``misrouted``: its ``dst_node`` is not this node), with
more than 8 payload words, or that does not start with a header beat (``malformed``) is dropped whole
and counted.

The header check is registered: a register slice (:class:`~rtl.common.slice.RegisterSlice`) takes
every beat together with its decoded verdict (lane, unknown unit, misrouted, malformed), so the
crossbar's output and the ejector's choice of lane are separate register stages, and the slice's
``ready`` is a flip-flop (no combinational path from the units back into the crossbar).  The slice
is the ejector's one cycle; the network layer puts no other slice in front of it.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import MAX_PAYLOAD_WORDS, NODE_BITS, NetBeat, NetBeatKind, NetHeader, NetStreamSignature
from rtl.common.slice import RegisterSlice

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
        lanes = len(self._units)
        # every beat with the verdict its header would get (used only at a header)
        verdict = data.StructLayout({"beat": NetBeat, "lane": range(max(lanes, 2)), "known": 1, "bad": 1,
                                     "stray": 1})
        m.submodules.stage = stage = RegisterSlice(shape=verdict)
        into = stage.i.payload
        head_in = NetHeader(self.i.payload.data)
        m.d.comb += [stage.i.valid.eq(self.i.valid), self.i.ready.eq(stage.i.ready), into.beat.eq(self.i.payload),
                     into.bad.eq((self.i.payload.kind != NetBeatKind.HEADER) | ~self.i.payload.first
                                 | (head_in.payload_words > MAX_PAYLOAD_WORDS)),
                     into.stray.eq(head_in.dst_node != self.node_id)]
        for k, unit in enumerate(self._units):
            with m.If(head_in.unit == unit):
                m.d.comb += [into.known.eq(1), into.lane.eq(k)]

        src = stage.o
        beat = src.payload.beat
        lane, known = src.payload.lane, src.payload.known
        cur = Signal.like(lane)

        def forward(first):
            """The input beat to lane ``cur`` (or ``lane``, with the header)."""
            target = lane if first else cur
            for k in range(lanes):
                with m.If(target == k):
                    m.d.comb += [self.lanes[k].valid.eq(src.valid), self.lanes[k].payload.eq(beat),
                                 src.ready.eq(self.lanes[k].ready)]
                    if first:
                        m.d.comb += self.lanes[k].payload.first.eq(1)

        with m.FSM():
            with m.State("HEADER"):
                bad, stray = src.payload.bad, src.payload.stray
                with m.If(src.valid & (bad | stray | ~known)):
                    m.d.comb += [src.ready.eq(1), self.events.malformed.eq(bad),
                                 self.events.misrouted.eq(~bad & stray),
                                 self.events.unknown_unit.eq(~bad & ~stray & ~known)]
                    with m.If(beat.last):
                        m.next = "HEADER"
                    with m.Else():
                        m.next = "DROP"
                with m.Else():
                    forward(first=True)
                    with m.If(src.valid & src.ready):
                        m.d.comb += self.events.delivered.eq(1)
                        m.d.sync += cur.eq(lane)
                        with m.If(beat.last):
                            m.next = "HEADER"
                        with m.Else():
                            m.next = "BODY"
            with m.State("BODY"):
                forward(first=False)
                with m.If(src.valid & src.ready & beat.last):
                    m.next = "HEADER"
            with m.State("DROP"):
                m.d.comb += src.ready.eq(1)
                with m.If(src.valid & beat.last):
                    m.next = "HEADER"
        return m
