"""Packet framing between the network-side beat stream and the link's per-VC beat stream (ch. 7.3).

The link carries only the 64-bit beat data of each virtual channel.  Packet boundaries and beat kinds
are not sent: they follow from the structure of a network-side packet (:mod:`rtl.common.net`,
``docs/network.md``): beat 0 the network header (:class:`~rtl.common.net.NetHeader`), then
``command_words`` command words and ``min(payload_words, 8)`` payload words, the two counts read from
beat 0.
:class:`PacketShaper` enforces that structure on the transmit side, :class:`PacketRestorer` regenerates
``kind``/``first``/``last`` on the receive side from the same rule.

A ``payload_words`` field above :data:`~rtl.common.net.MAX_PAYLOAD_WORDS` is malformed; the link
clamps the length to 8 payload words (so no packet is longer than
:data:`~rtl.common.net.MAX_PACKET_BEATS`, which the crossbar relies on) but carries the header word as
it is, so the destination's network port still sees the bad field and drops the packet.

Deviation from the dissertation: EXTOLL marks frames with start/end characters in the phit stream;
deriving them from the network header costs no link bandwidth.  A packet that disagrees with its own
header cannot then be transported verbatim; :class:`PacketShaper` forces it into shape and counts it.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import (
    MAX_PACKET_BEATS,
    NetBeatKind,
    NetHeader,
    NetStreamSignature,
    last_index,
    payload_clamped,
)

__all__ = ["PacketShaper", "PacketRestorer", "BeatBuffer", "header_only"]

_IDX = range(MAX_PACKET_BEATS)      # beat index inside a packet
_HEADER = 0                         # beat index of the network header


def header_only(header):
    """The packet whose network header is ``header`` (a :class:`NetHeader` view) ends with it."""
    return (header.command_words == 0) & (header.payload_words == 0)


class PacketShaper(wiring.Component):
    """Turn a :class:`~rtl.common.net.NetBeat` stream into well-formed packet beats.

    A packet is ``1 + command_words + min(payload_words, 8)`` beats, the counts taken from its beat 0
    (the network header).  A packet whose ``last`` comes early is padded with zero beats up to that
    length; one whose ``last``
    is missing at that length is cut there and its further beats are dropped up to and including
    the next ``last``; one whose header has ``payload_words`` above 8 is carried with 8 payload
    beats (and cut or padded to that).  Each such packet counts one ``malformed`` pulse.  The input's
    ``first`` and ``kind`` are not used.

    Members
    -------
    i : ``In(NetStreamSignature())``
    o : ``Out(stream.Signature(64))``
        Beat data; the packet structure is implied.
    malformed : ``Out(1)``
        One-cycle pulse per malformed packet.
    """

    i: In(NetStreamSignature())
    o: Out(stream.Signature(64))
    malformed: Out(1)

    def elaborate(self, platform):
        m = Module()
        idx = Signal(_IDX)
        last_idx = Signal(_IDX)     # index of the packet's last beat, from beat 0
        clamped = Signal()          # the packet's payload_words was above 8
        # The length is known from beat 0 (the network header), in beat 0 itself combinationally.
        hdr = NetHeader(self.i.payload.data)
        at_end = Mux(idx == _HEADER, header_only(hdr), idx == last_idx)
        # In PAD (from beat 1 on) the packet's header is the registered one.
        pad_end = idx == last_idx

        with m.FSM():
            with m.State("PASS"):
                m.d.comb += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload.data),
                             self.i.ready.eq(self.o.ready)]
                with m.If(self.o.valid & self.o.ready):
                    m.d.sync += idx.eq(idx + 1)
                    with m.If(idx == _HEADER):
                        m.d.sync += [last_idx.eq(last_index(hdr)), clamped.eq(payload_clamped(hdr))]
                    with m.If(at_end):
                        m.d.sync += idx.eq(0)
                        # a header-only packet cannot have a clamped length: `clamped` is from beat 0
                        m.d.comb += self.malformed.eq(~self.i.payload.last | (clamped & (idx != _HEADER)))
                        with m.If(~self.i.payload.last):
                            m.next = "DROP"
                    with m.Elif(self.i.payload.last):
                        m.d.comb += self.malformed.eq(1)
                        m.next = "PAD"
            with m.State("PAD"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(0)]
                with m.If(self.o.ready):
                    m.d.sync += idx.eq(idx + 1)
                    with m.If(pad_end):
                        m.d.sync += idx.eq(0)
                        m.next = "PASS"
            with m.State("DROP"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid & self.i.payload.last):
                    m.next = "PASS"
        return m


class PacketRestorer(wiring.Component):
    """Regenerate ``kind``/``first``/``last`` for a stream of well-formed packet beats (the rule of
    :class:`PacketShaper`: HEADER, COMMAND x ``command_words``, PAYLOAD x
    ``min(payload_words, 8)``).

    Members
    -------
    i : ``In(stream.Signature(64))``
    o : ``Out(NetStreamSignature())``
    """

    i: In(stream.Signature(64))
    o: Out(NetStreamSignature())

    def elaborate(self, platform):
        m = Module()
        idx = Signal(_IDX)
        cmd_end = Signal(_IDX)      # index of the first payload beat
        last_idx = Signal(_IDX)     # index of the last beat
        hdr = NetHeader(self.i.payload)
        m.d.comb += [self.o.valid.eq(self.i.valid), self.i.ready.eq(self.o.ready),
                     self.o.payload.data.eq(self.i.payload)]
        # The input comes straight from the receive buffer's output register: little logic after it
        # (timing); only the header beat's `last` depends on the beat itself.
        with m.Switch(idx):
            with m.Case(_HEADER):
                m.d.comb += [self.o.payload.kind.eq(NetBeatKind.HEADER), self.o.payload.first.eq(1),
                             self.o.payload.last.eq(header_only(hdr))]
            with m.Default():
                m.d.comb += [
                    self.o.payload.kind.eq(Mux(idx < cmd_end, NetBeatKind.COMMAND, NetBeatKind.PAYLOAD)),
                    self.o.payload.last.eq(idx == last_idx),
                ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += idx.eq(idx + 1)
            with m.If(idx == _HEADER):
                m.d.sync += [cmd_end.eq(_HEADER + 1 + hdr.command_words),
                             last_idx.eq(last_index(hdr))]
            with m.If(self.o.payload.last):
                m.d.sync += idx.eq(0)
        return m


class BeatBuffer(wiring.Component):
    """Two-entry register FIFO of 64-bit beats: ``o.valid``, ``o.payload`` and ``i.ready`` come straight
    from registers, so neither side's handshake logic reaches the other's (a timing cut, full
    throughput, one cycle of latency).

    Members
    -------
    i : ``In(stream.Signature(64))``
    o : ``Out(stream.Signature(64))``
    """

    i: In(stream.Signature(64))
    o: Out(stream.Signature(64))

    def elaborate(self, platform):
        m = Module()
        head = Signal(64)
        tail = Signal(64)
        count = Signal(range(3))
        m.d.comb += [self.o.valid.eq(count != 0), self.o.payload.eq(head), self.i.ready.eq(count != 2)]
        push = self.i.valid & self.i.ready
        pop = self.o.valid & self.o.ready
        with m.If(pop):
            m.d.sync += head.eq(Mux(count == 2, tail, self.i.payload))
            with m.If(~push):
                m.d.sync += count.eq(count - 1)
        with m.Elif(push):
            with m.If(count == 0):
                m.d.sync += head.eq(self.i.payload)
            with m.Else():
                m.d.sync += tail.eq(self.i.payload)
            m.d.sync += count.eq(count + 1)
        return m
