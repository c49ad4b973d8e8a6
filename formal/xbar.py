# amaranth: UnusedElaboratable=no
"""Formal proofs for the network crossbar (``make formal UNIT=xbar``), on a crossbar of one link port and
one network port with two VCs (one message class) and 12-beat VC queues, bounded from reset.

In its first two cycles the environment writes any two route table entries (destination nodes 0 and 1),
and any dateline rule of the link port is fixed; from then on it drives every input stream freely within
the stream rules (valid and payload hold until the transfer; packets of at most 12 beats, ``first`` on
the first beat), with any headers (any destination, in or beyond the table, any hop count; the
``src_node`` and ``specific`` bits, which the crossbar only copies, held at zero) and any backpressure
at the outputs.  The blocks' own contracts (stated in ``rtl/xbar/*.py`` under ``platform ==
"formal"``) are checked: every output beat goes to one output only and to the one its packet was
granted (no loss, no duplication), a packet's header leaves with the hop count of the route step of
its header for the port and VC that step names, a packet
keeps its message class (with four VCs), a stored beat always finds room in its VC queue, and every
output grants the requesting input it served least recently (an input that keeps requesting waits for
at most ``ports - 1`` other grants).  Here the outputs obey the stream rules and frame packets
(``first`` exactly on a first beat, at most 12 beats).
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Module, Mux, Signal

from rtl.common.net import MAX_PACKET_BEATS, NetHeader, PortRoute, RouteEntry
from rtl.common.stream_rules import packet_length_rule, stream_rules
from rtl.xbar import Crossbar
from sim.formal import Proof


class XbarProperties(Elaboratable):
    def __init__(self, *, vcs):
        self.vcs = vcs

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = Crossbar(link_ports=1, net_ports=1, nodes=2, vcs=self.vcs, depth=MAX_PACKET_BEATS)
        # the route table: any two entries, written in the first two cycles; any fixed dateline rule
        written = Signal(range(3))
        size = RouteEntry.as_shape().size
        with m.If(written != 2):
            m.d.sync += written.eq(written + 1)
        m.d.comb += [dut.table_w_en.eq(written != 2), dut.table_w_addr.eq(written[0]), dut.table_w_be.eq(0xFF),
                     dut.table_w_data.as_value().eq(Mux(written[0], AnyConst(size), AnyConst(size))),
                     dut.port_routes[0].as_value().eq(AnyConst(PortRoute.as_shape().size))]
        hdr = NetHeader.as_shape()
        for p, port in enumerate(dut.ports):
            for v in range(self.vcs):
                i, o = port.i[v], port.o[v]
                m.d.comb += [i.valid.eq(AnySeq(1)), i.payload.as_value().eq(AnySeq(len(i.payload.as_value()))),
                             o.ready.eq(AnySeq(1))]
                # a header's src_node and specific bits are only copied: held at zero, they shrink the
                # solver's problem; no packet before the table is written
                src, spec = hdr["src_node"], hdr["specific"]
                m.d.comb += [Assume(i.payload.data[src.offset:src.offset + src.width] == 0),
                             Assume(i.payload.data[spec.offset:] == 0)]
                with m.If(written != 2):
                    m.d.comb += Assume(~i.valid)
                stream_rules(m, i, Assume, name=f"i{p}_{v}")
                packet_length_rule(m, i, Assume, max_beats=MAX_PACKET_BEATS, name=f"i{p}_{v}")
                stream_rules(m, o, Assert, name=f"o{p}_{v}")
                packet_length_rule(m, o, Assert, max_beats=MAX_PACKET_BEATS, name=f"o{p}_{v}")
        return m


def proofs(cfg):
    yield Proof("contracts", XbarProperties(vcs=2), mode="bmc", depth=16)
    yield Proof("classes", XbarProperties(vcs=4), mode="bmc", depth=10)
