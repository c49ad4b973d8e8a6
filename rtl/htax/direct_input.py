"""An input port of the 2-cycle HTAX (:class:`rtl.htax.Htax`): buffer, data memory, read engine."""

from amaranth.hdl import Array, Assert, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.htax import NUM_VCS, HtaxLinkSignature
from rtl.common.rr import one_hot_index

from .buffer import HtaxInputBuffer
from .engine import HtaxReadEngine, read_side_invariants
from .layouts import (
    ERR_CLASS,
    Timing,
    data_memory,
    drop_signature,
    engine_state_signature,
    event_signature,
    read_register_signature,
    slot_count,
    take_layout,
)

__all__ = ["HtaxDirectInput", "direct_request_signature"]


def direct_request_signature(ports):
    """What an input of :class:`rtl.htax.Htax` offers to the matching: ``has[v]`` bit ``o``, a packet of
    VC ``v`` for output ``o`` waits; ``free``, its read engine is idle."""
    return wiring.Signature({"has": Out(ports).array(NUM_VCS), "free": Out(1)})


class HtaxDirectInput(wiring.Component):
    """An input port of :class:`rtl.htax.Htax`: an :class:`~rtl.htax.buffer.HtaxInputBuffer`
    (``Timing.DIRECT``), its data memory and an :class:`~rtl.htax.engine.HtaxReadEngine` whose read
    register drives the outputs directly.  A match (``take``) names the (output, VC) queue whose head
    the idle engine loads in the same cycle; the slot is released, and the packet leaves its queue,
    when its last beat is read.

    Parameters
    ----------
    port, ports, slots_per_vc, shared_slots
        As :class:`rtl.htax.Htax` (``port``: this input's number).

    Members
    -------
    link : In(HtaxLinkSignature())
        The input link.
    request : Out(direct_request_signature(ports))
    take : In(event_signature(take_layout(ports)))
        The matching takes the head of queue (``vc``, ``dst``) now (only while ``request.free``).
    rd : Out(read_register_signature(ports))
        The read register, which the outputs read.
    moved : In(1)
        An output takes the read register's beat now.
    drops : Out(drop_signature())
    admitted : Out(1)
        A header is stored now.
    engine : Out(engine_state_signature(ports, slots))
        The read engine's state (the switch's formal invariants relate it to the outputs).
    """

    def __init__(self, *, port, ports, slots_per_vc, shared_slots):
        self._port, self._n, self._s, self._sh = port, ports, slots_per_vc, shared_slots
        nslots = slot_count(slots_per_vc, shared_slots)
        super().__init__({
            "link": In(HtaxLinkSignature()),
            "request": Out(direct_request_signature(ports)),
            "take": In(event_signature(take_layout(ports))),
            "rd": Out(read_register_signature(ports)),
            "moved": In(1),
            "drops": Out(drop_signature()),
            "admitted": Out(1),
            "engine": Out(engine_state_signature(ports, nslots)),
        })

    def elaborate(self, platform):
        m = Module()
        n, timing = self._n, Timing.DIRECT
        nslots = slot_count(self._s, self._sh)
        m.submodules.buffer = buffer = HtaxInputBuffer(port=self._port, ports=n, slots_per_vc=self._s,
                                                       shared_slots=self._sh, timing=timing)
        m.submodules.data = mem = data_memory(nslots, timing)
        m.submodules.engine = engine = HtaxReadEngine(ports=n, slots=nslots, timing=timing)
        write, read = mem.write_port(), mem.read_port(domain="sync")
        connect(m, link=flipped(self.link), buffer=buffer.link)
        connect(m, buffer=buffer.write, memory=write)
        connect(m, engine=engine.read, memory=read)
        connect(m, buffer=buffer.store, engine=engine.store)
        connect(m, buffer=buffer.drops, input=flipped(self.drops))
        connect(m, engine=engine.rd, input=flipped(self.rd))
        connect(m, engine=engine.state, input=flipped(self.engine))
        slots = buffer.slots
        m.d.comb += [engine.low.eq(slots.low), self.admitted.eq(buffer.admitted)]
        m.d.comb += [engine.headers[k].eq(slots.header[k]) for k in range(nslots)]
        m.d.comb += [engine.got[k].eq(slots.record[k].got) for k in range(nslots)]
        m.d.comb += [self.request.has[v].eq(buffer.queues.has[v]) for v in range(NUM_VCS)]

        # The taken slot: the head of the (VC, output) queue the matching chose.
        take, rec = self.take.payload, slots.record
        take_hit = Signal(nslots, name="take_hit")
        m.d.comb += take_hit.eq(Cat(slots.eligible[k] & (rec[k].vc == take.vc) & (rec[k].dst == take.dst)
                                    for k in range(nslots)))
        take_slot = one_hot_index(m, take_hit, name="take_slot")
        take_cls = Signal(range(ERR_CLASS + 1), name="take_cls")
        m.d.comb += take_cls.eq(Mux(Array(r.err for r in rec)[take_slot], ERR_CLASS, take.vc))
        # The matching takes only from a free engine, so a take always loads a new packet.
        m.d.comb += [
            engine.load.eq(self.take.valid),
            engine.start.slot.eq(take_slot),
            engine.start.nb.eq(Array(r.nb for r in rec)[take_slot]),
            engine.start.dst.eq(take.dst),
            engine.start.vc.eq(take.vc),
            engine.start.cls.eq(take_cls),
            engine.taken.eq(self.moved),
            self.request.free.eq(~engine.state.act),
        ]
        # The packet's last beat read: its slot is free, the packet out of its queue.
        done = engine.issue & engine.last
        m.d.comb += [
            buffer.release.valid.eq(done), buffer.release.cls.eq(engine.sel.cls),
            buffer.release.slots.eq(Cat(done & (engine.sel.slot == k) for k in range(nslots))),
            buffer.dequeue.valid.eq(done), buffer.dequeue.payload.vc.eq(engine.sel.vc),
            buffer.dequeue.payload.dst.eq(engine.sel.dst),
        ]

        if platform == "formal":
            read_side_invariants(m, buffer, engine, write, read, timing)
            # the queue counters behind the requests count the waiting packets of each (VC, output)
            for v in range(NUM_VCS):
                for o in range(n):
                    m.d.comb += Assert(buffer.queues.count[v][o] == sum(
                        (slots.occ[k] & (slots.record[k].vc == v) & (slots.record[k].dst == o)).as_unsigned()
                        for k in range(nslots)))
            # Conservation: packets taken in (stored headers and error responses) minus headers that
            # left equals the packets still waiting for their header to leave, from the slots and the
            # read engine: no packet is lost, duplicated or created.
            width = 6
            taken = Signal(width, name="f_taken")
            left = Signal(width, name="f_left")
            with m.If(buffer.admitted):
                m.d.sync += taken.eq(taken + 1)
            with m.If(self.moved & engine.rd.first):
                m.d.sync += left.eq(left + 1)
            rd, eng = engine.rd, engine.state
            waiting = Signal(width, name="f_waiting")
            m.d.comb += waiting.eq(sum(slots.occ[k].as_unsigned() for k in range(nslots))
                                   - (eng.act & (eng.k != 0) & ~(rd.valid & rd.first))
                                   + (rd.valid & rd.first & rd.last))
            m.d.comb += Assert((taken - left)[:width] == waiting)
        return m
