"""The matching of the 2-cycle HTAX (:class:`rtl.htax.Htax`): one packet-mode iSLIP iteration per cycle."""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS
from rtl.common.rr import one_hot_index, past, round_robin

from .direct_input import direct_request_signature
from .direct_output import direct_status_signature
from .layouts import event_signature, request_vcs, take_layout

__all__ = ["HtaxDirectMatch"]


class HtaxDirectMatch(wiring.Component):
    """Matches inputs and outputs per packet with one iteration of packet-mode iSLIP (dissertation
    ch. 7.1, HTAX arbitration; ``docs/htax.md``, "Switching and arbitration").

    1. *Request*: input *i* requests output *o* on VC *v* when its read engine is free, it has a
       packet of VC *v* for *o*, *o*'s sink is ready for *v* and *o* can take a packet.
    2. *Grant*: each output grants one requesting input round-robin and, for that input, one VC
       round-robin, among the VCs the fresh-``ready`` rule allows; if its pointer picks an input whose
       only requests are on a VC the rule holds back, it grants nobody in this cycle (that input
       wins in the next, which keeps the starvation bound).
    3. *Accept*: each input accepts one granting output round-robin.
    4. The pointers move only on acceptance, to one past the accepted input, output and VC.

    Parameters
    ----------
    ports : int

    Members
    -------
    requests : In(direct_request_signature(ports)).array(ports)
        Per input.
    outputs : In(direct_status_signature()).array(ports)
        Per output.
    take : Out(event_signature(take_layout(ports))).array(ports)
        Per input: the accepted output and VC.
    accepted : Out(event_signature(range(ports))).array(ports)
        Per output: the input that accepted it.
    """

    def __init__(self, *, ports):
        self._n = ports
        super().__init__({
            "requests": In(direct_request_signature(ports)).array(ports),
            "outputs": In(direct_status_signature()).array(ports),
            "take": Out(event_signature(take_layout(ports))).array(ports),
            "accepted": Out(event_signature(range(ports))).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        vc_ptr = [Signal(2, name=f"o{o}_vc_ptr") for o in range(n)]
        gptr = [Signal(range(n), name=f"o{o}_gptr") for o in range(n)]
        aptr = [Signal(range(n), name=f"i{i}_aptr") for i in range(n)]

        # Request and grant; chosen_vc[o][i]: the VC output o would grant input i.
        chosen_vc = [[None] * n for _ in range(n)]
        grants = []
        for o, out in enumerate(self.outputs):
            req, req_ok = [], []
            for i, x in enumerate(self.requests):
                rv = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv")
                m.d.comb += rv.eq(request_vcs(x.has, o) & out.ready
                                  & Mux(x.free & out.can, 0b1111, 0))
                rv_ok = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv_ok")
                m.d.comb += rv_ok.eq(rv & out.vcs)
                g = round_robin(m, rv_ok, vc_ptr[o], name=f"o{o}_i{i}_vcrr")
                chosen_vc[o][i] = one_hot_index(m, g, name=f"o{o}_i{i}_vc")
                req.append(rv.any())
                req_ok.append(rv_ok.any())
            req_sig = Signal(n, name=f"o{o}_req")
            m.d.comb += req_sig.eq(Cat(req))
            grant = Signal(n, name=f"o{o}_grant_ok")
            m.d.comb += grant.eq(round_robin(m, req_sig, gptr[o], name=f"o{o}_grant") & Cat(req_ok))
            grants.append(grant)

        # Accept.
        accept_out = []     # per input: one-hot over outputs
        for i, take in enumerate(self.take):
            gi = Signal(n, name=f"i{i}_granted")
            m.d.comb += gi.eq(Cat(grants[o][i] for o in range(n)))
            a = round_robin(m, gi, aptr[i], name=f"i{i}_accept")
            accept_out.append(a)
            ao = one_hot_index(m, a, name=f"i{i}_accept_idx")
            av = Signal(2, name=f"i{i}_take_vc")
            m.d.comb += av.eq(Array(chosen_vc[o][i] for o in range(n))[ao])
            m.d.comb += [take.valid.eq(a.any()), take.payload.dst.eq(ao), take.payload.vc.eq(av)]
            with m.If(a.any()):
                m.d.sync += aptr[i].eq(past(ao, n))

        # The outputs' pointers move past the input that accepted, and past its VC.
        for o, accepted in enumerate(self.accepted):
            acc = Signal(n, name=f"o{o}_accepted")
            m.d.comb += acc.eq(Cat(accept_out[i][o] for i in range(n)))
            acc_in = one_hot_index(m, acc, name=f"o{o}_accepted_idx")
            m.d.comb += [accepted.valid.eq(acc.any()), accepted.payload.eq(acc_in)]
            with m.If(acc.any()):
                m.d.sync += [
                    gptr[o].eq(past(acc_in, n)),
                    vc_ptr[o].eq(Array(chosen_vc[o][i] for i in range(n))[acc_in] + 1),
                ]
        return m
