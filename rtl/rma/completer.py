"""The RMA completer (:class:`RmaCompleter`)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import NLA_PAGE_BITS, PPN_BITS
from rtl.common.htax import HtaxCmd, HtaxVC
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
from .notifier import RmaNoteRequest
from .train import RmaTrainTable
from .translate import RmaTranslateStep
from .txarb import HtaxPacketSignature

__all__ = ["RmaCompleter"]


class RmaCompleter(wiring.Component):
    """RMA completer: put data, immediate puts, get responses, lock responses and notification puts from
    the network -> host memory writes and completer notifications (dissertation ch. 7.5, 7.5.6).

    Every packet is a network header (:class:`~rtl.common.net.NetHeader` with
    :class:`~rtl.rma.formats.RmaNetFields`), the command words (:class:`~rtl.rma.formats.RmaNetDescriptor`:
    its first word for the first packet of put, immediate put and get response data, none for the
    following packets of a put or get, which continue the source's train in
    :class:`~rtl.rma.train.RmaTrainTable`; both for lock responses and notification puts) and 0..8
    payload words.  The payload goes to ``8 * (dst_qw + offset_qw)`` as one posted HTAX WRITE (the
    requester and responder cut packets at 64-byte lines, so one write never crosses a line).  After an
    operation's ``last`` packet a notification goes to the notifier when table 7-2 asks for one: put and
    immediate put with ``cpl_notify``, get with ``cpl_notify`` or an error, lock and notification put always;
    :class:`~rtl.rma.fence.RmaFence` keeps it behind the payload writes (``docs/rma.md``, "Ordering").

    A packet for a VPID that is not enabled, or a packet that is malformed (another unit, another number of
    command words than its command has, a packet without command words whose source has no train, more
    than eight payload words or words across a line, a command the completer does not take, a packet
    shorter than its header says) is consumed and ``dropped_incr`` strobes.

    Translation (ch. 5.3, 7.5.5): for a VPID with its ``phys`` bit the address is physical (table 7-7).
    Otherwise the page of the packet's first word (``(dst_qw + offset_qw) >> 9``; the packet never leaves
    its line) is translated for a write, and the words go to ``ppn << 12 | offset``.  The request's
    ``next`` is 1 when the operation's range from the packet's first word on reaches the end of the
    packet's page: its last word is the page's last or lies in a later page (a train that crosses, which
    only a requester that skips the page-crossing check sends, is written page by page).  The last
    successful translation is kept (VPID, page, PPN) and reused by the next packets of the same page, so
    a put of 64 lines costs one translation; ``flush`` forgets it, and a translation that arrives while
    ``stale`` (a flush waits for this side) is used for its packet only.  A failed translation: the
    payload is consumed and not written, and the operation's completer notification, if one is due (put
    and immediate put: ``cpl_notify``; get: ``cpl_notify``, or an error), carries ``ATU_FAULT`` when its
    last packet failed; ``put_incr``/``get_incr`` do not count it.  (All packets of an operation share
    one page, so they fail alike unless a flush changes the GATE between them.)  The handshake and
    ``xbusy`` (flush rule) are :class:`~rtl.rma.translate.RmaTranslateStep`'s; busy lasts from the
    request, or the use of the kept translation, until the packet's notification left.

    Parameters
    ----------
    vpids : int
        VPIDs (power of two, 2..32).
    nodes : int
        Source nodes with a train (power of two; the configuration's ``[system] nodes``).
    htax_port, host_port : int
        The unit's HTAX port and host memory's.

    Members
    -------
    net_rx : In(NetStreamSignature())
    tx : Out(HtaxPacketSignature())
        Payload writes.
    notes : Out(stream.Signature(RmaNoteRequest))
    xreq : Out(stream.Signature(RmaXlateRequest)) ; xrsp : In(stream.Signature(RmaXlateResult, always_ready=True))
    xbusy : Out(1) ; flush, stale : In(1)
        To and from the ATS client.
    enable, phys : In(vpids)
        Per-VPID completer enable and physical-address mode.
    put_incr, get_incr, dropped_incr : Out(1)
        Table 7-8 counters: a put (or immediate put) / a get completed; a packet dropped.
    """

    def __init__(self, *, vpids, htax_port, host_port, nodes=64):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.nodes = check_pow2("nodes", nodes, 1, 1 << NODE_BITS)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "net_rx": In(NetStreamSignature()), "tx": Out(HtaxPacketSignature()),
            "notes": Out(stream.Signature(RmaNoteRequest)), "xreq": Out(stream.Signature(RmaXlateRequest)),
            "xrsp": In(stream.Signature(RmaXlateResult, always_ready=True)), "xbusy": Out(1), "flush": In(1),
            "stale": In(1), "enable": In(vpids), "phys": In(vpids),
            "put_incr": Out(1), "get_incr": Out(1), "dropped_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rx = self.net_rx
        hdr = Signal(NetHeader)
        spec = RmaNetFields(hdr.specific)
        cmd_words = Signal(128)
        c = RmaNetDescriptor(cmd_words)
        count = Signal(4)                       # payload words still to pass
        ended = Signal()                        # the packet ended with its command words
        n = hdr.payload_words
        addr_qw = Signal(41)
        m.d.comb += addr_qw.eq(c.dst_qw + c.offset_qw)

        command = spec.command
        is_put = (command == RmaCommand.PUT) | (command == RmaCommand.IMMEDIATE_PUT)
        is_get = command == RmaCommand.GET
        known = is_put | is_get | (command == RmaCommand.LOCK) | (command == RmaCommand.NOTIFICATION_PUT)
        orphan = Signal()                       # no command words, and the source has no train
        accept = Signal()
        m.d.comb += accept.eq(
            (hdr.unit == NetUnit.RMA_COMPLETER) & known
            & Mux(is_put | is_get, (hdr.command_words == DATA_COMMAND_WORDS) | (hdr.command_words == 0) & ~orphan,
                  hdr.command_words == NET_COMMAND_WORDS)
            & (n <= 8) & (addr_qw[:3] + n <= 8) & (spec.dst_vpid < self.vpids)
            & self.enable.bit_select(spec.dst_vpid, 1))
        fault = Signal()                        # this packet's translation failed
        error = Signal(RmaError)
        m.d.comb += error.eq(Mux(fault, RmaError.ATU_FAULT, c.error))
        notify = spec.last & ((is_put & spec.cpl_notify) | (is_get & (spec.cpl_notify | (error != RmaError.NONE)))
                              | (command == RmaCommand.LOCK) | (command == RmaCommand.NOTIFICATION_PUT))
        sized = is_put | is_get

        self._note(m, hdr, c, error, sized)

        # the page: physical, the kept translation or a new one
        ppn = Signal(PPN_BITS)
        xl, kept, hit = self._translation(m, spec, c, addr_qw)
        trains = self._trains(m, NetHeader(rx.payload.data), hdr, c, is_get)
        beat = self._write_header(m, addr_qw, ppn, n)

        def done():
            m.d.comb += [self.put_incr.eq(spec.last & is_put & ~fault),
                         self.get_incr.eq(spec.last & is_get & (error == RmaError.NONE))]
            m.next = "NOTIFY"

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [rx.ready.eq(1), xl.idle.eq(1)]
                m.d.sync += [fault.eq(0), orphan.eq(0)]
                with m.If(rx.valid):
                    m.d.sync += [hdr.eq(rx.payload.data), cmd_words[64:].eq(0)]
                    with m.If(rx.payload.first & (rx.payload.kind == NetBeatKind.HEADER) & ~rx.payload.last):
                        m.next = "CMD0"
                        with m.If(NetHeader(rx.payload.data).command_words == 0):
                            m.next = "TRAIN"
                    with m.Else():
                        m.d.comb += self.dropped_incr.eq(1)
                        with m.If(~rx.payload.last):
                            m.next = "DRAIN"
            # the first word, then the second unless the header announces one (any other count than
            # the command's is refused in DECIDE)
            for i in range(NET_COMMAND_WORDS):
                final = 1 if i == NET_COMMAND_WORDS - 1 else hdr.command_words == DATA_COMMAND_WORDS
                with m.State(f"CMD{i}"):
                    m.d.comb += rx.ready.eq(1)
                    with m.If(rx.valid):
                        m.d.sync += cmd_words[64 * i:64 * i + 64].eq(rx.payload.data)
                        m.d.sync += [count.eq(n), ended.eq(rx.payload.last)]
                        with m.If(rx.payload.last):
                            m.next = "SHORT"
                            with m.If(final):
                                m.next = "DECIDE"
                        with m.Else():
                            m.next = f"CMD{i + 1}" if i < NET_COMMAND_WORDS - 1 else "DECIDE"
                            with m.If(final):
                                m.next = "DECIDE"
            with m.State("TRAIN"):              # no command words: the train's entry (read with the header)
                t = trains.train
                m.d.sync += [c.dst_qw.eq(t.dst_qw), c.size_m1.eq(t.size_m1), c.offset_qw.eq(t.next_qw),
                             c.error.eq(RmaError.NONE), orphan.eq(~t.valid), count.eq(n), ended.eq(0)]
                m.next = "DECIDE"
            with m.State("SHORT"):              # the packet ended inside its command words
                m.d.comb += self.dropped_incr.eq(1)
                m.next = "IDLE"
            with m.State("DECIDE"):
                m.d.comb += trains.write.eq(accept & (ended == (n == 0)) & sized)
                with m.If(~accept | (ended != (n == 0))):
                    m.d.comb += self.dropped_incr.eq(1)
                    m.next = "IDLE"
                    with m.If(~ended):
                        m.next = "DRAIN"
                with m.Elif(n == 0):
                    done()
                with m.Elif(self.phys.bit_select(spec.dst_vpid, 1)):
                    m.d.sync += ppn.eq(addr_qw[9:])
                    m.next = "HEADER"
                with m.Elif(hit):
                    m.d.comb += xl.use.eq(1)
                    m.d.sync += ppn.eq(kept.ppn)
                    m.next = "HEADER"
                with m.Else():
                    m.d.comb += xl.req.valid.eq(1)
                    m.next = "TRANSLATE"
            with m.State("TRANSLATE"):
                m.d.comb += xl.req.valid.eq(1)
                r = xl.rsp.payload
                with m.If(xl.rsp.valid):
                    m.d.sync += ppn.eq(r.ppn)
                    with m.If(~r.ok):
                        m.d.sync += fault.eq(1)
                        m.next = "SKIP"
                    with m.Else():
                        m.next = "HEADER"
                        with m.If(r.keep):
                            m.d.sync += [kept.valid.eq(1), kept.vpid.eq(spec.dst_vpid), kept.page.eq(addr_qw[9:]),
                                         kept.ppn.eq(r.ppn)]
            with m.State("SKIP"):               # a failed translation: the payload is not written
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid):
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 1):
                        done()
            with m.State("HEADER"):
                m.d.comb += [self.tx.valid.eq(1), beat.first.eq(1)]
                with m.If(self.tx.ready):
                    m.next = "DATA"
            with m.State("DATA"):
                m.d.comb += [self.tx.valid.eq(rx.valid), beat.word.data.eq(rx.payload.data),
                             beat.last.eq(count == 1), rx.ready.eq(self.tx.ready)]
                with m.If(rx.valid & self.tx.ready):
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 1):
                        done()
            with m.State("NOTIFY"):
                m.d.comb += self.notes.valid.eq(notify)
                with m.If(self.notes.ready | ~notify):
                    m.next = "IDLE"
            with m.State("DRAIN"):
                m.d.comb += rx.ready.eq(1)
                with m.If(rx.valid & rx.payload.last):
                    m.next = "IDLE"
        return m

    def _translation(self, m, spec, c, addr_qw):
        """The translation step and the kept translation; returns them and whether the packet's page
        (of ``addr_qw``, for the VPID of ``spec``, in the operation of descriptor ``c``) hits the kept
        one."""
        kept = Signal(data.StructLayout({"valid": 1, "vpid": len(spec.dst_vpid), "page": NLA_PAGE_BITS,
                                         "ppn": PPN_BITS}))
        hit = kept.valid & (kept.vpid == spec.dst_vpid) & (kept.page == addr_qw[9:])
        m.submodules.translate = xl = RmaTranslateStep()
        wiring.connect(m, xl.xreq, wiring.flipped(self.xreq))
        wiring.connect(m, wiring.flipped(self.xrsp), xl.xrsp)
        m.d.comb += [self.xbusy.eq(xl.xbusy), xl.stale.eq(self.stale), xl.flush.eq(self.flush),
                     xl.req.payload.write.eq(1), xl.req.payload.vpid.eq(spec.dst_vpid),
                     xl.req.payload.page.eq(addr_qw[9:])]
        # ``next`` (docs/rma.md, "Translation"): the operation's range from this packet on reaches the end
        # of the packet's page.  In quadwords from the start of the operation's first page: the last one
        # is ``start + span_m1`` (at most 1022: an operation has at most 512), so the end of the first
        # page (511) can be reached, the second's (1023) cannot; the packet lies in the second when
        # ``start + offset_qw`` carries into bit 9.  Two 9-bit adds of registers.
        start = c.dst_qw[:9]
        span_m1 = Mux(spec.cache_line, Cat(Const(7, 3), c.size_m1), c.size_m1)    # quadwords - 1
        m.d.comb += xl.req.payload.next.eq((start + span_m1 >= 511) & ~(start + c.offset_qw)[9])
        with m.If(self.flush):
            m.d.sync += kept.valid.eq(0)
        return xl, kept, hit

    def _write_header(self, m, addr_qw, ppn, n):
        """The payload write's HTAX header (``n`` words to page ``ppn``); returns the beat."""
        beat = self.tx.payload
        h = beat.word.header
        m.d.comb += [beat.vc.eq(HtaxVC.POSTED), h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED),
                     h.src.eq(self.htax_port), h.dst.eq(self.host_port),
                     h.body.mem.addr.eq(Cat(Const(0, 3), addr_qw[:9], ppn)),
                     h.body.mem.length.eq(n), h.body.mem.first_be.eq(0xFF), h.body.mem.last_be.eq(0xFF)]
        return beat

    def _note(self, m, hdr, c, error, sized):
        """The completer notification of the packet whose header is ``hdr`` (sent in ``NOTIFY``)."""
        spec = RmaNetFields(hdr.specific)
        e = self.notes.payload.entry
        m.d.comb += [
            self.notes.payload.vpid.eq(spec.dst_vpid), self.notes.payload.irq.eq(spec.irq),
            e.command.eq(spec.command), e.cls.eq(RmaNotifyClass.COMPLETER), e.error.eq(error),
            e.cache_line.eq(sized & spec.cache_line), e.size_m1.eq(sized * c.size_m1),
            e.peer_vpid.eq(spec.src_vpid), e.peer_node.eq(hdr.src_node),
        ]
        with m.If(sized):
            m.d.comb += e.value.eq(Cat(Const(0, 3), c.dst_qw))
        with m.Else():
            m.d.comb += e.value.eq(c.arg)

    def _trains(self, m, incoming, hdr, c, is_get):
        """The source's train: read with the ``incoming`` header, written (``write``, driven in
        ``DECIDE``) with the accepted packet's descriptor ``c`` and its end."""
        spec = RmaNetFields(hdr.specific)
        m.submodules.trains = trains = RmaTrainTable(nodes=self.nodes)
        m.d.comb += [trains.read_node.eq(incoming.src_node),
                     trains.read_get.eq(RmaNetFields(incoming.specific).command == RmaCommand.GET),
                     trains.write_node.eq(hdr.src_node), trains.write_get.eq(is_get),
                     trains.write_train.valid.eq(~spec.last), trains.write_train.dst_qw.eq(c.dst_qw),
                     trains.write_train.size_m1.eq(c.size_m1),
                     trains.write_train.next_qw.eq(c.offset_qw + hdr.payload_words)]
        return trains
