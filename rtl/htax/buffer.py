"""The input buffer of an HTAX port: writer, slots, virtual output queues and slot accounting."""

from amaranth.hdl import Assert, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.htax import HtaxLinkSignature

from .accounting import HtaxAccounting
from .layouts import (
    ERR_CLASS,
    NUM_CLASSES,
    Timing,
    data_write_signature,
    drop_signature,
    event_signature,
    queue_event,
    queue_state_signature,
    release_signature,
    reservations,
    slot_count,
    slot_state_signature,
    writer_state_signature,
)
from .queues import HtaxQueues
from .slots import HtaxSlots
from .writer import HtaxWriter

__all__ = ["HtaxInputBuffer"]


class HtaxInputBuffer(wiring.Component):
    """Everything of an input port before the read side (dissertation ch. 7.1; ``docs/htax.md``,
    "Queueing"): ``4 * slots_per_vc + 1 + shared_slots`` packet slots, each holding one whole packet
    of any VC, filled by the :class:`~rtl.htax.writer.HtaxWriter`, kept as virtual output queues by
    :class:`~rtl.htax.slots.HtaxSlots` and :class:`~rtl.htax.queues.HtaxQueues`, accounted per class by
    :class:`~rtl.htax.accounting.HtaxAccounting`, which decides the link's ``ready``.  The read side
    (the switch's) releases slots and takes packets out of the queues; the data memory is the read
    side's too (the buffer exports its write port).

    Parameters
    ----------
    port, ports, slots_per_vc, shared_slots
        As :class:`rtl.htax.Htax` (``port``: this input's number).
    timing : Timing
        The blocks' timing (:class:`~rtl.htax.layouts.Timing`).

    Members
    -------
    link : In(HtaxLinkSignature())
        The input link.
    write : In(data_write_signature(slots, timing))
        The data memory's write port.
    slots : Out(slot_state_signature(ports, slots, timing))
    queues : Out(queue_state_signature(ports, slots))
    store : Out(writer_state_signature(slots))
    admitted : Out(1)
        A header is stored now (a packet, or a dropped READ's error response).
    held : Out(range(slots + 1)).array(NUM_CLASSES)
        Slots held per accounting class (the VCs, then the error responses).
    shared : Out(range(shared_slots + 1))
        Slots held beyond their class's reservation.
    drops : Out(drop_signature())
    release : In(release_signature(slots))
        The read side releases a slot.
    dequeue : In(event_signature(queue_event(ports)))
        The read side takes a packet out of its queue.
    """

    def __init__(self, *, port, ports, slots_per_vc, shared_slots, timing):
        self._port, self._n, self._s, self._sh = port, ports, slots_per_vc, shared_slots
        self._timing = Timing(timing)
        nslots = slot_count(slots_per_vc, shared_slots)
        super().__init__({
            "link": In(HtaxLinkSignature()),
            "write": In(data_write_signature(nslots, self._timing)),
            "slots": Out(slot_state_signature(ports, nslots, self._timing)),
            "queues": Out(queue_state_signature(ports, nslots)),
            "store": Out(writer_state_signature(nslots)),
            "admitted": Out(1),
            "held": Out(range(nslots + 1)).array(NUM_CLASSES),
            "shared": Out(range(shared_slots + 1)),
            "drops": Out(drop_signature()),
            "release": In(release_signature(nslots)),
            "dequeue": In(event_signature(queue_event(ports))),
        })

    def elaborate(self, platform):
        m = Module()
        n, timing = self._n, self._timing
        nslots = slot_count(self._s, self._sh)
        m.submodules.writer = writer = HtaxWriter(port=self._port, ports=n, slots=nslots, timing=timing)
        m.submodules.slots = slots = HtaxSlots(ports=n, slots=nslots, timing=timing)
        m.submodules.queues = queues = HtaxQueues(ports=n, slots=nslots, timing=timing)
        m.submodules.accounting = accounting = HtaxAccounting(ports=n, slots_per_vc=self._s,
                                                              shared_slots=self._sh, timing=timing)

        connect(m, link=flipped(self.link), writer=writer.link)
        connect(m, memory=flipped(self.write), writer=writer.write)
        connect(m, writer=writer.alloc, slots=slots.alloc, queues=queues.alloc, accounting=accounting.alloc)
        connect(m, writer=writer.link_state, accounting=accounting.link)
        connect(m, writer=writer.short, slots=slots.short)
        connect(m, read_side=flipped(self.release), slots=slots.release, accounting=accounting.release)
        connect(m, read_side=flipped(self.dequeue), queues=queues.dequeue)
        m.d.comb += [writer.ready.eq(accounting.ready), writer.free_slot.eq(slots.state.free),
                     self.admitted.eq(writer.alloc.valid), self.shared.eq(accounting.shared)]
        m.d.comb += [self.held[c].eq(accounting.count[c]) for c in range(NUM_CLASSES)]
        connect(m, buffer=flipped(self.slots), slots=slots.state)
        connect(m, buffer=flipped(self.queues), queues=queues.state)
        connect(m, buffer=flipped(self.store), writer=writer.store)
        connect(m, buffer=flipped(self.drops), writer=writer.drops)

        if platform == "formal":
            state = slots.state
            # The slot accounting matches the slots: count[c] counts the slots of class c (the VCs and
            # ERR, the switch's error responses), ``shared`` the slots held beyond their class's
            # reservation ...
            res = reservations(self._s)
            cls = [Mux(state.record[k].err, ERR_CLASS, state.record[k].vc) for k in range(nslots)]
            excess = 0
            for c in range(NUM_CLASSES):
                cnt = accounting.count[c]
                m.d.comb += Assert(cnt == sum((state.occ[k] & (cls[k] == c)).as_unsigned() for k in range(nslots)))
                excess = excess + Mux(cnt > res[c], cnt - res[c], 0)
            m.d.comb += [Assert(accounting.shared == excess), Assert(accounting.shared <= nslots - sum(res))]
            # ... so a header that is taken in always finds a free slot.
            with m.If(writer.alloc.valid):
                m.d.comb += Assert(~state.occ.bit_select(state.free, 1))
        return m
