"""The matching of the pipelined HTAX (:class:`rtl.htax.HtaxPipelined`): iSLIP in two registered steps."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS
from rtl.common.rr import one_hot_index, one_hot_select, past_mask, round_robin, round_robin_select

from .layouts import booking_layout, event_signature, request_vcs, take_layout
from .pipelined_input import pipelined_request_signature
from .pipelined_output import output_status_signature

__all__ = ["HtaxPipelinedMatch"]


class HtaxPipelinedMatch(wiring.Component):
    """One packet-mode iSLIP iteration in two registered steps (``docs/htax.md``, "Pipelined switch").

    *Grant* (registered): each open output grants one requesting input round-robin and, for that input,
    one VC round-robin; an input requests when it can book, has a packet of the VC for the output not
    yet booked, and the output's buffer for the VC has ``RESERVE`` beats unreserved.  *Accept*
    (registered): each input accepts one of the registered grants round-robin; the accepted grant is a
    *booking*: the input takes it at once (``book``), the output learns it one cycle later from a
    register at the input (``booked``), and the pointers move past the accepted input, output and VC.
    An output whose grant is out (being accepted or refused), or that learns an accept, grants nothing
    in that cycle, so a second input can never take its next grant before its booking flag is set, and
    a registered grant never meets a booked output.

    Parameters
    ----------
    ports : int

    Members
    -------
    requests : In(pipelined_request_signature(ports)).array(ports)
        Per input.
    outputs : In(output_status_signature()).array(ports)
        Per output.
    book : Out(event_signature(take_layout(ports))).array(ports)
        Per input: the booked output and VC.
    booked : Out(event_signature(booking_layout(ports))).array(ports)
        Per output: the booking learned now.
    grants : Out(ports).array(ports)
        Per output: the registered grant (one-hot over the inputs).
    """

    def __init__(self, *, ports):
        self._n = ports
        super().__init__({
            "requests": In(pipelined_request_signature(ports)).array(ports),
            "outputs": In(output_status_signature()).array(ports),
            "book": Out(event_signature(take_layout(ports))).array(ports),
            "booked": Out(event_signature(booking_layout(ports))).array(ports),
            "grants": Out(ports).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        vc_ptr = [Signal(2, name=f"o{o}_vc_ptr") for o in range(n)]
        # the grant and accept pointers as priority masks (bit k: pointer <= k), so the arbiters start
        # without a comparison
        gptr = [Signal(n, init=(1 << n) - 1, name=f"o{o}_gptr_mask") for o in range(n)]
        aptr = [Signal(n, init=(1 << n) - 1, name=f"i{i}_aptr_mask") for i in range(n)]
        g = [Signal(n, name=f"o{o}_grant_q") for o in range(n)]        # registered grants, one-hot
        g_vc = [Signal(2, name=f"o{o}_grant_vc") for o in range(n)]
        g_vc_d = [Signal(2, name=f"o{o}_grant_vc_d") for o in range(n)]   # g_vc one cycle later
        book_o = [Signal(n, name=f"o{o}_book") for o in range(n)]      # accepts learned, one-hot

        # ---- step 1: grant ----------------------------------------------------------------------
        g_vcs = []                                  # g_vcs[o][i]: the VC output o chose for input i
        for o, out in enumerate(self.outputs):
            req, vc_of = [], []
            # (The VC choice ignores can_book and open, and open gates the grant at its register: the
            # same grants, with those terms beside the arbiters instead of in front of them.)
            for i, x in enumerate(self.requests):
                rv = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv")
                m.d.comb += rv.eq(request_vcs(x.has, o) & out.space_ok)
                gv = round_robin(m, rv, vc_ptr[o], name=f"o{o}_i{i}_vcrr")
                vc_of.append(one_hot_index(m, gv, name=f"o{o}_i{i}_vc"))
                req.append(rv.any() & x.can_book)
            req_sig = Signal(n, name=f"o{o}_req", attrs={"keep": 1})
            m.d.comb += req_sig.eq(Cat(req))
            # (the one-hot grant from round_robin_select's trees of 2:1 choices, for depth)
            grant = round_robin_select(m, req_sig, gptr[o], [Const(1 << i, n) for i in range(n)],
                                       name=f"o{o}_grant")
            # The granted VC: the registered VC choice of the granted input (vc_q), which the input reads
            # in the accept step, beside its accept arbiter (not behind the grant arbiter, and not
            # through a select on the grant); g_vc, the select, serves the output's own pointer.
            vc_q = [Signal(2, name=f"o{o}_i{i}_vc_q") for i in range(n)]
            m.d.sync += [g[o].eq(Mux(out.open & ~g[o].any() & ~book_o[o].any(), grant, 0)), g_vc_d[o].eq(g_vc[o])]
            m.d.sync += [q.eq(v) for q, v in zip(vc_q, vc_of, strict=True)]
            m.d.comb += g_vc[o].eq(one_hot_select(m, g[o], vc_q, name=f"o{o}_grant_vc"))
            g_vcs.append(vc_q)

        # ---- step 2: accept ---------------------------------------------------------------------
        # A grant is still valid when the input can book (it may have booked in the last cycle; the
        # output has no booking: above).  The input's queue and the output's space cannot have shrunk:
        # only a booking of that input or output shrinks them.
        choice = data.StructLayout({"accept": n, "dst": range(n), "vc": 2, "mask": n})
        acc = []
        for i, (x, book) in enumerate(zip(self.requests, self.book, strict=True)):
            gi = Signal(n, name=f"i{i}_granted", attrs={"keep": 1})
            m.d.comb += gi.eq(Cat(g[o][i] for o in range(n)))
            # The accept arbitration chooses among per-output values (round_robin_select: trees of 2:1
            # choices, not a one-hot grant followed by selects): the accepted output one-hot (to the
            # outputs; can_book gates it behind the arbiter) and, for the booking (under book only, so
            # without can_book), its index, its VC and the accept pointer's next mask.
            values = []
            for o in range(n):
                value = Signal(choice, name=f"i{i}_o{o}_choice")
                m.d.comb += [value.accept.eq(1 << o), value.dst.eq(o), value.vc.eq(g_vcs[o][i]),
                             value.mask.eq(past_mask(Const(1 << o, n)))]
                values.append(value)
            chosen = choice(round_robin_select(m, gi, aptr[i], values, name=f"i{i}_accept_sel"))
            a = Signal(n, name=f"i{i}_accepted")
            m.d.comb += [a.eq(Mux(x.can_book, chosen.accept, 0)),
                         book.valid.eq(gi.any() & x.can_book),       # (a.any(), without the arbiter in front)
                         book.payload.dst.eq(chosen.dst), book.payload.vc.eq(chosen.vc)]
            with m.If(book.valid):
                m.d.sync += aptr[i].eq(chosen.mask)
            a_q = Signal(n, name=f"i{i}_accepted_q")
            m.d.sync += a_q.eq(a)
            acc.append(a_q)

        # The outputs learn the accepts one cycle later, from a register at each input.
        for o, booked in enumerate(self.booked):
            m.d.comb += book_o[o].eq(Cat(acc[i][o] for i in range(n)))
            bi = one_hot_index(m, book_o[o], name=f"o{o}_book_idx")
            m.d.comb += [booked.valid.eq(book_o[o].any()), booked.payload.inputs.eq(book_o[o]),
                         booked.payload.input.eq(bi), booked.payload.vc.eq(g_vc_d[o]), self.grants[o].eq(g[o])]
            with m.If(book_o[o].any()):
                m.d.sync += [gptr[o].eq(past_mask(book_o[o])), vc_ptr[o].eq(g_vc_d[o] + 1)]
        return m
