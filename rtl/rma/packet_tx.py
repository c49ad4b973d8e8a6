"""RMA packet emitter: a network header, its command words (none, one or two) and the payload words of one
packet onto a network stream (dissertation ch. 7.5.6: the datapath behind the responder's FSM)."""

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature

from .formats import RmaNetDescriptor
from .reader import RmaReadData

__all__ = ["RmaPacketTx", "RmaPacketOut"]

#: one packet to send: its header and command words; ``hdr.payload_words`` words follow from ``data``
RmaPacketOut = data.StructLayout({"hdr": NetHeader, "cmd": RmaNetDescriptor})


class RmaPacketTx(wiring.Component):
    """Send ``packets``: header, ``hdr.command_words`` command words (0: none; 1: the first word of
    ``cmd``; any other value: both), then ``payload_words`` words taken from ``data`` (one
    read engine slot; its ``last`` word ends the packet).  A packet item is taken (``ready``) as its
    last beat moves, so the sender holds it, and may look at it, for the whole packet.

    Members
    -------
    packets : In(stream.Signature(RmaPacketOut))
    data : In(stream.Signature(RmaReadData))
    net_tx : Out(NetStreamSignature())
    """

    packets: In(stream.Signature(RmaPacketOut))
    data: In(stream.Signature(RmaReadData))
    net_tx: Out(NetStreamSignature())

    def elaborate(self, platform):
        m = Module()
        p, tx = self.packets.payload, self.net_tx
        beat = tx.payload
        cmd = p.cmd.as_value()
        empty = p.hdr.payload_words == 0
        one = p.hdr.command_words == 1
        none = p.hdr.command_words == 0
        with m.FSM():
            with m.State("HEADER"):
                m.d.comb += [tx.valid.eq(self.packets.valid), beat.data.eq(p.hdr), beat.kind.eq(NetBeatKind.HEADER),
                             beat.first.eq(1), beat.last.eq(none & empty),
                             self.packets.ready.eq(tx.ready & none & empty)]
                with m.If(tx.valid & tx.ready):
                    m.next = "CMD0"
                    with m.If(none):
                        m.next = "HEADER"
                        with m.If(~empty):
                            m.next = "DATA"
            with m.State("CMD0"):
                m.d.comb += [tx.valid.eq(1), beat.data.eq(cmd[:64]), beat.kind.eq(NetBeatKind.COMMAND),
                             beat.last.eq(one & empty), self.packets.ready.eq(tx.ready & one & empty)]
                with m.If(tx.ready):
                    m.next = "CMD1"
                    with m.If(one):
                        m.next = "HEADER"
                        with m.If(~empty):
                            m.next = "DATA"
            with m.State("CMD1"):
                m.d.comb += [tx.valid.eq(1), beat.data.eq(cmd[64:]), beat.kind.eq(NetBeatKind.COMMAND),
                             beat.last.eq(empty), self.packets.ready.eq(tx.ready & empty)]
                with m.If(tx.ready):
                    m.next = "HEADER"
                    with m.If(~empty):
                        m.next = "DATA"
            with m.State("DATA"):
                last = self.data.payload.last
                m.d.comb += [tx.valid.eq(self.data.valid), beat.data.eq(self.data.payload.data),
                             beat.kind.eq(NetBeatKind.PAYLOAD), beat.last.eq(last), self.data.ready.eq(tx.ready),
                             self.packets.ready.eq(self.data.valid & tx.ready & last)]
                with m.If(self.data.valid & tx.ready & last):
                    m.next = "HEADER"
        return m
