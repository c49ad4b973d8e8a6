"""An input port of the pipelined HTAX (:class:`rtl.htax.HtaxPipelined`)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.htax import NUM_VCS, HtaxLinkSignature

from .buffer import HtaxInputBuffer
from .engine import HtaxReadEngine, read_side_invariants
from .layouts import (
    Timing,
    crossbar_state_signature,
    data_memory,
    drop_signature,
    event_signature,
    offer_signature,
    slot_count,
    take_layout,
)
from .lookup import HtaxHeadLookup
from .send import HtaxSendRegisters
from .tracker import HtaxReadTracker

__all__ = ["HtaxPipelinedInput", "pipelined_request_signature"]


def pipelined_request_signature(ports):
    """What an input of :class:`rtl.htax.HtaxPipelined` offers to the matching: ``has[v]`` bit ``o``, a
    packet of VC ``v`` for output ``o`` is not yet booked (a register); ``can_book``, it may book."""
    return wiring.Signature({"has": Out(ports).array(NUM_VCS), "can_book": Out(1)})


class HtaxPipelinedInput(wiring.Component):
    """An input port of :class:`rtl.htax.HtaxPipelined`: an :class:`~rtl.htax.buffer.HtaxInputBuffer`
    (``Timing.REGISTERED``) and its data memory; an :class:`~rtl.htax.lookup.HtaxHeadLookup` that takes
    bookings from the matching and looks up the booked packet; an
    :class:`~rtl.htax.engine.HtaxReadEngine` (``Timing.REGISTERED``) that reads it, cut-through, with an
    :class:`~rtl.htax.tracker.HtaxReadTracker` for its look-ahead flags and slot release; and the
    :class:`~rtl.htax.send.HtaxSendRegisters` the outputs take its beats from.

    Parameters
    ----------
    port, ports, slots_per_vc, shared_slots
        As :class:`rtl.htax.HtaxPipelined` (``port``: this input's number).

    Members
    -------
    link : In(HtaxLinkSignature())
        The input link.
    request : Out(pipelined_request_signature(ports))
    book : In(event_signature(take_layout(ports)))
        The matching books queue (``vc``, ``dst``) now.
    offer : Out(offer_signature(ports))
        To every output.
    outputs : In(crossbar_state_signature(ports)).array(ports)
        From every output.
    drops : Out(drop_signature())
    admitted : Out(1)
        A header is stored now.
    """

    def __init__(self, *, port, ports, slots_per_vc, shared_slots):
        self._port, self._n, self._s, self._sh = port, ports, slots_per_vc, shared_slots
        super().__init__({
            "link": In(HtaxLinkSignature()),
            "request": Out(pipelined_request_signature(ports)),
            "book": In(event_signature(take_layout(ports))),
            "offer": Out(offer_signature(ports)),
            "outputs": In(crossbar_state_signature(ports)).array(ports),
            "drops": Out(drop_signature()),
            "admitted": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, timing = self._n, Timing.REGISTERED
        nslots = slot_count(self._s, self._sh)
        m.submodules.buffer = buffer = HtaxInputBuffer(port=self._port, ports=n, slots_per_vc=self._s,
                                                       shared_slots=self._sh, timing=timing)
        m.submodules.data = mem = data_memory(nslots, timing)
        m.submodules.lookup = lookup = HtaxHeadLookup(ports=n, slots=nslots)
        m.submodules.engine = engine = HtaxReadEngine(ports=n, slots=nslots, timing=timing)
        m.submodules.tracker = tracker = HtaxReadTracker(ports=n, slots=nslots)
        m.submodules.send = send = HtaxSendRegisters(port=self._port, ports=n)
        write, read = mem.write_port(), mem.read_port(domain="sync")

        connect(m, link=flipped(self.link), buffer=buffer.link)
        connect(m, buffer=buffer.write, memory=write)
        connect(m, engine=engine.read, memory=read)
        connect(m, buffer=buffer.store, engine=engine.store)
        connect(m, buffer=buffer.slots, lookup=lookup.slots)
        connect(m, matching=flipped(self.book), lookup=lookup.book)
        connect(m, lookup=lookup.dequeue, buffer=buffer.dequeue)
        connect(m, tracker=tracker.release, buffer=buffer.release)
        connect(m, engine=engine.state, tracker=tracker.engine)
        connect(m, engine=engine.rd, send=send.rd)
        connect(m, buffer=buffer.drops, input=flipped(self.drops))
        for o in range(n):
            connect(m, output=flipped(self.outputs[o]), send=send.outputs[o])

        # The engine loads the looked-up packet once it is idle.
        load = Signal(name="load")
        m.d.comb += load.eq(lookup.next.valid & ~engine.state.act)
        m.d.comb += [
            engine.low.eq(buffer.slots.low),
            engine.load.eq(load), engine.start.eq(lookup.next.payload), engine.taken.eq(send.taken),
            lookup.load.eq(load), lookup.busy.eq(tracker.busy),
            lookup.near.eq(tracker.near), lookup.near_next.eq(tracker.near_next),
            tracker.issue.eq(engine.issue), tracker.last.eq(engine.last), tracker.sel.eq(engine.sel),
            tracker.load.eq(load), tracker.next.eq(lookup.next.payload),
            send.rd_near.eq(tracker.rd_near),
            self.request.can_book.eq(lookup.can_book), self.admitted.eq(buffer.admitted),
        ]
        m.d.comb += [self.request.has[v].eq(buffer.queues.has[v]) for v in range(NUM_VCS)]
        m.d.comb += [engine.got[k].eq(buffer.slots.record[k].got) for k in range(nslots)]
        m.d.comb += [
            self.offer.valid.eq(send.offer.valid), self.offer.dst.eq(send.offer.dst),
            self.offer.beat.eq(send.offer.beat), self.offer.end.eq(send.offer.end),
            self.offer.near.eq(send.offer.near), self.offer.booked_nb.eq(lookup.next.payload.nb),
        ]

        if platform == "formal":
            read_side_invariants(m, buffer, engine, write, read, timing)
        return m
