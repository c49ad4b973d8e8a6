"""The HTAX crossbar with 2 cycles of latency: N ports, four virtual channels, virtual output queues,
packet-mode iSLIP decided in the cycle after a header is stored.

Implements the HTAX of the dissertation (ch. 7.1 "HT-Core and HTAX"; the four virtual channels of
5.2.9 "On-Device ATS": posted, non-posted, response and ATS) with the HyperTransport ordering rule that
avoids the queue deadlock of fig. 6-7 (ch. 6): a stalled non-posted request never blocks a posted write
or a response.  The link format is :mod:`rtl.common.htax`; ``docs/htax.md`` describes the design.

Deviations from the dissertation: latency is 2 cycles header-in to header-out instead of 6 in / 3 out;
the switch does not translate source tags (the HTAX-to-HT bridge does, ch. 7.1); a bad header is
dropped, counted and (for a READ) answered by an error response.
"""

from amaranth.hdl import Array, Assert, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from .counters import HtaxDropCounters
from .direct_input import HtaxDirectInput
from .direct_match import HtaxDirectMatch
from .direct_output import HtaxDirectOutput
from .interface import check_switch_parameters, output_contract, switch_members
from .layouts import Timing

__all__ = ["Htax"]


class Htax(wiring.Component):
    """The HTAX crossbar, 2 cycles from header in to header out.

    Every input is an :class:`~rtl.htax.direct_input.HtaxDirectInput` (packet slots, virtual output
    queues, a read engine whose read register drives the outputs), every output an
    :class:`~rtl.htax.direct_output.HtaxDirectOutput`; an :class:`~rtl.htax.direct_match.HtaxDirectMatch`
    matches them per packet in the cycle after a header is stored, and
    :class:`~rtl.htax.counters.HtaxDropCounters` counts the drops.

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
        check_switch_parameters(ports=ports, slots_per_vc=slots_per_vc, shared_slots=shared_slots,
                                counter_bits=counter_bits)
        self._n, self._s, self._sh = ports, slots_per_vc, shared_slots
        self._counter_bits = counter_bits
        super().__init__(switch_members(ports, counter_bits))

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
        m.submodules.match = match = HtaxDirectMatch(ports=n)
        m.submodules.counters = counters = HtaxDropCounters(ports=n, counter_bits=self._counter_bits,
                                                            timing=Timing.DIRECT)
        inputs, outputs = [], []
        for i in range(n):
            m.submodules[f"i{i}"] = x = HtaxDirectInput(port=i, ports=n, slots_per_vc=self._s,
                                                        shared_slots=self._sh)
            inputs.append(x)
        for o in range(n):
            m.submodules[f"o{o}"] = y = HtaxDirectOutput(port=o, ports=n)
            outputs.append(y)
        for i, x in enumerate(inputs):
            connect(m, port=flipped(self.ports[i].tx), input=x.link)
            connect(m, input=x.request, match=match.requests[i])
            connect(m, match=match.take[i], input=x.take)
            connect(m, input=x.drops, counters=counters.drops[i])
            connect(m, x.rd, *(y.inputs[i] for y in outputs))
            m.d.comb += x.moved.eq(Cat(y.move[i] for y in outputs).any())
        for o, y in enumerate(outputs):
            connect(m, port=flipped(self.ports[o].rx), output=y.rx)
            connect(m, output=y.status, match=match.outputs[o])
            connect(m, match=match.accepted[o], output=y.accepted)
        m.d.comb += [self.dropped_no_target.eq(counters.dropped_no_target),
                     self.dropped_malformed.eq(counters.dropped_malformed)]

        if platform == "formal":
            checkers = [output_contract(m, self.ports[o].rx, o) for o in range(n)]
            _link_invariants(m, inputs, outputs, checkers)
        return m


def _link_invariants(m, inputs, outputs, checkers):
    """Relate every output's link checker (:func:`~rtl.htax.interface.output_contract`) to the read
    engines and the outputs' owners, so the link rules are inductive."""
    n = len(inputs)
    mid, mid_out, mid_rem, mid_vc, pend, loading = [], [], [], [], [], []
    for i, x in enumerate(inputs):
        rd, eng = x.rd, x.engine
        data_pending = rd.valid & ~rd.first           # a data beat waits in the read register
        hdr_gone = eng.act & (eng.k != 0) & ~(rd.valid & rd.first)
        mi = Signal(name=f"f_i{i}_mid")
        mo = Signal(range(n), name=f"f_i{i}_mid_out")
        rem = Signal(5, name=f"f_i{i}_mid_rem")
        vc = Signal(2, name=f"f_i{i}_mid_vc")
        m.d.comb += [
            mi.eq(data_pending | hdr_gone),
            mo.eq(Mux(data_pending, rd.dst, eng.dst)),
            rem.eq(Mux(data_pending & rd.last, 1, Mux(data_pending, eng.nb - eng.k + 2, eng.nb - eng.k + 1))),
            vc.eq(Mux(data_pending, rd.vc, eng.vc)),
        ]
        mid.append(mi)
        mid_out.append(mo)
        mid_rem.append(rem)
        mid_vc.append(vc)
        # the engine has loaded a packet for output o and not issued its header yet
        loading.append([eng.act & (eng.k == 0) & (eng.dst == o) for o in range(n)])
        pend.append([(rd.valid & rd.first & (rd.dst == o)) | loading[i][o] for o in range(n)])
        with m.If(mi):
            m.d.comb += Assert(rem != 0)
    for o, (y, chk) in enumerate(zip(outputs, checkers, strict=True)):
        st = y.state
        # a matched packet whose header has not left belongs to the output's owner or next packet
        for i, x in enumerate(inputs):
            with m.If(pend[i][o]):
                m.d.comb += Assert(st.busy & ((st.owner == i) | (st.nxt_valid & (st.nxt == i))))
            # a beat for o in the read register and the next packet for o in the engine: the owner's
            # last beat, followed by the owner's next packet
            with m.If(x.rd.valid & (x.rd.dst == o) & loading[i][o]):
                m.d.comb += Assert((st.owner == i) & st.nxt_valid & (st.nxt == i))
        in_pkt = 0
        for i in range(n):
            here = mid[i] & (mid_out[i] == o)
            in_pkt = in_pkt | here
            with m.If(here):
                m.d.comb += [
                    Assert(chk["in_packet"]),
                    Assert(st.busy & (st.owner == i)),
                    Assert(chk["remaining"] == mid_rem[i]),
                    Assert(chk["vc"] == mid_vc[i]),
                ]
        m.d.comb += Assert(chk["in_packet"] == in_pkt)
        with m.If(st.busy):
            m.d.comb += Assert(Array(mid[i] & (mid_out[i] == o) | pend[i][o] for i in range(n))[st.owner])
        with m.If(st.nxt_valid):
            # a next packet is only matched once the owner's last beat for o waits to move
            m.d.comb += [Assert(st.busy), Assert(Array(pend[i][o] for i in range(n))[st.nxt]),
                         Assert(Array(x.rd.valid & x.rd.last & (x.rd.dst == o) for x in inputs)[st.owner])]
            # the next packet is on another VC than the one whose last beat waits (a packet on the
            # same VC is matched only with ready[v] high, when that last beat moves: it becomes the
            # owner at once)
            nxt_loading = Array(loading[i][o] for i in range(n))[st.nxt]
            nxt_vc = Mux(nxt_loading, Array(x.engine.vc for x in inputs)[st.nxt],
                         Array(x.rd.vc for x in inputs)[st.nxt])
            m.d.comb += Assert(nxt_vc != Array(x.rd.vc for x in inputs)[st.owner])
            with m.If(st.nxt == st.owner):
                m.d.comb += Assert(Array(loading[i][o] for i in range(n))[st.owner])
