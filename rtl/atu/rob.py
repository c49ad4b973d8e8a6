"""The ATU's reorder buffer (dissertation ch. 5.4, fig. 5-12 "reorder buffer")."""

from amaranth.hdl import Array, Assert, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.ats import PPN_BITS, AtsCause
from rtl.common.htax import PORT_BITS, TAG_BITS

from .formats import AsyncReadSignature, OfferSignature
from .readq import AtuReadQueue

__all__ = ["AtuReorderBuffer"]


class AtuReorderBuffer(wiring.Component):
    """Reorder buffer: restores request order while GATE reads complete out of order.

    Every request leaving the lookup (``requests``) either takes the slot at the tail (``slots`` slots, LUT
    RAM) or, with a known result and nothing pending for its FU, goes straight to the output
    (*bypass*, on ``responses`` beside the head).  A miss's slot index is the HTAX tag of its GATE read, which
    is queued for the output (``reads``, an :class:`AtuReadQueue`).  Its GATE arrives on ``arrived``
    (the slot stops waiting) and its checked result one cycle later on ``results``.  The head retires
    when its result is known; results leave in allocation order.  Per FU of ``fu_ports`` (plus one for
    any other source) a counter of pending slots decides the bypass.

    Timing: ``requests.ready`` (not full) and "the head is done" (``retire_rdy``) and "the head is a miss"
    (``head_miss``) are registers, computed from the head and head + 1 candidates; the per-FU "nothing
    pending" flags are registers; the slot storage, the ``done`` bits and the read queue are written
    whenever a request leaves the lookup (the tail slot is free then), so their enables do not wait for
    the TLB compare and the bypass decision.

    Deviation from ch. 5.4: once a FU has a result pending, its later results wait behind older results
    of every FU (allocation order; the ordering rule needs it only per FU).  A FU with nothing pending
    is never blocked by other FUs' misses.

    Parameters
    ----------
    formats : AtuFormats

    Members
    -------
    requests : In(stream.Signature(formats.lookup))
        Classified requests from the lookup; ``ready`` = not full, a register.
    responses : Out(OfferSignature(formats.response))
        The head's result when it is done, else the bypass candidate (withdrawn into its slot if not
        taken).
    reads : Out(stream.Signature(formats.read))
        GATE reads to send.
    info : In(AsyncReadSignature(depth=slots, shape=formats.slot_info))
        The request information of a slot, for the GATE check.
    waiting : Out(slots)
        Bit ``s``: slot ``s`` waits for its GATE.
    arrived : In(stream.Signature(range(slots), always_ready=True))
        The GATE (or an error response) for a waiting slot arrived: it stops waiting.
    results : In(stream.Signature(formats.gate_result, always_ready=True))
        The checked result of a slot whose GATE arrived in the previous cycle.
    """

    def __init__(self, *, formats):
        self._f = formats
        R = formats.slots
        super().__init__({
            "requests": In(stream.Signature(formats.lookup)),
            "responses": Out(OfferSignature(formats.response)),
            "reads": Out(stream.Signature(formats.read)),
            "info": In(AsyncReadSignature(depth=R, shape=formats.slot_info)),
            "waiting": Out(R),
            "arrived": In(stream.Signature(range(R), always_ready=True)),
            "results": In(stream.Signature(formats.gate_result, always_ready=True)),
        })

    def elaborate(self, platform):
        m = Module()
        f = self._f
        R = f.slots
        nfu = f.fus
        imm_layout = data.StructLayout({"ok": 1, "cause": AtsCause, "ppn": PPN_BITS, "dst": PORT_BITS,
                                        "fu": range(nfu + 1), "tag": TAG_BITS, "epoch": 1})
        res_layout = data.StructLayout({"ok": 1, "cause": AtsCause, "ppn": PPN_BITS})
        m.submodules.imm = imm = Memory(shape=imm_layout, depth=R, init=[])     # known results, slot data
        m.submodules.res = res = Memory(shape=res_layout, depth=R, init=[])     # results from GATEs
        m.submodules.info = info = Memory(shape=f.slot_info, depth=R, init=[])  # what the GATE check needs
        imm_w, imm_r = imm.write_port(), imm.read_port(domain="comb")
        res_w, res_r = res.write_port(), res.read_port(domain="comb")
        info_w, info_r = info.write_port(), info.read_port(domain="comb")
        m.submodules.reads = reads = AtuReadQueue(shape=f.read, depth=R)
        connect(m, reads.o, flipped(self.reads))

        full = Signal()
        head = Signal(range(R))
        tail = Signal(range(R))
        head1 = Signal(range(R), init=1 % R)       # head + 1, kept as a register
        # a copy of head for the per-slot bit vectors, so that the slot storage's read address does not
        # also drive their multiplexers
        head_b = Signal(range(R), attrs={"keep": 1})
        done = Signal(R)
        missv = Signal(R)                   # the slot's result comes from a GATE (res), not from imm
        waiting = Signal(R)
        pend = Array(Signal(range(R + 1), name=f"pend{i}") for i in range(nfu + 1))
        # pend[i] == 0 as flops, so that the bypass decision reads one bit instead of a compare
        pend_zero = Signal(nfu + 1, init=(1 << (nfu + 1)) - 1)
        retire_rdy = Signal()               # the head is occupied and done, a register
        head_miss = Signal()                # the head's result is in res, a register

        s = self.requests.payload
        go = self.requests.valid & self.requests.ready    # with a free slot every request leaves the lookup
        head_imm = imm_r.data
        bypass_ok = go & ~s.miss & pend_zero.bit_select(s.fu, 1)
        retire = self.responses.ready & retire_rdy
        bypass = self.responses.ready & ~retire_rdy & bypass_ok
        alloc = go & ~bypass
        o = self.responses.payload
        m.d.comb += [self.requests.ready.eq(~full), self.waiting.eq(waiting),
                     imm_r.addr.eq(head), res_r.addr.eq(head),
                     info_r.addr.eq(self.info.addr), self.info.data.eq(info_r.data),
                     self.responses.valid.eq(retire_rdy | bypass_ok)]
        with m.If(retire_rdy):
            m.d.comb += [o.dst.eq(head_imm.dst), o.tag.eq(head_imm.tag), o.epoch.eq(head_imm.epoch),
                         o.ok.eq(Mux(head_miss, res_r.data.ok, head_imm.ok)),
                         o.cause.eq(Mux(head_miss, res_r.data.cause, head_imm.cause)),
                         o.ppn.eq(Mux(head_miss, res_r.data.ppn, head_imm.ppn))]
        with m.Else():
            m.d.comb += [o.dst.eq(s.dst), o.tag.eq(s.tag), o.epoch.eq(s.epoch), o.ok.eq(s.ok),
                         o.cause.eq(s.cause), o.ppn.eq(s.ppn)]

        # the tail slot is free whenever a request leaves the lookup, so it is written even for a
        # bypassed result (tail does not move): no bypass decision in the write enables
        m.d.comb += [
            imm_w.addr.eq(tail), imm_w.en.eq(go),
            imm_w.data.ok.eq(s.ok), imm_w.data.cause.eq(s.cause), imm_w.data.ppn.eq(s.ppn),
            imm_w.data.dst.eq(s.dst), imm_w.data.fu.eq(s.fu), imm_w.data.tag.eq(s.tag),
            imm_w.data.epoch.eq(s.epoch),
            info_w.addr.eq(tail), info_w.en.eq(go),
            info_w.data.vpid.eq(s.vpid), info_w.data.write.eq(s.write), info_w.data.nla.eq(s.nla),
            info_w.data.large.eq(s.large), info_w.data.more.eq(s.more), info_w.data.next.eq(s.next),
            info_w.data.gmiss.eq(s.gmiss), info_w.data.epoch.eq(s.epoch),
            # a miss never bypasses, so alloc & miss = go & miss
            reads.w_en.eq(go), reads.push.eq(go & s.miss),
            reads.w_data.slot.eq(tail), reads.w_data.addr.eq(s.addr), reads.w_data.more.eq(s.more),
            res_w.addr.eq(self.results.payload.slot), res_w.en.eq(self.results.valid),
            res_w.data.ok.eq(self.results.payload.ok), res_w.data.cause.eq(self.results.payload.cause),
            res_w.data.ppn.eq(self.results.payload.ppn),
        ]

        wait_set = Signal(R)
        wait_clr = Signal(R)
        with m.If(alloc):
            m.d.sync += tail.eq(tail + 1)
        with m.If(go & s.miss):
            m.d.comb += wait_set.eq(Const(1, R) << tail)
        with m.If(self.arrived.valid):
            m.d.comb += wait_clr.eq(Const(1, R) << self.arrived.payload)
        m.d.sync += waiting.eq((waiting | wait_set) & ~wait_clr)
        with m.If(retire):
            m.d.sync += [head.eq(head + 1), head1.eq(head1 + 1), head_b.eq(head_b + 1)]
        # full after an allocation that is not matched by a retire and makes tail reach head
        with m.If(alloc & ~retire):
            m.d.sync += full.eq((tail + 1)[:len(tail)] == head)
        with m.Elif(retire & ~alloc):
            m.d.sync += full.eq(0)
        for i in range(nfu + 1):
            inc = alloc & (s.fu == i)
            dec = retire & (head_imm.fu == i)
            # a retire of FU i needs pend[i] != 0, so pend[i] becomes 0 only by a retire from 1
            with m.If(inc & ~dec):
                m.d.sync += [pend[i].eq(pend[i] + 1), pend_zero[i].eq(0)]
            with m.Elif(dec & ~inc):
                m.d.sync += [pend[i].eq(pend[i] - 1), pend_zero[i].eq(pend[i] == 1)]

        # done[s] means something only for an occupied slot: whenever a request leaves the lookup, the
        # (free) tail slot's bit is written with "result known", whether the result is allocated or
        # bypassed; a GATE (or memory error) arriving sets it
        g_valid, g_slot = self.results.valid, self.results.payload.slot
        for j in range(R):
            with m.If(go & (tail == j)):
                m.d.sync += [done[j].eq(~s.miss), missv[j].eq(s.miss)]
            with m.Elif(g_valid & (g_slot == j)):
                m.d.sync += done[j].eq(1)
        # retire_rdy of the next cycle = the next done vector at the next head, from the head and
        # head + 1 candidates.  A known result reaches the head only into an empty buffer in a cycle
        # without a retire (not bypassed only when the output is busy or taken), and head + 1 only in a
        # cycle with a retire (which excludes a bypass): neither waits for the per-FU bypass check.
        known_go = go & ~s.miss
        byp_turn = self.responses.ready & ~retire_rdy
        d_head = ((done.bit_select(head_b, 1) & ((tail != head_b) | full))
                  | (known_go & ~byp_turn & (tail == head_b)) | (g_valid & (g_slot == head_b)))
        d_head1 = ((done.bit_select(head1, 1) & (tail != head1)) | (known_go & (tail == head1))
                   | (g_valid & (g_slot == head1)))
        m.d.sync += retire_rdy.eq(Mux(retire, d_head1, d_head))
        # head_miss the same way; this cycle's write wins where it targets the next head slot
        m_head = Mux(go & (tail == head_b), s.miss, missv.bit_select(head_b, 1))
        m_head1 = Mux(go & (tail == head1), s.miss, missv.bit_select(head1, 1))
        m.d.sync += head_miss.eq(Mux(retire, m_head1, m_head))

        if platform == "formal":
            self._invariants(m, head=head, tail=tail, head1=head1, head_b=head_b, full=full, done=done,
                             missv=missv, waiting=waiting, pend=pend, pend_zero=pend_zero,
                             retire_rdy=retire_rdy, head_miss=head_miss)
        return m

    def _invariants(self, m, *, head, tail, head1, head_b, full, done, missv, waiting, pend, pend_zero,
                    retire_rdy, head_miss):
        R = self._f.slots
        used = Signal(range(R + 1))
        m.d.comb += used.eq(Mux(full, R, (tail - head)[:len(head)]))
        occupied = Signal(R)
        for j in range(R):
            m.d.comb += occupied[j].eq(full | ((j - head)[:len(head)] < used))
        m.d.comb += [
            Assert(head1 == (head + 1)[:len(head)]),
            Assert(head_b == head),
            Assert(~full | (tail == head)),
            Assert(sum(pend) == used),
            Assert(retire_rdy == (occupied.bit_select(head, 1) & done.bit_select(head, 1))),
            Assert(~occupied.bit_select(head, 1) | (head_miss == missv.bit_select(head, 1))),
            # a slot waits only while it is occupied by a miss whose result is not known
            Assert((waiting & ~(occupied & missv & ~done)) == 0),
        ]
        for i in range(len(pend)):
            m.d.comb += Assert(pend_zero[i] == (pend[i] == 0))
        # the GATE check reports only slots that wait (then the result one cycle later)
        arrived_slot = self.arrived.payload
        m.d.comb += Assert(~self.arrived.valid | waiting.bit_select(arrived_slot, 1))
        slot = self.results.payload.slot
        with m.If(self.results.valid):
            m.d.comb += Assert(occupied.bit_select(slot, 1) & missv.bit_select(slot, 1)
                               & ~done.bit_select(slot, 1) & ~waiting.bit_select(slot, 1))
