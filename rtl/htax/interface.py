"""The HTAX's interface, shared by both switches: parameters, members, and the contract of its outputs."""

from amaranth.hdl import Assert, Signal
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxPortSignature, malformed
from rtl.common.htax_rules import data_beats, link_rules
from rtl.common.params import check_int

__all__ = ["check_switch_parameters", "switch_members", "output_contract"]


def check_switch_parameters(*, ports, slots_per_vc, shared_slots, counter_bits):
    check_int("ports", ports, 2, 16)
    check_int("slots_per_vc", slots_per_vc, 1, 8)
    check_int("shared_slots", shared_slots, 0, 32)
    check_int("counter_bits", counter_bits, 1, 32)


def switch_members(ports, counter_bits):
    """The members of either switch (``docs/htax.md``, "Interface")."""
    return {
        "ports": In(HtaxPortSignature()).array(ports),
        "dropped_no_target": Out(counter_bits),
        "dropped_malformed": Out(counter_bits),
    }


def output_contract(m, rx, port):
    """The switch's promise on output link ``rx`` of port ``port``, as formal assertions: the link
    rules of :func:`rtl.common.htax_rules.link_rules` (every header well formed); every header for this
    port and on its beat's VC; and the fresh-``ready`` rule: no header in the cycle after a beat of its
    VC moved unless the sink raised ``ready2`` for that beat (the sink keeps that promise: the
    environment's :func:`~rtl.common.htax_rules.sink_rules`).

    Returns the rule checker's registers (``in_packet``, ``remaining``, ``vc``, ``held``), which a
    k-induction proof ties to the switch's state.
    """
    checker = {}
    link_rules(m, rx, Assert, well_formed=True, name=f"out{port}", state=checker)
    hdr = rx.payload.word.header
    with m.If(rx.valid & rx.payload.first):
        m.d.comb += [
            Assert(~malformed(hdr)),
            Assert(hdr.dst == port),
            Assert(hdr.vc.as_value() == rx.payload.vc.as_value()),
            Assert(rx.payload.last == (data_beats(hdr) == 0)),
        ]
    # the beat that moved in the last cycle, its VC, and whether the sink promised room after it
    moved = Signal(name=f"f_out{port}_moved")
    moved_vc = Signal(2, name=f"f_out{port}_moved_vc")
    promised = Signal(name=f"f_out{port}_promised")
    vc = rx.payload.vc.as_value()
    m.d.sync += [moved.eq(rx.transfer()), moved_vc.eq(vc), promised.eq(rx.ready2.bit_select(vc, 1))]
    with m.If(moved & ~promised & rx.valid & rx.payload.first):
        m.d.comb += Assert(vc != moved_vc)
    return checker
