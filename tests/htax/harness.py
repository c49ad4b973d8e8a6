"""cocotb harness for the HTAX crossbar: per-port sources and sinks, a scoreboard, link-rule checks.

Every port has an :class:`~sim.htax_bus.HtaxSource` on its input link and an
:class:`~sim.htax_bus.HtaxSink` on its output link, which check the link rules.  They sample and drive
at the falling clock edge (``Timing.FALLING``): the switch's ``tx.ready`` and ``rx.valid``/``rx.payload``
depend only on registers, so at the falling edge they hold their values for the coming rising edge.

Sources keep one FIFO per virtual channel and "wait for ready" (raise ``valid`` only when the VC is
ready, allowed by the link rules) or commit blindly to a VC and hold ``valid`` until the beat moves.
The scoreboard expects, per (source port, destination port, VC), the packets in the order they entered
the switch, with every beat (header, data, ``vc``/``first``/``last``) exactly as sent, and checks
HyperTransport's one rule across VCs that the switch keeps: a non-posted packet never leaves before a
posted packet of its input for its output whose header entered the switch earlier.
"""

import random
from collections import deque

from cocotb.triggers import FallingEdge, RisingEdge

from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from sim.clock import start_clock
from sim.htax_bus import HtaxSink, HtaxSource, Order, Timing
from sim.htax_packet import HtaxPacket, beat_field

# the fields of a packed beat, positions and widths from HtaxBeat (sim.htax_packet.beat_field)


def beat_vc(b):
    return beat_field(b, "vc")


def beat_last(b):
    return beat_field(b, "last")


def beat_first(b):
    return beat_field(b, "first")


def hdr_src(b):
    return beat_field(b, "word.header.src")


def hdr_dst(b):
    return beat_field(b, "word.header.dst")


def random_packet(rng, src, dst, *, cmd=None, length=None):
    """A well-formed random packet from ``src`` to ``dst``."""
    if cmd is None:
        cmd = rng.choice([HtaxCmd.WRITE, HtaxCmd.WRITE, HtaxCmd.READ, HtaxCmd.RESPONSE, HtaxCmd.ATS])
    tag = rng.randrange(32)
    if cmd == HtaxCmd.ATS:
        return HtaxPacket(HtaxCmd.ATS, src=src, dst=dst, tag=tag, ats=rng.getrandbits(64))
    if length is None:
        length = rng.randint(0 if cmd == HtaxCmd.RESPONSE else 1, 8)
    first_word = rng.randint(0, 8 - max(length, 1)) if length else rng.randint(0, 7)
    addr = (rng.getrandbits(46) << 6) | (first_word << 3)
    status = HtaxStatus.OK
    if cmd == HtaxCmd.RESPONSE and length == 0:
        status = rng.choice([HtaxStatus.OK, HtaxStatus.NO_TARGET, HtaxStatus.TARGET_ERROR])
    nwords = length if cmd == HtaxCmd.WRITE or (cmd == HtaxCmd.RESPONSE and status == HtaxStatus.OK) else 0
    pkt = HtaxPacket(cmd, src=src, dst=dst, tag=tag, addr=addr, length=length,
                     first_be=rng.randint(1, 255), last_be=rng.randint(1, 255) if length > 1 else 0,
                     status=status, data=[rng.getrandbits(64) for _ in range(nwords)])
    assert pkt.malformed_reason() is None, pkt
    return pkt


