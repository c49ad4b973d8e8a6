"""VELO completer: network packets -> receive slots in host memory (dissertation ch. 7.4)."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.blockfifo import BlockRamFIFO
from rtl.common.htax import HtaxLinkSignature
from rtl.common.net import NetStreamSignature
from rtl.common.params import check_port, check_pow2

from .formats import SLOT_WORDS
from .planner import VeloSlotPlanner
from .writer import VeloSlotWriter

__all__ = ["VeloCompleter"]


class VeloCompleter(wiring.Component):
    """VELO completer: one network packet -> one or two 64-byte receive slots in host memory
    (dissertation ch. 7.4, fig. 7-5, table 7-1), built from two blocks and a payload queue:

    * :class:`~rtl.velo.planner.VeloSlotPlanner` takes the header, looks up the destination VPID's
      mailbox (enable, MSLT, BALT, RPLT, WPLT), rejects, discards or plans the packet and advances the
      write pointer;
    * an 8-word queue holds the payload words of planned packets;
    * :class:`~rtl.velo.writer.VeloSlotWriter` writes each slot as one posted HTAX WRITE: status word
      (:class:`~rtl.velo.formats.VeloStatus`, never zero), then the payload.

    The planner judges the next header while the writer still sends the current slots, so back-to-back
    messages of ``n`` payload words leave every ``n + 2`` cycles (the HTAX beats of one slot).  Outcomes:
    malformed or VPID out of range or mailbox disabled -> ``rejected_incr``; not enough free slots ->
    ``discarded_incr`` (no slot the reader has not released is written); written -> ``received_incr``
    and the VPID's bit of ``irq`` (the register file's ``irq.velo_status``) pulse after the last beat.

    Rule (ch. 7.4, ``docs/velo.md``): a slot's status word and its payload words leave in one posted
    WRITE, and the status word describes that payload: it is never joined to the words of another
    packet.  The writer joins each plan's status words and the next words of the queue; the planner
    puts into the queue only the words of the packets it planned, in plan order.  So the queue sits
    behind the planner's judgement: ahead of it, the words of a refused packet would be written with
    the next slot's status word (``tests/velo/test_slot_rule.py`` builds that composition and fails).
    Checked by ``formal/velo.py`` (``completer``: any packets, any mailbox data).

    Deviations: the RLT is the network port's; the status word layout is this project's (the figure with
    its bits is missing from the text): see ``docs/architecture.md``.

    Parameters
    ----------
    vpids : int
        Mailboxes (power of two, 2..32).
    htax_port, host_port : int
        ``src`` of the slot writes (this unit's HTAX port) and their ``dst`` (the host's).

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
        m.submodules.planner = pl = VeloSlotPlanner(vpids=self.vpids)
        m.submodules.queue = q = BlockRamFIFO(width=64, depth=SLOT_WORDS)
        m.submodules.writer = wr = VeloSlotWriter(vpids=self.vpids, htax_port=self.htax_port,
                                                  host_port=self.host_port)
        wiring.connect(m, wiring.flipped(self.net_rx), pl.net_rx)
        wiring.connect(m, pl.plan, wr.plan)
        wiring.connect(m, wr.tx, wiring.flipped(self.tx))
        m.d.comb += [q.w_data.eq(pl.words.payload), q.w_en.eq(pl.words.valid), pl.words.ready.eq(q.w_rdy),
                     wr.words.payload.eq(q.r_data), wr.words.valid.eq(q.r_rdy), q.r_en.eq(wr.words.ready)]
        m.d.comb += [self.vpid.eq(pl.vpid), pl.enable.eq(self.enable), pl.mslt.eq(self.mslt),
                     pl.balt.eq(self.balt), pl.rp.eq(self.rp), pl.wp.eq(self.wp), self.wp_we.eq(pl.wp_we),
                     self.wp_next.eq(pl.wp_next), self.discarded_incr.eq(pl.discarded_incr),
                     self.rejected_incr.eq(pl.rejected_incr), self.received_incr.eq(wr.done),
                     self.irq.eq(wr.irq)]
        return m
