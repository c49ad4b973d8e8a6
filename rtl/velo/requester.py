"""VELO requester: a posted HTAX WRITE on the ``velo`` window -> a network packet (dissertation ch. 7.4)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, fifo, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import MAX_DATA_WORDS, HtaxCmd, HtaxLinkSignature, HtaxVC
from rtl.common.net import NODE_BITS, NetBeat, NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_int

from .formats import VeloNetFields, velo_address_layout

__all__ = ["VeloRequester"]


class VeloRequester(wiring.Component):
    """VELO requester: one posted HTAX WRITE on the ``velo`` window -> one network packet (dissertation
    ch. 7.4, fig. 7-4; split stores ch. 6.4.4, fig. 6-5).

    The store's address names destination node, destination VPID and source VPID (above bit 12, so the OS
    decides who talks to whom by mapping pages) and the message length and MTT (bits 6..10).  The HTAX
    packet's own length says how many words arrived: fewer than the address announces means the
    write-combining buffer was flushed early and the store arrived split; bits 5:3 of the address are
    then the part's word offset inside the message.  The requester copies that offset and the message
    length into the VELO header fields (:class:`~rtl.velo.formats.VeloNetFields`), so the completer can
    mark the fragment and software can reassemble it.  Stateless: nothing is kept once a packet has left.

    Deviations from the dissertation:

    * The requester gives a destination node, not a route: the network port looks the route up
      (``docs/network.md``), so the RLT is the network port's ``net.route`` table.
    * Packets that are not a VELO store -- not a posted WRITE, outside the window, partial byte enables,
      words beyond the announced message length -- are consumed and dropped (``dropped_incr``); a READ
      gets no response, as at the ATU.

    Parameters
    ----------
    vpid_bits, node_bits : int
        Widths of the address's VPID fields (1..5) and destination-node field (1..18).
    window_base : int
        Absolute base of the ``velo`` window, aligned to its size ``2**(12 + 2 * vpid_bits + node_bits)``.

    Members
    -------
    rx : In(HtaxLinkSignature)
        The HTAX port's receive link.  ``ready`` is 1 on every VC but posted; on posted it is 1 inside a
        packet and, between packets, room for a whole packet (a network header and 8 words) in the output
        FIFO: the requester refuses whole packets and never stalls the switch mid-packet (``docs/htax.md``,
        sink rules), so a full network never holds the host's other traffic at the switch.  Registered
        state only, never ``valid``/``payload``.
    net_tx : Out(stream.Signature(NetBeat))
        FU-side network packets: header, then the payload words.
    node_id : In(NODE_BITS)
        This node's id, the ``src_node`` of every packet.
    sent_incr, dropped_incr : Out(1)
        One-cycle strobes: a packet was emitted / an HTAX packet was dropped.
    """

    rx: In(HtaxLinkSignature())
    net_tx: Out(NetStreamSignature())
    node_id: In(NODE_BITS)
    sent_incr: Out(1)
    dropped_incr: Out(1)

    def __init__(self, *, vpid_bits, node_bits, window_base):
        self.vpid_bits = check_int("vpid_bits", vpid_bits, 1, 5)
        self.node_bits = check_int("node_bits", node_bits, 1, NODE_BITS)
        self.window_bits = 12 + 2 * vpid_bits + node_bits
        check_int("window_base", window_base, 0)
        if window_base % (1 << self.window_bits):
            raise ValueError(f"window_base must be aligned to {1 << self.window_bits:#x}, not {window_base:#x}")
        self.window_base = window_base
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        packet = 1 + MAX_DATA_WORDS                 # network beats of the largest store: header + 8 words
        m.submodules.out = out = fifo.SyncFIFO(width=NetBeat.as_shape().size, depth=2 * packet)
        rx = self.rx
        hdr = rx.payload.word.header
        mem = hdr.body.mem
        off = data.View(velo_address_layout(vpid_bits=self.vpid_bits, node_bits=self.node_bits),
                        mem.addr[:self.window_bits])
        line = off.line

        # a posted packet starts only with room for all of it in the output FIFO and is then taken
        # whole; other VCs are never for VELO: always consumed
        posted = 1 << HtaxVC.POSTED.value
        inside = Signal()           # after a header (good or dropped), until its last beat
        m.d.comb += rx.ready.eq(Mux(inside | (out.level <= out.depth - packet), 0xF, 0xF & ~posted))
        moves = rx.transfer()
        with m.If(moves):
            m.d.sync += inside.eq(~rx.payload.last)

        good = Signal()
        m.d.comb += good.eq((hdr.cmd == HtaxCmd.WRITE) & (hdr.vc == HtaxVC.POSTED) & ~rx.payload.last
                            & (mem.addr[self.window_bits:] == self.window_base >> self.window_bits)
                            & (mem.addr[:3] == 0) & (mem.length != 0)
                            & (mem.first_be == 0xFF) & ((mem.length == 1) | (mem.last_be == 0xFF))
                            & (line.word + mem.length <= line.words_m1 + 1))

        forwarding = Signal()       # inside a packet whose header was good
        spec = Signal(VeloNetFields)
        net_hdr = Signal(NetHeader)
        m.d.comb += [
            spec.dst_vpid.eq(off.dst_vpid), spec.src_vpid.eq(off.src_vpid), spec.words_m1.eq(line.words_m1),
            spec.mtt.eq(line.mtt), spec.offset.eq(line.word),
            net_hdr.dst_node.eq(off.dst_node), net_hdr.unit.eq(NetUnit.VELO), net_hdr.command_words.eq(0),
            net_hdr.payload_words.eq(mem.length), net_hdr.src_node.eq(self.node_id), net_hdr.specific.eq(spec),
        ]
        beat = Signal(NetBeat)
        with m.If(rx.payload.first):
            m.d.comb += [beat.data.eq(net_hdr), beat.kind.eq(NetBeatKind.HEADER), beat.first.eq(1)]
        with m.Else():
            m.d.comb += [beat.data.eq(rx.payload.word.data), beat.kind.eq(NetBeatKind.PAYLOAD),
                         beat.last.eq(rx.payload.last)]
        m.d.comb += out.w_data.eq(beat)

        with m.If(moves):
            with m.If(rx.payload.first):
                m.d.comb += [out.w_en.eq(good), self.sent_incr.eq(good), self.dropped_incr.eq(~good)]
                m.d.sync += forwarding.eq(good)
            with m.Else():
                m.d.comb += out.w_en.eq(forwarding)
                # a data beat outside any packet is dropped and counted once
                m.d.comb += self.dropped_incr.eq(~inside)
                with m.If(rx.payload.last):
                    m.d.sync += forwarding.eq(0)

        out_beat = data.View(NetBeat, out.r_data)
        m.d.comb += [self.net_tx.valid.eq(out.r_rdy), self.net_tx.payload.eq(out_beat),
                     out.r_en.eq(self.net_tx.ready)]
        return m
