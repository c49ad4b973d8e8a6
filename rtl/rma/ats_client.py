"""The RMA unit's ATS client (:class:`RmaAtsClient`) and its translation layouts."""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import NLA_PAGE_BITS, PPN_BITS, AtsCmd, AtsMessage
from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxVC
from rtl.common.params import check_int, check_port

from .formats import RMA_VPID_BITS
from .streams import RmaMerge
from .txarb import HtaxPacketSignature

__all__ = ["RmaAtsClient", "RmaXlateRequest", "RmaXlateResult"]

#: a translation a client asks for: the NLA page of ``vpid``, for a write or a read; ``next``: the access
#: reaches the end of that page (``docs/rma.md``, "Translation"; the ATU may look ahead)
RmaXlateRequest = data.StructLayout({"write": 1, "next": 1, "vpid": RMA_VPID_BITS, "page": NLA_PAGE_BITS})
#: its answer: ``ok`` and the physical page number (0 if not ok)
RmaXlateResult = data.StructLayout({"ok": 1, "ppn": PPN_BITS})


class RmaAtsClient(wiring.Component):
    """The RMA unit's ATS client: translations for the requester, the completer and the responder over the
    unit's one HTAX port, and the answers to the ATU's flush requests (dissertation ch. 5.3, fig. 5-10;
    ch. 7.5.5).

    **Translations.**  Each client offers a :data:`RmaXlateRequest` (``write``, ``next``, VPID, NLA page)
    and waits for its :data:`RmaXlateResult` (``ok``, physical page number).  Requests are taken round robin
    (:class:`~rtl.rma.streams.RmaMerge`), the client's index goes into a FIFO, and the request leaves as a
    single-beat ATS packet (``dst`` = ``atu_port``, tag 0) through an output register.  The ATU answers the
    requests of one FU port in request order without a tag (ch. 5.4), so the FIFO's head names the client
    of each translation response.  A client has at most one translation outstanding and waits for it, so
    the result stream is ``always_ready``; for the same reason three FIFO entries suffice.

    **Flush (ch. 5.3).**  "FUs have to answer with a flush response as soon as they can be sure, that the
    address is not stored in internal state and not currently used for a DMA transfer."  This client uses
    a conservative rule that needs no address compare: when a flush request arrives, the clients whose
    ``busy`` bit is set -- a client raises it from offering a translation request until the operation side
    that uses the translation has finished (its last DMA read returned, its last write handed to the HTAX)
    -- are recorded in ``stale``; a bit of ``stale`` clears in the first cycle its client is not busy; the
    flush response (the request echoed with ``cmd`` FLUSH_RESPONSE) is sent once ``stale`` is 0.  ``flush``
    strobes as the request arrives, so a client drops any translation it keeps beyond one operation (the
    completer's last-translation register), and a client must not keep a translation it received while its
    ``stale`` bit is set.  A translation requested after the flush request arrived is answered by the ATU
    from the new GATE (the ATU flipped its epoch before it sent the request, docs/atu.md), so it is never
    waited for.  No deadlock: a busy client waits only for the ATU's translation responses (which the ATU
    sends during a flush), DMA reads and the network's completer class, never for a flush response.

    Deviations: the flush does not compare the (VPID, NLA page): every operation that held a translation
    when the request arrived is waited for.  A posted write handed to the HTAX before the flush response
    may still be on its way to memory when the flush response reaches the ATU (different VC and
    destination).  The ATU sends one flush request at a time (docs/atu.md); a second flush request that
    arrives while one is pending is dropped and counted in ``dropped_incr``, as are translation responses
    nobody waits for and any other ATS message.

    Parameters
    ----------
    clients : int
        Number of clients (1..4).
    htax_port, atu_port : int

    Members
    -------
    req : In(stream.Signature(RmaXlateRequest)).array(clients)
    rsp : Out(stream.Signature(RmaXlateResult, always_ready=True)).array(clients)
    busy : In(clients)
        Per client: offering a request, waiting for a translation or using one.
    stale : Out(clients)
        Per client: a pending flush waits for the client's current operation side.
    flush : Out(1)
        A flush request arrives in this cycle.
    rx : In(stream.Signature(AtsMessage, always_ready=True))
        ATS messages for the unit (single-beat ATS packets from :class:`~rtl.rma.rx.RmaRx`).
    tx : Out(HtaxPacketSignature())
        Translation requests and flush responses.
    fault_incr, flush_incr, dropped_incr : Out(1)
        A translation answered with ``ok == 0``; a flush response sent; an ATS message dropped.
    """

    def __init__(self, *, clients, htax_port, atu_port):
        self.clients = check_int("clients", clients, 1, 4)
        self.htax_port = check_port("htax_port", htax_port)
        self.atu_port = check_port("atu_port", atu_port)
        super().__init__({
            "req": In(stream.Signature(RmaXlateRequest)).array(clients),
            "rsp": Out(stream.Signature(RmaXlateResult, always_ready=True)).array(clients),
            "busy": In(clients), "stale": Out(clients), "flush": Out(1),
            "rx": In(stream.Signature(AtsMessage, always_ready=True)), "tx": Out(HtaxPacketSignature()),
            "fault_incr": Out(1), "flush_incr": Out(1), "dropped_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.clients
        tagged = data.StructLayout({"client": range(n), "req": RmaXlateRequest})
        m.submodules.merge = merge = RmaMerge(shape=tagged, count=n)
        for k in range(n):
            m.d.comb += [merge.i[k].valid.eq(self.req[k].valid), merge.i[k].payload.req.eq(self.req[k].payload),
                         merge.i[k].payload.client.eq(k), self.req[k].ready.eq(merge.i[k].ready)]
        # the clients of the translations on their way, in request order
        m.submodules.order = order = fifo.SyncFIFO(width=max(1, (n - 1).bit_length()), depth=n)

        # flush state
        pending = Signal()
        flush_msg = Signal(AtsMessage)
        stale = Signal(n)
        m.d.comb += self.stale.eq(stale)

        # output register
        out = Signal(HtaxBeat)
        out_valid = Signal()
        h = out.word.header
        m.d.comb += [self.tx.valid.eq(out_valid), self.tx.payload.eq(out)]
        load = ~out_valid | self.tx.ready
        answer = pending & (stale == 0)
        msg = Signal(AtsMessage)
        m.d.comb += [msg.translation_request.cmd.eq(AtsCmd.TRANSLATION_REQUEST),
                     msg.translation_request.write.eq(merge.o.payload.req.write),
                     msg.translation_request.next.eq(merge.o.payload.req.next),
                     msg.translation_request.vpid.eq(merge.o.payload.req.vpid),
                     msg.translation_request.nla_page.eq(merge.o.payload.req.page)]
        with m.If(answer):
            m.d.comb += [msg.eq(flush_msg), msg.flush_response.cmd.eq(AtsCmd.FLUSH_RESPONSE)]
        m.d.comb += [merge.o.ready.eq(load & ~answer & order.w_rdy), order.w_data.eq(merge.o.payload.client),
                     order.w_en.eq(merge.o.valid & merge.o.ready)]
        with m.If(self.tx.valid & self.tx.ready):
            m.d.sync += out_valid.eq(0)
        with m.If(load & (answer | (merge.o.valid & order.w_rdy))):
            m.d.sync += [out_valid.eq(1), out.vc.eq(HtaxVC.ATS), out.first.eq(1), out.last.eq(1),
                         h.cmd.eq(HtaxCmd.ATS), h.vc.eq(HtaxVC.ATS), h.src.eq(self.htax_port),
                         h.dst.eq(self.atu_port), h.body.ats.eq(msg)]
            with m.If(answer):
                m.d.sync += pending.eq(0)
                m.d.comb += self.flush_incr.eq(1)

        # ATS messages in
        rx = self.rx.payload
        arrives = Signal()
        m.d.comb += arrives.eq(self.rx.valid & (rx.cmd == AtsCmd.FLUSH_REQUEST) & ~pending)
        with m.If(arrives):
            m.d.sync += [pending.eq(1), flush_msg.eq(rx), stale.eq(self.busy)]
            m.d.comb += [self.flush.eq(1), self.stale.eq(self.busy)]
        with m.Else():
            m.d.sync += stale.eq(stale & self.busy)
        translated = self.rx.valid & (rx.cmd == AtsCmd.TRANSLATION_RESPONSE) & order.r_rdy
        m.d.comb += order.r_en.eq(translated)
        for k in range(n):
            m.d.comb += [self.rsp[k].valid.eq(translated & (order.r_data == k)),
                         self.rsp[k].payload.ok.eq(rx.translation_response.ok),
                         self.rsp[k].payload.ppn.eq(rx.translation_response.ppn)]
        m.d.comb += [self.fault_incr.eq(translated & ~rx.translation_response.ok),
                     self.dropped_incr.eq(self.rx.valid & ~translated & ~arrives)]
        return m
