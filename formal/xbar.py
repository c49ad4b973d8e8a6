# amaranth: UnusedElaboratable=no
"""Formal proofs for the network crossbar (``make formal UNIT=xbar``), on a crossbar of one link port and
one network port with two VCs (one message class) and 13-beat VC queues, bounded from reset.

The environment drives every input stream freely within the stream rules (valid and payload hold until
the transfer; packets of at most 13 beats, ``first`` on the first beat), with any route words (data bits
above 31, which the crossbar only copies, held at zero) and any backpressure at the outputs. The blocks'
own contracts (stated in ``rtl/xbar/*.py`` under ``platform == "formal"``) are checked: every output
beat goes to one output only and to the one its packet was granted (no loss, no duplication), a packet's
first beat leaves as the route step of its route beat for the port and VC that step names, a packet
keeps its message class (with four VCs), a stored beat always finds room in its VC queue, and every
output grants the requesting input it served least recently (an input that keeps requesting waits for
at most ``ports - 1`` other grants).  Here the outputs obey the stream rules and frame packets
(``first`` exactly on a first beat, at most 13 beats).
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Module

from rtl.common.net import MAX_PACKET_BEATS
from rtl.common.stream_rules import packet_length_rule, stream_rules
from rtl.xbar import Crossbar
from sim.formal import Proof


class XbarProperties(Elaboratable):
    def __init__(self, *, vcs):
        self.vcs = vcs

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = Crossbar(link_ports=1, net_ports=1, vcs=self.vcs, depth=MAX_PACKET_BEATS)
        for p, port in enumerate(dut.ports):
            for v in range(self.vcs):
                i, o = port.i[v], port.o[v]
                m.d.comb += [i.valid.eq(AnySeq(1)), i.payload.as_value().eq(AnySeq(len(i.payload.as_value()))),
                             o.ready.eq(AnySeq(1))]
                # the data bits above 31 are only copied (the route character, the next one and the
                # header's lengths lie below): held at zero, they shrink the solver's problem
                m.d.comb += Assume(i.payload.data[32:] == 0)
                stream_rules(m, i, Assume, name=f"i{p}_{v}")
                packet_length_rule(m, i, Assume, max_beats=MAX_PACKET_BEATS, name=f"i{p}_{v}")
                stream_rules(m, o, Assert, name=f"o{p}_{v}")
                packet_length_rule(m, o, Assert, max_beats=MAX_PACKET_BEATS, name=f"o{p}_{v}")
        return m


def proofs(cfg):
    yield Proof("contracts", XbarProperties(vcs=2), mode="bmc", depth=16)
    yield Proof("classes", XbarProperties(vcs=4), mode="bmc", depth=10)
