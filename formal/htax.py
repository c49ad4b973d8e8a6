# amaranth: UnusedElaboratable=no
"""Formal proofs for the HTAX crossbar (``make formal UNIT=htax``), on 2-port switches with tiny buffers.

The properties are the switches' own: every block states its invariants under ``platform ==
"formal"`` (:mod:`rtl.htax`), and each switch states the contract of its outputs
(:func:`rtl.htax.interface.output_contract`).  This file only builds the environment: inputs that obey
the link rules of :mod:`rtl.common.htax_rules` with malformed headers allowed, and sinks that refuse
VCs at random while keeping their ``ready2`` promise (:func:`~rtl.common.htax_rules.sink_rules`).

* ``links`` (k-induction, depth 8): :class:`~rtl.htax.Htax`.  Per input, packets taken in (stored
  headers and error responses) minus headers that left equals the packets still waiting for their
  header to leave (:class:`~rtl.htax.direct_input.HtaxDirectInput`): no packet is lost, duplicated or
  created.  The output links obey the link rules and the fresh-``ready`` rule, every header leaves
  well formed, on its VC and at the port it names (the switch ties each output's rule checker to the
  read engines and the outputs' owners).  The slot accounting matches the slots and a header taken in
  always finds a free slot (:class:`~rtl.htax.buffer.HtaxInputBuffer`); a VC with a free reserved slot
  is ready whatever the other VCs hold, and the non-posted VC whenever its reserved slot is free and
  none of the input's own error responses waits (:class:`~rtl.htax.accounting.HtaxAccounting`); the
  age matrix orders every queue, a slot's header register agrees with its record
  (:class:`~rtl.htax.slots.HtaxSlots`); the queue counters count the waiting packets; the read engine
  reads an occupied slot with its record and never reads the address the data memory writes in the
  same cycle (the memories' ``no_rw_check``).
* ``pipelined`` (bounded, 13 cycles): :class:`~rtl.htax.HtaxPipelined` with 9-beat output buffers: the
  same output contract, never more headers out than in, and every invariant its blocks state: those
  of the shared input blocks above (but the reservation rule and the queue counts, which differ with
  the registered ``ready`` and the bookings) and the registered copies of the pipelined blocks (the
  lowest free slot, the request flags, the class flags, the read engine's "next word stored" and
  "next beat last" terms, the look-ahead and remaining-beat registers, ``can_book``, the released-slot
  one-hot, the write and skid registers, the inputs' ``sel`` registers, the one-hot copies of ``wsel``
  and ``obk_in``), the head lookup equal to a search of the current slots, no registered grant of a
  booked output, and every output buffer's pointers, "not empty" flag and free space against a count
  of its beats.  Not k-induction: the invariants of the pipelined matching are not written
  (``docs/htax.md``).
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assume, Elaboratable, Fragment, Module

from rtl.common.htax import MAX_DATA_WORDS
from rtl.common.htax_rules import link_rules, sink_rules
from rtl.htax import Htax, HtaxPipelined
from sim.formal import Proof


class HtaxEnvironment(Elaboratable):
    """``dut``, elaborated for the platform ``"formal"`` (so its blocks add their invariants), with
    every input link driven by a rule-abiding source and every output link by a random sink."""

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = Fragment.get(self.dut, "formal")
        for i, port in enumerate(self.dut.ports):
            m.d.comb += [
                port.tx.valid.eq(AnySeq(1)),
                port.tx.payload.as_value().eq(AnySeq(len(port.tx.payload.as_value()))),
                port.rx.ready.eq(AnySeq(4)),
                port.rx.ready2.eq(AnySeq(4)),
            ]
            sink_rules(m, port.rx, Assume, name=f"sink{i}")
            link_rules(m, port.tx, Assume, well_formed=False, name=f"in{i}")
        return m


def proofs(cfg):
    yield Proof("links", HtaxEnvironment(Htax(ports=2, slots_per_vc=1, shared_slots=1, counter_bits=2)),
                mode="prove", depth=8)
    # depth 13: the 14th step alone took over 40 minutes with the header registers (steps 0-12 about
    # 13 minutes on a busy machine), and still over 15 with the headers in the data memory
    yield Proof("pipelined", HtaxEnvironment(HtaxPipelined(ports=2, slots_per_vc=1, shared_slots=1, counter_bits=2,
                                                           out_depth=MAX_DATA_WORDS + 1)),
                mode="bmc", depth=13)
