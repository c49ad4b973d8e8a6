"""Packet framing between the network-side beat stream and the link's per-VC beat stream (ch. 7.3).

The link carries only the 64-bit beat data of each virtual channel.  Packet boundaries and beat kinds
are not sent: they follow from the structure of an EXTOLL packet (:mod:`rtl.common.net`): one network
header (:class:`~rtl.common.net.NetHeader`), ``command_words`` command words, ``payload_words``
payload words, where the two counts are read from the header.  :class:`PacketShaper` enforces that
structure on the transmit side, :class:`PacketRestorer` regenerates ``kind``/``first``/``last`` on
the receive side from the same rule.

Deviation from the dissertation: EXTOLL marks frames with start/end characters in the phit stream;
deriving them from the network header costs no link bandwidth.  A packet that disagrees with its own
header cannot then be transported verbatim; :class:`PacketShaper` forces it into shape and counts it.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature

__all__ = ["PacketShaper", "PacketRestorer", "BeatBuffer", "header_only", "last_index"]

_IDX_BITS = 5   # packets have at most 1 + 3 + 15 beats (payload_words is a 4-bit field)


def header_only(header):
    """The packet whose network header is ``header`` (a :class:`NetHeader` view) is that one beat."""
    return (header.command_words == 0) & (header.payload_words == 0)


def last_index(header):
    """Index of the last beat of the packet whose network header is ``header``."""
    return header.command_words + header.payload_words


class PacketShaper(wiring.Component):
    """Turn a network-side :class:`~rtl.common.net.NetBeat` stream into well-formed packet beats.

    A packet whose ``last`` comes early is padded with zero beats up to the length its network header
    gives; a packet whose ``last`` is missing at that length is cut there and its further beats are
    dropped up to and including the next ``last``.  Either counts one ``malformed`` pulse.  The input's
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
        idx = Signal(_IDX_BITS)
        last_idx = Signal(_IDX_BITS)    # index of the packet's last beat
        # The length is known from beat 0 (the network header), in beat 0 itself combinationally.
        # PAD only runs after at least one beat, so the header there is always the registered one.
        hdr = NetHeader(self.i.payload.data)
        at_end = Mux(idx == 0, header_only(hdr), idx == last_idx)

        with m.FSM():
            with m.State("PASS"):
                m.d.comb += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload.data),
                             self.i.ready.eq(self.o.ready)]
                with m.If(self.o.valid & self.o.ready):
                    m.d.sync += idx.eq(idx + 1)
                    with m.If(idx == 0):
                        m.d.sync += last_idx.eq(last_index(hdr))
                    with m.If(at_end):
                        m.d.sync += idx.eq(0)
                        with m.If(~self.i.payload.last):
                            m.d.comb += self.malformed.eq(1)
                            m.next = "DROP"
                    with m.Elif(self.i.payload.last):
                        m.d.comb += self.malformed.eq(1)
                        m.next = "PAD"
            with m.State("PAD"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(0)]
                with m.If(self.o.ready):
                    m.d.sync += idx.eq(idx + 1)
                    with m.If(at_end):
                        m.d.sync += idx.eq(0)
                        m.next = "PASS"
            with m.State("DROP"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid & self.i.payload.last):
                    m.next = "PASS"
        return m


class PacketRestorer(wiring.Component):
    """Regenerate ``kind``/``first``/``last`` for a stream of well-formed packet beats.

    Members
    -------
    i : ``In(stream.Signature(64))``
    o : ``Out(NetStreamSignature())``
    """

    i: In(stream.Signature(64))
    o: Out(NetStreamSignature())

    def elaborate(self, platform):
        m = Module()
        idx = Signal(_IDX_BITS)
        cmd_end = Signal(_IDX_BITS)     # index of the first payload beat
        last_idx = Signal(_IDX_BITS)    # index of the last beat
        hdr = NetHeader(self.i.payload)
        m.d.comb += [self.o.valid.eq(self.i.valid), self.i.ready.eq(self.o.ready),
                     self.o.payload.data.eq(self.i.payload)]
        # The input comes straight from the receive buffer's block RAM: little logic after it (timing).
        with m.If(idx == 0):
            m.d.comb += [self.o.payload.kind.eq(NetBeatKind.HEADER), self.o.payload.first.eq(1),
                         self.o.payload.last.eq(header_only(hdr))]
        with m.Else():
            m.d.comb += [
                self.o.payload.kind.eq(Mux(idx < cmd_end, NetBeatKind.COMMAND, NetBeatKind.PAYLOAD)),
                self.o.payload.last.eq(idx == last_idx),
            ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += idx.eq(idx + 1)
            with m.If(idx == 0):
                m.d.sync += [cmd_end.eq(1 + hdr.command_words),
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
