"""VELO completer: one network packet -> one or two 64-byte receive slots in host memory
(dissertation ch. 7.4, fig. 7-5, table 7-1).

For the packet's destination VPID the completer reads the mailbox enable, size (MSLT), base (BALT),
read pointer (RPLT) and write pointer (WPLT), all in the cycle after the header arrives.  Then:

* a malformed VELO header (command words, no or more than eight payload words, a fragment beyond the
  message length, another unit) or a destination VPID beyond ``vpids``: the packet is consumed and
  ``rejected_incr`` strobes;
* mailbox disabled: consumed, ``rejected_incr``;
* not enough free slots (a ring of ``S`` slots holds ``S - 1``, so full and empty differ; an 8-word
  packet needs two): consumed, ``discarded_incr``.  No slot the reader has not released is written;
* otherwise each slot is one posted HTAX WRITE to ``base + 64 * wp``: the status word
  (:class:`~rtl.velo.formats.VeloStatus`, never zero), then the payload.  An 8-word packet takes two
  slots, status + 7 words and status + 1 word, as fig. 7-5.  The write pointer advances (modulo the
  ring, mask ``{mslt, 6'b111111}``), ``received_incr`` strobes and the VPID's bit of ``irq`` pulses
  (the register file's ``irq.velo_status``, masked by ``irq.velo_mask``: asynchronous mode).

The payload passes from ``net_rx`` to ``tx`` without a buffer; the network port frames packets by
their headers (``docs/network.md``), which the completer relies on.

Deviations: the RLT is the network port's; the status word layout is this project's (the figure with
its bits is missing from the text): see ``docs/architecture.md``.

Members
-------
net_rx : In(stream.Signature(NetBeat))
    FU-side packets from the network port.
tx : Out(HtaxLinkSignature)
    Slot writes into the HTAX (posted VC).
vpid : Out(range(vpids))
    Address of every per-VPID look-up (MSLT, BALT, RPLT, WPLT); data one cycle later.
enable : In(vpids) ; mslt : In(64) ; balt : In(40) ; rp : In(32) ; wp : In(32)
wp_we : Out(1) ; wp_next : Out(32)
    Write-pointer update for ``vpid``.
received_incr, discarded_incr, rejected_incr : Out(1)
irq : Out(vpids)
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxHeader, HtaxLinkSignature, HtaxVC
from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_port, check_pow2

from .formats import SLOT_WORDS, VeloNetFields, VeloStatus

__all__ = ["VeloCompleter"]


class VeloCompleter(wiring.Component):
    def __init__(self, *, vpids, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "net_rx": In(NetStreamSignature()), "tx": Out(HtaxLinkSignature()),
            "vpid": Out(range(vpids)), "enable": In(vpids), "mslt": In(64), "balt": In(40), "rp": In(32),
            "wp": In(32), "wp_we": Out(1), "wp_next": Out(32),
            "received_incr": Out(1), "discarded_incr": Out(1), "rejected_incr": Out(1), "irq": Out(vpids),
        })

    def elaborate(self, platform):
        m = Module()
        rx, tx = self.net_rx, self.tx
        in_hdr = NetHeader(rx.payload.data)
        hdr = Signal(NetHeader)                 # the packet's header, held from IDLE on
        spec = VeloNetFields(hdr.specific)
        hdr_last = Signal()                     # the header was the packet's last beat
        vpid = Signal(range(self.vpids))
        in_vpid = VeloNetFields(in_hdr.specific).dst_vpid
        m.d.comb += self.vpid.eq(vpid)

        # slot arithmetic (LOOKUP cycle): pointers are slot indices, the ring mask is {mslt, 6'b111111}
        mask = Signal(32)
        free = Signal(32)
        two = Signal()
        m.d.comb += [mask.eq(Cat(Const(0x3F, 6), self.mslt[:26])),
                     free.eq((self.rp - self.wp - 1) & mask),
                     two.eq(hdr.payload_words == SLOT_WORDS)]
        wp1 = (self.wp + 1) & mask
        malformed = ((hdr.unit != NetUnit.VELO) | (hdr.command_words != 0) | (hdr.payload_words == 0)
                     | (hdr.payload_words > SLOT_WORDS) | (spec.offset + hdr.payload_words > spec.words_m1 + 1)
                     | (spec.dst_vpid >= self.vpids))

        addr = [Signal(52, name=f"slot{i}_addr") for i in range(2)]
        status = [Signal(VeloStatus, name=f"status{i}") for i in range(2)]
        second = Signal()                       # emitting the second slot of an 8-word packet
        count = Signal(range(SLOT_WORDS))       # payload words left in this slot, minus one

        cur_status = Signal(64)
        slot_words = Signal(4)                  # payload words of the current slot
        m.d.comb += [cur_status.eq(Mux(second, status[1].as_value(), status[0].as_value())),
                     slot_words.eq(Mux(second, 1, Mux(two, SLOT_WORDS - 1, hdr.payload_words)))]

        beat = Signal(HtaxBeat)
        m.d.comb += [tx.payload.eq(beat), beat.vc.eq(HtaxVC.POSTED)]
        h = Signal(HtaxHeader)
        m.d.comb += [h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED), h.src.eq(self.htax_port),
                     h.dst.eq(self.host_port), h.body.mem.addr.eq(Mux(second, addr[1], addr[0])),
                     h.body.mem.length.eq(slot_words + 1), h.body.mem.first_be.eq(0xFF),
                     h.body.mem.last_be.eq(0xFF)]
        done = Signal()                         # the message's last beat moves this cycle
        m.d.comb += [self.received_incr.eq(done), self.irq.eq(done << vpid)]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid):
                    m.d.comb += self.vpid.eq(in_vpid)
                    with m.If(rx.payload.first & (rx.payload.kind == NetBeatKind.HEADER)):
                        m.d.sync += [hdr.eq(in_hdr), hdr_last.eq(rx.payload.last), vpid.eq(in_vpid)]
                        m.next = "LOOKUP"
                    with m.Else():
                        m.d.comb += self.rejected_incr.eq(1)   # a beat outside a packet: drain to its end
                        with m.If(~rx.payload.last):
                            m.next = "DRAIN"
            with m.State("LOOKUP"):
                st = [dict(src_node=hdr.src_node, src_vpid=spec.src_vpid, msg_words=spec.words_m1 + 1,
                           mtt=spec.mtt, split=hdr.payload_words <= spec.words_m1) for _ in range(2)]
                m.d.sync += [
                    addr[0].eq(Cat(Const(0, 6), self.wp) + (self.balt << 12)),
                    addr[1].eq(Cat(Const(0, 6), wp1) + (self.balt << 12)),
                    *[getattr(status[i], k).eq(v) for i in range(2) for k, v in st[i].items()],
                    status[0].offset.eq(spec.offset), status[0].words.eq(Mux(two, SLOT_WORDS - 1, hdr.payload_words)),
                    status[1].offset.eq(SLOT_WORDS - 1), status[1].words.eq(1), status[1].second.eq(1),
                    second.eq(0),
                ]
                with m.If(malformed | ~self.enable.bit_select(spec.dst_vpid, 1)):
                    m.d.comb += self.rejected_incr.eq(1)
                    m.next = "DRAIN_OR_IDLE"
                with m.Elif(free < Mux(two, 2, 1)):
                    m.d.comb += self.discarded_incr.eq(1)
                    m.next = "DRAIN_OR_IDLE"
                with m.Else():
                    m.d.comb += [self.wp_we.eq(1), self.wp_next.eq(Mux(two, (wp1 + 1) & mask, wp1))]
                    m.next = "HEADER"
            with m.State("DRAIN_OR_IDLE"):
                # the header was consumed in IDLE; drain the payload unless the header ended the packet
                m.d.comb += rx.ready.eq(~hdr_last)
                with m.If(hdr_last | rx.valid & rx.payload.last):
                    m.next = "IDLE"
                with m.Else():
                    m.next = "DRAIN"
            with m.State("DRAIN"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid & rx.payload.last):
                    m.next = "IDLE"
            with m.State("HEADER"):
                m.d.comb += [tx.valid.eq(1), beat.first.eq(1), beat.word.header.eq(h)]
                with m.If(tx.transfer()):
                    m.d.sync += count.eq(slot_words - 1)
                    m.next = "STATUS"
            with m.State("STATUS"):
                m.d.comb += [tx.valid.eq(1), beat.word.data.eq(cur_status)]
                with m.If(tx.transfer()):
                    m.next = "PAYLOAD"
            with m.State("PAYLOAD"):
                m.d.comb += [tx.valid.eq(rx.valid), beat.word.data.eq(rx.payload.data),
                             beat.last.eq(count == 0), rx.ready.eq(tx.transfer())]
                with m.If(tx.transfer()):
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 0):
                        with m.If(two & ~second):
                            m.d.sync += second.eq(1)
                            m.next = "HEADER"
                        with m.Else():
                            m.d.comb += done.eq(1)
                            m.next = "IDLE"
        return m
