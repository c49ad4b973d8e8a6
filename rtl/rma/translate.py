"""One translation step of an RMA engine: the request/answer handshake with the ATS client and the
engine's busy bit of the flush rule (dissertation ch. 5.3, 7.5.5; ``docs/rma.md``, "Translation" and
"Flush")."""

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import PPN_BITS

from .ats_client import RmaXlateRequest, RmaXlateResult

__all__ = ["RmaTranslateStep", "RmaTranslated"]

#: the answer an engine sees: ``ok``, the physical page number, and ``keep`` (no flush was pending for
#: this engine when it arrived, so it may be kept beyond the operation side that asked for it)
RmaTranslated = data.StructLayout({"ok": 1, "ppn": PPN_BITS, "keep": 1})


class RmaTranslateStep(wiring.Component):
    """The translation handshake of one engine (requester, completer or responder) and its ``xbusy``.

    The engine offers the translation it needs on ``req`` in the cycle it decides to translate and
    holds it; the request leaves on ``xreq`` in the next cycle (held until the ATS client takes it), and
    ``req`` is taken (``ready``) in the cycle the answer arrives, which ``rsp`` carries in the same cycle.
    An engine has at most one translation outstanding, so ``rsp`` is always ready.

    Flush rule (``docs/rma.md``, "Flush"): ``xbusy`` rises in the cycle after the engine offers a request
    or, with ``use``, starts to use a translation it kept, and falls in the cycle after ``idle`` (the
    engine between operation sides).  ``rsp.payload.keep`` is low for an answer that arrives while a
    flush waits for this engine (``stale``) or arrives itself (``flush``): such an answer serves its
    own operation side only.

    Members
    -------
    req : In(stream.Signature(RmaXlateRequest))
        The engine's request; taken with its answer.
    rsp : Out(stream.Signature(RmaTranslated, always_ready=True))
    use : In(1)
        The engine starts to use a kept translation (no request).
    idle : In(1)
        The engine is between operation sides.
    stale, flush : In(1)
        From the ATS client: a flush waits for this engine; a flush request arrives.
    xreq : Out(stream.Signature(RmaXlateRequest)) ; xrsp : In(stream.Signature(RmaXlateResult, always_ready=True))
    xbusy : Out(1)
        To and from the ATS client.
    """

    req: In(stream.Signature(RmaXlateRequest))
    rsp: Out(stream.Signature(RmaTranslated, always_ready=True))
    use: In(1)
    idle: In(1)
    stale: In(1)
    flush: In(1)
    xreq: Out(stream.Signature(RmaXlateRequest))
    xrsp: In(stream.Signature(RmaXlateResult, always_ready=True))
    xbusy: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.xreq.payload.eq(self.req.payload), self.rsp.payload.ok.eq(self.xrsp.payload.ok),
                     self.rsp.payload.ppn.eq(self.xrsp.payload.ppn),
                     self.rsp.payload.keep.eq(~self.stale & ~self.flush)]
        with m.If(self.idle):
            m.d.sync += self.xbusy.eq(0)
        with m.If(self.use):
            m.d.sync += self.xbusy.eq(1)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.req.valid):
                    m.d.sync += self.xbusy.eq(1)
                    m.next = "REQUEST"
            with m.State("REQUEST"):
                m.d.comb += self.xreq.valid.eq(1)
                with m.If(self.xreq.ready):
                    m.next = "WAIT"
            with m.State("WAIT"):
                m.d.comb += [self.rsp.valid.eq(self.xrsp.valid), self.req.ready.eq(self.xrsp.valid)]
                with m.If(self.xrsp.valid):
                    m.next = "IDLE"
        return m