class Harness:
    """Drives all ports of a ``ports``-port HTAX instance ``dut`` through one :class:`HtaxSource` and one
    :class:`HtaxSink` per port (:mod:`sim.htax_bus`, sampling at the falling edge: the switch's
    ``ready`` and outputs come from registers), with a scoreboard.

    Sources keep one queue per VC and take the next packet from a ready VC at random (``gap``: an
    idle cycle before a beat with this probability; ``blind``: commit to a VC that is not ready).
    ``sink_ready(o, cycle)`` gives output ``o``'s ready mask per cycle (default: always ready),
    ``sink_ready2(o, cycle, ready)`` its ``ready2`` promise (default: none); the sinks keep their
    promises.  Both may be replaced before :meth:`start`.
    """

    def __init__(self, dut, ports, rng, *, gap=0.0, blind=0.0, sink_ready=None, sink_ready2=None,
                 period_ns=10):
        self.dut = dut
        self.n = ports
        self.rng = rng
        self.period_ns = period_ns
        self.sink_ready = sink_ready or (lambda o, c: 0xF)
        self.sink_ready2 = sink_ready2 or (lambda o, c, r: 0)
        rst = dut.rst
        self.sources = [HtaxSource(dut, f"ports__{i}__tx", dut.clk, rst, period_ns=period_ns, order=Order.VC,
                                   pause=gap or None, blind=blind, rng=rng, timing=Timing.FALLING,
                                   on_header=self._header_in, name=f"input {i}")
                        for i in range(ports)]
        self.sinks = [HtaxSink(dut, f"ports__{o}__rx", dut.clk, rst, period_ns=period_ns,
                               ready=lambda c, o=o: self.sink_ready(o, c),
                               ready2=lambda c, r, o=o: self.sink_ready2(o, c, r), rng=rng,
                               timing=Timing.FALLING, callback=lambda rec, o=o: self._rx_packet(o, rec),
                               name=f"output {o}")
                      for o in range(ports)]
        self.expected = {}              # (src, dst, vc) -> deque of (beats, tag)
        self.hdr_in = {}                # tag -> cycle the header entered
        self.delivered = [[] for _ in range(ports)]   # per output: (hdr cycle, beats, tag, last cycle)
        self._errors = []
        self._tags = 0

    @property
    def cycle(self):
        return self.sources[0].now()

    @property
    def in_beats(self):
        return [s.beats for s in self.sources]

    @property
    def out_beats(self):
        return [s.beats for s in self.sinks]

    @property
    def errors(self):
        return self._errors + [e for s in self.sinks for e in s.errors]

    def ready(self, i):
        """The ``ready`` mask input ``i`` of the switch shows now."""
        return self.sources[i].bus.ready.value.to_unsigned()

    def output(self, o):
        """``(valid, payload)`` output ``o`` of the switch shows now."""
        bus = self.sinks[o].bus
        return int(bus.valid.value), bus.payload.value.to_unsigned()

    async def start(self, clock=True):
        if clock:
            start_clock(self.dut.clk, self.period_ns)
        self.dut.rst.value = 1
        for m in self.sources + self.sinks:
            m.start()
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await FallingEdge(self.dut.clk)

    def stop(self):
        for m in self.sources + self.sinks:
            m.stop()

    def send(self, src, pkt, *, expect=True, expect_key=None):
        """Queue ``pkt`` (an :class:`HtaxPacket` or a list of beats) at input ``src``.

        Returns a tag that identifies the packet in :attr:`delivered` and :attr:`hdr_in`.
        """
        beats = pkt if isinstance(pkt, list) else pkt.beats()
        tag = self._tags
        self._tags += 1
        vc = beat_vc(beats[0])
        self.sources[src].send(beats, vc=vc, tag=tag)
        if expect:
            key = expect_key or (src, hdr_dst(beats[0]), vc)
            self.expected.setdefault(key, deque()).append((beats, tag))
        return tag

    def expect(self, beats, key=None):
        """Expect ``beats`` (a packet the switch itself creates, e.g. an error response)."""
        key = key or (hdr_src(beats[0]), hdr_dst(beats[0]), beat_vc(beats[0]))
        tag = self._tags
        self._tags += 1
        self.expected.setdefault(key, deque()).append((beats, tag))
        return tag

    def pending(self):
        return sum(len(q) for q in self.expected.values())

    def queued(self, src=None, vc=None):
        """Packets not yet completely sent (at input ``src``; of ``vc``: waiting, not started)."""
        if src is not None:
            return self.sources[src].queued(vc)
        return sum(s.pending() for s in self.sources)

    def _header_in(self, tag, cycle):
        self.hdr_in[tag] = cycle

    def _rx_packet(self, o, rec):
        beats = rec.beats
        hdr = beats[0]
        if hdr_dst(hdr) != o:
            self._errors.append(f"output {o} got a packet for port {hdr_dst(hdr)}")
        key = (hdr_src(hdr), o, beat_vc(hdr))
        q = self.expected.get(key)
        if not q:
            self._errors.append(f"output {o}: unexpected packet {key} {rec.packet}")
            return
        exp, tag = q.popleft()
        if exp != beats:
            self._errors.append(f"output {o}: packet {key} differs from the next expected one "
                                f"(lost, reordered or corrupted): got {[hex(b) for b in beats]} "
                                f"expected {[hex(b) for b in exp]}")
        self.delivered[o].append((rec.header_cycle, beats, tag, rec.last_cycle))
        if key[2] == HtaxVC.NONPOSTED.value and tag in self.hdr_in:
            posted = self.expected.get((key[0], o, HtaxVC.POSTED.value))
            if posted and self.hdr_in.get(posted[0][1], self.hdr_in[tag]) < self.hdr_in[tag]:
                self._errors.append(f"output {o}: a non-posted packet of input {key[0]} (header in at cycle "
                                    f"{self.hdr_in[tag]}) passed a posted packet whose header entered at "
                                    f"cycle {self.hdr_in[posted[0][1]]}")

    async def run(self, cycles=None, *, until=None, limit=200000):
        """Run ``cycles`` cycles, or until ``until()`` is true (at most ``limit`` cycles)."""
        n = 0
        while True:
            if cycles is not None and n >= cycles:
                return n
            if until is not None and until():
                return n
            if n >= limit:
                raise AssertionError(f"no progress after {limit} cycles: {self.pending()} packets "
                                     f"outstanding, {self.queued()} not sent")
            n += 1
            await FallingEdge(self.dut.clk)

    def drained(self):
        return self.queued() == 0 and self.pending() == 0

    def check(self):
        errors = self.errors
        assert not errors, "\n".join(errors[:20])


def seeded_rng(seed, salt=0):
    r = random.Random(seed * 1000003 + salt)
    return r
