"""The packet slots of an HTAX input port: slot records, the age matrix, the lowest free slot."""

from amaranth.hdl import Assert, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxHeader, HtaxVC, malformed
from rtl.common.htax_rules import data_beats
from rtl.common.rr import lowest, one_hot_index

from .layouts import (
    Timing,
    alloc_layout,
    event_signature,
    release_signature,
    short_layout,
    slot_record,
    slot_state_signature,
)

__all__ = ["HtaxSlots"]


class HtaxSlots(wiring.Component):
    """The slots of an input port (``docs/htax.md``, "Queueing").

    A slot holds one whole packet of any VC: its record (output, VC, error response, data beats) here,
    its data words in the input's data memory (and its header in a register here with
    ``Timing.DIRECT``, in the data memory with ``Timing.REGISTERED``).  The packets of one VC and
    output form a virtual output queue: a slot records at allocation which occupied slots hold older
    packets of its queue (a row of an age matrix), so a slot is the head of its queue (``eligible``)
    when none of those is still occupied.  This keeps per-(source, destination, VC) order while
    packets to different outputs pass each other (no head-of-line blocking).

    Parameters
    ----------
    ports : int
    slots : int
    timing : Timing
        ``DIRECT``: the lowest free slot is a function of the slots; a slot's age bits are cleared in
        every row when it is allocated again.  ``REGISTERED``: the lowest free slot is a register set
        from the slots as they will be after this cycle's release and allocation; a released slot's
        age bits are cleared at its release, so an allocation enables the new slot's registers only.

    Members
    -------
    alloc : In(event_signature(alloc_layout(ports, timing)))
        A header is stored in slot ``state.low`` now.
    short : In(event_signature(short_layout(slots)))
        Only ``words`` data words of the packet in ``slot`` arrive (its ``last`` came early).
    release : In(release_signature(slots))
        The slots released now (one-hot).
    state : Out(slot_state_signature(ports, slots, timing))
    """

    def __init__(self, *, ports, slots, timing):
        self._n, self._slots, self._timing = ports, slots, Timing(timing)
        super().__init__({
            "alloc": In(event_signature(alloc_layout(ports, self._timing))),
            "short": In(event_signature(short_layout(slots))),
            "release": In(release_signature(slots)),
            "state": Out(slot_state_signature(ports, slots, self._timing)),
        })

    def elaborate(self, platform):
        m = Module()
        nslots = self._slots
        registered = self._timing is Timing.REGISTERED
        alloc, new = self.alloc.valid, self.alloc.payload
        rel_oh = self.release.slots

        occ = [Signal(name=f"occ{k}") for k in range(nslots)]
        rec = [Signal(slot_record(self._n), name=f"slot{k}") for k in range(nslots)]
        hdr = None if registered else [Signal(HtaxHeader, name=f"hdr{k}") for k in range(nslots)]
        older = [Signal(nslots, name=f"older{k}") for k in range(nslots)]
        occ_vec = Cat(occ)

        # A slot is eligible (the head of its virtual output queue) when no older packet of its queue
        # waits; at most one slot per (VC, output) is eligible.
        elig = Signal(nslots, name="eligible")
        m.d.comb += elig.eq(Cat(occ[k] & ~(occ_vec & older[k]).any() for k in range(nslots)))

        free_bits = Signal(nslots, name="free")
        m.d.comb += free_bits.eq(~occ_vec)
        # The lowest free slot, one-hot (it selects the slot registers directly) and as an index.
        low = Signal(nslots, init=1, name="free_low")
        if not registered:
            m.d.comb += low.eq(lowest(free_bits))
        first_free = one_hot_index(m, low, name="free_idx")

        # The new packet is younger than every waiting packet of its queue.
        same_queue = Signal(nslots, name="same_queue")
        m.d.comb += same_queue.eq(Cat(occ[j] & (rec[j].vc == new.vc) & (rec[j].dst == new.dst)
                                      for j in range(nslots)))
        for k in range(nslots):
            with m.If(alloc & low[k]):
                m.d.sync += [
                    occ[k].eq(1),
                    rec[k].dst.eq(new.dst),
                    rec[k].vc.eq(new.vc),
                    rec[k].err.eq(new.err),
                    rec[k].nb.eq(new.nb),
                    rec[k].got.eq(new.got),
                    older[k].eq(same_queue),
                ]
                if not registered:
                    m.d.sync += hdr[k].eq(new.hdr)
            # A newly allocated slot is younger than every other: clear its bit in the other rows (with
            # Timing.REGISTERED: at the slot's release, below).
            if not registered:
                for j in range(nslots):
                    if j != k:
                        with m.If(alloc & low[j]):
                            m.d.sync += older[k][j].eq(0)
        short = self.short
        for k in range(nslots):
            with m.If(short.valid & (short.payload.slot == k)):
                m.d.sync += rec[k].got.eq(short.payload.words)
            with m.If(rel_oh[k]):
                m.d.sync += occ[k].eq(0)
        if registered:
            # Every row drops the released slot, the row of a slot allocated now included (after the
            # allocation's assignment: a synchronous reset of the column's flip-flops).
            for j in range(nslots):
                with m.If(rel_oh[j]):
                    m.d.sync += [older[k][j].eq(0) for k in range(nslots) if k != j]
            # The free slots after this cycle's release, less slot low when the stored header takes it
            # now: all from registers, into one priority encoder.
            after_rel = Signal(nslots, name="free_after_release")
            m.d.comb += after_rel.eq(free_bits | rel_oh)
            m.d.sync += low.eq(lowest(after_rel & ~Mux(alloc, low, 0)))

        state = self.state
        m.d.comb += [state.occ.eq(occ_vec), state.eligible.eq(elig), state.low.eq(low), state.free.eq(first_free)]
        m.d.comb += [state.record[k].eq(rec[k]) for k in range(nslots)]
        m.d.comb += [state.older[k].eq(older[k]) for k in range(nslots)]
        if not registered:
            m.d.comb += [state.header[k].eq(hdr[k]) for k in range(nslots)]

        if platform == "formal":
            self._invariants(m, occ, rec, hdr, older, low)
        return m

    def _invariants(self, m, occ, rec, hdr, older, low):
        nslots = self._slots
        rsp = HtaxVC.RESPONSE.value
        for k in range(nslots):
            with m.If(occ[k]):
                # error responses travel on the response VC
                with m.If(rec[k].err):
                    m.d.comb += Assert(rec[k].vc == rsp)
                # a header register holds a well-formed header that agrees with its slot record
                if hdr is not None:
                    m.d.comb += [Assert(~malformed(hdr[k])), Assert(hdr[k].dst == rec[k].dst),
                                 Assert(hdr[k].vc.as_value() == rec[k].vc),
                                 Assert(data_beats(hdr[k]) == rec[k].nb)]
        # the age matrix orders every queue: of two waiting packets of one (VC, destination) exactly
        # one is the older (so at most one slot per queue is eligible) ...
        for k in range(nslots):
            with m.If(occ[k]):
                m.d.comb += Assert(~older[k][k])
            for j in range(k + 1, nslots):
                with m.If(occ[k] & occ[j] & (rec[k].vc == rec[j].vc) & (rec[k].dst == rec[j].dst)):
                    m.d.comb += Assert(older[k][j] != older[j][k])
        # ... only within a queue ...
        for a in range(nslots):
            for b in range(nslots):
                if a != b:
                    with m.If(occ[a] & occ[b] & older[a][b]):
                        m.d.comb += [Assert(rec[a].vc == rec[b].vc), Assert(rec[a].dst == rec[b].dst)]
        # ... and transitively, so every non-empty queue has an eligible (oldest) packet
        for a in range(nslots):
            for b in range(nslots):
                for c in range(nslots):
                    if len({a, b, c}) == 3:
                        with m.If(occ[a] & occ[b] & occ[c] & older[a][b] & older[b][c]):
                            m.d.comb += Assert(older[a][c])
        # the registered lowest free slot is the lowest free slot
        if self._timing is Timing.REGISTERED:
            m.d.comb += Assert(low == lowest(~Cat(occ)))
