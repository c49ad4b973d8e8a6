# amaranth: UnusedElaboratable=no
"""Formal proofs for the link port (``make formal``; ``python -m fpga.formal --unit link``).

Two link ports on a small configuration (64-bit phits, one-beat flits, a 2-flit replay buffer with
2-bit sequence numbers, four VCs with 4-beat receive buffers, a 12-cycle replay timer) joined by two one-cycle
channels that the solver may corrupt: up to ``ERRORS`` events in all, each an inverted control bit
of a phit or a lost phit (IDLE instead).  Data-bit errors are left to the CRC, whose detection is
checked against the published algorithm in tests/link/test_link_unit.py; with them the solver has to
refute CRC collisions and did not finish depth 13 in 15 minutes.  Port ``a`` sends on one VC, which the
solver chooses (``AnyConst``), a stream of two-beat packets (network header with ``payload_words =
1``, one payload word) whose words count up, with an arbitrary ``valid`` that
obeys the stream rules; port ``b``'s sink of that VC takes beats at arbitrary times.  Asserted at every
cycle up to the depth:

- every beat ``b`` delivers is the next one ``a`` accepted: nothing lost, duplicated, reordered
  or corrupted (``delivery``), with the framing (``kind``/``first``/``last``) regenerated correctly;
- nothing is delivered that was not sent, nor on another VC; no protocol error counter moves; the
  stream rules hold on the delivering side.

``recovery`` (cover) shows the bound is not vacuous: a lost or damaged flit that the receiver
counted, and a packet delivered after it.

``streams``: the same two ports joined by error-free one-cycle channels, ``a`` sending to ``b`` on
every VC.  The environment drives every ``tx`` stream of ``a`` freely within the stream rules -- valid and payload
hold until the transfer; packets of at most :data:`~rtl.common.net.MAX_PACKET_BEATS` beats, ``first``
on the first beat -- with any lengths in the headers (malformed or not; the other data bits, which the link only
copies, held at zero) and any backpressure on every ``rx`` stream of ``b``.  Asserted: every ``rx``
stream obeys the same rules (:mod:`rtl.common.stream_rules`; the link regenerates the framing from
the headers).  ``streams_reach`` (cover) shows the bound is not vacuous: a packet delivered whole.
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Array, Assert, Assume, Cover, Elaboratable, Module, Mux, Signal

from rtl.common.net import MAX_PACKET_BEATS, NetBeatKind, NetHeader
from rtl.common.stream_rules import packet_length_rule, stream_rules
from rtl.link import LinkPort, PhitCtl
from sim.formal import Proof

SMALL = dict(phit_bits=64, flit_phits=3, replay_flits=2, vcs=4, rx_buffer_beats=4, counter_bits=4)
ERRORS = 2
TIMEOUT = 12


class LinkDelivery(Elaboratable):
    def __init__(self, *, errors=ERRORS):
        self.errors = errors

    def elaborate(self, platform):
        m = Module()
        m.submodules.a = a = LinkPort(**SMALL)
        m.submodules.b = b = LinkPort(**SMALL)
        W, vcs = a.params.phit_bits, a.params.vcs
        for port in (a, b):
            m.d.comb += [port.replay_timeout.eq(TIMEOUT), port.max_replays.eq(15), port.retrain.eq(0)]
        vc = Signal(range(vcs))         # the VC the traffic takes, any
        m.d.comb += vc.eq(AnyConst(range(vcs)))
        for v in range(vcs):
            m.d.comb += [b.tx[v].valid.eq(0), a.rx[v].ready.eq(1), Assert(a.rx[v].valid == 0)]

        used = Signal(range(self.errors + 2))
        corrupted = Signal()
        for src, dst in ((a, b), (b, a)):
            hit = AnySeq(1)
            drop = AnySeq(1)
            # Data-bit errors are the CRC's job (tests check it against the published algorithm);
            # here the solver inverts a control bit or loses a whole phit, which keeps it tractable.
            bit = AnySeq(1)
            phit = Signal(W)
            ctl = Signal(PhitCtl)
            m.d.comb += [phit.eq(src.tx_phit), ctl.eq(src.tx_ctl)]
            with m.If(hit & (used < self.errors)):
                with m.If(drop):
                    m.d.comb += [phit.eq(0), ctl.eq(PhitCtl.IDLE)]
                with m.Else():
                    m.d.comb += ctl.eq(src.tx_ctl.as_value() ^ (1 << bit))
            m.d.sync += [dst.rx_phit.eq(phit), dst.rx_ctl.eq(ctl)]
            m.d.comb += Assume(~hit | (used < self.errors))
            if src is a:
                hit_ab = hit
            else:
                hit_ba = hit
        m.d.sync += used.eq(used + hit_ab + hit_ba)
        with m.If(hit_ab):
            m.d.sync += corrupted.eq(1)

        # Source: beat n carries n in bits 63:56; beat 0 of each two-beat packet is its network header
        # (payload_words = 1, command_words = 0; n lands in the `specific` field), beat 1 its payload
        # word.
        header = NetHeader.as_shape().const({"payload_words": 1}).as_value()
        kinds = (NetBeatKind.HEADER, NetBeatKind.PAYLOAD)

        def word(n, phase):
            return Mux(phase == 0, header, 0) | (n << 56)

        sent = Signal(8)
        s_phase = Signal(range(2))
        src = a.tx[0].signature.flip().create()       # the stream into a.tx[vc]
        for v in range(vcs):
            m.d.comb += [a.tx[v].valid.eq(src.valid & (vc == v)), a.tx[v].payload.eq(src.payload)]
            with m.If(vc == v):
                m.d.comb += src.ready.eq(a.tx[v].ready)
        valid = AnySeq(1)
        held = Signal()
        m.d.comb += [src.valid.eq(valid | held), src.payload.data.eq(word(sent, s_phase)),
                     src.payload.last.eq(s_phase == 1), src.payload.first.eq(s_phase == 0),
                     src.payload.kind.eq(NetBeatKind.HEADER)]
        m.d.sync += held.eq(src.valid & ~src.ready)
        with m.If(src.valid & src.ready):
            m.d.sync += [sent.eq(sent + 1), s_phase.eq(~s_phase)]

        # Sink and scoreboard.
        got = Signal(8)
        g_phase = Signal(range(2))
        snk = b.rx[0].signature.create()               # the stream out of b.rx[vc]
        ready = AnySeq(1)
        for v in range(vcs):
            m.d.comb += b.rx[v].ready.eq(Mux(vc == v, ready, 1))
            with m.If(vc == v):
                m.d.comb += [snk.valid.eq(b.rx[v].valid), snk.payload.eq(b.rx[v].payload)]
            with m.Else():
                m.d.comb += Assert(b.rx[v].valid == 0)
        m.d.comb += snk.ready.eq(ready)
        with m.If(snk.valid & snk.ready):
            m.d.sync += [got.eq(got + 1), g_phase.eq(~g_phase)]
            m.d.comb += [
                Assert(snk.payload.data == word(got, g_phase)),
                Assert(got != sent),
                Assert(snk.payload.first == (g_phase == 0)),
                Assert(snk.payload.last == (g_phase == 1)),
                Assert(snk.payload.kind.as_value() == Array(k.value for k in kinds)[g_phase]),
            ]
        m.d.comb += [Assert(a.protocol_errors == 0), Assert(b.protocol_errors == 0),
                     Assert(a.link_error == 0)]
        # stream rule on the delivering side: valid and payload hold until ready
        was_waiting = Signal()
        last_payload = Signal.like(snk.payload.as_value())
        m.d.sync += [was_waiting.eq(snk.valid & ~snk.ready), last_payload.eq(snk.payload.as_value())]
        with m.If(was_waiting):
            m.d.comb += [Assert(snk.valid), Assert(snk.payload.as_value() == last_payload)]
        m.d.comb += Cover(corrupted & (b.crc_errors != 0) & (got >= 3))
        return m


class LinkStreams(Elaboratable):
    def elaborate(self, platform):
        m = Module()
        m.submodules.a = a = LinkPort(**SMALL)
        m.submodules.b = b = LinkPort(**SMALL)
        for port, peer in ((a, b), (b, a)):
            m.d.comb += [port.replay_timeout.eq(TIMEOUT), port.max_replays.eq(15), port.retrain.eq(0)]
            m.d.sync += [peer.rx_phit.eq(port.tx_phit), peer.rx_ctl.eq(port.tx_ctl)]
        for v in range(a.params.vcs):
            i, o = a.tx[v], b.rx[v]
            m.d.comb += [i.valid.eq(AnySeq(1)), i.payload.as_value().eq(AnySeq(len(i.payload.as_value()))),
                         o.ready.eq(AnySeq(1)), b.tx[v].valid.eq(0), a.rx[v].ready.eq(1)]
            # only a header's lengths (bits 18..23) steer the link; the other data bits are copied
            # and protected by the CRC: held at zero, they shrink the solver's problem
            m.d.comb += Assume((i.payload.data & ~(0x3F << 18)) == 0)
            stream_rules(m, i, Assume, name=f"tx{v}")
            packet_length_rule(m, i, Assume, max_beats=MAX_PACKET_BEATS, name=f"tx{v}")
            stream_rules(m, o, Assert, name=f"rx{v}")
            packet_length_rule(m, o, Assert, max_beats=MAX_PACKET_BEATS, name=f"rx{v}")
        # not vacuous: a packet's last beat is delivered within the bound
        m.d.comb += Cover(b.rx[0].valid & b.rx[0].ready & b.rx[0].payload.last)
        return m


def proofs(cfg):
    yield Proof("delivery", LinkDelivery(), mode="bmc", depth=22)
    yield Proof("recovery", LinkDelivery(), mode="cover", depth=32)
    yield Proof("streams", LinkStreams(), mode="bmc", depth=18)
    yield Proof("streams_reach", LinkStreams(), mode="cover", depth=18)
