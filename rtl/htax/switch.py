"""The HTAX crossbar: N HTAX ports, four virtual channels, virtual output queues, packet-mode iSLIP.

Implements the HTAX of the dissertation (ch. 7.1 "HT-Core and HTAX"; the four virtual channels of
5.2.9 "On-Device ATS": posted, non-posted, response and ATS) with the HyperTransport ordering rule that
avoids the queue deadlock of fig. 6-7 (ch. 6): a stalled non-posted request never blocks a posted write
or a response.  The link format is :mod:`rtl.common.htax`; ``docs/htax.md`` describes the design.

Queueing.  Every input port has ``4 * slots_per_vc + 1 + shared_slots`` packet slots.  A slot holds one
whole packet of any VC (header in registers, up to 8 data words in a per-input data memory).  Each VC
owns ``slots_per_vc`` reserved slots, the switch's error responses own one, and the shared slots go to
any of them; an input accepts a VC's header only while that VC has room (``ready[vc]``, a function of
registers only), so a VC blocked downstream can fill the shared slots but never holds back another
VC.  Packets of one VC and destination form a virtual output queue: a slot may leave when no older
packet of its queue waits (an age matrix row written at allocation), which keeps per-(source,
destination, VC) order and removes head-of-line blocking between destinations.

Switching.  Cut-through: a packet may leave as soon as its header is stored; data words are read as
they arrive.  Each input has one read engine (one packet at a time) whose read register drives the
outputs directly.  Inputs and outputs are matched per packet by one iteration of iSLIP: every free
output grants one requesting input round-robin (and, for that input, one VC round-robin), every input
accepts one granting output round-robin; pointers move only on acceptance.  An output arbitrates again
while its current packet's last beat waits in the read register, so packets leave back to back.  An
output only starts a packet on a VC its sink is ready for, never on the VC of the packet it is
finishing (that packet's last beat may fill the sink, so the ready of that cycle is stale: a packet of
the same VC waits one cycle) unless the sink promises room for two beats (``ready2``), and never
interleaves packets.

Errors.  A header that breaks a rule of :func:`rtl.common.htax.malformed` (or whose beat ``vc`` differs
from the header's) or that addresses a port ``>= ports`` is dropped with the rest of its packet (up to
``last``) and counted.  A dropped READ that arrived on the non-posted VC is answered with a RESPONSE
(status MALFORMED or NO_TARGET, length 0, same tag, ``dst`` = the port it arrived on, ``src`` = the
``dst`` it asked for), queued like any packet.  The non-posted VC is ready only while the error
responses have room, so the answer always has a slot; the unit's own responses never take the error
responses' reserved slot, so it is missing only while the input's own error responses wait (a unit's
response traffic never holds back its requests).

Deviations from the dissertation: latency is 2 cycles header-in to header-out instead of 6 in / 3 out;
the switch does not translate source tags (the HTAX-to-HT bridge does, ch. 7.1).
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import (
    MAX_DATA_WORDS,
    NUM_VCS,
    HtaxBeat,
    HtaxCmd,
    HtaxHeader,
    HtaxPortSignature,
    HtaxStatus,
    HtaxVC,
    malformed,
)
from rtl.common.htax_rules import data_beats
from rtl.common.params import check_int

from .rr import lowest, one_hot_index, past, round_robin

__all__ = ["Htax"]


def _word_addr(slot, word, header, header_memory):
    """The data-memory address of a slot's data word ``word`` (0-based, its low 3 bits count) or, with
    ``header_memory``, of its header (``header``: 16 words per slot, the header at word 15)."""
    if header_memory:
        return Cat(word[:3] | Mux(header, 7, 0), header, slot)
    return Cat(word[:3], slot)


def _below_after(m, name, value, limit, up, down, take):
    """``value + up - down + take < limit`` (``up``, ``down``, ``take``: 1-bit events) without an
    adder in front of the comparison: ``value`` is compared with the four constants ``limit - d``
    (``d`` = -1 .. 2), and the events choose among the results."""
    lt = {d: (value < limit - d) if limit - d > 0 else Const(0) for d in (-1, 0, 1, 2)}
    flags = Signal(4, name=f"{name}_lt")
    m.d.comb += flags.eq(Cat(lt[d] for d in (-1, 0, 1, 2)))
    ok = Signal(name=name)
    m.d.comb += ok.eq(Mux(up, Mux(down, Mux(take, flags[2], flags[1]), Mux(take, flags[3], flags[2])),
                          Mux(down, Mux(take, flags[1], flags[0]), Mux(take, flags[2], flags[1]))))
    return ok


def up_down(m, counter, up, down, *, lut=False):
    """``counter`` counts one up on ``up`` alone and one down on ``down`` alone (it wraps at its ends;
    the callers' counts stay within its range).

    ``lut``: the next value from LUTs only: bit ``k`` flips when the bits below it are all 1 (counting
    up) or all 0 (counting down), and the register's enable is ``up ^ down``.  Yosys maps ``counter + 1``
    and ``counter - 1`` to two carry chains (CCU2C) and a multiplexer on ECP5; this form has none
    (the 8-port ``HtaxPipelined``: 314 CCU2C instead of 2106, for 1178 more LUT4), and ``down``
    reaches only the enable, not a carry chain.
    """
    if lut:
        flip = Cat(Mux(up, counter[:k].all(), ~counter[:k].any()) if k else Const(1)
                   for k in range(len(counter)))
        with m.If(up ^ down):
            m.d.sync += counter.eq(counter ^ flip)
    else:
        with m.If(up & ~down):
            m.d.sync += counter.eq(counter + 1)
        with m.Elif(down & ~up):
            m.d.sync += counter.eq(counter - 1)


# The input data memories are never read at the address written in the same cycle with the data
# used: the read engine reads a data word once the writer has stored it (a cycle after its write at
# the earliest) and, with ``header_memory``, a header four cycles after its write; a slot is written
# again only after its release, after its last read.  A read that does meet the write (the port
# reads whenever the read register is free, also while the engine is idle or waits for a word) is
# not issued, its data unused.  So yosys need not emulate Amaranth's read-before-write between the
# two ports (``no_rw_check``; without it synth_ecp5 delays every write by a register and adds a
# bypass on the read data: 1560 flip-flops and 833 LUT4 of the 8-port HtaxPipelined).
_NO_RW_CHECK = {"no_rw_check": 1}


class Htax(wiring.Component):
    """The HTAX crossbar.

    Parameters
    ----------
    ports : int
        Number of HTAX ports, 2..16.
    slots_per_vc : int
        Packet slots reserved for each virtual channel per input port, 1..8.  One slot holds one packet
        of up to 8 data words.  One more slot per input is reserved for the switch's error responses.
    shared_slots : int
        Packet slots per input port that any virtual channel may use, 0..32.  More slots give the
        virtual output queues more destinations to choose from under load (saturated throughput);
        the reserved slots keep a blocked VC from holding back the others.
    counter_bits : int
        Width of the drop counters, 1..32.  They saturate at ``2**counter_bits - 1``.

    Members
    -------
    ports : In(HtaxPortSignature()).array(ports)
        The switch side of each HTAX port: ``ports[N].tx`` carries beats from unit N into the switch,
        ``ports[N].rx`` carries beats from the switch to unit N (Verilog: ``ports__N__tx__valid`` ...).
    dropped_no_target : Out(counter_bits)
        Well-formed packets dropped because ``dst >= ports`` (saturating, never reset but by ``rst``).
    dropped_malformed : Out(counter_bits)
        Packets dropped because their header broke a format rule (saturating).

    Raises
    ------
    TypeError, ValueError
        A parameter is not an integer or out of range.
    """

    def __init__(self, *, ports, slots_per_vc=1, shared_slots=12, counter_bits=16):
        check_int("ports", ports, 2, 16)
        check_int("slots_per_vc", slots_per_vc, 1, 8)
        check_int("shared_slots", shared_slots, 0, 32)
        check_int("counter_bits", counter_bits, 1, 32)
        self._n = ports
        self._s = slots_per_vc
        self._sh = shared_slots
        self._counter_bits = counter_bits
        members = {"ports": In(HtaxPortSignature()).array(ports)}
        members["dropped_no_target"] = Out(counter_bits)
        members["dropped_malformed"] = Out(counter_bits)
        super().__init__(members)

    @property
    def slots_per_vc(self):
        return self._s

    @property
    def shared_slots(self):
        return self._sh

    def port(self, i):
        """The switch side of HTAX port ``i``."""
        return self.ports[i]

    def elaborate(self, platform):
        m = Module()
        n = self._n
        vcs = range(NUM_VCS)

        # Sink readiness of every output, per VC (an input of the switch), and the sink's promise of
        # room for a second beat (ready2).
        sink_ready = [self.port(o).rx.ready for o in range(n)]
        sink_ready2 = [self.port(o).rx.ready2 for o in range(n)]

        # Per-output state, declared first because the engines and the matching read it.
        busy = [Signal(name=f"o{o}_busy") for o in range(n)]
        owner = [Signal(range(n), name=f"o{o}_owner") for o in range(n)]
        nxt_valid = [Signal(name=f"o{o}_nxt_valid") for o in range(n)]
        nxt = [Signal(range(n), name=f"o{o}_nxt") for o in range(n)]
        out_move = [Signal(name=f"o{o}_move") for o in range(n)]

        inputs = [self._input(m, i) for i in range(n)]

        # ---- matching: one iteration of packet-mode iSLIP -------------------------------------
        # o_can: output o may take a new packet: idle, or its packet's last beat is already fetched.
        # o_vcs: the VCs on which o may start that packet.  Not the VC v of the packet it is finishing
        # unless the sink promises room for two v beats (ready2[v]): that packet's last beat (waiting in
        # the owner's read register) moves in any cycle in which the sink is ready for v, and may take
        # the sink's last slot, so this cycle's ready[v] alone says nothing about room for another v
        # packet.  Without the promise a v packet waits for the cycle after the last beat, when ready[v]
        # is fresh; a packet of another VC may still follow back to back.  The input
        # arbitration still sees the held-back request: if the round-robin pointer picks an input that
        # only has a packet on the held-back VC, the output grants nobody this cycle and that input wins
        # in the next, which keeps the starvation bound.
        o_can, o_vcs = [], []
        for o in range(n):
            rd_valid = Array(x.rd_valid for x in inputs)[owner[o]]
            rd_last = Array(x.rd_last for x in inputs)[owner[o]]
            rd_dst = Array(x.rd_dst for x in inputs)[owner[o]]
            rd_vc = Array(x.rd_vc for x in inputs)[owner[o]]
            can = Signal(name=f"o{o}_can")
            m.d.comb += can.eq(~nxt_valid[o] & (~busy[o] | (rd_valid & rd_last & (rd_dst == o))))
            o_can.append(can)
            vcs_ok = Signal(NUM_VCS, name=f"o{o}_vcs")
            m.d.comb += vcs_ok.eq(~Mux(busy[o] & ~sink_ready2[o].bit_select(rd_vc, 1),
                                       Const(1, NUM_VCS) << rd_vc, 0))
            o_vcs.append(vcs_ok)

        vc_ptr = [Signal(2, name=f"o{o}_vc_ptr") for o in range(n)]
        gptr = [Signal(range(n), name=f"o{o}_gptr") for o in range(n)]
        aptr = [Signal(range(n), name=f"i{i}_aptr") for i in range(n)]
        # chosen VC for each (output, input) pair and the request bits
        chosen_vc = [[None] * n for _ in range(n)]
        grants = []
        for o in range(n):
            req, req_ok = [], []
            for i, x in enumerate(inputs):
                rv = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv")
                m.d.comb += rv.eq(Cat(x.has[v][o] for v in vcs) & sink_ready[o]
                                  & Mux(x.free & o_can[o], 0b1111, 0))
                rv_ok = Signal(NUM_VCS, name=f"o{o}_i{i}_reqv_ok")
                m.d.comb += rv_ok.eq(rv & o_vcs[o])
                g = round_robin(m, rv_ok, vc_ptr[o], name=f"o{o}_i{i}_vcrr")
                chosen_vc[o][i] = one_hot_index(m, g, name=f"o{o}_i{i}_vc")
                req.append(rv.any())
                req_ok.append(rv_ok.any())
            req_sig = Signal(n, name=f"o{o}_req")
            m.d.comb += req_sig.eq(Cat(req))
            grant = Signal(n, name=f"o{o}_grant_ok")
            m.d.comb += grant.eq(round_robin(m, req_sig, gptr[o], name=f"o{o}_grant") & Cat(req_ok))
            grants.append(grant)

        accept_out = []     # per input: one-hot over outputs
        for i, x in enumerate(inputs):
            gi = Signal(n, name=f"i{i}_granted")
            m.d.comb += gi.eq(Cat(grants[o][i] for o in range(n)))
            a = round_robin(m, gi, aptr[i], name=f"i{i}_accept")
            accept_out.append(a)
            ao = one_hot_index(m, a, name=f"i{i}_accept_idx")
            av = Signal(2, name=f"i{i}_take_vc")
            m.d.comb += av.eq(Array(chosen_vc[o][i] for o in range(n))[ao])
            m.d.comb += [
                x.take.eq(a.any()),
                x.take_dst.eq(ao),
                x.take_vc.eq(av),
            ]
            with m.If(a.any()):
                m.d.sync += aptr[i].eq(past(ao, n))

        # ---- outputs ------------------------------------------------------------------------
        rd_move = [Const(0) for _ in range(n)]
        for o in range(n):
            port = self.port(o).rx
            acc = Signal(n, name=f"o{o}_accepted")
            m.d.comb += acc.eq(Cat(accept_out[i][o] for i in range(n)))
            acc_in = one_hot_index(m, acc, name=f"o{o}_accepted_idx")
            with m.If(acc.any()):
                m.d.sync += [
                    gptr[o].eq(past(acc_in, n)),
                    vc_ptr[o].eq(Array(chosen_vc[o][i] for i in range(n))[acc_in] + 1),
                ]

            sel = owner[o]
            valid = Signal(name=f"o{o}_valid")
            m.d.comb += [
                valid.eq(busy[o] & Array(x.rd_valid for x in inputs)[sel]
                         & (Array(x.rd_dst for x in inputs)[sel] == o)),
                port.valid.eq(valid),
                port.payload.eq(Array(x.rd_beat.as_value() for x in inputs)[sel]),
                out_move[o].eq(port.transfer()),
            ]
            last_move = Signal(name=f"o{o}_last_move")
            m.d.comb += last_move.eq(out_move[o] & port.payload.last)
            for i in range(n):
                rd_move[i] = rd_move[i] | (out_move[o] & (sel == i))
            with m.If(acc.any()):
                with m.If(busy[o] & ~last_move):
                    m.d.sync += [nxt[o].eq(acc_in), nxt_valid[o].eq(1)]
                with m.Else():
                    m.d.sync += [owner[o].eq(acc_in), busy[o].eq(1)]
            with m.Elif(last_move):
                with m.If(nxt_valid[o]):
                    m.d.sync += [owner[o].eq(nxt[o]), nxt_valid[o].eq(0)]
                with m.Else():
                    m.d.sync += busy[o].eq(0)

        for i, x in enumerate(inputs):
            m.d.comb += x.rd_move.eq(rd_move[i])

        self._drop_counters(m, inputs)

        # Internal state for the proofs in formal/htax.py (they elaborate the switch themselves).
        self._state = dict(inputs=inputs, busy=busy, owner=owner, nxt_valid=nxt_valid, nxt=nxt,
                           out_move=out_move)
        return m

    def _drop_counters(self, m, inputs, *, registered=False):
        """``dropped_no_target`` and ``dropped_malformed``: saturating counts of the inputs' drops.

        ``registered``: every input registers its drop events where they happen, their sum is
        registered, and the counters add it (they show a drop two cycles later; register cuts between
        the inputs' header decode, the sum across the inputs and the counters' adders).
        """
        n = self._n
        for counter, events in ((self.dropped_no_target, [x.ev_no_target for x in inputs]),
                                (self.dropped_malformed, [x.ev_malformed for x in inputs])):
            count = Signal.like(counter, name=f"{counter.name}_q")
            inc = Signal(range(n + 1), name=f"{counter.name}_inc")
            if registered:
                events_q = Signal(n, name=f"{counter.name}_events")
                m.d.sync += [events_q.eq(Cat(events)), inc.eq(sum(e.as_unsigned() for e in events_q))]
            else:
                m.d.comb += inc.eq(sum(e.as_unsigned() for e in events))
            total = Signal(len(count) + 5, name=f"{counter.name}_sum")
            limit = (1 << len(count)) - 1
            m.d.comb += total.eq(count + inc)
            m.d.sync += count.eq(Mux(total > limit, limit, total))
            m.d.comb += counter.eq(count)

    # -------------------------------------------------------------------------------------------
    def _input(self, m, i):
        """The buffer, virtual output queues and read engine of input port ``i``."""
        x = self._slots(m, i)
        self._engine(m, i, x)
        return x

    def _slots(self, m, i, *, registered_ready=False, registered_has=False, registered_low=False,
               header_memory=False, lut_counters=False, registered_release=False, input_register=False):
        """The packet slots of input port ``i``: writer, slot state, virtual output queues, accounting.

        The read engine (:meth:`_engine`) drives ``x.release``/``x.rel_slot``/``x.rel_cls`` and
        ``x.q_dec``/``x.q_dec_vc``/``x.q_dec_dst``.

        ``registered_ready``: the link's ``ready`` comes from a register, computed in the cycle before
        from the counters as they will be after that cycle's release and if a header that moves then
        takes a slot of its VC's class (or of ERR, on the non-posted VC) and a shared slot (a register
        cut between the slot accounting and the link); the shared count's "class counter beyond / at
        its reservation" flags (``x.cnt_over``, ``x.cnt_full``) are registers then too.

        ``registered_has``: ``x.has`` comes from a register, set from the queue counters' next values
        (the same value one cycle's logic earlier: a register cut between the counters and the
        requests).  With ``input_register`` the counters count an allocation one cycle after its
        header moved, from registers, so ``has`` shows a new packet two cycles after its header moved.

        ``registered_low``: the lowest free slot comes from a register, set from the slots as they will
        be after this cycle's release and allocation (the same slot: a register cut between the slot
        state and the writer's allocation).

        ``header_memory``: the headers live in the data memory beside their data words (92-bit words,
        16 per slot: data word ``k`` at ``k - 1``, the header at 15) instead of in a register per slot,
        and ``x.shdr`` is ``None``.  The read engine then takes every beat from the memory's read port.

        ``lut_counters``: the queue and class counters count in LUTs, without carry chains
        (:func:`up_down`).

        ``registered_release``: the caller drives ``x.release`` and ``x.rel_slot`` from registers, and
        the released slot one-hot (``x.rel_oh``: ``release & rel_slot == k``) from registers too; a
        released slot's bits in the age matrix are cleared at its release instead of at its next
        allocation, so a header move enables the new slot's registers only (it reaches no other row).

        ``input_register`` (with ``header_memory`` and ``registered_ready``): the link's beat is decoded
        where it arrives and registered (the ``st_*`` signals: moved, header, last, the allocation's
        slot class, VC, output and length, and the link's 92-bit word as it is: an error response's
        header is built behind the register), and the writer stores it one cycle later from that
        register: the slot registers, the age matrix, the free-slot register, the
        class and queue counters and the data memory's write port are enabled from registers, not from
        the link's handshake (the registered ``ready`` and the link's ``valid``).  Only the in-packet
        state and the VC of the link (``in_pkt``, ``wvc``) and ``ready`` itself are kept at the link.
        ``ready`` counts the stored header exactly (the counters count it at its store) and the header
        that moves now as with ``registered_ready``.  The queue and class counters count the stored
        header when it is stored, the memory is written in the cycle after the move; the read engine
        tests "the next word is stored" against the storing writer's state.  A header is read at the
        earliest four cycles after its write (the request flags, the grant, the accept and the head
        lookup come first), a data word in the cycle after its write.
        """
        n, s, sh = self._n, self._s, self._sh
        rsp = HtaxVC.RESPONSE.value
        # Slot accounting classes: the four VCs (RESPONSE = the unit's own responses) and ERR, the
        # switch's error responses (sent on the response VC).  Class c owns res[c] reserved slots; the
        # ``shared_slots`` slots go to any class.  Every slot can hold any class.
        err_cls = NUM_VCS
        classes = range(NUM_VCS + 1)
        res = [s] * NUM_VCS + [1]
        nslots = sum(res) + sh
        slot_shape = range(nslots)
        link = self.port(i).tx
        beat = link.payload
        hdr = beat.word.header
        p = f"i{i}_"

        x = SimpleNamespace()

        # ---- slot state ---------------------------------------------------------------------
        occ = [Signal(name=f"{p}occ{k}") for k in range(nslots)]
        sdst = [Signal(range(n), name=f"{p}dst{k}") for k in range(nslots)]
        svc = [Signal(2, name=f"{p}vc{k}") for k in range(nslots)]
        serr = [Signal(name=f"{p}err{k}") for k in range(nslots)]
        snb = [Signal(range(MAX_DATA_WORDS + 1), name=f"{p}nb{k}") for k in range(nslots)]
        shdr = None if header_memory else [Signal(HtaxHeader, name=f"{p}hdr{k}") for k in range(nslots)]
        # older[k] bit j: slot j holds an older packet of the same queue (VC and output) as slot k
        # (set when slot k is allocated; cleared when slot j is allocated again, or released).
        older = [Signal(nslots, name=f"{p}older{k}") for k in range(nslots)]
        occ_vec = Cat(occ)

        # A slot is eligible (the head of its virtual output queue) when no older packet of its queue
        # waits; at most one slot per (VC, output) is eligible.
        elig = []
        for k in range(nslots):
            e = Signal(name=f"{p}elig{k}")
            m.d.comb += e.eq(occ[k] & ~(occ_vec & older[k]).any())
            elig.append(e)
        # has[v][o]: a packet of VC v for output o may leave.  The oldest packet of a non-empty queue
        # is always eligible, so this is "queue (v, o) is not empty": a counter of the queue's
        # packets, kept at allocation and release (below), instead of a search over the slots.
        qcnt = [[Signal(range(nslots + 1), name=f"{p}vc{v}_o{o}_count") for o in range(n)]
                for v in range(NUM_VCS)]
        x.has = [[None] * n for _ in range(NUM_VCS)]
        for v in range(NUM_VCS):
            for o in range(n):
                has = Signal(name=f"{p}vc{v}_o{o}_has")
                if not registered_has:
                    m.d.comb += has.eq(qcnt[v][o] != 0)
                x.has[v][o] = has

        # Accounting: cnt[c] slots hold class c; ``shared`` of them are beyond their class's
        # reservation (sum over c of max(0, cnt[c] - res[c])).
        cnt = [Signal(range(nslots + 1), name=f"{p}cnt{c}") for c in classes]
        shared = Signal(range(sh + 1), name=f"{p}shared")
        shared_ok = Signal(name=f"{p}shared_ok")
        m.d.comb += shared_ok.eq(shared < sh)
        room = []
        for c in classes:
            r = Signal(name=f"{p}room{c}")
            m.d.comb += r.eq((cnt[c] < res[c]) | shared_ok)
            room.append(r)

        free_bits = Signal(nslots, name=f"{p}free")
        m.d.comb += free_bits.eq(~occ_vec)
        # The lowest free slot, one-hot (it selects the slot registers directly) and as an index.
        low = Signal(nslots, init=1, name=f"{p}free_low")
        if not registered_low:
            m.d.comb += low.eq(lowest(free_bits))
        first_free = one_hot_index(m, low, name=f"{p}free_idx")

        # ---- writer: header decode, slot allocation, data words -------------------------------
        in_pkt = Signal(name=f"{p}in_pkt")
        wvc = Signal(2, name=f"{p}wvc")
        wslot = Signal(slot_shape, name=f"{p}wslot")
        wdrop = Signal(name=f"{p}wdrop")
        wcount = Signal(range(MAX_DATA_WORDS + 1), name=f"{p}wcount")
        wexp = Signal(range(16), name=f"{p}wexp")
        # wmore: the next data beat is stored (~wdrop & (wcount < wexp)), a register set from the next
        # values, so the memory's write enable does not start with the count's comparison
        wmore = Signal(name=f"{p}wmore")

        ready = Signal(NUM_VCS, name=f"{p}ready")
        np_ = HtaxVC.NONPOSTED.value

        def ready_of(in_pkt, wvc, room):
            """The assignments of ``ready``, per VC: inside a packet only its VC; between packets the
            VCs whose class has room.  A non-posted header also needs room for its possible error
            response (class ERR: its reserved slot is free unless error responses of this input wait).
            The unit's own responses never use that slot, so the non-posted VC does not depend on the
            unit's response traffic (which would starve its own requests)."""
            return [ready[v].eq(ready_value(in_pkt, wvc, room, v)) for v in range(NUM_VCS)]

        def ready_value(in_pkt, wvc, room, v):
            return Mux(in_pkt, wvc == v, room[v] & room[err_cls] if v == np_ else room[v])

        if not registered_ready:
            m.d.comb += ready_of(in_pkt, wvc, room)
        m.d.comb += link.ready.eq(ready)       # ready2 stays 0: the inputs make no promise

        moved = Signal(name=f"{p}moved")
        m.d.comb += moved.eq(link.transfer())
        hmove = Signal(name=f"{p}hmove")
        m.d.comb += hmove.eq(moved & ~in_pkt)
        if input_register and not (header_memory and registered_ready):
            raise ValueError("input_register needs header_memory and registered_ready")

        bad = Signal(name=f"{p}malformed")
        m.d.comb += bad.eq(malformed(hdr) | (hdr.vc.as_value() != beat.vc.as_value()))
        no_target = Signal(name=f"{p}no_target")
        m.d.comb += no_target.eq(~bad & (hdr.dst >= n) if n < 16 else Const(0))
        good = Signal(name=f"{p}good")
        m.d.comb += good.eq(~bad & ~no_target)
        err_rsp = Signal(name=f"{p}err_rsp")
        m.d.comb += err_rsp.eq(~good & (hdr.cmd == HtaxCmd.READ) & (beat.vc == HtaxVC.NONPOSTED))
        x.ev_malformed = Signal(name=f"{p}ev_malformed")
        x.ev_no_target = Signal(name=f"{p}ev_no_target")
        m.d.comb += [x.ev_malformed.eq(hmove & bad), x.ev_no_target.eq(hmove & no_target)]

        alloc_vc = Signal(2, name=f"{p}alloc_vc")
        m.d.comb += alloc_vc.eq(Mux(good, beat.vc.as_value(), rsp))
        alloc = Signal(name=f"{p}alloc")
        m.d.comb += alloc.eq(hmove & (good | err_rsp))
        alloc_dst = Signal(range(n), name=f"{p}alloc_dst")
        m.d.comb += alloc_dst.eq(Mux(good, hdr.dst, i))
        alloc_cls = Signal(range(len(classes)), name=f"{p}alloc_cls")
        m.d.comb += alloc_cls.eq(Mux(good, beat.vc.as_value(), err_cls))
        alloc_slot = Signal(slot_shape, name=f"{p}alloc_slot")
        m.d.comb += alloc_slot.eq(first_free)
        nbeats = Signal(range(16), name=f"{p}hdr_beats")
        m.d.comb += nbeats.eq(data_beats(hdr))

        def stored_header(hdr, good, bad):
            """The header the writer stores: the packet's, or for a dropped one its error response's."""
            err_hdr = Signal(HtaxHeader, name=f"{p}err_hdr")
            m.d.comb += [
                err_hdr.cmd.eq(HtaxCmd.RESPONSE),
                err_hdr.vc.eq(HtaxVC.RESPONSE),
                err_hdr.status.eq(Mux(bad, HtaxStatus.MALFORMED.value, HtaxStatus.NO_TARGET.value)),
                err_hdr.src.eq(hdr.dst),
                err_hdr.dst.eq(i),
                err_hdr.tag.eq(hdr.tag),
            ]
            return Mux(good, hdr.as_value(), err_hdr.as_value())

        # The beat the writer stores (s_*; alloc, alloc_vc, alloc_dst, alloc_cls, nbeats): the link's, or
        # with input_register the input register's (the same, decoded and registered at the link), one
        # cycle later.
        s_moved, s_hmove, s_last, s_good = moved, hmove, beat.last, good
        if not input_register:
            s_hdr, s_data = stored_header(hdr, good, bad), beat.word.data
        else:
            # The link's word is registered as it is (st_word, no logic in front of its 92 flip-flops);
            # the error response's header is made behind the register, from it and the registered
            # decode (st_good, st_malformed).
            st_word = Signal(HtaxHeader.as_shape().size, name=f"{p}st_word")
            stored = [Signal.like(v, name=f"{p}st_{v.name[len(p):]}")
                      for v in (moved, hmove, good, bad, alloc, alloc_vc, alloc_dst, alloc_cls, nbeats)]
            m.d.sync += [r.eq(v) for r, v in zip(stored, (moved, hmove, good, bad, alloc, alloc_vc, alloc_dst,
                                                          alloc_cls, nbeats), strict=True)]
            st_last = Signal(name=f"{p}st_last")
            m.d.sync += [st_last.eq(beat.last), st_word.eq(beat.word.as_value())]
            s_moved, s_hmove, s_good, s_bad, alloc, alloc_vc, alloc_dst, alloc_cls, nbeats = stored
            s_last = st_last
            s_hdr, s_data = stored_header(HtaxHeader(st_word), s_good, s_bad), st_word[:64]

        if header_memory:
            data_mem = memory.Memory(shape=HtaxHeader.as_shape().size, depth=nslots * 16, init=[],
                                     attrs=_NO_RW_CHECK)
        else:
            data_mem = memory.Memory(shape=64, depth=nslots * MAX_DATA_WORDS, init=[], attrs=_NO_RW_CHECK)
        m.submodules[f"{p}data"] = data_mem
        wp = data_mem.write_port()
        rp = data_mem.read_port(domain="sync")

        # The link's in-packet state and VC (for hmove and ready), and the storing writer's (s_in_pkt,
        # wslot, wdrop, wcount, wexp): one and the same without input_register.
        s_in_pkt = in_pkt
        if input_register:
            s_in_pkt = Signal(name=f"{p}st_in_pkt")
            with m.If(hmove):
                m.d.sync += [in_pkt.eq(~beat.last), wvc.eq(beat.vc)]
            with m.Elif(moved & beat.last):
                m.d.sync += in_pkt.eq(0)

        # The memory write of this cycle (wen, waddr, wdata).  The data is the header on a header
        # move, else the data word, whether or not the word is written (only wen decides that), so the
        # writer's state does not reach the data inputs.
        wen = Signal(name=f"{p}wen")
        waddr = Signal.like(wp.addr, name=f"{p}waddr")
        wdata = Signal.like(wp.data, name=f"{p}wdata")
        m.d.comb += wdata.eq(Mux(s_hmove, s_hdr, s_data) if header_memory else s_data)
        with m.If(s_hmove):
            if header_memory:
                m.d.comb += [
                    wen.eq(alloc),
                    waddr.eq(_word_addr(alloc_slot, Const(0, 3), 1, header_memory)),
                ]
            m.d.sync += [
                s_in_pkt.eq(~s_last),
                wslot.eq(alloc_slot),
                wdrop.eq(~s_good),
                wcount.eq(0),
                wexp.eq(nbeats),
                wmore.eq(s_good & (nbeats != 0)),
            ]
            if not input_register:
                m.d.sync += wvc.eq(beat.vc)
        with m.Elif(s_moved):
            with m.If(s_last):
                m.d.sync += s_in_pkt.eq(0)
            with m.If(wmore):
                m.d.sync += [wcount.eq(wcount + 1), wmore.eq(wcount + 1 < wexp)]
                m.d.comb += [
                    wen.eq(1),
                    waddr.eq(_word_addr(wslot, wcount, 0, header_memory)),
                ]
        m.d.comb += [wp.en.eq(wen), wp.addr.eq(waddr), wp.data.eq(wdata)]
        # The storing writer's state, as the memory has it (the read engine's "the next word is stored").
        x.m_in_pkt, x.m_wdrop, x.m_wslot, x.m_wcount, x.wmore = s_in_pkt, wdrop, wslot, wcount, wmore
        # and the events that change it (for the read engine's registered_avail): a header stored now
        # (the writer takes the slot ``alloc_slot`` and starts its count at 0), a data word stored now
        x.m_hmove, x.m_inc = s_hmove, s_moved & ~s_hmove & wmore

        # The new packet is younger than every waiting packet of its queue.
        same_queue = Signal(nslots, name=f"{p}same_queue")
        m.d.comb += same_queue.eq(Cat(occ[j] & (svc[j] == alloc_vc) & (sdst[j] == alloc_dst)
                                      for j in range(nslots)))
        for k in range(nslots):
            with m.If(alloc & low[k]):
                m.d.sync += [
                    occ[k].eq(1),
                    sdst[k].eq(alloc_dst),
                    svc[k].eq(alloc_vc),
                    serr[k].eq(~s_good),
                    snb[k].eq(Mux(s_good, nbeats, 0)),
                    older[k].eq(same_queue),
                ]
                if not header_memory:
                    m.d.sync += shdr[k].eq(s_hdr)
            # A newly allocated slot is younger than every other: clear its bit in the other rows (with
            # registered_release: at the slot's release, below).
            if not registered_release:
                for j in range(nslots):
                    if j != k:
                        with m.If(alloc & low[j]):
                            m.d.sync += older[k][j].eq(0)

        # ---- release and accounting ---------------------------------------------------------
        # Driven by the read engine: ``release`` frees slot ``rel_slot`` (class ``rel_cls``), ``q_dec``
        # takes a packet of queue (``q_dec_vc``, ``q_dec_dst``) out of the request counters.  At most
        # one allocation and one release per cycle.  ``shared`` counts the slots held beyond their
        # class's reservation; a release is applied before an allocation of the same cycle.
        x.release = release = Signal(name=f"{p}release")
        x.rel_slot = Signal(slot_shape, name=f"{p}rel_slot")
        x.rel_cls = rel_cls = Signal(range(len(classes)), name=f"{p}rel_cls")
        x.q_dec = Signal(name=f"{p}q_dec")
        x.q_dec_vc = Signal(2, name=f"{p}q_dec_vc")
        x.q_dec_dst = Signal(range(n), name=f"{p}q_dec_dst")
        x.rel_oh = rel_oh = Signal(nslots, name=f"{p}released")  # the slot released now, one-hot
        if not registered_release:
            m.d.comb += rel_oh.eq(Cat(release & (x.rel_slot == k) for k in range(nslots)))
        for k in range(nslots):
            with m.If(rel_oh[k]):
                m.d.sync += occ[k].eq(0)
        if registered_release:
            # Every row drops the released slot, the row of a slot allocated now included (after the
            # allocation's assignment: a synchronous reset of the column's flip-flops).
            for j in range(nslots):
                with m.If(rel_oh[j]):
                    m.d.sync += [older[k][j].eq(0) for k in range(nslots) if k != j]
        if registered_low:
            # The free slots after this cycle's release, less slot low when the stored header takes it
            # now: all from registers, into one priority encoder.
            after_rel = Signal(nslots, name=f"{p}free_after_release")
            m.d.comb += after_rel.eq(free_bits | rel_oh)
            m.d.sync += low.eq(lowest(after_rel & ~Mux(alloc, low, 0)))

        def count(counter, up, down):
            up_down(m, counter, up, down, lut=lut_counters)

        for v in range(NUM_VCS):
            for o in range(n):
                up = alloc & (alloc_vc == v) & (alloc_dst == o)
                down = x.q_dec & (x.q_dec_vc == v) & (x.q_dec_dst == o)
                count(qcnt[v][o], up, down)
                if registered_has:
                    m.d.sync += x.has[v][o].eq(Mux(up == down, qcnt[v][o] != 0, Mux(up, 1, qcnt[v][o] != 1)))
        for c in classes:
            count(cnt[c], alloc & (alloc_cls == c), release & (rel_cls == c))
        if sh:
            # cnt[c] > res[c] and cnt[c] >= res[c]: with registered_ready registers, set from the
            # counters' next values (comparisons with constants chosen by the events, _below_after), so
            # the shared count's events start at registers, not at comparisons of the counters.
            if registered_ready:
                over = [Signal(name=f"{p}cnt{c}_over", init=res[c] < 0) for c in classes]
                full = [Signal(name=f"{p}cnt{c}_full", init=res[c] <= 0) for c in classes]
                for c in classes:
                    up, down = alloc & (alloc_cls == c), release & (rel_cls == c)
                    m.d.sync += [
                        over[c].eq(~_below_after(m, f"{p}cnt{c}_le_res", cnt[c], res[c] + 1, up, down,
                                                 Const(0))),
                        full[c].eq(~_below_after(m, f"{p}cnt{c}_lt_res", cnt[c], res[c], up, down, Const(0))),
                    ]
                x.cnt_over, x.cnt_full = over, full
            else:
                over = [cnt[c] > res[c] for c in classes]
                full = [cnt[c] >= res[c] for c in classes]
            shared_down = Signal(name=f"{p}shared_down")
            m.d.comb += shared_down.eq(release & Array(over)[rel_cls])
            # The allocation's class is beyond its reservation after this cycle's release: compared
            # per class from the counters, then chosen by the header's class (the header decode is
            # not in front of the comparisons).
            beyond = Signal(len(classes), name=f"{p}cnt_beyond")
            m.d.comb += beyond.eq(Cat(Mux(release & (rel_cls == c), over[c], full[c]) for c in classes))
            shared_up = Signal(name=f"{p}shared_up")
            m.d.comb += shared_up.eq(alloc & beyond.bit_select(alloc_cls, 1))
            count(shared, shared_up, shared_down)

        if registered_ready:
            # ready as the counters will be in the next cycle: this cycle's release counted exactly, the
            # header that moves now (if any) as taking a slot of class beat.vc (a good packet) or of ERR
            # (an error response: non-posted VC only) and a shared slot.  So ``ready`` never promises a
            # slot that is not there.
            bvc = beat.vc.as_value()

            def room_after(hm):
                """The classes' room after this cycle with ``hm`` standing for "a header moves now"."""
                takes = [hm & (bvc == c) for c in range(NUM_VCS)] + [hm & (bvc == np_)]
                # The counters after this cycle's store (with input_register the stored header, alloc,
                # is not in them yet; without, the allocation is the header that moves now, counted by
                # takes) and release, exact and from registers; then the header that moves now.
                # (Each "after" is compared without an adder: value + up - down + take < limit is
                # value < limit - (up - down + take), one of four comparisons of the register with
                # constants, chosen by the three events.)
                if sh:
                    shared_next_ok = _below_after(m, f"{p}shared_next_ok", shared, sh,
                                                  shared_up if input_register else Const(0), shared_down, hm)
                else:
                    shared_next_ok = Const(0)
                room_next = []
                for c in classes:
                    up = (alloc & (alloc_cls == c)) if input_register else Const(0)
                    room_next.append(_below_after(m, f"{p}cnt{c}_next_ok", cnt[c], res[c], up,
                                                  release & (rel_cls == c), takes[c]) | shared_next_ok)
                return room_next

            # Both outcomes of the link's handshake are computed from registers and the link's beat, and
            # the handshake (moved: valid & ready of the beat's VC) chooses between them: ready -> moved
            # -> one multiplexer -> ready, instead of ready -> the header move -> the counters' events
            # -> ready.  (moved: a header moves unless the link is inside a packet; not moved: nothing
            # moves, the link's state stays.)
            if_moved, if_not = room_after(~in_pkt), room_after(Const(0))
            m.d.sync += [ready[v].eq(Mux(moved, ready_value(~beat.last, Mux(in_pkt, wvc, bvc), if_moved, v),
                                         ready_value(in_pkt, wvc, if_not, v)))
                         for v in range(NUM_VCS)]

        x.occ, x.snb, x.sdst, x.svc, x.serr, x.shdr, x.older, x.qcnt, x.elig = (
            occ, snb, sdst, svc, serr, shdr, older, qcnt, elig)
        x.in_pkt, x.wslot, x.wdrop, x.wcount, x.wexp = in_pkt, wslot, wdrop, wcount, wexp
        x.alloc_slot, x.alloc_err, x.ready, x.alloc, x.low = alloc_slot, alloc & ~s_good, ready, alloc, low
        x.cnt, x.shared, x.res, x.err_cls, x.nslots = cnt, shared, res, err_cls, nslots
        x.classes, x.rp, x.wp, x.header_memory = classes, rp, wp, header_memory
        return x

    def _engine(self, m, i, x):
        """The read engine of input port ``i``: one packet at a time, its read register drives the
        outputs directly (matched by one iSLIP round in the cycle before)."""
        n = self._n
        p = f"i{i}_"
        nslots, classes, err_cls = x.nslots, x.classes, x.err_cls
        elig, svc, sdst, serr = x.elig, x.svc, x.sdst, x.serr
        x.take = Signal(name=f"{p}take")
        x.take_dst = Signal(range(n), name=f"{p}take_dst")
        x.take_vc = Signal(2, name=f"{p}take_vc")
        x.rd_move = Signal(name=f"{p}rd_move")
        # The taken slot: the head of the (VC, output) queue the matching chose.
        take_hit = Signal(nslots, name=f"{p}take_hit")
        m.d.comb += take_hit.eq(Cat(elig[k] & (svc[k] == x.take_vc) & (sdst[k] == x.take_dst)
                                    for k in range(nslots)))
        x.take_slot = one_hot_index(m, take_hit, name=f"{p}take_slot")
        take_cls = Signal(range(len(classes)), name=f"{p}take_cls")
        m.d.comb += take_cls.eq(Mux(Array(serr)[x.take_slot], err_cls, x.take_vc))

        # The matching takes only from a free engine, so a take always loads a new packet.
        c, issue, is_last = self._read_engine(
            m, p, x, load=x.take, rd_taken=x.rd_move,
            start=(x.take_slot, Array(x.snb)[x.take_slot], x.take_dst, x.take_vc, take_cls))
        x.free = Signal(name=f"{p}free")
        m.d.comb += x.free.eq(~x.act)
        m.d.comb += [
            x.release.eq(issue & is_last), x.rel_slot.eq(c.slot), x.rel_cls.eq(c.cls),
            x.q_dec.eq(issue & is_last), x.q_dec_vc.eq(c.vc), x.q_dec_dst.eq(c.dst),
        ]

    def _read_engine(self, m, p, x, *, load, start, rd_taken, start_last=None, registered_avail=False):
        """Read one packet's beats from the input's slots into a read register (shared by both
        switches).

        ``load``: the engine takes a new packet this cycle (only while it is idle); ``start``: that
        packet's (slot, data beats, output, VC, accounting class); ``start_last`` (or ``None``): a
        register, "that packet has no data beats", with which ``is_last`` comes from registers (the
        engine keeps "the next beat is the last" in a register) instead of a comparison behind the
        choice between the new packet and the current one.  ``rd_taken``: the read register is
        emptied this cycle.  The header comes from the slot's header register (or, with the slots'
        ``header_memory``, from the data memory like the data words), data word ``k`` (1-based) from the
        data memory, readable unless the writer is still filling that word.

        Sets on ``x`` the engine state ``act`` (a packet is being read), ``eslot``, ``ek`` (next beat,
        0 = header), ``enb``, ``edst``, ``evc``, ``ecls`` and the read register ``rd_valid``,
        ``rd_first``, ``rd_last``, ``rd_dst``, ``rd_vc``, ``rd_hdr`` (the data word is ``x.rp.data``;
        with ``header_memory`` every word, and ``rd_hdr`` is the port's data seen as a header), and
        ``rd_beat``, the read register as a link beat.

        ``registered_avail``: "the next word is stored" comes from three registers kept from the next
        values of the writer and the engine (``e_k0``: ``ek == 0``; ``e_same``: the writer's slot is the
        engine's; ``e_ge``: ``wcount >= ek``), so ``issue`` is a function of registers and ``load``
        without a comparison in front (the same beats in the same cycles).
        Returns the issued beat's selection ``c`` (``slot``, ``k``, ``nb``, ``dst``, ``vc``, ``cls``),
        ``issue`` and ``is_last``.
        """
        n = self._n
        slot_shape = range(x.nslots)
        cls_shape = range(len(x.classes))
        beats = range(MAX_DATA_WORDS + 1)
        x.act = Signal(name=f"{p}act")
        x.eslot = Signal(slot_shape, name=f"{p}eslot")
        x.ek = Signal(beats, name=f"{p}ek")
        x.enb = Signal(beats, name=f"{p}enb")
        x.edst = Signal(range(n), name=f"{p}edst")
        x.evc = Signal(2, name=f"{p}evc")
        x.ecls = Signal(cls_shape, name=f"{p}ecls")
        engine = (x.eslot, x.ek, x.enb, x.edst, x.evc, x.ecls)

        x.rd_valid = Signal(name=f"{p}rd_valid")
        x.rd_first = Signal(name=f"{p}rd_first")
        x.rd_last = Signal(name=f"{p}rd_last")
        x.rd_dst = Signal(range(n), name=f"{p}rd_dst")
        x.rd_vc = Signal(2, name=f"{p}rd_vc")
        x.rd_hdr = Signal(HtaxHeader, name=f"{p}rd_hdr")
        # the read register as a link beat: the header from rd_hdr, a data word from the memory port
        # (with header_memory every word from the port)
        x.rd_beat = Signal(HtaxBeat, name=f"{p}rd_beat")
        if x.header_memory:
            m.d.comb += [x.rd_hdr.eq(x.rp.data), x.rd_beat.word.eq(x.rp.data)]
        else:
            m.d.comb += x.rd_beat.word.eq(Mux(x.rd_first, x.rd_hdr.as_value(), x.rp.data))
        m.d.comb += [x.rd_beat.vc.eq(x.rd_vc), x.rd_beat.first.eq(x.rd_first), x.rd_beat.last.eq(x.rd_last)]

        # The beat to issue: the new packet's header, or the next beat of the current one.
        c = SimpleNamespace(
            slot=Signal(slot_shape, name=f"{p}c_slot"), k=Signal(beats, name=f"{p}c_k"),
            nb=Signal(beats, name=f"{p}c_nb"), dst=Signal(range(n), name=f"{p}c_dst"),
            vc=Signal(2, name=f"{p}c_vc"), cls=Signal(cls_shape, name=f"{p}c_cls"))
        sel = (c.slot, c.k, c.nb, c.dst, c.vc, c.cls)
        slot, nb, dst, vc, cls = start
        with m.If(load):
            m.d.comb += [s.eq(v) for s, v in zip(sel, (slot, 0, nb, dst, vc, cls), strict=True)]
        with m.Else():
            m.d.comb += [s.eq(v) for s, v in zip(sel, engine, strict=True)]

        free_rd = Signal(name=f"{p}free_rd")
        m.d.comb += free_rd.eq(~x.rd_valid | rd_taken)
        # A new packet starts with its header (always there); the current one's next word is there
        # unless the writer still fills it (from the engine's registers only, not through c).
        avail = Signal(name=f"{p}avail")
        issue = Signal(name=f"{p}issue")
        m.d.comb += issue.eq((x.act | load) & free_rd & avail)
        if not registered_avail:
            writing = x.m_in_pkt & ~x.m_wdrop & (x.m_wslot == x.eslot)
            m.d.comb += avail.eq(load | (x.ek == 0) | ~writing | (x.m_wcount >= x.ek))
        else:
            self._registered_avail(m, p, x, load=load, issue=issue, slot=start[0], avail=avail)
        is_last = Signal(name=f"{p}is_last")
        if start_last is None:
            m.d.comb += is_last.eq(c.k == c.nb)
        else:
            x.e_last = e_last = Signal(init=1, name=f"{p}e_last")     # ek == enb (the engine's packet)
            m.d.comb += is_last.eq(Mux(load, start_last, e_last))
            with m.If(issue):
                # c.k + 1 == c.nb, with the comparisons in front of the choice between the packets
                m.d.sync += e_last.eq(Mux(load, nb == 1, x.ek + 1 == x.enb))
            with m.Elif(load):
                m.d.sync += e_last.eq(start_last)

        # beat k: data word k - 1 (k = 0, the header: in the memory only with header_memory)
        m.d.comb += [x.rp.en.eq(free_rd), x.rp.addr.eq(_word_addr(c.slot, c.k - 1, c.k == 0, x.header_memory))]
        with m.If(free_rd):
            m.d.sync += x.rd_valid.eq(issue)
        with m.If(issue):
            m.d.sync += [
                x.rd_dst.eq(c.dst), x.rd_last.eq(is_last), x.rd_first.eq(c.k == 0), x.rd_vc.eq(c.vc),
                x.act.eq(~is_last),
            ]
            m.d.sync += [e.eq(v) for e, v in zip(engine, (c.slot, c.k + 1, c.nb, c.dst, c.vc, c.cls),
                                                     strict=True)]
            if not x.header_memory:
                with m.If(c.k == 0):
                    m.d.sync += x.rd_hdr.eq(Array(h.as_value() for h in x.shdr)[c.slot])
        with m.Elif(load):
            m.d.sync += x.act.eq(1)
            m.d.sync += [e.eq(v) for e, v in zip(engine, (c.slot, 0, c.nb, c.dst, c.vc, c.cls), strict=True)]
        x.rd_issue, x.rd_k = issue, c.k
        return c, issue, is_last

    @staticmethod
    def _registered_avail(m, p, x, *, load, issue, slot, avail):
        """The read engine's ``avail`` ("the next word is stored") from registers: ``x.e_k0`` (``ek ==
        0``), ``x.e_same`` (``m_wslot == eslot`` whenever the writer stores a packet: ``m_in_pkt &
        ~m_wdrop``) and ``x.e_ge`` (``m_wcount >= ek``), each set from the next values of the writer
        (``m_hmove``: ``m_wslot`` becomes ``alloc_slot``, the lowest free slot ``low``, and ``m_wcount``
        0; ``m_inc``: ``m_wcount`` + 1) and of the engine (``load``: ``eslot`` becomes ``slot`` and ``ek``
        0; ``issue``: ``ek`` + 1)."""
        x.e_k0 = Signal(init=1, name=f"{p}e_k0")
        x.e_same = Signal(name=f"{p}e_same")
        x.e_ge = Signal(init=1, name=f"{p}e_ge")
        m.d.comb += avail.eq(load | x.e_k0 | ~(x.m_in_pkt & ~x.m_wdrop & x.e_same) | x.e_ge)
        with m.If(issue):
            m.d.sync += x.e_k0.eq(0)
        with m.Elif(load):
            m.d.sync += x.e_k0.eq(1)
        # The writer's slot against the engine's next one (the slot loaded now, or the current one).  A
        # stored header found a free slot, so ``low`` is one-hot then and its bit at the slot says
        # whether ``alloc_slot`` is that slot.
        def same(eslot):
            return Mux(x.m_hmove, x.low.bit_select(eslot, 1), x.m_wslot == eslot)
        m.d.sync += x.e_same.eq(Mux(load, same(slot), same(x.eslot)))
        # wcount' >= ek' for every pair of next values (wcount' = 0, wcount + 1 or wcount; ek' = 0 after a
        # load without issue, 1 after a load with issue, ek + 1 after an issue, else ek).
        # (issue, the deepest term, chooses last; wcount >= ek itself is e_ge)
        w, k = x.m_wcount, x.ek
        ge_k = Mux(x.m_inc, w + 1 >= k, x.e_ge)                    # ek' = ek
        ge_k1 = Mux(x.m_inc, x.e_ge, w > k)                        # ek' = ek + 1
        ge_1 = x.m_inc | (w != 0)                                  # ek' = 1
        m.d.sync += x.e_ge.eq(Mux(issue,
                                  ~x.m_hmove & Mux(load, ge_1, ge_k1),
                                  load | Mux(x.m_hmove, x.e_k0, ge_k)))   # wcount' = 0: ek' == 0
