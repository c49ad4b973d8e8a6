"""RMA responder: get and lock requests from the network -> DMA reads, lock updates and response
packets to the requester's completer (dissertation ch. 7.5.3, 7.5.4, 7.5.6).

* get: the remote range is read in 64-byte-line segments through its own
  :class:`~rtl.rma.reader.RmaReader` and sent back as one response packet per segment; after the last,
  a responder notification if ``rsp_notify``.
* lock (FCAA, ch. 7.5.4): the lock word lies at ``lock_base + 4096 * vpid + 4 * lock`` (fig. 7-11); it
  is read, compared (signed) and, if ``value <= compare``, written back with ``value + add``; the
  response carries :class:`~rtl.rma.formats.RmaLockResult`.  The responder handles one request at a time,
  so every lock operation on a word is atomic with respect to every other (the process must use the NIC
  for its own locks too, ch. 7.5.4).  A lock number of 1024 or more, or a word beyond ``lock_size``:
  a ``LOCK_RANGE`` error response.

A read that fails (error status) sends zero words in its place; the get's last response then carries
``DMA_ERROR`` (the origin's completer writes an error notification) and so does the responder
notification; a lock whose word cannot be read gets a ``DMA_ERROR`` response and is not applied.

A request for a VPID that is disabled or not in physical-address mode gets a ``DISABLED`` error
response (counted in ``refused_incr``); a malformed request (another unit, not two command words, a
payload, a command other than get and lock) is dropped (``dropped_incr``).

Members
-------
net_rx : In(NetStreamSignature()) ; net_tx : Out(NetStreamSignature())
reads : Out(stream.Signature(RmaRead)) ; data : In(stream.Signature(RmaReadData))
tx : Out(HtaxPacketSignature())
    Lock write-backs.
notes : Out(stream.Signature(RmaNoteRequest))
enable, phys : In(vpids) ; node_id : In(NODE_BITS) ; lock_base : In(49) ; lock_size : In(32)
get_incr, refused_incr, dropped_incr : Out(1)
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxVC
from rtl.common.net import NODE_BITS, NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.common.params import check_port, check_pow2

from .fcaa import RmaFcaa
from .formats import RmaCommand, RmaError, RmaNetDescriptor, RmaNetFields, RmaNotifyClass
from .notifier import RmaNoteRequest
from .packet_tx import RmaPacketTx
from .reader import RmaRead, RmaReadData
from .txarb import HtaxPacketSignature

__all__ = ["RmaResponder"]


class RmaResponder(wiring.Component):
    def __init__(self, *, vpids, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "net_rx": In(NetStreamSignature()), "net_tx": Out(NetStreamSignature()),
            "reads": Out(stream.Signature(RmaRead)), "data": In(stream.Signature(RmaReadData)),
            "tx": Out(HtaxPacketSignature()), "notes": Out(stream.Signature(RmaNoteRequest)),
            "enable": In(vpids), "phys": In(vpids), "node_id": In(NODE_BITS), "lock_base": In(49),
            "lock_size": In(32), "get_incr": Out(1), "refused_incr": Out(1), "dropped_incr": Out(1),
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
        good = ((hdr.unit == NetUnit.RMA_RESPONDER) & (hdr.command_words == 2) & (hdr.payload_words == 0) & ended
                & (is_get | (s.command == RmaCommand.LOCK)))
        ok_vpid = (vpid < self.vpids) & self.enable.bit_select(vpid, 1) & self.phys.bit_select(vpid, 1)
        lock_off = Cat(Const(0, 2), c.dst_qw[:10], vpid)        # 4096 * vpid + 4 * lock
        in_range = (c.dst_qw[10:] == 0) & (lock_off + 4 <= self.lock_size)
        lock_addr = Signal(52)
        m.d.comb += lock_addr.eq(Cat(Const(0, 3), self.lock_base) + lock_off)

        def seg_words(off):
            cur = c.dst_qw + off
            return Mux(total - off < 8 - cur[:3], total - off, 8 - cur[:3])

        rd_off, pk_off = Signal(10), Signal(10)
        reading = Signal()
        lock_read = Signal()
        m.d.comb += [self.reads.valid.eq(reading), self.reads.payload.addr_qw.eq(Mux(lock_read, lock_addr[3:],
                                                                                       c.dst_qw + rd_off)),
                     self.reads.payload.words.eq(Mux(lock_read, 1, seg_words(rd_off)))]
        with m.If(self.reads.valid & self.reads.ready):
            m.d.sync += rd_off.eq(rd_off + seg_words(rd_off))
            with m.If(lock_read | (rd_off + seg_words(rd_off) == total)):
                m.d.sync += reading.eq(0)

        m.submodules.fcaa = fcaa = RmaFcaa()        # on the word that came back
        word = Signal(64)
        success, new = fcaa.success, fcaa.new
        m.d.comb += [fcaa.word.eq(word), fcaa.high.eq(lock_addr[2]), fcaa.ops.eq(c.arg)]
        error = Signal(RmaError)
        rerr = Signal()                 # a read of this get failed: zero words went out instead
        cur_err = self.data.valid & self.data.payload.error
        words = Signal(4)
        m.d.comb += words.eq(Mux(is_get & (error == RmaError.NONE), seg_words(pk_off), 0))

        m.submodules.packet_tx = ptx = RmaPacketTx()
        wiring.connect(m, ptx.net_tx, wiring.flipped(self.net_tx))
        out_hdr, rc = ptx.packets.payload.hdr, ptx.packets.payload.cmd
        back = Signal(RmaNetFields)
        m.d.comb += ptx.data.payload.eq(self.data.payload)
        m.d.comb += [
            back.command.eq(s.command), back.cpl_notify.eq(s.cpl_notify), back.cache_line.eq(s.cache_line),
            back.irq.eq(s.irq), back.src_vpid.eq(vpid), back.dst_vpid.eq(s.src_vpid),
            back.last.eq(~is_get | (error != RmaError.NONE) | (pk_off + words == total)),
            out_hdr.dst_node.eq(hdr.src_node), out_hdr.unit.eq(NetUnit.RMA_COMPLETER), out_hdr.command_words.eq(2),
            out_hdr.payload_words.eq(words), out_hdr.src_node.eq(self.node_id), out_hdr.specific.eq(back),
            rc.dst_qw.eq(Mux(is_get, c.arg[:41], c.dst_qw)), rc.size_m1.eq(Mux(is_get, c.size_m1, 0)),
            rc.offset_qw.eq(Mux(is_get, pk_off, 0)),
            rc.error.eq(Mux(error != RmaError.NONE, error,
                            Mux(back.last & (rerr | cur_err), RmaError.DMA_ERROR, RmaError.NONE))),
            rc.arg.eq(Mux(is_get, c.dst_qw, Mux(error == RmaError.NONE, Cat(new, success), 0))),
        ]
        e = self.notes.payload.entry
        m.d.comb += [self.notes.payload.vpid.eq(vpid), self.notes.payload.irq.eq(s.irq),
                     e.command.eq(s.command), e.cls.eq(RmaNotifyClass.RESPONDER),
                     e.error.eq(Mux(rerr, RmaError.DMA_ERROR, RmaError.NONE)),
                     e.cache_line.eq(is_get & s.cache_line), e.size_m1.eq(Mux(is_get, c.size_m1, 0)),
                     e.peer_vpid.eq(s.src_vpid), e.peer_node.eq(hdr.src_node),
                     e.value.eq(Mux(is_get, Cat(Const(0, 3), c.dst_qw), Cat(new, success)))]
        wb = self.tx.payload
        h = wb.word.header
        m.d.comb += [wb.vc.eq(HtaxVC.POSTED), h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED),
                     h.src.eq(self.htax_port), h.dst.eq(self.host_port), h.body.mem.addr.eq(lock_addr & ~7),
                     h.body.mem.length.eq(1), h.body.mem.first_be.eq(Mux(lock_addr[2], 0xF0, 0x0F))]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += rx.ready.eq(1)
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
                with m.If(~good):
                    m.d.comb += self.dropped_incr.eq(1)
                    m.next = "IDLE"
                    with m.If(~ended):
                        m.next = "DRAIN"
                with m.Elif(~ok_vpid):
                    m.d.comb += self.refused_incr.eq(1)
                    m.d.sync += error.eq(RmaError.DISABLED)
                    m.next = "SEND"
                with m.Elif(is_get):
                    m.d.comb += self.get_incr.eq(1)
                    m.d.sync += reading.eq(1)
                    m.next = "SEND"
                with m.Elif(~in_range):
                    m.d.sync += error.eq(RmaError.LOCK_RANGE)
                    m.next = "SEND"
                with m.Else():
                    m.d.sync += [reading.eq(1), lock_read.eq(1)]
                    m.next = "LOCK_READ"
            with m.State("LOCK_READ"):
                m.d.comb += self.data.ready.eq(1)
                with m.If(self.data.valid):
                    m.d.sync += [word.eq(self.data.payload.data), lock_read.eq(0)]
                    m.next = "LOCK_WRITE"
                    with m.If(self.data.payload.error):
                        m.d.sync += error.eq(RmaError.DMA_ERROR)
                        m.next = "SEND"
            with m.State("LOCK_WRITE"):
                with m.If(~success):
                    m.next = "SEND"
                with m.Else():
                    m.d.comb += [self.tx.valid.eq(1), wb.first.eq(1)]
                    with m.If(self.tx.ready):
                        m.next = "LOCK_DATA"
            with m.State("LOCK_DATA"):
                m.d.comb += [self.tx.valid.eq(1), wb.last.eq(1), wb.word.data.eq(Cat(new, new))]
                with m.If(self.tx.ready):
                    m.next = "SEND"
            with m.State("SEND"):
                # a data packet is offered once its read is complete, so its error is known
                m.d.comb += [ptx.packets.valid.eq((words == 0) | self.data.valid),
                             ptx.data.valid.eq(self.data.valid), self.data.ready.eq(ptx.data.ready)]
                with m.If(cur_err & ptx.data.ready):
                    m.d.sync += rerr.eq(1)
                with m.If(ptx.packets.valid & ptx.packets.ready):
                    m.d.sync += pk_off.eq(pk_off + words)
                    with m.If(back.last):
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
