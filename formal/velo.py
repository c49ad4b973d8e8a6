# amaranth: UnusedElaboratable=no
"""Formal proofs for VELO (``python -m fpga.formal --unit velo``): the rule "a slot's status word and
its payload in one posted WRITE" (dissertation ch. 7.4, ``docs/velo.md``), bounded from reset.

One contract, :func:`slot_write_rule`: the status word of a slot is the first data beat of a posted
WRITE whose length is one more than the slot's payload words, and those payload words follow it in the
same WRITE.  The environment drives every input freely within the stream rules; the outputs are
asserted to obey the HTAX link rules (:func:`rtl.common.htax_rules.link_rules`) and the contract.

* ``writer``: :class:`~rtl.velo.writer.VeloSlotWriter`, the block that joins status word and payload.
  Any plans (one or two slots, 1..7 words in the first) and any payload words: every WRITE goes to the
  planned slot address with the planned status word, then exactly the next words of ``words``, each in
  the cycle it leaves ``words``; the plan is released with the last beat of its last slot.
* ``completer``: :class:`~rtl.velo.completer.VeloCompleter` (planner, payload queue, writer), with any
  mailbox look-up data (so any packet may be planned, rejected or discarded) and any network packets
  whose payload words carry their packet's ``src_node`` and their word index in the message: every
  payload word of a WRITE carries the ``src_node`` and the word index its status word names.  A
  status word is never joined to another packet's payload, whatever packets were dropped before it.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable, Module, Signal

from rtl.common.htax import HtaxCmd, HtaxVC
from rtl.common.htax_rules import link_rules
from rtl.common.net import MAX_PAYLOAD_WORDS, NODE_BITS, NetBeatKind, NetHeader
from rtl.common.stream_rules import packet_length_rule, stream_rules
from rtl.velo.completer import VeloCompleter
from rtl.velo.formats import SLOT_WORDS, VeloNetFields, VeloStatus
from rtl.velo.writer import VeloSlotWriter
from sim.formal import Proof

VPIDS = 2
HTAX_PORT, HOST_PORT = 1, 0


def slot_write_rule(m, tx, check, *, htax_port, host_port, name="slot"):
    """Every WRITE on ``tx`` is one slot: header (posted WRITE from ``htax_port`` to ``host_port``,
    length 1 + the status word's ``words``), the status word (never zero), the payload words.

    Returns ``(phase, status, index)``: ``phase`` 0 before a header, 1 before the status word, 2 in
    the payload; ``status`` the WRITE's status word (valid in phase 2); ``index`` the payload words of
    the WRITE that have left."""
    beat = tx.payload
    hdr = beat.word.header
    phase = Signal(2, name=f"{name}_phase")
    status = Signal(VeloStatus, name=f"{name}_status")
    length = Signal(4, name=f"{name}_length")
    index = Signal(range(SLOT_WORDS), name=f"{name}_index")
    in_status = VeloStatus(beat.word.data)
    with m.If(tx.valid):
        with m.Switch(phase):
            with m.Case(0):
                m.d.comb += [check(hdr.cmd == HtaxCmd.WRITE), check(hdr.vc == HtaxVC.POSTED),
                             check(beat.vc == HtaxVC.POSTED), check(hdr.src == htax_port),
                             check(hdr.dst == host_port), check(hdr.body.mem.addr[:6] == 0)]
            with m.Case(1):
                m.d.comb += [check(beat.word.data != 0), check(in_status.words + 1 == length),
                             check(~beat.last)]
    with m.If(tx.transfer()):
        with m.Switch(phase):
            with m.Case(0):
                m.d.sync += [phase.eq(1), length.eq(hdr.body.mem.length)]
            with m.Case(1):
                m.d.sync += [phase.eq(2), status.eq(in_status), index.eq(0)]
            with m.Case(2):
                m.d.sync += index.eq(index + 1)
                with m.If(beat.last):
                    m.d.sync += phase.eq(0)
    return phase, status, index


class WriterProperties(Elaboratable):
    """:class:`VeloSlotWriter` under any plans and payload words."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = VeloSlotWriter(vpids=VPIDS, htax_port=HTAX_PORT, host_port=HOST_PORT)
        plan, words, tx = dut.plan, dut.words, dut.tx
        p = plan.payload
        m.d.comb += [plan.valid.eq(AnySeq(1)), p.as_value().eq(AnySeq(len(p.as_value()))),
                     words.valid.eq(AnySeq(1)), words.payload.eq(AnySeq(64)), tx.ready.eq(AnySeq(4))]
        stream_rules(m, plan, Assume, name="plan")
        stream_rules(m, words, Assume, name="words")
        # a plan the planner makes: 1..7 words in the first slot, 7 when there is a second one; status
        # words never zero, slot addresses slot-aligned
        m.d.comb += [Assume((p.words >= 1) & (p.words < SLOT_WORDS)), Assume(~p.two | (p.words == SLOT_WORDS - 1)),
                     Assume(p.vpid < VPIDS)]
        for i, words_i in ((0, p.words), (1, 1)):
            m.d.comb += [Assume(p.status[i].as_value() != 0), Assume(p.status[i].words == words_i),
                         Assume(p.addr[i][:6] == 0)]

        link_rules(m, tx, Assert, name="tx")
        phase, status, index = slot_write_rule(m, tx, Assert, htax_port=HTAX_PORT, host_port=HOST_PORT)
        slot = Signal()                     # the slot of the current plan that is being written
        beat = tx.payload
        with m.If(tx.valid):
            with m.Switch(phase):
                with m.Case(0):
                    m.d.comb += [Assert(plan.valid), Assert(beat.word.header.body.mem.addr == p.addr[slot])]
                with m.Case(1):
                    m.d.comb += Assert(beat.word.data == p.status[slot].as_value())
                with m.Case(2):
                    # a payload beat is the word `words` offers, and leaves with it
                    m.d.comb += [Assert(words.valid), Assert(beat.word.data == words.payload)]
        m.d.comb += Assert(words.ready == (tx.transfer() & (phase == 2)))
        end = tx.transfer() & (phase == 2) & beat.last
        m.d.comb += Assert(plan.ready == (end & (slot == p.two)))
        with m.If(end):
            m.d.sync += slot.eq(~slot & p.two)
        return m


class CompleterProperties(Elaboratable):
    """``completer`` (:class:`VeloCompleter`, or a composition with its ports, such as the broken one of
    ``tests/velo/test_slot_rule.py``) under any network packets and any mailbox data."""

    def __init__(self, completer=VeloCompleter):
        self.completer = completer

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.completer(vpids=VPIDS, htax_port=HTAX_PORT, host_port=HOST_PORT)
        rx, tx = dut.net_rx, dut.tx
        m.d.comb += [rx.valid.eq(AnySeq(1)), rx.payload.as_value().eq(AnySeq(len(rx.payload.as_value()))),
                     tx.ready.eq(AnySeq(4)), dut.enable.eq(AnySeq(VPIDS)), dut.mslt.eq(AnySeq(64)),
                     dut.balt.eq(AnySeq(40)), dut.rp.eq(AnySeq(32)), dut.wp.eq(AnySeq(32))]
        # the look-up data only decides which packets are planned: small rings at slot 0 of page 0 (the
        # 32-bit pointer arithmetic and 52-bit addresses with free upper bits made step 13 take over
        # 15 minutes; the pairing does not depend on them)
        m.d.comb += [Assume(dut.mslt == 0), Assume(dut.balt == 0), Assume(dut.rp[6:] == 0), Assume(dut.wp[6:] == 0)]
        stream_rules(m, rx, Assume, name="rx")
        count = packet_length_rule(m, rx, Assume, max_beats=1 + MAX_PAYLOAD_WORDS + 1, name="rx")
        # packets as the network port delivers them: a header, then `payload_words` payload words (a
        # few more than a slot holds, so the planner also sees too long packets); payload word k
        # carries the packet's src_node and its word index `offset + k` in the message
        beat = rx.payload
        in_hdr = NetHeader(beat.data)
        hdr = Signal(NetHeader)
        with m.If(rx.valid & rx.ready & beat.first):
            m.d.sync += hdr.eq(in_hdr)
        with m.If(rx.valid):
            with m.If(beat.first):
                # fields the pairing does not depend on are held at zero
                m.d.comb += [Assume(beat.kind == NetBeatKind.HEADER), Assume(in_hdr.command_words == 0),
                             Assume(in_hdr.dst_node == 0), Assume(in_hdr.src_node[3:] == 0),
                             Assume(VeloNetFields(in_hdr.specific).src_vpid == 0),
                             Assume(VeloNetFields(in_hdr.specific).mtt == 0),
                             Assume(in_hdr.payload_words <= MAX_PAYLOAD_WORDS + 1),
                             Assume(beat.last == (in_hdr.payload_words == 0))]
            with m.Else():
                k = count - 1
                m.d.comb += [Assume(beat.kind == NetBeatKind.PAYLOAD),
                             Assume(beat.last == (count == hdr.payload_words)),
                             Assume(beat.data[:NODE_BITS] == hdr.src_node),
                             Assume(beat.data[NODE_BITS:NODE_BITS + 3] == (VeloNetFields(hdr.specific).offset + k)[:3]),
                             Assume(beat.data[NODE_BITS + 3:] == 0)]

        link_rules(m, tx, Assert, name="tx")
        phase, status, index = slot_write_rule(m, tx, Assert, htax_port=HTAX_PORT, host_port=HOST_PORT)
        out = tx.payload.word.data
        with m.If(tx.valid & (phase == 2)):
            m.d.comb += [Assert(out[:NODE_BITS] == status.src_node),
                         Assert(out[NODE_BITS:NODE_BITS + 3] == (status.offset + index)[:3])]
        return m


def proofs(cfg):
    yield Proof("writer", WriterProperties(), mode="bmc", depth=20)
    yield Proof("completer", CompleterProperties(), mode="bmc", depth=12)
