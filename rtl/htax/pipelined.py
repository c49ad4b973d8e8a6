"""The pipelined HTAX crossbar: input slots, output buffers, packet-mode iSLIP in registered steps.

The same switch as :class:`rtl.htax.Htax` from the outside (dissertation ch. 7.1 "HT-Core and
HTAX"; the four virtual channels of 5.2.9; the HyperTransport ordering rule behind the deadlock of
fig. 6-7, ch. 6), built for clock frequency instead of latency: every decision reads registers and
writes registers, so no path crosses the switch more than once per cycle.  ``docs/htax.md``
("Pipelined switch") describes it.

Deviations from the dissertation: 9 cycles from header in to header out at zero load (the
dissertation's HTAX: 6 in, 3 out); output buffers per VC; no source tag translation (the HTAX-to-HT
bridge's, ch. 7.1); a bad header is dropped, counted and (for a READ) answered by an error response.
"""

from amaranth.hdl import Assert, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from rtl.common.params import check_int

from .counters import HtaxDropCounters
from .interface import check_switch_parameters, output_contract, switch_members
from .layouts import RESERVE, Timing
from .pipelined_input import HtaxPipelinedInput
from .pipelined_match import HtaxPipelinedMatch
from .pipelined_output import HtaxPipelinedOutput

__all__ = ["HtaxPipelined"]


class HtaxPipelined(wiring.Component):
    """The HTAX crossbar with registered matching and output buffers.

    Every input is an :class:`~rtl.htax.pipelined_input.HtaxPipelinedInput` (packet slots, virtual
    output queues, bookings, a read engine and the registers the outputs take beats from), every
    output an :class:`~rtl.htax.pipelined_output.HtaxPipelinedOutput` (a buffer per VC and a link
    engine); an :class:`~rtl.htax.pipelined_match.HtaxPipelinedMatch` books the next packet of every
    output a few cycles ahead, and :class:`~rtl.htax.counters.HtaxDropCounters` counts the drops.

    Parameters
    ----------
    ports, slots_per_vc, shared_slots, counter_bits
        As :class:`rtl.htax.Htax`.
    out_depth : int
        Beats per (output, VC) buffer, ``MAX_DATA_WORDS + 1`` (9) .. 64.  A grant needs 9 free beats,
        so 16 lets an output book its next packet of a VC while 7 beats of the current one wait.

    Members
    -------
    As :class:`rtl.htax.Htax`.

    Raises
    ------
    TypeError, ValueError
        A parameter is not an integer or out of range.
    """

    def __init__(self, *, ports, slots_per_vc=1, shared_slots=12, counter_bits=16, out_depth=16):
        check_int("out_depth", out_depth, RESERVE, 64)
        check_switch_parameters(ports=ports, slots_per_vc=slots_per_vc, shared_slots=shared_slots,
                                counter_bits=counter_bits)
        self._n, self._s, self._sh = ports, slots_per_vc, shared_slots
        self._counter_bits, self._depth = counter_bits, out_depth
        super().__init__(switch_members(ports, counter_bits))

    @property
    def slots_per_vc(self):
        return self._s

    @property
    def shared_slots(self):
        return self._sh

    @property
    def out_depth(self):
        return self._depth

    def port(self, i):
        """The switch side of HTAX port ``i``."""
        return self.ports[i]

    def elaborate(self, platform):
        m = Module()
        n = self._n
        m.submodules.match = match = HtaxPipelinedMatch(ports=n)
        m.submodules.counters = counters = HtaxDropCounters(ports=n, counter_bits=self._counter_bits,
                                                            timing=Timing.REGISTERED)
        inputs, outputs = [], []
        for i in range(n):
            m.submodules[f"i{i}"] = x = HtaxPipelinedInput(port=i, ports=n, slots_per_vc=self._s,
                                                          shared_slots=self._sh)
            inputs.append(x)
        for o in range(n):
            m.submodules[f"o{o}"] = y = HtaxPipelinedOutput(port=o, ports=n, depth=self._depth)
            outputs.append(y)
        for i, x in enumerate(inputs):
            connect(m, port=flipped(self.ports[i].tx), input=x.link)
            connect(m, input=x.request, match=match.requests[i])
            connect(m, match=match.book[i], input=x.book)
            connect(m, input=x.drops, counters=counters.drops[i])
            connect(m, x.offer, *(y.inputs[i] for y in outputs))
        for o, y in enumerate(outputs):
            connect(m, port=flipped(self.ports[o].rx), output=y.rx)
            connect(m, output=y.status, match=match.outputs[o])
            connect(m, match=match.booked[o], output=y.booked)
            connect(m, y.state, *(x.outputs[o] for x in inputs))
        m.d.comb += [self.dropped_no_target.eq(counters.dropped_no_target),
                     self.dropped_malformed.eq(counters.dropped_malformed)]

        if platform == "formal":
            for o, y in enumerate(outputs):
                output_contract(m, self.ports[o].rx, o)
                # a registered grant never meets a booked output (the accept step has no booking term)
                with m.If(y.state.obk):
                    m.d.comb += Assert(match.grants[o] == 0)
            # never more headers out than in (stored, or answered by an error response)
            taken = Signal(8, name="f_taken")
            left = Signal(8, name="f_left")
            m.d.sync += [taken.eq(taken + sum(x.admitted.as_unsigned() for x in inputs)),
                         left.eq(left + sum(p.rx.header_moves().as_unsigned() for p in self.ports))]
            m.d.comb += Assert(left <= taken)
        return m
