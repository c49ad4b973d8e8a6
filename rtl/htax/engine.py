"""The read engine of an HTAX input port: one packet at a time from the slots into a read register."""

from amaranth.hdl import Array, Assert, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import MAX_DATA_WORDS, HtaxBeat, HtaxHeader, malformed
from rtl.common.htax_rules import data_beats

from .layouts import (
    BEATS,
    ERR_CLASS,
    NUM_CLASSES,
    Timing,
    data_read_signature,
    engine_state_signature,
    read_register_signature,
    start_layout,
    word_address,
    writer_state_signature,
)

__all__ = ["HtaxReadEngine", "issue_layout", "read_side_invariants"]


def issue_layout(ports, slots):
    """The beat a read engine issues: beat ``k`` (0: the header, else data word ``k - 1``) of the
    packet in ``slot`` (``nb`` data beats, for ``dst`` on ``vc``, accounting class ``cls``)."""
    return data.StructLayout({"slot": range(slots), "k": BEATS, "nb": BEATS, "dst": range(ports), "vc": 2,
                              "cls": range(NUM_CLASSES)})


class HtaxReadEngine(wiring.Component):
    """Reads one packet's beats from the input's slots into a read register (dissertation ch. 7.1:
    cut-through; ``docs/htax.md``, "Switching").

    The engine loads a packet (``load``, ``start``) while it is idle and issues its beats one per
    cycle while the read register is free (empty, or emptied now: ``taken``): the header first, from
    the slot's header register (``Timing.DIRECT``) or the data memory (``Timing.REGISTERED``), then
    data word ``k``, read as soon as the writer has stored it (``store``).  The data memory is read
    with a synchronous port, so an issued beat is in the read register in the next cycle.

    Parameters
    ----------
    ports, slots : int
    timing : Timing
        ``DIRECT``: "the next word is stored" compares the writer's state with the engine's; "this beat
        is the last" compares the beat with the packet's length.  ``REGISTERED``: both come from
        registers kept from next values (``e_k0``: ``k == 0``; ``e_same``: the writer's slot is the
        engine's; ``e_ge``: the writer's count ``>= k``; ``e_last``), so ``issue`` starts at registers;
        a loaded packet brings its ``last`` flag from a register.  The same beats in the same cycles.

    Members
    -------
    load : In(1)
        The engine takes packet ``start`` now (only while idle).
    start : In(start_layout(ports, slots))
    taken : In(1)
        The read register is emptied now.
    store : In(writer_state_signature(slots))
        The storing writer's state.
    low : In(slots)
        The lowest free slot, one-hot (the writer's next slot; ``Timing.REGISTERED``).
    headers : In(HtaxHeader).array(slots)
        The slots' header registers (``Timing.DIRECT`` only).
    got : In(BEATS).array(slots)
        The data words that arrive of each slot's packet: a word beyond them is sent as zero.
    read : In(data_read_signature(slots, timing))
        The data memory's read port.
    rd : Out(read_register_signature(ports))
        The read register.
    issue : Out(1)
        A beat is issued now ...
    sel : Out(issue_layout(ports, slots))
        ... this one ...
    last : Out(1)
        ... and it is its packet's last.
    state : Out(engine_state_signature(ports, slots))
    """

    def __init__(self, *, ports, slots, timing):
        self._n, self._slots, self._timing = ports, slots, Timing(timing)
        members = {
            "load": In(1),
            "start": In(start_layout(ports, slots)),
            "taken": In(1),
            "store": In(writer_state_signature(slots)),
            "low": In(slots),
            "got": In(BEATS).array(slots),
            "read": In(data_read_signature(slots, self._timing)),
            "rd": Out(read_register_signature(ports)),
            "issue": Out(1),
            "sel": Out(issue_layout(ports, slots)),
            "last": Out(1),
            "state": Out(engine_state_signature(ports, slots)),
        }
        if self._timing is Timing.DIRECT:
            members["headers"] = In(HtaxHeader).array(slots)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        n, slots = self._n, self._slots
        registered = self._timing is Timing.REGISTERED
        load, start, store, rp = self.load, self.start, self.store, self.read

        act = Signal(name="act")
        # the engine: the packet's slot, next beat (0 = header), data beats, output, VC, class
        eng = Signal(issue_layout(n, slots), name="eng")
        rd_valid = Signal(name="rd_valid")
        rd_first = Signal(name="rd_first")
        rd_last = Signal(name="rd_last")
        rd_dst = Signal(range(n), name="rd_dst")
        rd_vc = Signal(2, name="rd_vc")
        rd_hdr = Signal(HtaxHeader, name="rd_hdr")
        # rd_zero: the read register's data word never arrived (the packet's last came early)
        rd_zero = Signal(name="rd_zero")
        # the read register as a link beat: the header from rd_hdr, a data word from the memory port
        # (with Timing.REGISTERED every word from the port), or zero
        rd_beat = Signal(HtaxBeat, name="rd_beat")
        word = Mux(rd_zero, 0, rp.data)
        if registered:
            m.d.comb += [rd_hdr.eq(rp.data), rd_beat.word.eq(word)]
        else:
            m.d.comb += rd_beat.word.eq(Mux(rd_first, rd_hdr.as_value(), word))
        m.d.comb += [rd_beat.vc.eq(rd_vc), rd_beat.first.eq(rd_first), rd_beat.last.eq(rd_last)]

        # The beat to issue: the new packet's header, or the next beat of the current one.
        c = Signal(issue_layout(n, slots), name="c")
        with m.If(load):
            m.d.comb += [c.slot.eq(start.slot), c.k.eq(0), c.nb.eq(start.nb), c.dst.eq(start.dst),
                         c.vc.eq(start.vc), c.cls.eq(start.cls)]
        with m.Else():
            m.d.comb += c.eq(eng)

        free_rd = Signal(name="free_rd")
        m.d.comb += free_rd.eq(~rd_valid | self.taken)
        # A new packet starts with its header (always there); the current one's next word is there
        # unless the writer still fills it (from the engine's registers only, not through c).
        avail = Signal(name="avail")
        issue = Signal(name="issue")
        m.d.comb += issue.eq((act | load) & free_rd & avail)
        if not registered:
            writing = store.in_packet & ~store.drop & (store.slot == eng.slot)
            m.d.comb += avail.eq(load | (eng.k == 0) | ~writing | (store.count >= eng.k))
        else:
            e_k0, e_same, e_ge = self._registered_avail(m, eng, issue, avail)
        is_last = Signal(name="is_last")
        if not registered:
            m.d.comb += is_last.eq(c.k == c.nb)
        else:
            e_last = Signal(init=1, name="e_last")     # ek == enb (the engine's packet)
            m.d.comb += is_last.eq(Mux(load, start.last, e_last))
            with m.If(issue):
                # c.k + 1 == c.nb, with the comparisons in front of the choice between the packets
                m.d.sync += e_last.eq(Mux(load, start.nb == 1, eng.k + 1 == eng.nb))
            with m.Elif(load):
                m.d.sync += e_last.eq(start.last)

        # beat k: data word k - 1 (k = 0, the header: in the memory only with Timing.REGISTERED)
        addr = word_address(m, slots, self._timing, slot=c.slot, word=c.k - 1, header=c.k == 0, name="read_addr")
        m.d.comb += [rp.en.eq(free_rd), rp.addr.eq(addr)]
        with m.If(free_rd):
            m.d.sync += rd_valid.eq(issue)
        with m.If(issue):
            m.d.sync += [rd_dst.eq(c.dst), rd_last.eq(is_last), rd_first.eq(c.k == 0), rd_vc.eq(c.vc),
                         rd_zero.eq(c.k > Array(self.got)[c.slot]), act.eq(~is_last)]
            m.d.sync += [eng.eq(c), eng.k.eq(c.k + 1)]
            if not registered:
                with m.If(c.k == 0):
                    m.d.sync += rd_hdr.eq(Array(h.as_value() for h in self.headers)[c.slot])
        with m.Elif(load):
            m.d.sync += [act.eq(1), eng.eq(c), eng.k.eq(0)]

        m.d.comb += [
            self.rd.valid.eq(rd_valid), self.rd.first.eq(rd_first), self.rd.last.eq(rd_last),
            self.rd.dst.eq(rd_dst), self.rd.vc.eq(rd_vc), self.rd.beat.eq(rd_beat),
            self.issue.eq(issue), self.sel.eq(c), self.last.eq(is_last),
            self.state.act.eq(act), self.state.slot.eq(eng.slot), self.state.k.eq(eng.k),
            self.state.nb.eq(eng.nb), self.state.dst.eq(eng.dst), self.state.vc.eq(eng.vc),
            self.state.cls.eq(eng.cls),
        ]

        if platform == "formal":
            ek, enb = eng.k, eng.nb
            with m.If(act):
                m.d.comb += [Assert(ek <= enb), Assert(enb <= MAX_DATA_WORDS), Assert(eng.slot < slots)]
            # only a data word can be missing
            with m.If(rd_zero):
                m.d.comb += Assert(~rd_first)
            # A header in the read register is well formed and is the header of the packet the engine
            # reads (its output, VC and length as the engine has them).
            with m.If(rd_valid & rd_first):
                m.d.comb += [
                    Assert(~malformed(rd_hdr)),
                    Assert(rd_hdr.dst == rd_dst),
                    Assert(rd_hdr.vc.as_value() == rd_vc),
                    Assert(rd_last == (data_beats(rd_hdr) == 0)),
                ]
                with m.If(~rd_last):
                    m.d.comb += [Assert(act), Assert(ek == 1), Assert(eng.dst == rd_dst),
                                 Assert(enb == data_beats(rd_hdr)), Assert(eng.vc == rd_vc)]
                with m.Else():
                    m.d.comb += Assert(~act | (ek == 0))
            # Past its header, the read register holds a beat of this packet (never its last) or nothing.
            with m.If(act & (ek != 0)):
                m.d.comb += [Assert(eng.dst == rd_dst), Assert(~rd_valid | ~rd_last)]
                with m.If(rd_valid & ~rd_first):
                    m.d.comb += Assert(ek >= 2)
            with m.If(rd_valid & ~rd_first & ~rd_last):
                m.d.comb += [Assert(act), Assert(ek >= 2), Assert(eng.dst == rd_dst), Assert(eng.vc == rd_vc)]
            if registered:
                # the registered "next beat is the last" and "the next word is stored" terms
                with m.If(act):
                    m.d.comb += Assert(e_last == (ek == enb))
                m.d.comb += [Assert(e_k0 == (ek == 0)), Assert(e_ge == (store.count >= ek))]
                with m.If(store.in_packet & ~store.drop):
                    m.d.comb += Assert(e_same == (store.slot == eng.slot))
        return m

    def _registered_avail(self, m, eng, issue, avail):
        """``avail`` ("the next word is stored") from registers: ``e_k0`` (``k == 0``), ``e_same``
        (``store.slot == eng.slot`` whenever the writer stores a packet) and ``e_ge`` (``store.count >=
        k``), each set from the next values of the writer (``store.header``: the slot becomes the
        lowest free slot ``low`` and the count 0; ``store.word``: count + 1) and of the engine (``load``:
        the slot becomes ``start.slot`` and ``k`` 0; ``issue``: ``k`` + 1)."""
        store, load, low = self.store, self.load, self.low
        e_k0 = Signal(init=1, name="e_k0")
        e_same = Signal(name="e_same")
        e_ge = Signal(init=1, name="e_ge")
        m.d.comb += avail.eq(load | e_k0 | ~(store.in_packet & ~store.drop & e_same) | e_ge)
        with m.If(issue):
            m.d.sync += e_k0.eq(0)
        with m.Elif(load):
            m.d.sync += e_k0.eq(1)

        # The writer's slot against the engine's next one (the slot loaded now, or the current one).  A
        # stored header found a free slot, so ``low`` is one-hot then and its bit at the slot says
        # whether the writer's next slot is that slot.
        def same(slot):
            return Mux(store.header, low.bit_select(slot, 1), store.slot == slot)
        m.d.sync += e_same.eq(Mux(load, same(self.start.slot), same(eng.slot)))
        # count' >= k' for every pair of next values (count' = 0, count + 1 or count; k' = 0 after a
        # load without issue, 1 after a load with issue, k + 1 after an issue, else k).
        # (issue, the deepest term, chooses last; count >= k itself is e_ge)
        w, k = store.count, eng.k
        ge_k = Mux(store.word, w + 1 >= k, e_ge)                   # k' = k
        ge_k1 = Mux(store.word, e_ge, w > k)                       # k' = k + 1
        ge_1 = store.word | (w != 0)                               # k' = 1
        m.d.sync += e_ge.eq(Mux(issue,
                                ~store.header & Mux(load, ge_1, ge_k1),
                                load | Mux(store.header, e_k0, ge_k)))   # count' = 0: k' == 0
        return e_k0, e_same, e_ge


def read_side_invariants(m, buffer, engine, write, read, timing):
    """Formal invariants between an input's buffer and its read engine (for the compositions that
    join them): the engine reads an occupied slot and has its record, and a read whose word the engine
    uses never meets the data memory's write to the same address (the memories' ``no_rw_check``)."""
    state, eng = buffer.slots, engine.state
    with m.If(eng.act):
        for k in range(len(state.occ)):
            rec = state.record[k]
            with m.If(eng.slot == k):
                m.d.comb += [Assert(state.occ[k]), Assert(eng.nb == rec.nb), Assert(eng.dst == rec.dst),
                             Assert(eng.vc == rec.vc), Assert(eng.cls == Mux(rec.err, ERR_CLASS, rec.vc))]
    used = engine.issue if timing is Timing.REGISTERED else engine.issue & (engine.sel.k != 0)
    with m.If(used & write.en):
        m.d.comb += Assert(read.addr != write.addr)
