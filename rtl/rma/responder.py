"""The RMA responder (:class:`RmaResponder`)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import PPN_BITS
from rtl.common.net import NODE_BITS, NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_port, check_pow2

from .ats_client import RmaXlateRequest, RmaXlateResult
from .formats import (
    DATA_COMMAND_WORDS,
    NET_COMMAND_WORDS,
    RmaCommand,
    RmaError,
    RmaNetDescriptor,
    RmaNetFields,
    RmaNotifyClass,
)
from .lock import RmaLock
from .notifier import RmaNoteRequest
from .packet_tx import RmaPacketTx
from .reader import RmaRead, RmaReadData
from .translate import RmaTranslateStep
from .txarb import HtaxPacketSignature

__all__ = ["RmaResponder"]


class RmaResponder(wiring.Component):
    """RMA responder: get and lock requests from the network -> DMA reads, lock updates and response
    packets to the requester's completer (dissertation ch. 7.5.3, 7.5.4, 7.5.6).

    * get: the remote range is read in 64-byte-line segments through its own
      :class:`~rtl.rma.reader.RmaReader` and sent back as one response packet per segment (the first, and
      one that reports an error, with the first command word only, the others with none); after the
      last, a responder notification if ``rsp_notify``.
    * lock (FCAA, ch. 7.5.4): :class:`~rtl.rma.lock.RmaLock` applies it to the lock word in the physical
      lock region (fig. 7-11; never translated); the response carries
      :class:`~rtl.rma.formats.RmaLockResult`.  The responder handles one request at a time, and
      :class:`~rtl.rma.fence.RmaFence` holds its next read until the last write-back reached the
      transmit arbiter (``docs/rma.md``, "Ordering"), so every lock operation on a word is atomic with
      respect to every other (the process must use the NIC for its own locks too, ch. 7.5.4).  A lock
      number of 1024 or more, or a word beyond ``lock_size``: a
      ``LOCK_RANGE`` error response.

    A read that fails (error status) sends zero words in its place; the get's last response then carries
    ``DMA_ERROR`` (the origin's completer writes an error notification) and so does the responder
    notification; a lock whose word cannot be read gets a ``DMA_ERROR`` response and is not applied.

    Translation of a get's source (ch. 5.3, 7.5.5): for a VPID with its ``phys`` bit the address is
    physical (table 7-7).  Otherwise the page (``dst_qw >> 9``; a get never crosses a page) is translated
    for a read (``next`` 1 when the source range ends at the page's end) and the reads go to
    ``ppn << 12 | offset``.  A failed translation is answered with one ``ATU_FAULT`` error response
    without data (the origin's completer writes an error notification); no responder notification,
    ``get_incr`` does not count it.  The handshake and ``xbusy`` (flush rule) are
    :class:`~rtl.rma.translate.RmaTranslateStep`'s; busy lasts until the get's last response has been
    sent (all its reads have returned then).

    A request for a VPID that is disabled gets a ``DISABLED`` error response (counted in
    ``refused_incr``); a malformed request (another unit, not two command words, a payload, a command other
    than get and lock) is dropped (``dropped_incr``).

    Parameters
    ----------
    vpids : int
        VPIDs (power of two, 2..32).
    htax_port, host_port : int
        The unit's HTAX port and host memory's.

    Members
    -------
    net_rx : In(NetStreamSignature()) ; net_tx : Out(NetStreamSignature())
    reads : Out(stream.Signature(RmaRead)) ; data : In(stream.Signature(RmaReadData))
    tx : Out(HtaxPacketSignature())
        Lock write-backs.
    notes : Out(stream.Signature(RmaNoteRequest))
    xreq : Out(stream.Signature(RmaXlateRequest)) ; xrsp : In(stream.Signature(RmaXlateResult, always_ready=True))
    xbusy : Out(1)
        To and from the ATS client.
    enable, phys : In(vpids) ; node_id : In(NODE_BITS) ; lock_base : In(49) ; lock_size : In(32)
    get_incr, lock_incr, refused_incr, dropped_incr : Out(1)
        ``lock_incr``: a lock request taken to the lock engine (table 7-8's responder counter).
    """

    def __init__(self, *, vpids, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "net_rx": In(NetStreamSignature()), "net_tx": Out(NetStreamSignature()),
            "reads": Out(stream.Signature(RmaRead)), "data": In(stream.Signature(RmaReadData)),
            "tx": Out(HtaxPacketSignature()), "notes": Out(stream.Signature(RmaNoteRequest)),
            "xreq": Out(stream.Signature(RmaXlateRequest)),
            "xrsp": In(stream.Signature(RmaXlateResult, always_ready=True)), "xbusy": Out(1),
            "enable": In(vpids), "phys": In(vpids), "node_id": In(NODE_BITS), "lock_base": In(49),
            "lock_size": In(32), "get_incr": Out(1), "lock_incr": Out(1), "refused_incr": Out(1),
            "dropped_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rx = self.net_rx
        hdr = Signal(NetHeader)
        s = RmaNetFields(hdr.specific)
        cw = Signal(128)
        c = RmaNetDescriptor(cw)
        ended = Signal()
        is_get = s.command == RmaCommand.GET
        vpid = s.dst_vpid
        total = Signal(10)
        m.d.comb += total.eq(Mux(s.cache_line, (c.size_m1 + 1) << 3, c.size_m1 + 1))
        good = ((hdr.unit == NetUnit.RMA_RESPONDER) & (hdr.command_words == NET_COMMAND_WORDS)
                & (hdr.payload_words == 0) & ended & (is_get | (s.command == RmaCommand.LOCK)))
        ok_vpid = (vpid < self.vpids) & self.enable.bit_select(vpid, 1)

        m.submodules.lock = lock = RmaLock(htax_port=self.htax_port, host_port=self.host_port)
        wiring.connect(m, lock.tx, wiring.flipped(self.tx))
        m.d.comb += [lock.lock_base.eq(self.lock_base), lock.lock_size.eq(self.lock_size),
                     lock.start.payload.vpid.eq(vpid), lock.start.payload.lock.eq(c.dst_qw),
                     lock.start.payload.ops.eq(c.arg), lock.data.payload.eq(self.data.payload)]
        result = Cat(lock.result.value, lock.result.success)

        def seg_words(off):
            cur = c.dst_qw + off
            return Mux(total - off < 8 - cur[:3], total - off, 8 - cur[:3])

        # the get's reads, in the page ppn (physical or translated); the lock engine's while it runs
        rd_off, pk_off = Signal(10), Signal(10)
        reading = Signal()
        ppn = Signal(PPN_BITS)
        m.d.comb += [self.reads.valid.eq(reading), self.reads.payload.addr_qw.eq(Cat((c.dst_qw + rd_off)[:9], ppn)),
                     self.reads.payload.words.eq(seg_words(rd_off))]
        with m.If(self.reads.valid & self.reads.ready):
            m.d.sync += rd_off.eq(rd_off + seg_words(rd_off))
            with m.If(rd_off + seg_words(rd_off) == total):
                m.d.sync += reading.eq(0)
        # the get's source page (docs/rma.md, "Translation"); ``next``: the source range reaches the page's
        # end (quadwords from the page's start to the range's end: 512 or more)
        m.submodules.translate = xl = RmaTranslateStep()
        wiring.connect(m, xl.xreq, wiring.flipped(self.xreq))
        wiring.connect(m, wiring.flipped(self.xrsp), xl.xrsp)
        m.d.comb += [self.xbusy.eq(xl.xbusy), xl.req.payload.write.eq(0),
                     xl.req.payload.next.eq(c.dst_qw[:9] + total >= 512),
                     xl.req.payload.vpid.eq(vpid), xl.req.payload.page.eq(c.dst_qw[9:])]

        error = Signal(RmaError)
        rerr = Signal()                 # a read of this get failed: zero words went out instead
        cur_err = self.data.valid & self.data.payload.error
        words = Signal(4)
        m.d.comb += words.eq(Mux(is_get & (error == RmaError.NONE), seg_words(pk_off), 0))

        m.submodules.packet_tx = ptx = RmaPacketTx()
        wiring.connect(m, ptx.net_tx, wiring.flipped(self.net_tx))
        m.d.comb += ptx.data.payload.eq(self.data.payload)
        last = self._answer(m, ptx, hdr, c, error=error, dma_error=rerr | cur_err, rerr=rerr, pk_off=pk_off,
                            words=words, total=total, result=result)

        def get():
            m.d.comb += self.get_incr.eq(1)
            m.d.sync += reading.eq(1)
            m.next = "SEND"

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [rx.ready.eq(1), xl.idle.eq(1)]
                with m.If(rx.valid):
                    m.d.sync += [hdr.eq(rx.payload.data), ended.eq(0), pk_off.eq(0), rd_off.eq(0), error.eq(0),
                                 rerr.eq(0)]
                    with m.If(rx.payload.first & (rx.payload.kind == NetBeatKind.HEADER) & ~rx.payload.last):
                        m.next = "CMD0"
                    with m.Else():
                        m.d.comb += self.dropped_incr.eq(1)
                        with m.If(~rx.payload.last):
                            m.next = "DRAIN"
            for i in range(2):
                with m.State(f"CMD{i}"):
                    m.d.comb += rx.ready.eq(1)
                    with m.If(rx.valid):
                        m.d.sync += [cw[64 * i:64 * i + 64].eq(rx.payload.data), ended.eq(rx.payload.last)]
                        m.next = "DECIDE" if i else "CMD1"
                        if i == 0:
                            with m.If(rx.payload.last):
                                m.next = "DECIDE"
            with m.State("DECIDE"):
                m.d.sync += ppn.eq(c.dst_qw[9:])
                with m.If(~good):
                    m.d.comb += self.dropped_incr.eq(1)
                    m.next = "IDLE"
                    with m.If(~ended):
                        m.next = "DRAIN"
                with m.Elif(~ok_vpid):
                    m.d.comb += self.refused_incr.eq(1)
                    m.d.sync += error.eq(RmaError.DISABLED)
                    m.next = "SEND"
                with m.Elif(~is_get):
                    m.d.comb += self.lock_incr.eq(1)
                    m.next = "LOCK"
                with m.Elif(self.phys.bit_select(vpid, 1)):
                    get()
                with m.Else():
                    m.d.comb += xl.req.valid.eq(1)
                    m.next = "TRANSLATE"
            with m.State("TRANSLATE"):
                m.d.comb += xl.req.valid.eq(1)
                with m.If(xl.rsp.valid):
                    m.d.sync += ppn.eq(xl.rsp.payload.ppn)
                    with m.If(xl.rsp.payload.ok):
                        get()
                    with m.Else():
                        m.d.sync += error.eq(RmaError.ATU_FAULT)
                        m.next = "SEND"
            with m.State("LOCK"):
                m.d.comb += [lock.start.valid.eq(1), self.reads.valid.eq(lock.reads.valid),
                             self.reads.payload.eq(lock.reads.payload), lock.reads.ready.eq(self.reads.ready),
                             lock.data.valid.eq(self.data.valid), self.data.ready.eq(lock.data.ready)]
                with m.If(lock.start.ready):
                    m.d.sync += error.eq(lock.error)
                    m.next = "SEND"
            with m.State("SEND"):
                # a data packet is offered once its read is complete, so its error is known
                m.d.comb += [ptx.packets.valid.eq((words == 0) | self.data.valid),
                             ptx.data.valid.eq(self.data.valid), self.data.ready.eq(ptx.data.ready)]
                with m.If(cur_err & ptx.data.ready):
                    m.d.sync += rerr.eq(1)
                with m.If(ptx.packets.valid & ptx.packets.ready):
                    m.d.sync += pk_off.eq(pk_off + words)
                    with m.If(last):
                        m.next = "DONE"
            with m.State("DONE"):
                with m.If(s.rsp_notify & (error == RmaError.NONE)):
                    m.d.comb += self.notes.valid.eq(1)
                    with m.If(self.notes.ready):
                        m.next = "IDLE"
                with m.Else():
                    m.next = "IDLE"
            with m.State("DRAIN"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid & rx.payload.last):
                    m.next = "IDLE"
        return m

    def _answer(self, m, ptx, hdr, c, *, error, dma_error, rerr, pk_off, words, total, result):
        """The response packet's header and command words and the responder notification; returns
        whether this packet is the operation's last."""
        s = RmaNetFields(hdr.specific)
        is_get = s.command == RmaCommand.GET
        vpid = s.dst_vpid
        out_hdr, rc = ptx.packets.payload.hdr, ptx.packets.payload.cmd
        back = Signal(RmaNetFields)
        rsp_error = Signal(RmaError)
        m.d.comb += [
            rsp_error.eq(Mux(error != RmaError.NONE, error,
                             Mux(back.last & dma_error, RmaError.DMA_ERROR, RmaError.NONE))),
            back.command.eq(s.command), back.cpl_notify.eq(s.cpl_notify), back.cache_line.eq(s.cache_line),
            back.irq.eq(s.irq), back.src_vpid.eq(vpid), back.dst_vpid.eq(s.src_vpid),
            back.last.eq(~is_get | (error != RmaError.NONE) | (pk_off + words == total)),
            out_hdr.dst_node.eq(hdr.src_node), out_hdr.unit.eq(NetUnit.RMA_COMPLETER),
            out_hdr.command_words.eq(Mux(is_get, Mux((pk_off == 0) | (rsp_error != RmaError.NONE),
                                                     DATA_COMMAND_WORDS, 0), NET_COMMAND_WORDS)),
            out_hdr.payload_words.eq(words), out_hdr.src_node.eq(self.node_id), out_hdr.specific.eq(back),
            rc.dst_qw.eq(Mux(is_get, c.arg[:41], c.dst_qw)), rc.size_m1.eq(Mux(is_get, c.size_m1, 0)),
            rc.offset_qw.eq(Mux(is_get, pk_off, 0)),
            rc.error.eq(rsp_error),
            rc.arg.eq(Mux(is_get, c.dst_qw, Mux(error == RmaError.NONE, result, 0))),
        ]
        e = self.notes.payload.entry
        m.d.comb += [self.notes.payload.vpid.eq(vpid), self.notes.payload.irq.eq(s.irq),
                     e.command.eq(s.command), e.cls.eq(RmaNotifyClass.RESPONDER),
                     e.error.eq(Mux(rerr, RmaError.DMA_ERROR, RmaError.NONE)),
                     e.cache_line.eq(is_get & s.cache_line), e.size_m1.eq(Mux(is_get, c.size_m1, 0)),
                     e.peer_vpid.eq(s.src_vpid), e.peer_node.eq(hdr.src_node),
                     e.value.eq(Mux(is_get, Cat(Const(0, 3), c.dst_qw), result))]
        return back.last
