"""The pipelined HTAX crossbar: input slots, output buffers, packet-mode iSLIP in registered steps.

The same switch as :class:`rtl.htax.switch.Htax` from the outside (dissertation ch. 7.1 "HT-Core and
HTAX"; the four virtual channels of 5.2.9; the HyperTransport ordering rule behind the deadlock of
fig. 6-7, ch. 6), built for clock frequency instead of latency: every decision reads registers and
writes registers, so no path crosses the switch more than once per cycle.  ``docs/htax.md``
("Pipelined switch") describes it; the dissertation's own HTAX takes 6 cycles in and 3 out.

Inputs.  The packet slots, writer, virtual output queues, slot accounting and error responses of
:class:`Htax` (``Htax._slots``), with one difference: a queue's request counter counts the packets not
yet *booked* (instead of not yet sent).

Outputs.  Every output has a buffer per VC (``out_depth`` beats, LUT RAM) and a link engine that
sends whole packets from the buffers, choosing among the VCs round-robin one cycle ahead (the choice
is a register, among the VCs with a beat whose sink is ready; without one, the VC of the beat that has
just arrived), and starting a packet on it only if the VC's sink is ready in the cycle of the start,
and not on the VC of a packet whose last beat moves in that cycle unless the sink promises ``ready2``
(the fresh-``ready`` rule of :class:`Htax`).  A sink that refuses a VC fills that VC's buffer only:
the other VCs of the output keep moving (fig. 6-7).

Matching.  One iSLIP iteration in two registered steps: *grant* (each output that has no booking
picks one requesting input round-robin, and a VC for it round-robin; an input requests when it has no
booking waiting, a packet of the VC for the output not yet booked, and the output's buffer for the VC
has ``MAX_DATA_WORDS + 1`` beats unreserved; the request flags count a new packet one cycle after
its header, from registers) and *accept* (each input picks one of the registered grants that are
still valid round-robin).  An accepted grant is a *booking*: the input's queue counter drops by one,
the pointers move past the accepted input, output and VC, and the output takes the packet's beats of
the VC's buffer.  The outputs learn the accept one cycle after the inputs (from a register at each input), so
an output whose grant is out, or that learns an accept, grants nothing in that cycle.

Transfer.  A booked input looks up the head of the booked queue (the oldest packet not being sent), and
its read engine sends it beat by beat (cut-through: a word is read once the writer has stored it)
through a read register, a skid register and a write register.  Every output takes beats from one
input at a time (``wsel``): the current writer until its last beat, then the input it has booked.  A
booked input whose output is still taking another input's packet waits with its header in the write
register.  The output's space was reserved at the booking, so a transfer never waits for a sink.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory
from amaranth.lib.data import Struct

from rtl.common.htax import MAX_DATA_WORDS, NUM_VCS, HtaxBeat
from rtl.common.params import check_int

from .rr import (
    one_hot_index,
    one_hot_select,
    past_mask,
    past_one_hot,
    round_robin,
    round_robin_select,
)
from .switch import Htax

__all__ = ["HtaxPipelined"]

# Free beats an output buffer needs for a grant: the largest packet (header + 8 data words); the size
# of the granted packet is known only after the accept (the input's head lookup).
_RESERVE = MAX_DATA_WORDS + 1
# Look-ahead of the matching.  An output that takes a packet may be granted again when at most
# _OUT_AHEAD of the packet's data beats are still to come: the booked header reaches the output 5 cycles
# after the grant at the earliest, right behind the last beat.  An input whose engine reads a packet
# may be granted when at most _IN_AHEAD of its beats are still to read: the booked header is read 3
# cycles after the grant at the earliest.  Matching earlier would leave the other side waiting (an
# output idle behind a busy input, an input's engine held by a busy output); later, idle.
_OUT_AHEAD = 5
_IN_AHEAD = 3


class _BufEntry(Struct):
    """One beat in an output buffer (its VC is the buffer's)."""
    word: 92
    first: 1
    last: 1


class HtaxPipelined(Htax):
    """The HTAX crossbar with registered matching and output buffers.

    Parameters
    ----------
    ports, slots_per_vc, shared_slots, counter_bits
        As :class:`rtl.htax.switch.Htax`.
    out_depth : int
        Beats per (output, VC) buffer, ``MAX_DATA_WORDS + 1`` (9) .. 64.  A grant needs 9 free beats,
        so 16 lets an output book its next packet of a VC while 7 beats of the current one wait.

    Members
    -------
    As :class:`rtl.htax.switch.Htax`.

    Raises
    ------
    TypeError, ValueError
        A parameter is not an integer or out of range.
    """

    def __init__(self, *, ports, slots_per_vc=1, shared_slots=12, counter_bits=16, out_depth=16):
        check_int("out_depth", out_depth, _RESERVE, 64)
        self._depth = out_depth
        super().__init__(ports=ports, slots_per_vc=slots_per_vc, shared_slots=shared_slots,
                         counter_bits=counter_bits)

    @property
    def out_depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        n, depth = self._n, self._depth
        vcs = range(NUM_VCS)

        # ---- output-side registers read by the inputs ---------------------------------------
        obk = [Signal(name=f"o{o}_booked") for o in range(n)]          # a booking waits for wsel
        obk_in = [Signal(range(n), name=f"o{o}_booked_in") for o in range(n)]
        wact = [Signal(name=f"o{o}_wact") for o in range(n)]           # wsel is taking a packet
        wsel = [Signal(range(n), name=f"o{o}_wsel") for o in range(n)]
        # one-hot copies of wsel and obk_in for the control paths (the data multiplexers use wsel)
        wsel_oh = [Signal(n, name=f"o{o}_wsel_oh") for o in range(n)]
        obk_in_oh = [Signal(n, name=f"o{o}_booked_in_oh") for o in range(n)]
        space = [[Signal(range(depth + 1), init=depth, name=f"o{o}_vc{v}_space") for v in vcs]
                 for o in range(n)]
        o_open = [Signal(name=f"o{o}_open") for o in range(n)]        # may be granted (_output)
        # space_ok[o] bit v: space[o][v] >= _RESERVE, a register (_output) that is exact whenever o_open
        space_ok = [Signal(NUM_VCS, init=(1 << NUM_VCS) - 1, name=f"o{o}_space_ok") for o in range(n)]
        # w_end[o]: output o takes the last beat of its writer's packet now (_output)
        w_end = [Signal(name=f"o{o}_w_end") for o in range(n)]
        # sel[i] bit o: output o takes beats from input i (wact[o] & wsel_oh[o][i]), a register at the
        # input with the outputs' next-state rule, so the input's take (and the enables of its write
        # and skid registers) starts at its own registers, not at the outputs' across the switch
        sel = []
        for i in range(n):
            s = Signal(n, name=f"i{i}_wsel_by")
            for o in range(n):
                with m.If(~wact[o] | w_end[o]):
                    m.d.sync += s[o].eq(obk[o] & obk_in_oh[o][i])
            sel.append(s)

        inputs = [self._slots(m, i, registered_ready=True, registered_has=True, registered_low=True,
                              header_memory=True, lut_counters=True,
                              registered_release=True, input_register=True)
                  for i in range(n)]
        for i, x in enumerate(inputs):
            self._pipe_engine(m, i, x, sel[i])

        # ---- matching, step 1: grant (registered) -----------------------------------------------
        vc_ptr = [Signal(2, name=f"o{o}_vc_ptr") for o in range(n)]
        # the grant and accept pointers as priority masks (bit k: pointer <= k), so the arbiters start
        # without a comparison
        gptr = [Signal(n, init=(1 << n) - 1, name=f"o{o}_gptr_mask") for o in range(n)]
        aptr = [Signal(n, init=(1 << n) - 1, name=f"i{i}_aptr_mask") for i in range(n)]
        g = [Signal(n, name=f"o{o}_grant_q") for o in range(n)]        # registered grants, one-hot
        g_vc = [Signal(2, name=f"o{o}_grant_vc") for o in range(n)]
        g_vc_d = [Signal(2, name=f"o{o}_grant_vc_d") for o in range(n)]   # g_vc one cycle later
        book_o = [Signal(n, name=f"o{o}_book") for o in range(n)]      # accepts learned, one-hot
        g_vcs = []                                  # g_vcs[o][i]: the VC output o chose for input i
        for o in range(n):
            req, vc_of = [], []
            # (The VC choice ignores can_book and o_open, and o_open gates the grant at its register:
            # the same grants, with those terms beside the arbiters instead of in front of them.)
            for i, x in enumerate(inputs):
                rv = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv")
                m.d.comb += rv.eq(Cat(x.has[v][o] for v in vcs) & space_ok[o])
                gv = round_robin(m, rv, vc_ptr[o], name=f"o{o}_i{i}_vcrr")
                vc_of.append(one_hot_index(m, gv, name=f"o{o}_i{i}_vc"))
                req.append(rv.any() & x.can_book)
            req_sig = Signal(n, name=f"o{o}_req", attrs={"keep": 1})
            m.d.comb += req_sig.eq(Cat(req))
            # (the one-hot grant from round_robin_select's trees of 2:1 choices, for depth)
            grant = round_robin_select(m, req_sig, gptr[o], [Const(1 << i, n) for i in range(n)],
                                       name=f"o{o}_grant")
            # An output whose grant is being accepted or refused now grants nothing in this cycle: it
            # learns the accept one cycle later (a_q, below), and until then a second input could take
            # its next grant.  Nor does it grant while it learns an accept (book_o): its booking flag
            # obk is set at the end of that cycle, so a registered grant never meets a booked output
            # and the accept step needs no obk term.
            # The granted VC: the registered VC choice of the granted input (vc_q), which the input reads
            # in the accept step, beside its accept arbiter (not behind the grant arbiter, and not
            # through a select on the grant); g_vc, the select, serves the output's own pointer.
            vc_q = [Signal(2, name=f"o{o}_i{i}_vc_q") for i in range(n)]
            m.d.sync += [g[o].eq(Mux(o_open[o] & ~g[o].any() & ~book_o[o].any(), grant, 0)),
                         Cat(vc_q).eq(Cat(vc_of)), g_vc_d[o].eq(g_vc[o])]
            m.d.comb += g_vc[o].eq(one_hot_select(m, g[o], vc_q, name=f"o{o}_grant_vc"))
            g_vcs.append(vc_q)

        # ---- matching, step 2: accept (registered bookings) --------------------------------------
        # A grant is still valid when the input can book (it may have booked in the last cycle; the
        # output has no booking: above).  The input's queue and the output's space cannot have shrunk:
        # only a booking of that input or output shrinks them.  The input takes its booking at once;
        # the outputs learn it one cycle later from a register at the input (a_q), so no path crosses
        # the switch twice in a cycle.
        acc = []
        for i, x in enumerate(inputs):
            gi = Signal(n, name=f"i{i}_granted", attrs={"keep": 1})
            m.d.comb += gi.eq(Cat(g[o][i] for o in range(n)))
            # The accept arbitration chooses among per-output values (round_robin_select: trees of 2:1
            # choices, not a one-hot grant followed by selects): the accepted output one-hot (a, to the
            # outputs; can_book gates it behind the arbiter) and, for the booking registers (under
            # book only, so without can_book), its index, its VC and the accept pointer's next mask.
            dst_w = len(x.book_dst)
            chosen = round_robin_select(m, gi, aptr[i], [
                Cat(Const(1 << o, n), Const(o, dst_w), g_vcs[o][i], past_mask(Const(1 << o, n)))
                for o in range(n)], name=f"i{i}_accept_sel")
            a = Signal(n, name=f"i{i}_accepted")
            m.d.comb += [a.eq(Mux(x.can_book, chosen[:n], 0)),
                         x.book.eq(gi.any() & x.can_book),       # (a.any(), without the arbiter in front)
                         Cat(x.book_dst, x.book_vc).eq(chosen[n:n + dst_w + 2])]
            with m.If(x.book):
                m.d.sync += aptr[i].eq(chosen[n + dst_w + 2:])
            a_q = Signal(n, name=f"i{i}_accepted_q")
            m.d.sync += a_q.eq(a)
            acc.append(a_q)
        for o in range(n):
            m.d.comb += book_o[o].eq(Cat(acc[i][o] for i in range(n)))
            bi = one_hot_index(m, book_o[o], name=f"o{o}_book_idx")
            with m.If(book_o[o].any()):
                m.d.sync += [gptr[o].eq(past_mask(book_o[o])),
                             vc_ptr[o].eq(g_vc_d[o] + 1),
                             obk[o].eq(1), obk_in[o].eq(bi), obk_in_oh[o].eq(book_o[o])]

        # ---- outputs ---------------------------------------------------------------------------
        buffers = [self._output(m, o, inputs, obk[o], obk_in[o], wact[o], wsel[o], space[o], space_ok[o],
                                o_open[o], w_end[o], wsel_oh=wsel_oh[o], obk_in_oh=obk_in_oh[o],
                                book=book_o[o].any(), book_vc=g_vc_d[o])
                   for o in range(n)]

        self._drop_counters(m, inputs, registered=True)
        self._state = dict(inputs=inputs, sel=sel, g=g, obk=obk, obk_in=obk_in, wact=wact, wsel=wsel, space=space,
                           space_ok=space_ok, o_open=o_open, wsel_oh=wsel_oh, obk_in_oh=obk_in_oh,
                           buffers=buffers)
        return m

    # -------------------------------------------------------------------------------------------
    def _pipe_engine(self, m, i, x, sel):
        """Booking, head lookup and read engine of input ``i``; ``sel`` bit o: output o takes from i."""
        n = self._n
        p = f"i{i}_"
        nslots = x.nslots
        slot_shape = range(nslots)
        cls_shape = range(len(x.classes))

        # Booking (from the accept step) and the looked-up next packet.
        x.book = Signal(name=f"{p}book")
        x.book_dst = Signal(range(n), name=f"{p}book_dst")
        x.book_vc = Signal(2, name=f"{p}book_vc")
        bk = Signal(name=f"{p}bk")
        bk_dst = Signal(range(n), name=f"{p}bk_dst")
        bk_vc = Signal(2, name=f"{p}bk_vc")
        nx = Signal(name=f"{p}nx")
        nx_slot = Signal(slot_shape, name=f"{p}nx_slot")
        nx_nb = Signal(range(MAX_DATA_WORDS + 1), name=f"{p}nx_nb")
        nx_last = Signal(name=f"{p}nx_last")                      # nx_nb == 0
        nx_dst = Signal(range(n), name=f"{p}nx_dst")
        nx_vc = Signal(2, name=f"{p}nx_vc")
        nx_cls = Signal(cls_shape, name=f"{p}nx_cls")
        # can_book: ~bk & ~nx & (~act | near), from registers (set from the next values of bk, nx and
        # near), so the grant step's requests, which cross the switch, start at registers: the booking's
        # part (a booking sets bk) is q_dec, the booking registered, so the register can_book_q holds the
        # rest and its input does not wait for the accept step (~can_book_q | q_dec is the old ~can_book)
        x.can_book = Signal(name=f"{p}can_book")
        can_book_q = Signal(init=1, name=f"{p}can_book_q")
        # The queue counter drops in the cycle after the booking (a register cut between the accept and
        # the counters): the input cannot book again before (bk is set), so nothing reads the count in
        # between.  The queue is the booking's (bk_vc, bk_dst: loaded at the booking).
        m.d.sync += x.q_dec.eq(x.book)
        m.d.comb += [x.q_dec_vc.eq(bk_vc), x.q_dec_dst.eq(bk_dst), x.can_book.eq(can_book_q & ~x.q_dec)]
        with m.If(x.book):
            m.d.sync += [bk.eq(1), bk_dst.eq(x.book_dst), bk_vc.eq(x.book_vc)]

        # Read engine (shared with Htax) loading the looked-up packet, with the write register w (the
        # beat an output takes) behind its read register, and a skid register s between them: the read
        # register is emptied whenever s is empty (a register), so an output's take (w_take, from the
        # outputs' wsel) ends at w and s and does not reach into the read engine.  Beats leave in
        # order: w, then s, then the read register.
        x.w_valid = Signal(name=f"{p}w_valid")
        x.w_dst = Signal(n, name=f"{p}w_dst")                    # the beat's output, one-hot
        x.w_beat = Signal(HtaxBeat, name=f"{p}w_beat")
        x.w_take = Signal(name=f"{p}w_take")
        # w_end bit o: w holds the last beat of its packet, for output o (w_valid & w_dst & last, a
        # register here so an output's "the writer's packet ends" is an AND-OR over registers, not the
        # crossbar's last bit behind its wsel)
        x.w_end = Signal(n, name=f"{p}w_end")
        w_free = Signal(name=f"{p}w_free")
        x.s_valid = Signal(name=f"{p}s_valid")
        x.s_dst = Signal(n, name=f"{p}s_dst")
        x.s_beat = Signal(HtaxBeat, name=f"{p}s_beat")
        # *_near: at most _OUT_AHEAD data beats of the packet follow the beat (for the output's grant
        # look-ahead: a flag from the read engine's count, not a length decoded behind the crossbar)
        rd_near = Signal(name=f"{p}rd_near")
        x.s_near = Signal(name=f"{p}s_near")
        x.w_near = Signal(name=f"{p}w_near")
        load = Signal(name=f"{p}load")
        # near: fewer than _IN_AHEAD beats of the current packet are still to read (enb - ek), kept in a
        # register next to the engine's so the grant step does not start with a subtraction; it is 1
        # whenever the engine is idle (from reset, and after a last beat), so ~act | near is near.
        x.near = Signal(init=1, name=f"{p}near")
        c, issue, is_last = self._read_engine(m, p, x, load=load, rd_taken=~x.s_valid,
                                              start=(nx_slot, nx_nb, nx_dst, nx_vc, nx_cls), start_last=nx_last,
                                              registered_avail=True)
        m.d.comb += [
            x.w_take.eq(x.w_valid & (sel & x.w_dst).any()),
            w_free.eq(~x.w_valid | x.w_take),
            load.eq(nx & ~x.act),
        ]
        # erem: the engine's beats still to read after the next one (enb - ek), a register, so the
        # flags below compare registers with constants instead of a difference behind the engine's
        # choice between the new packet (nx_nb) and the current one
        # (rem = c.nb - c.k = Mux(load, nx_nb, erem); every function of it below is written as a choice
        # between the functions of nx_nb and of erem, so the comparisons do not wait for load)
        erem = Signal(range(MAX_DATA_WORDS + 1), name=f"{p}erem")
        with m.If(issue):
            m.d.sync += erem.eq(Mux(load, nx_nb - 1, erem - 1))
        with m.Elif(load):
            m.d.sync += erem.eq(nx_nb)
        near_next = Signal(name=f"{p}near_next")
        m.d.comb += near_next.eq(Mux(issue, Mux(load, nx_nb < _IN_AHEAD + 1, erem < _IN_AHEAD + 1),
                                     Mux(load, nx_nb < _IN_AHEAD, x.near)))
        m.d.sync += x.near.eq(near_next)
        with m.If(issue):
            m.d.sync += rd_near.eq(Mux(load, nx_nb <= _OUT_AHEAD, erem <= _OUT_AHEAD))
        # the next ~bk & ~nx & near but for a booking now (q_dec covers it): a lookup needs bk, so without
        # bk nx only clears, at the load, and with bk set either bk stays or nx is set by the lookup
        m.d.sync += can_book_q.eq(~bk & ~(nx & ~load) & near_next)
        cur = Signal(nslots, name=f"{p}cur")          # one-hot: the slot being read (while act)
        with m.If(load):
            m.d.sync += [nx.eq(0), cur.eq(1 << nx_slot)]
        # The slot is released in the cycle after its last beat is read (a register cut between the read
        # engine and the slot accounting); until then the head lookup still skips it (busy).
        # (rel_oh, the released slot one-hot, is a register of the slot being read, one-hot: cur, or
        # nx_slot when the packet is loaded now, as a header-only packet may end in the cycle of its
        # load; gated by release behind the register, so the engine's issue reaches one flip-flop, not
        # a synchronous reset of every slot's bit)
        rel_cur = Signal(nslots, name=f"{p}rel_cur")
        m.d.sync += [x.release.eq(issue & is_last), x.rel_slot.eq(c.slot), x.rel_cls.eq(c.cls),
                     rel_cur.eq(Mux(load, Const(1, nslots) << nx_slot, cur))]
        m.d.comb += x.rel_oh.eq(Mux(x.release, rel_cur, 0))

        # Head lookup: the oldest packet of the booked queue that is not being read.  The heads of all
        # queues (heads) are registered in the cycle of the accept and used in the next, the cycle of
        # the lookup (bk & ~nx): in between no slot starts being read (the accept needs ~nx), a
        # released slot was already busy, and a new packet is younger than the booked queue's head
        # (the queue had a packet at the accept).
        busy = Signal(nslots, name=f"{p}busy_slots")
        m.d.comb += busy.eq(Mux(x.act | x.release, cur, 0))
        waiting = Cat(x.occ) & ~busy
        heads = Signal(nslots, name=f"{p}heads")
        m.d.sync += heads.eq(Cat(waiting[k] & ~(waiting & x.older[k]).any() for k in range(nslots)))
        hit = Signal(nslots, name=f"{p}head_hit")
        m.d.comb += hit.eq(Cat(heads[k] & (x.svc[k] == bk_vc) & (x.sdst[k] == bk_dst) for k in range(nslots)))
        # The head's fields come through AND-OR trees on the one-hot hit (not a multiplexer on its index).
        head = one_hot_index(m, hit, name=f"{p}head_slot")
        head_nb = one_hot_select(m, hit, x.snb, name=f"{p}head_nb")
        head_err = Signal(name=f"{p}head_err")
        m.d.comb += head_err.eq((hit & Cat(x.serr)).any())
        head_last = Signal(name=f"{p}head_last")
        m.d.comb += head_last.eq((hit & Cat(nb == 0 for nb in x.snb)).any())
        with m.If(bk & ~nx):
            m.d.sync += [
                bk.eq(0), nx.eq(1), nx_slot.eq(head), nx_nb.eq(head_nb), nx_last.eq(head_last), nx_dst.eq(bk_dst),
                nx_vc.eq(bk_vc), nx_cls.eq(Mux(head_err, x.err_cls, bk_vc)),
            ]

        rd_beat = x.rd_beat
        rd_dst = Signal(n, name=f"{p}rd_dst_oh")
        m.d.comb += rd_dst.eq(Const(1, n) << x.rd_dst)
        with m.If(w_free):
            # w takes s's beat, else the read register's (s is empty then)
            m.d.sync += [
                x.w_valid.eq(x.s_valid | x.rd_valid), x.s_valid.eq(0),
                x.w_dst.eq(Mux(x.s_valid, x.s_dst, rd_dst)),
                x.w_beat.eq(Mux(x.s_valid, x.s_beat.as_value(), rd_beat.as_value())),
                x.w_near.eq(Mux(x.s_valid, x.s_near, rd_near)),
                x.w_end.eq(Mux(x.s_valid, Mux(x.s_beat.last, x.s_dst, 0),
                               Mux(x.rd_valid & rd_beat.last, rd_dst, 0))),
            ]
        with m.Elif(~x.s_valid):
            # w stays: the read register's beat waits in s
            m.d.sync += [x.s_valid.eq(x.rd_valid), x.s_dst.eq(rd_dst), x.s_beat.eq(rd_beat), x.s_near.eq(rd_near)]

        x.bk, x.bk_dst, x.bk_vc, x.nx, x.nx_slot, x.nx_nb, x.nx_dst, x.nx_vc, x.nx_cls = (
            bk, bk_dst, bk_vc, nx, nx_slot, nx_nb, nx_dst, nx_vc, nx_cls)
        x.cur, x.busy, x.hit, x.erem, x.nx_last = cur, busy, hit, erem, nx_last

    # -------------------------------------------------------------------------------------------
    def _output(self, m, o, inputs, obk, obk_in, wact, wsel, space, space_ok, o_open, w_end, *, wsel_oh,
                obk_in_oh, book, book_vc):
        """Write side (``wsel``), VC buffers and link engine of output ``o``; returns per VC the
        buffer's write and read pointers, its "not empty" flag, its push and pop and whether ``ow`` holds
        a beat of the VC (for the formal checks)."""
        depth = self._depth
        vcs = range(NUM_VCS)
        p = f"o{o}_"
        port = self.port(o).rx

        # Write side: take the beats of input wsel (registered into ow, then written to the buffer).
        w_ok = Signal(name=f"{p}w_ok")
        m.d.comb += w_ok.eq(wact & (wsel_oh & Cat(x.w_valid & x.w_dst[o] for x in inputs)).any())
        w_beat = Signal(HtaxBeat, name=f"{p}w_in")
        m.d.comb += w_beat.eq(Array(x.w_beat.as_value() for x in inputs)[wsel])
        # Whether at most _OUT_AHEAD data beats of the writer's packet are still to come (wnear), once
        # its header has been taken (whdr): the flag of the last beat taken, made by the input.
        whdr = Signal(name=f"{p}whdr")
        wnear = Signal(name=f"{p}wnear")
        with m.If(w_ok):
            m.d.sync += [whdr.eq(1), wnear.eq(Array(x.w_near for x in inputs)[wsel])]
        # w_end: w_ok & w_beat.last, from the inputs' w_end
        m.d.comb += w_end.eq(wact & (wsel_oh & Cat(x.w_end[o] for x in inputs)).any())
        with m.If(~wact | w_end):
            m.d.sync += whdr.eq(0)
            with m.If(obk):
                m.d.sync += [wact.eq(1), wsel.eq(obk_in), wsel_oh.eq(obk_in_oh), obk.eq(0)]
            with m.Else():
                m.d.sync += wact.eq(0)
        m.d.comb += o_open.eq(~obk & (~wact | (whdr & wnear)))

        # The booking of the last cycle (``book`` comes one cycle after the accept): its input's head
        # lookup (nx_nb) is registered now, and obk_in names that input (set with obk in the last cycle;
        # the output's next booking comes three cycles later at the earliest).
        bk1 = Signal(name=f"{p}booked_d1")
        bk1_vc = Signal(2, name=f"{p}booked_d1_vc")
        m.d.sync += [bk1.eq(book), bk1_vc.eq(book_vc)]

        booked_nb = Signal(range(MAX_DATA_WORDS + 1), name=f"{p}booked_nb")
        m.d.comb += booked_nb.eq(Array(x.nx_nb for x in inputs)[obk_in])
        # The booking's take is _RESERVE beats at bk1 (a constant: nx_nb, which crosses the switch, ends
        # in a register, booked_nb_q, not in the space adder) and one cycle later (refund) the beats the
        # packet does not use, MAX_DATA_WORDS - its data words, from that register.
        refund = Signal(name=f"{p}refund")
        refund_vc = Signal(2, name=f"{p}refund_vc")
        booked_nb_q = Signal(range(MAX_DATA_WORDS + 1), name=f"{p}booked_nb_q")
        m.d.sync += [refund.eq(bk1), refund_vc.eq(bk1_vc), booked_nb_q.eq(booked_nb)]

        # ow: the beat taken from the writer, with its VC one-hot (ow_vc = 0: ow is empty), so the link
        # engine's "VC v has a beat" does not start with a comparison
        ow_vc = Signal(NUM_VCS, name=f"{p}ow_vc")
        ow = Signal(HtaxBeat, name=f"{p}ow")
        m.d.sync += [ow_vc.eq(Mux(w_ok, Const(1, NUM_VCS) << w_beat.vc.as_value(), 0)), ow.eq(w_beat)]

        # VC queues: a LUT RAM FIFO per VC, followed by ow, which the link engine takes directly when the
        # FIFO is empty (bypass: it is then the queue's only beat).  ow's beat is always written (push
        # = in_ow) and a beat that leaves always pops: a bypassed beat is written at wp == rp and read
        # past in the same cycle, so the RAM's write enable does not wait for the link engine.
        wp = [Signal(range(depth), name=f"{p}vc{v}_wp") for v in vcs]
        rdp = [Signal(range(depth), name=f"{p}vc{v}_rp") for v in vcs]
        rdata = []                                  # the beats at the read pointers
        push = [Signal(name=f"{p}vc{v}_push") for v in vcs]
        pop = [Signal(name=f"{p}vc{v}_pop") for v in vcs]
        leave = [Signal(name=f"{p}vc{v}_leave") for v in vcs]      # the link engine takes a v beat
        leave_q = [Signal(name=f"{p}vc{v}_left") for v in vcs]
        buffered = [Signal(name=f"{p}vc{v}_buffered") for v in vcs]
        in_ow = [Signal(name=f"{p}vc{v}_in_ow") for v in vcs]
        for v in vcs:
            mem = memory.Memory(shape=_BufEntry, depth=depth, init=[])
            m.submodules[f"{p}vc{v}_buf"] = mem
            wport = mem.write_port()
            rport = mem.read_port(domain="comb")
            m.d.comb += [
                in_ow[v].eq(ow_vc[v]),
                pop[v].eq(leave[v]),
                push[v].eq(in_ow[v]),
                wport.en.eq(push[v]), wport.addr.eq(wp[v]),
                wport.data.word.eq(ow.word), wport.data.first.eq(ow.first), wport.data.last.eq(ow.last),
                rport.addr.eq(rdp[v]),
            ]
            rdata.append(rport.data.as_value())
            with m.If(push[v]):
                m.d.sync += wp[v].eq(Mux(wp[v] == depth - 1, 0, wp[v] + 1))
            rdp_next = Mux(rdp[v] == depth - 1, 0, rdp[v] + 1)
            with m.If(pop[v]):
                m.d.sync += rdp[v].eq(rdp_next)
            # buffered: the buffer holds a beat (no count: a push with a pop keeps the flag, a pop
            # alone empties the buffer when its read pointer reaches the write pointer; wp == rp with
            # buffered set is a full buffer)
            with m.If(push[v] & ~pop[v]):
                m.d.sync += buffered[v].eq(1)
            with m.If(pop[v] & ~push[v]):
                m.d.sync += buffered[v].eq(rdp_next != wp[v])
            # Space: a booking takes its packet's beats one cycle after the output learns it (bk1: the
            # output is not granted before, its booking flag obk is set), _RESERVE of them, and gets
            # back the unused ones in the next cycle (refund, from the input's head lookup registered
            # at the output); every beat that leaves the queue frees one, one cycle later (leave_q: a
            # register cut between the link engine and the grant step).
            take_v = bk1 & (bk1_vc == v)
            refund_v = refund & (refund_vc == v)
            m.d.sync += [leave_q[v].eq(leave[v]),
                         space[v].eq(space[v] - Mux(take_v, _RESERVE, 0)
                                     + Mux(refund_v, MAX_DATA_WORDS - booked_nb_q, 0) + leave_q[v])]
            # space_ok: "space >= _RESERVE" for the grant step, registered from the next space without
            # the booking's take and refund: in the two cycles after a take the output is not open
            # (obk is set, or the booked input has just become the writer and its header is not yet
            # in: whdr is low; the output takes the header two cycles after the take at the earliest),
            # and from the cycle after the refund on the flag is exact again (formal: exact when
            # open).
            m.d.sync += space_ok[v].eq(Mux(leave_q[v], space[v] >= _RESERVE - 1, space[v] >= _RESERVE))

        # Link engine: whole packets from the buffers, round-robin over the VCs that may start.  The
        # choice between packets is a register (``pick``, made one cycle ahead) that the cycle of the
        # start only confirms, so no path runs from the buffers' state through the round robin into
        # the 64-bit output register.
        o_valid = Signal(name=f"{p}valid")
        o_beat = Signal(HtaxBeat, name=f"{p}beat")
        in_pkt = Signal(name=f"{p}in_pkt")
        cur_vc = Signal(NUM_VCS, name=f"{p}cur_vc")                # one-hot
        vptr = Signal(2, name=f"{p}link_vc_ptr")
        m.d.comb += [port.valid.eq(o_valid), port.payload.eq(o_beat)]
        moved = Signal(name=f"{p}move")
        m.d.comb += moved.eq(port.transfer())
        o_free = Signal(name=f"{p}free")
        m.d.comb += o_free.eq(~o_valid | moved)
        nonempty = Signal(NUM_VCS, name=f"{p}nonempty")
        m.d.comb += nonempty.eq(Cat(buffered[v] | in_ow[v] for v in vcs))
        # Fresh-ready rule: no packet on the VC whose last beat moves now, unless the sink promised.  A
        # beat is taken only when o_free, so "o_valid" stands for "moved" here; last_vc (one-hot, set
        # with o_beat and o_valid) is the VC of the beat in o_beat when it is a packet's last.
        last_vc = Signal(NUM_VCS, name=f"{p}last_vc")
        start_ok = Signal(NUM_VCS, name=f"{p}start_ok")
        m.d.comb += start_ok.eq(nonempty & port.ready & ~(last_vc & ~port.ready2))
        # pick: the round robin's choice among the VCs with a beat whose sink is ready, registered; a
        # packet starts on it in the next cycle if that VC may start then (start_ok, with the fresh-
        # ready rule of that cycle).  (The pointer moves one cycle after a start, so a VC of one-beat
        # packets may start twice in a row before the next VC's turn.)
        pick = Signal(NUM_VCS, name=f"{p}link_vc_pick")
        picked = Signal(name=f"{p}link_vc_picked")                  # pick.any(), its own register
        m.d.sync += [pick.eq(round_robin(m, nonempty & port.ready, vptr, name=f"{p}link_vc")),
                     picked.eq((nonempty & port.ready).any())]
        # The VC whose head is read (cand, one-hot, from registers only) and the source VC (src,
        # one-hot, or 0): the current packet's while its next beat is there, or the confirmed pick;
        # with no pick (no VC had a beat for a ready sink in the last cycle), the VC of the beat that
        # has just arrived in ow (ow_vc, one-hot), so a beat into an empty output leaves without
        # waiting for a pick.  A VC's beat leaves when o_free and the source is that VC.
        cand = Signal(NUM_VCS, name=f"{p}cand")
        m.d.comb += cand.eq(Mux(in_pkt, cur_vc, Mux(picked, pick, ow_vc)))
        src = Signal(NUM_VCS, name=f"{p}src")
        m.d.comb += src.eq(cand & Mux(in_pkt, nonempty, start_ok))
        # cand's head: its buffer's beat at the read pointer, or ow's beat when the buffer is empty (ow
        # then holds cand's only beat, or src is 0).  One select among the read ports, then one with ow
        # (not a choice between RAM and ow per VC before the select: a quarter of the multiplexers).
        from_buf = Signal(name=f"{p}next_buffered")
        m.d.comb += from_buf.eq((cand & Cat(buffered)).any())
        nxt = Signal(_BufEntry, name=f"{p}next")
        m.d.comb += nxt.eq(Mux(from_buf, one_hot_select(m, cand, rdata, name=f"{p}next_sel"),
                               Cat(ow.word.as_value(), ow.first, ow.last)))
        take = Signal(name=f"{p}take")
        m.d.comb += take.eq(o_free & src.any())
        for v in vcs:
            m.d.comb += leave[v].eq(o_free & src[v])
        # o_beat loads whenever it is free (its content does not matter while o_valid is low)
        with m.If(o_free):
            m.d.sync += [o_valid.eq(src.any()), last_vc.eq(Mux(nxt.last, src, 0)),
                         o_beat.word.eq(nxt.word), o_beat.vc.eq(one_hot_index(m, cand, name=f"{p}cand_idx")),
                         o_beat.first.eq(nxt.first), o_beat.last.eq(nxt.last)]
        with m.If(take):
            m.d.sync += [in_pkt.eq(~nxt.last), cur_vc.eq(src)]
            with m.If(~in_pkt):
                m.d.sync += vptr.eq(past_one_hot(m, src, name=f"{p}link_vc_past"))
        return wp, rdp, buffered, push, pop, in_ow
