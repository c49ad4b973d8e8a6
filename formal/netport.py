# amaranth: UnusedElaboratable=no
"""Formal proofs for the network port (``python -m fpga.formal --unit netport``), bounded from reset.

``streams``: a :class:`~rtl.netport.NetworkPort` with two unit streams in (one per message class) and
two out (VELO, RMA completer), two destination nodes. The environment drives every input stream freely
within the stream rules -- valid and payload hold until the transfer; packets of at most
:data:`~rtl.common.net.MAX_PACKET_BEATS` beats, ``first`` on the first beat -- with any fixed node id
and any backpressure. Headers are free (any unit, node, length, malformed or not) but for the bits the
port only copies or overwrites (24 and up: ``src_node``, ``hops``, ``specific``), held at zero.
Asserted: every output stream (the crossbar port's VCs, the units' streams) obeys the same rules
(:mod:`rtl.common.stream_rules`). ``streams_reach`` (cover) shows the bound is not vacuous: packets of
at least two beats leave whole towards the crossbar and towards a unit.
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module

from rtl.common.net import MAX_PACKET_BEATS, NODE_BITS, NetClass, NetUnit
from rtl.common.stream_rules import packet_length_rule, stream_rules
from rtl.netport import NetworkPort
from sim.formal import Proof


class NetportStreams(Elaboratable):
    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = NetworkPort(sources=(NetClass.REQUEST, NetClass.RESPONSE),
                                             sinks=(NetUnit.VELO, NetUnit.RMA_COMPLETER), entries=2)
        # the node id as the register file holds it: any, fixed
        m.d.comb += dut.node_id.eq(AnyConst(NODE_BITS))
        inputs = [(f"fu_tx{k}", s, MAX_PACKET_BEATS) for k, s in enumerate(dut.fu_tx)]
        inputs += [(f"xbar_i{v}", s, MAX_PACKET_BEATS) for v, s in enumerate(dut.xbar_i)]
        outputs = [(f"fu_rx{k}", s, MAX_PACKET_BEATS) for k, s in enumerate(dut.fu_rx)]
        outputs += [(f"xbar_o{v}", s, MAX_PACKET_BEATS) for v, s in enumerate(dut.xbar_o)]
        for name, s, beats in inputs:
            m.d.comb += [s.valid.eq(AnySeq(1)), s.payload.as_value().eq(AnySeq(len(s.payload.as_value())))]
            # bits 24 and up (a header's src_node, hops and specific fields) are only copied or
            # overwritten: held at zero, they shrink the solver's problem
            m.d.comb += Assume(s.payload.data[24:] == 0)
            stream_rules(m, s, Assume, name=name)
            packet_length_rule(m, s, Assume, max_beats=beats, name=name)
        for name, s, beats in outputs:
            m.d.comb += s.ready.eq(AnySeq(1))
            stream_rules(m, s, Assert, name=name)
            packet_length_rule(m, s, Assert, max_beats=beats, name=name)
        # not vacuous: a packet leaves whole towards the crossbar and towards a unit within the bound
        for s in (dut.xbar_o[0], dut.fu_rx[0]):
            m.d.comb += Cover(s.valid & s.ready & s.payload.last & ~s.payload.first)
        return m


def proofs(cfg):
    yield Proof("streams", NetportStreams(), mode="bmc", depth=14)
    yield Proof("streams_reach", NetportStreams(), mode="cover", depth=14)
