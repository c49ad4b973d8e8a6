"""Formal proofs for the HTAX scratch target (``make formal UNIT=scratch``).

The environment drives the receive link with any sequence that obeys the link rules (headers may be
malformed: the target must cope), and any per-VC ``ready`` on the transmit link.  Proved for the
first 24 cycles after reset (bounded model check): the transmit link obeys every link rule of
``rtl.common.htax`` (valid/payload hold until the beat moves, framing matches the header's length,
every header is well formed; stated by :class:`sim.tops.scratch.ScratchTransmit` with its own
invariants) and the receive link keeps the ``ready2`` promise.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Module

from rtl.common.htax_rules import link_rules, sink_rules
from sim.formal import Proof
from sim.tops.scratch import HtaxScratch


class _TxRules(Elaboratable):
    def __init__(self, **kw):
        self.dut = HtaxScratch(**kw)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        rx, tx = dut.htax.rx, dut.htax.tx
        m.d.comb += [
            rx.valid.eq(AnySeq(1)),
            rx.payload.as_value().eq(AnySeq(len(rx.payload.as_value()))),
            tx.ready.eq(AnySeq(4)),
        ]
        link_rules(m, rx, Assume, well_formed=False, name="rx")
        sink_rules(m, rx, Assert, name="rx")
        return m


def proofs(cfg):
    # Bounded: 24 cycles from reset cover every packet kind the target sends (a response of 8 words,
    # an MSI write, DMA reads and writes after a register-programmed start).  k-induction would also
    # need invariants over the stored request and DMA registers, which this test target does not state.
    yield Proof("tx_link_rules", _TxRules(words=8, max_outstanding=2), mode="bmc", depth=24)
