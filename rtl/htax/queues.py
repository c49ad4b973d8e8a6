"""The virtual output queues' request counters of an HTAX input port."""

from amaranth.hdl import Assert, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS

from .counting import up_down
from .layouts import Timing, alloc_layout, event_signature, queue_event, queue_state_signature

__all__ = ["HtaxQueues"]


class HtaxQueues(wiring.Component):
    """A counter per virtual output queue (VC, output) behind the input's requests.

    The oldest packet of a non-empty queue is always eligible (:class:`rtl.htax.slots.HtaxSlots`), so
    "the input has a packet of VC *v* for output *o*" is "queue (*v*, *o*) is not empty": a counter
    kept at allocation and removal, instead of a search over the slots.  The switch removes a packet
    when its last beat is read (:class:`rtl.htax.Htax`) or when it is booked
    (:class:`rtl.htax.HtaxPipelined`).

    Parameters
    ----------
    ports : int
    slots : int
    timing : Timing
        ``DIRECT``: ``has`` is ``count != 0``; the counters count with adders.  ``REGISTERED``: ``has``
        is a register set from the counters' next values (a register cut between the counters and
        the requests); the counters count in LUTs.

    Members
    -------
    alloc : In(event_signature(alloc_layout(ports, timing)))
        A packet joins queue (``vc``, ``dst``).
    dequeue : In(event_signature(queue_event(ports)))
        A packet leaves queue (``vc``, ``dst``).
    state : Out(queue_state_signature(ports, slots))
    """

    def __init__(self, *, ports, slots, timing):
        self._n, self._slots, self._timing = ports, slots, Timing(timing)
        super().__init__({
            "alloc": In(event_signature(alloc_layout(ports, self._timing))),
            "dequeue": In(event_signature(queue_event(ports))),
            "state": Out(queue_state_signature(ports, slots)),
        })

    def elaborate(self, platform):
        m = Module()
        registered = self._timing is Timing.REGISTERED
        add, rem = self.alloc, self.dequeue
        for v in range(NUM_VCS):
            for o in range(self._n):
                qcnt = Signal(range(self._slots + 1), name=f"vc{v}_o{o}_count")
                has = Signal(name=f"vc{v}_o{o}_has")
                up = add.valid & (add.payload.vc == v) & (add.payload.dst == o)
                down = rem.valid & (rem.payload.vc == v) & (rem.payload.dst == o)
                up_down(m, qcnt, up, down, lut=registered)
                if registered:
                    m.d.sync += has.eq(Mux(up == down, qcnt != 0, Mux(up, 1, qcnt != 1)))
                else:
                    m.d.comb += has.eq(qcnt != 0)
                m.d.comb += [self.state.has[v][o].eq(has), self.state.count[v][o].eq(qcnt)]
                if platform == "formal":
                    # the registered request flag is "queue not empty"
                    m.d.comb += Assert(has == (qcnt != 0))
        return m
