"""The HTAX's drop counters."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .layouts import Timing, drop_signature

__all__ = ["HtaxDropCounters"]


class HtaxDropCounters(wiring.Component):
    """``dropped_no_target`` and ``dropped_malformed``: saturating counts of the inputs' drops.

    Parameters
    ----------
    ports : int
    counter_bits : int
    timing : Timing
        ``DIRECT``: a drop counts in the cycle after its header moved.  ``REGISTERED``: every input's
        events are registered where they happen, their sum is registered, and the counters add it (a
        drop shows two cycles later; register cuts between the inputs' header decode, the sum across
        the inputs and the counters' adders).

    Members
    -------
    drops : In(drop_signature()).array(ports)
        Every input's drop events.
    dropped_no_target, dropped_malformed : Out(counter_bits)
        As :class:`rtl.htax.Htax`.
    """

    def __init__(self, *, ports, counter_bits, timing):
        self._n, self._timing = ports, Timing(timing)
        super().__init__({
            "drops": In(drop_signature()).array(ports),
            "dropped_no_target": Out(counter_bits),
            "dropped_malformed": Out(counter_bits),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        for counter, events in ((self.dropped_no_target, [d.no_target for d in self.drops]),
                                (self.dropped_malformed, [d.malformed for d in self.drops])):
            count = Signal.like(counter, name=f"{counter.name}_q")
            inc = Signal(range(n + 1), name=f"{counter.name}_inc")
            if self._timing is Timing.REGISTERED:
                events_q = Signal(n, name=f"{counter.name}_events")
                m.d.sync += [events_q.eq(Cat(events)), inc.eq(sum(e.as_unsigned() for e in events_q))]
            else:
                m.d.comb += inc.eq(sum(e.as_unsigned() for e in events))
            total = Signal(len(count) + 5, name=f"{counter.name}_sum")
            limit = (1 << len(count)) - 1
            m.d.comb += total.eq(count + inc)
            m.d.sync += count.eq(Mux(total > limit, limit, total))
            m.d.comb += counter.eq(count)
        return m
