"""The network port's transmit side for one message class: FU packet in, network packet out.

Dissertation ch. 7.3 (the network port converts packets to the network layer's format).  A packet
from a functional unit starts with its network header; the injector checks it and sends the header
(with ``src_node`` set to this node and ``hops`` to 0) and the unit's command and payload beats, framed
by the header's lengths.  The crossbars route it by ``dst_node`` (``docs/network.md``).

Bad input has a defined outcome, counted by ``events``: a packet that does not start with a header
beat or whose ``payload_words`` exceeds 8 is dropped whole (``malformed``), as is one whose
``dst_node`` is beyond the route tables (``no_route``); a packet whose ``last`` comes early is padded
with zero beats to the header's length, one whose ``last`` is missing there is cut and the rest
dropped (both ``malformed``, the packet is still sent).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import (
    MAX_PAYLOAD_WORDS,
    NODE_BITS,
    NetBeatKind,
    NetHeader,
    NetStreamSignature,
)

__all__ = ["Injector", "InjectorEvents"]


class InjectorEvents(data.Struct):
    """One-cycle strobes of an injector."""
    sent: 1         # a packet's header left
    malformed: 1    # a packet was dropped or reshaped (see the module docstring)
    no_route: 1     # a packet was dropped: its destination is beyond the route tables


class Injector(wiring.Component):
    """The transmit path of one message class.

    Parameters
    ----------
    entries : int
        Route table entries: destination nodes ``0 .. entries - 1``.

    Members
    -------
    i : In(NetStreamSignature())
        FU-side packets (header first).
    o : Out(NetStreamSignature())
        The packets with ``src_node`` and ``hops`` set, to the crossbar.
    node_id : In(NODE_BITS)
        This node.
    events : Out(InjectorEvents)
    """

    def __init__(self, *, entries):
        self._entries = entries
        super().__init__({"i": In(NetStreamSignature()), "o": Out(NetStreamSignature()),
                          "node_id": In(NODE_BITS),
                          "events": Out(InjectorEvents)})

    def elaborate(self, platform):
        m = Module()
        beat = self.i.payload
        head = NetHeader(beat.data)
        hdr = Signal(NetHeader)
        left = Signal(range(16))            # body beats still to send (commands, then payload)
        cmds = Signal(range(4))             # of them command beats
        ended = Signal()                    # the unit's packet has ended (its last beat came early)

        with m.FSM():
            with m.State("HEADER"):
                m.d.comb += self.i.ready.eq(1)
                bad = ~beat.first | (beat.kind != NetBeatKind.HEADER) | (head.payload_words > MAX_PAYLOAD_WORDS)
                far = head.dst_node >= self._entries
                with m.If(self.i.valid):
                    m.d.sync += [hdr.eq(head), hdr.src_node.eq(self.node_id), hdr.hops.eq(0), ended.eq(beat.last),
                                 left.eq(head.command_words + head.payload_words), cmds.eq(head.command_words)]
                    with m.If(bad | far):
                        m.d.comb += [self.events.malformed.eq(bad), self.events.no_route.eq(~bad & far)]
                        with m.If(~beat.last):
                            m.next = "DROP"
                    with m.Else():
                        m.next = "HDR_OUT"
            with m.State("HDR_OUT"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.data.eq(hdr), self.o.payload.first.eq(1),
                             self.o.payload.kind.eq(NetBeatKind.HEADER), self.o.payload.last.eq(left == 0)]
                with m.If(self.o.ready):
                    m.d.comb += self.events.sent.eq(1)
                    with m.If(left == 0):
                        with m.If(ended):
                            m.next = "HEADER"
                        with m.Else():
                            m.d.comb += self.events.malformed.eq(1)     # beats beyond the header's length
                            m.next = "DROP"
                    with m.Else():
                        m.next = "BODY"
            with m.State("BODY"):
                # the unit's beats (zero beats once its packet has ended early), framed by the header
                m.d.comb += [self.o.valid.eq(ended | self.i.valid), self.i.ready.eq(~ended & self.o.ready),
                             self.o.payload.data.eq(Mux(ended, 0, beat.data)),
                             self.o.payload.kind.eq(Mux(cmds != 0, NetBeatKind.COMMAND, NetBeatKind.PAYLOAD)),
                             self.o.payload.last.eq(left == 1)]
                with m.If(self.o.valid & self.o.ready):
                    m.d.sync += [left.eq(left - 1), cmds.eq(Mux(cmds != 0, cmds - 1, 0))]
                    early = ~ended & beat.last & (left != 1)
                    late = ~ended & ~beat.last & (left == 1)
                    with m.If(early):
                        m.d.sync += ended.eq(1)
                        m.d.comb += self.events.malformed.eq(1)
                    with m.If(left == 1):
                        with m.If(late):
                            m.d.comb += self.events.malformed.eq(1)
                            m.next = "DROP"
                        with m.Else():
                            m.next = "HEADER"
            with m.State("DROP"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid & beat.last):
                    m.next = "HEADER"
        return m
