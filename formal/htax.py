"""Formal proofs for the HTAX crossbar (``make formal UNIT=htax``), on a 2-port switch with tiny buffers.

* ``conservation`` (k-induction): per input port, packets taken in (stored headers plus generated error
  responses) minus headers that left on any output equals the packets still waiting for their header
  to leave, computed from the slot occupancy and the read engine: no packet is lost, duplicated or
  created, and buffer occupancy is accounted for exactly.  Every header an output offers is well
  formed, addressed to that output and on the VC of its beat.
* ``links`` (bounded, from reset): the link rules of :mod:`rtl.common.htax_rules` hold on every output
  while the inputs obey them (with malformed headers allowed) and sinks refuse VCs at random.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Module, Signal

from fpga.formal import Proof
from rtl.common.htax import MAX_DATA_WORDS, malformed
from rtl.common.htax_rules import data_beats, link_rules
from rtl.htax import Htax


class HtaxProperties(Elaboratable):
    def __init__(self, *, ports=2, slots_per_vc=1, links=True, conservation=True):
        self.ports = ports
        self.slots_per_vc = slots_per_vc
        self.links = links
        self.conservation = conservation
        self._MustUse__silence = True       # proofs(cfg) builds every proof; --proof may run only some

    def elaborate(self, platform):
        m = Module()
        n, s = self.ports, self.slots_per_vc
        dut = Htax(ports=n, slots_per_vc=s, counter_bits=2)
        dut._MustUse__silence = True        # elaborated here directly, to reach its internal state
        m.submodules.dut = dut.elaborate(platform)
        st = dut._state
        for i in range(n):
            port = dut.port(i)
            m.d.comb += [
                port.tx.valid.eq(AnySeq(1)),
                port.tx.payload.as_value().eq(AnySeq(len(port.tx.payload.as_value()))),
                port.rx.ready.eq(AnySeq(4)),
            ]
            link_rules(m, port.tx, Assume, well_formed=False, name=f"in{i}")
            if self.links:
                link_rules(m, port.rx, Assert, well_formed=True, name=f"out{i}")

        if not self.conservation:
            return m

        for o in range(n):
            rx = dut.port(o).rx
            hdr = rx.payload.word.header
            with m.If(rx.valid & rx.payload.first):
                m.d.comb += [
                    Assert(~malformed(hdr)),
                    Assert(hdr.dst == o),
                    Assert(hdr.vc.as_value() == rx.payload.vc.as_value()),
                    Assert(rx.payload.last == (data_beats(hdr) == 0)),
                ]

        for i, x in enumerate(st["inputs"]):
            # consistency of the slots, the read engine and the read register
            for k, occ in enumerate(x.occ):
                with m.If(occ):
                    h = x.shdr[k]
                    m.d.comb += [
                        Assert(~malformed(h)),
                        Assert(h.dst == x.sdst[k]),
                        Assert(h.vc.as_value() == k // s),
                        Assert(data_beats(h) == x.snb[k]),
                    ]
            with m.If(x.act):
                m.d.comb += [
                    Assert(x.ek <= x.enb),
                    Assert(x.enb <= MAX_DATA_WORDS),
                ]
                for k, occ in enumerate(x.occ):
                    with m.If(x.eslot == k):
                        m.d.comb += [Assert(occ), Assert(x.enb == x.snb[k]), Assert(x.edst == x.sdst[k]),
                                     Assert(x.evc == k // s)]
                m.d.comb += Assert(x.eslot < len(x.occ))
            with m.If(x.rd_valid & x.rd_first):
                m.d.comb += [
                    Assert(~malformed(x.rd_hdr)),
                    Assert(x.rd_hdr.dst == x.rd_dst),
                    Assert(x.rd_hdr.vc.as_value() == x.rd_vc),
                    Assert(x.rd_last == (data_beats(x.rd_hdr) == 0)),
                ]
                with m.If(~x.rd_last):
                    m.d.comb += [Assert(x.act), Assert(x.ek == 1), Assert(x.edst == x.rd_dst),
                                 Assert(x.enb != 0)]
                with m.Else():
                    m.d.comb += Assert(~x.act | (x.ek == 0))
            with m.If(x.act & (x.ek != 0)):
                m.d.comb += Assert(x.edst == x.rd_dst)
                # the read register holds a beat of this packet (never its last) or nothing
                m.d.comb += Assert(~x.rd_valid | ~x.rd_last)
                with m.If(x.rd_valid & ~x.rd_first):
                    m.d.comb += Assert(x.ek >= 2)

            # the conservation law
            width = 6
            taken = Signal(width, name=f"in{i}_taken")
            left = Signal(width, name=f"in{i}_left")
            with m.If(x.alloc):
                m.d.sync += taken.eq(taken + 1)
            header_left = 0
            for o in range(n):
                rx = dut.port(o).rx
                header_left = header_left | (st["out_move"][o] & rx.payload.first & st["busy"][o]
                                             & (st["owner"][o] == i))
            with m.If(header_left):
                m.d.sync += left.eq(left + 1)
            waiting = Signal(width, name=f"in{i}_waiting")
            m.d.comb += waiting.eq(sum(o.as_unsigned() for o in x.occ)
                                   - (x.act & (x.ek != 0) & ~(x.rd_valid & x.rd_first))
                                   + (x.rd_valid & x.rd_first & x.rd_last))
            m.d.comb += Assert(((taken - left)[:width]) == waiting)
        return m


def proofs(cfg):
    yield Proof("conservation", HtaxProperties(links=False), mode="prove", depth=6)
    yield Proof("links", HtaxProperties(conservation=False), mode="bmc", depth=24)
