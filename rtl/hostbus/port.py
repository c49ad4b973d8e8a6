"""The bridge's HTAX side: the host port's packets split by VC, and three packet sources merged into it."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxBeat, HtaxLinkSignature, HtaxVC

__all__ = ["HostPort"]

#: the sources merged into the NIC's host port, highest priority first, and their VCs
SOURCES = (("responses", HtaxVC.RESPONSE), ("writes", HtaxVC.POSTED), ("reads", HtaxVC.NONPOSTED))


class HostPort(wiring.Component):
    """The HTAX host port of the bridge (``docs/hostbus.md``, "Ordering").

    *From the NIC* (``tx``): a packet goes to the output of its VC: ``posted`` (WRITEs, to the AXI
    manager), ``nonposted`` (READs, to the AXI manager), ``response`` (answers to CPU reads, to the AXI
    subordinate); each VC's ``ready`` is that output's, so a stalled AXI channel stalls only its VC.
    A packet on the ATS VC (the host takes none) is consumed and flagged (``dropped``).

    *To the NIC* (``rx``): DMA read responses, CPU writes and CPU reads, a whole packet at a time, in that
    priority.  A packet starts only on a VC that is ready (as a HyperTransport link sends only with a
    credit), so a CPU store the NIC cannot take yet never holds the port: the responses behind it pass
    (the deadlock of fig. 6-7, ch. 6).

    Members
    -------
    tx : In(HtaxLinkSignature())
    rx : Out(HtaxLinkSignature())
    posted, nonposted, response : Out(stream.Signature(HtaxBeat))
    responses, writes, reads : In(stream.Signature(HtaxBeat))
    dropped : Out(1)
        An ATS packet's header is consumed now.
    """

    def __init__(self):
        super().__init__({
            "tx": In(HtaxLinkSignature()), "rx": Out(HtaxLinkSignature()),
            "posted": Out(stream.Signature(HtaxBeat)), "nonposted": Out(stream.Signature(HtaxBeat)),
            "response": Out(stream.Signature(HtaxBeat)),
            **{name: In(stream.Signature(HtaxBeat)) for name, _ in SOURCES},
            "dropped": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        tx, rx = self.tx, self.rx
        outs = {HtaxVC.POSTED: self.posted, HtaxVC.NONPOSTED: self.nonposted, HtaxVC.RESPONSE: self.response}
        for vc, out in outs.items():
            m.d.comb += [out.valid.eq(tx.valid & (tx.payload.vc == vc)), out.payload.eq(tx.payload),
                         tx.ready[vc.value].eq(out.ready)]
        m.d.comb += [tx.ready[HtaxVC.ATS.value].eq(1),
                     self.dropped.eq(tx.valid & (tx.payload.vc == HtaxVC.ATS) & tx.payload.first)]

        lock = Signal(len(SOURCES))         # the source whose packet is under way (one-hot)
        start = Signal(len(SOURCES))
        taken = Signal(len(SOURCES))
        for k, (name, vc) in enumerate(SOURCES):
            src = getattr(self, name)
            ready = rx.ready[vc.value]
            earlier = start[:k].any() if k else 0
            m.d.comb += start[k].eq(~lock.any() & src.valid & ready & ~earlier)
            with m.If(lock[k] | start[k]):
                m.d.comb += [rx.valid.eq(src.valid), rx.payload.eq(src.payload), src.ready.eq(ready)]
            m.d.comb += taken[k].eq(src.valid & src.ready)
        with m.If(taken.any()):
            m.d.sync += lock.eq(Mux(rx.payload.last, 0, lock | start))
        return m
