"""The RMA requester (:class:`RmaRequester`) and its command layout."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import PPN_BITS
from rtl.common.net import NODE_BITS, NetStreamSignature, NetUnit
from rtl.common.params import check_pow2

from .ats_client import RmaXlateRequest, RmaXlateResult
from .formats import (
    DATA_COMMAND_WORDS,
    NET_COMMAND_WORDS,
    RMA_VPID_BITS,
    RmaCommand,
    RmaDescriptor,
    RmaError,
    RmaNetFields,
    RmaNotifyClass,
    RmaPageOffset,
    RmaPutGetOperands,
)
from .notifier import RmaNoteRequest
from .packet_tx import RmaPacketTx
from .reader import RmaRead, RmaReadData
from .translate import RmaTranslateStep

__all__ = ["RmaRequester", "RmaCommandIn"]

RmaCommandIn = data.StructLayout({"vpid": RMA_VPID_BITS, "irq": 1, "offset": RmaPageOffset, "desc": RmaDescriptor})


class RmaRequester(wiring.Component):
    """RMA requester: one command descriptor -> network packets, DMA reads of put data and requester
    notifications (dissertation ch. 7.5.1-7.5.3, 7.5.6).

    The descriptor (:class:`RmaCommandIn`: the store's VPID, interrupt bit and page offset, and the 128-bit
    :class:`~rtl.rma.formats.RmaDescriptor`) is checked first.  An unknown command, a VPID beyond ``vpids``
    (the store's, or a put-class command's destination: ``ATU_FAULT``), a put or get whose local or remote
    range crosses a 4 KiB page, or whose local and remote start differ inside a 64-byte line, ends here
    with a requester notification carrying the error (whatever the modifier bits say) and ``error_incr``
    (``docs/rma.md``, "Requester errors").

    Translation (ch. 5.3, 7.5.5): the requester translates the local NLA only, and only a put's (the data
    it reads); a get's local NLA is translated by the origin's completer when the data arrives, the remote
    NLAs by the target's completer and responder.  For a VPID with its ``phys`` bit the address is physical
    (table 7-7) and used as it is; otherwise the local page (``local_qw >> 9``) is translated for a read
    through ``xreq``/``xrsp``, and the reads go to ``ppn << 12 | offset`` (an operation never crosses a
    page, so one translation covers it; its ``next`` is 1 when the local range ends at the page's end).
    A failed translation ends the put with an ``ATU_FAULT`` requester notification, whatever the bits
    say, and ``error_incr``; nothing is sent and ``put_incr`` does not count it.  The handshake and
    ``xbusy`` (flush rule) are :class:`~rtl.rma.translate.RmaTranslateStep`'s; busy lasts until the put's
    last word has been read.

    Otherwise:

    * put: the data is read in 64-byte-line segments through :class:`~rtl.rma.reader.RmaReader` (reads run
      ahead of the packets, up to its slots) and leaves as one packet per segment to the target's completer;
      after the last word, a requester notification if ``req_notify``.  A read that fails (error status)
      sends zero words in its place and ends the put with a ``DMA_ERROR`` requester notification, whatever
      the bits say, and ``error_incr``;
    * get, lock: one request packet to the target's responder;
    * immediate put: one packet with the descriptor's payload as its payload word;
    * notification put: one packet with the payload in the command words.

    Every packet is a network header, the command words (:class:`~rtl.rma.formats.RmaNetDescriptor`:
    its first word for a put's first packet and an immediate put, none for a put's further packets,
    both for the other commands) and the payload, sent through :class:`~rtl.rma.packet_tx.RmaPacketTx`.

    Parameters
    ----------
    vpids : int
        VPIDs (power of two, 2..32).

    Members
    -------
    cmds : In(stream.Signature(RmaCommandIn))
    net_tx : Out(NetStreamSignature())
    reads : Out(stream.Signature(RmaRead)) ; data : In(stream.Signature(RmaReadData))
        To and from the read engine.
    notes : Out(stream.Signature(RmaNoteRequest))
    xreq : Out(stream.Signature(RmaXlateRequest)) ; xrsp : In(stream.Signature(RmaXlateResult, always_ready=True))
    xbusy : Out(1)
        To and from the ATS client.
    phys : In(vpids) ; node_id : In(NODE_BITS)
    put_incr, get_incr, error_incr : Out(1)
    """

    def __init__(self, *, vpids):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        super().__init__({
            "cmds": In(stream.Signature(RmaCommandIn)), "net_tx": Out(NetStreamSignature()),
            "reads": Out(stream.Signature(RmaRead)), "data": In(stream.Signature(RmaReadData)),
            "notes": Out(stream.Signature(RmaNoteRequest)), "xreq": Out(stream.Signature(RmaXlateRequest)),
            "xrsp": In(stream.Signature(RmaXlateResult, always_ready=True)), "xbusy": Out(1),
            "phys": In(vpids), "node_id": In(NODE_BITS),
            "put_incr": Out(1), "get_incr": Out(1), "error_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.cmds.payload
        d, a = p.desc, p.offset
        ops = RmaPutGetOperands(d.op)
        cmd = a.command
        is_put, is_get = cmd == RmaCommand.PUT, cmd == RmaCommand.GET
        sized = is_put | is_get
        total = Signal(10)                  # quadwords of a put or get
        m.d.comb += total.eq(Mux(a.cache_line, (ops.size_m1 + 1) << 3, ops.size_m1 + 1))
        local_end = ops.local_qw[:9] + total    # quadwords from the local page's start to the range's end
        error = Signal(RmaError)
        with m.If(cmd.as_value() > RmaCommand.NOTIFICATION_PUT.value):
            m.d.comb += error.eq(RmaError.UNKNOWN_COMMAND)
        # a put-class command to a VPID no node has ends here: its packet would be dropped by the target's
        # completer unseen; a get or lock to it is refused by the target's responder (DISABLED)
        requests = is_get | (cmd == RmaCommand.LOCK)
        with m.Elif((p.vpid >= self.vpids) | (~requests & (d.dst_vpid >= self.vpids))):
            m.d.comb += error.eq(RmaError.ATU_FAULT)
        with m.Elif(sized & ((local_end > 512) | (d.remote_qw[:9] + total > 512))):
            m.d.comb += error.eq(RmaError.PAGE_CROSSING)
        with m.Elif(sized & (ops.local_qw[:3] != d.remote_qw[:3])):
            m.d.comb += error.eq(RmaError.MISALIGNED)

        def seg_words(off):
            cur = ops.local_qw + off
            return Mux(total - off < 8 - cur[:3], total - off, 8 - cur[:3])

        # read segmenter: runs ahead of the packets, in the page ppn (physical or translated)
        rd_off = Signal(10)
        reading = Signal()
        ppn = Signal(PPN_BITS)
        m.d.comb += [self.reads.valid.eq(reading),
                     self.reads.payload.addr_qw.eq(Cat((ops.local_qw + rd_off)[:9], ppn)),
                     self.reads.payload.words.eq(seg_words(rd_off))]
        with m.If(self.reads.valid & self.reads.ready):
            m.d.sync += rd_off.eq(rd_off + seg_words(rd_off))
            with m.If(rd_off + seg_words(rd_off) == total):
                m.d.sync += reading.eq(0)

        # packets, through the same emitter as the responder's
        pk_off = Signal(10)
        words = Signal(4)
        m.d.comb += words.eq(Mux(is_put, seg_words(pk_off), cmd == RmaCommand.IMMEDIATE_PUT))
        m.submodules.packet_tx = ptx = RmaPacketTx()
        wiring.connect(m, ptx.net_tx, wiring.flipped(self.net_tx))
        spec = Signal(RmaNetFields)
        hdr, c = ptx.packets.payload.hdr, ptx.packets.payload.cmd
        m.d.comb += [
            spec.command.eq(cmd), spec.req_notify.eq(a.req_notify), spec.cpl_notify.eq(a.cpl_notify),
            spec.rsp_notify.eq(a.rsp_notify), spec.cache_line.eq(sized & a.cache_line), spec.irq.eq(p.irq),
            spec.src_vpid.eq(p.vpid), spec.dst_vpid.eq(d.dst_vpid), spec.last.eq(~is_put | (pk_off + words == total)),
            hdr.dst_node.eq(d.dst_node), hdr.unit.eq(Mux(is_get | (cmd == RmaCommand.LOCK),
                                                         NetUnit.RMA_RESPONDER, NetUnit.RMA_COMPLETER)),
            hdr.command_words.eq(Mux(is_put, Mux(pk_off == 0, DATA_COMMAND_WORDS, 0),
                                     Mux(cmd == RmaCommand.IMMEDIATE_PUT, DATA_COMMAND_WORDS, NET_COMMAND_WORDS))),
            hdr.payload_words.eq(words), hdr.src_node.eq(self.node_id),
            hdr.specific.eq(spec),
            c.dst_qw.eq(Mux(cmd == RmaCommand.NOTIFICATION_PUT, 0, d.remote_qw)),
            c.size_m1.eq(Mux(sized, ops.size_m1, 0)), c.offset_qw.eq(Mux(is_put, pk_off, 0)),
            c.arg.eq(Mux(sized, ops.local_qw, Mux(cmd == RmaCommand.IMMEDIATE_PUT, 0, d.op))),
        ]
        # a put's payload comes from the read engine, an immediate put's word from the descriptor
        with m.If(is_put):
            m.d.comb += [ptx.data.valid.eq(self.data.valid), ptx.data.payload.eq(self.data.payload),
                         self.data.ready.eq(ptx.data.ready)]
        with m.Else():
            m.d.comb += [ptx.data.valid.eq(1), ptx.data.payload.data.eq(d.op), ptx.data.payload.last.eq(1)]
        read_err = Signal()                 # a DMA read of this put failed: its words went out as zeros
        fault = Signal()                    # the put's translation failed
        e = self.notes.payload.entry
        m.d.comb += e.error.eq(Mux(read_err, RmaError.DMA_ERROR, Mux(fault, RmaError.ATU_FAULT, error)))
        m.d.comb += [self.notes.payload.vpid.eq(p.vpid), self.notes.payload.irq.eq(p.irq),
                     e.command.eq(cmd), e.cls.eq(RmaNotifyClass.REQUESTER),
                     e.cache_line.eq(sized & a.cache_line), e.size_m1.eq(Mux(sized, ops.size_m1, 0)),
                     e.peer_vpid.eq(d.dst_vpid), e.peer_node.eq(d.dst_node),
                     e.value.eq(Mux(sized, Cat(Const(0, 3), ops.local_qw), 0))]

        # the put's local page (docs/rma.md, "Translation"); ``next``: the local range reaches the page's
        # end (a put that runs beyond it ends with PAGE_CROSSING before it is translated, so: ends there)
        m.submodules.translate = xl = RmaTranslateStep()
        wiring.connect(m, xl.xreq, wiring.flipped(self.xreq))
        wiring.connect(m, wiring.flipped(self.xrsp), xl.xrsp)
        m.d.comb += [self.xbusy.eq(xl.xbusy), xl.req.payload.write.eq(0), xl.req.payload.next.eq(local_end >= 512),
                     xl.req.payload.vpid.eq(p.vpid), xl.req.payload.page.eq(ops.local_qw[9:])]

        def start():
            m.d.comb += [self.put_incr.eq(is_put | (cmd == RmaCommand.IMMEDIATE_PUT)), self.get_incr.eq(is_get)]
            m.d.sync += reading.eq(is_put)
            m.next = "SEND"

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += xl.idle.eq(1)
                with m.If(self.cmds.valid):
                    m.next = "CHECK"
            with m.State("CHECK"):
                m.d.sync += [pk_off.eq(0), rd_off.eq(0), read_err.eq(0), fault.eq(0), ppn.eq(ops.local_qw[9:])]
                with m.If(error != RmaError.NONE):
                    m.d.comb += self.error_incr.eq(1)
                    m.next = "NOTIFY"
                with m.Elif(is_put & ~self.phys.bit_select(p.vpid, 1)):
                    m.d.comb += xl.req.valid.eq(1)
                    m.next = "TRANSLATE"
                with m.Else():
                    start()
            with m.State("TRANSLATE"):
                m.d.comb += xl.req.valid.eq(1)
                with m.If(xl.rsp.valid):
                    m.d.sync += ppn.eq(xl.rsp.payload.ppn)
                    with m.If(xl.rsp.payload.ok):
                        start()
                    with m.Else():
                        m.d.comb += self.error_incr.eq(1)
                        m.d.sync += fault.eq(1)
                        m.next = "NOTIFY"
            with m.State("SEND"):
                # a put packet leaves only once its segment's read is complete (the read engine offers
                # a slot's words when all of them are in, and holds them), so its payload never waits
                # for the host: a completer forwarding it to its HTAX port never holds that port on a
                # DMA read
                m.d.comb += ptx.packets.valid.eq(~is_put | self.data.valid)
                with m.If(ptx.data.valid & ptx.data.ready & ptx.data.payload.error):
                    m.d.sync += read_err.eq(1)
                with m.If(ptx.packets.valid & ptx.packets.ready):
                    m.d.sync += pk_off.eq(pk_off + words)
                    with m.If(spec.last):
                        m.next = "DONE"
            with m.State("DONE"):
                m.d.comb += self.error_incr.eq(read_err)
                with m.If(is_put & a.req_notify | read_err):
                    m.next = "NOTIFY"
                with m.Else():
                    m.d.comb += self.cmds.ready.eq(1)
                    m.next = "IDLE"
            with m.State("NOTIFY"):
                m.d.comb += self.notes.valid.eq(1)
                with m.If(self.notes.ready):
                    m.d.comb += self.cmds.ready.eq(1)
                    m.next = "IDLE"
        return m
