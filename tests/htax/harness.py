"""cocotb harness for the HTAX crossbar: per-port sources and sinks, a scoreboard, link-rule checks.

One coroutine does all the work, woken once per cycle at the falling clock edge: the switch's
``tx.ready`` and ``rx.valid``/``rx.payload`` depend only on registers, so at the falling edge they hold
their values for the coming rising edge.  The harness reads them, drives the inputs (source ``valid``/
``payload``, sink ``ready``) and knows which beats move at the next rising edge without waiting for it.

Sources keep one FIFO per virtual channel and may "wait for ready" (raise ``valid`` only when the VC is
ready, allowed by the link rules) or commit blindly to a VC and hold ``valid`` until the beat moves.
The scoreboard expects, per (source port, destination port, VC), the packets in the order they entered
the switch, with every beat (header, data, ``vc``/``first``/``last``) exactly as sent.
"""

import random
from collections import deque

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from rtl.common.htax import NUM_VCS, HtaxBeat, HtaxCmd, HtaxStatus
from sim.htax_packet import HtaxPacket
from sim.layout import fields

_F = fields(HtaxBeat)
_VC_OFF = _F["vc"][0]
_FIRST_OFF = _F["first"][0]
_LAST_OFF = _F["last"][0]
_SRC_OFF = _F["word.header.src"][0]
_DST_OFF = _F["word.header.dst"][0]


def beat_vc(b):
    return (b >> _VC_OFF) & 3


def beat_last(b):
    return (b >> _LAST_OFF) & 1


def beat_first(b):
    return (b >> _FIRST_OFF) & 1


def hdr_src(b):
    return (b >> _SRC_OFF) & 0xF


def hdr_dst(b):
    return (b >> _DST_OFF) & 0xF


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
    """Drives all ports of a ``ports``-port HTAX instance ``dut``."""

    def __init__(self, dut, ports, rng, *, gap=0.0, blind=0.0, sink_ready=None, sink_ready2=None):
        self.dut = dut
        self.n = ports
        self.rng = rng
        self.gap = gap                  # probability that a source idles this cycle
        self.blind = blind              # probability that a source commits to a VC that is not ready
        # sink_ready(o, cycle) -> 4-bit mask; default: always ready
        self.sink_ready = sink_ready or (lambda o, c: 0xF)
        # sink_ready2(o, cycle, ready) -> 4-bit mask (bits outside ready are ignored); default: no promise.
        # The harness keeps the promise: after a cycle with ready2[v] in which a v beat moved, ready[v].
        self.sink_ready2 = sink_ready2 or (lambda o, c, r: 0)
        self.promised = [0] * ports
        p = [lambda i, name: getattr(dut, f"port{i}__{name}")][0]
        self.tx_valid = [p(i, "tx__valid") for i in range(ports)]
        self.tx_payload = [p(i, "tx__payload") for i in range(ports)]
        self.tx_ready = [p(i, "tx__ready") for i in range(ports)]
        self.rx_valid = [p(i, "rx__valid") for i in range(ports)]
        self.rx_payload = [p(i, "rx__payload") for i in range(ports)]
        self.rx_ready = [p(i, "rx__ready") for i in range(ports)]
        self.rx_ready2 = [p(i, "rx__ready2") for i in range(ports)]
        self.queues = [[deque() for _ in range(NUM_VCS)] for _ in range(ports)]   # (beats, tag)
        self.cur = [None] * ports       # [beats, index, vc, tag]
        self.valid = [0] * ports
        self.rx_partial = [[] for _ in range(ports)]
        self.rx_prev = [None] * ports   # payload offered and not taken last cycle
        self.cycle = 0
        self.expected = {}              # (src, dst, vc) -> deque of (beats, tag)
        self.hdr_in = {}                # tag -> cycle the header entered
        self.delivered = [[] for _ in range(ports)]   # per output: (hdr cycle, beats, tag, last cycle)
        self.errors = []
        self.in_beats = [0] * ports
        self.out_beats = [0] * ports
        self.idle_cycles = 0
        self._tags = 0

    async def start(self, clock=True):
        if clock:
            Clock(self.dut.clk, 10, unit="ns").start()
        self.dut.rst.value = 1
        for i in range(self.n):
            self.tx_valid[i].value = 0
            self.tx_payload[i].value = 0
            self.rx_ready[i].value = 0
            self.rx_ready2[i].value = 0
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await FallingEdge(self.dut.clk)

    def send(self, src, pkt, *, expect=True, expect_key=None):
        """Queue ``pkt`` (an :class:`HtaxPacket` or a list of beats) at input ``src``.

        Returns a tag that identifies the packet in :attr:`delivered` and :attr:`hdr_in`.
        """
        beats = pkt if isinstance(pkt, list) else pkt.beats()
        tag = self._tags
        self._tags += 1
        vc = beat_vc(beats[0])
        self.queues[src][vc].append((beats, tag))
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

    def queued(self):
        return sum(len(q) for qs in self.queues for q in qs) + sum(c is not None for c in self.cur)

    def step(self):
        """Called at the falling edge of every cycle: sample, drive, account for the coming edge."""
        rng = self.rng
        c = self.cycle
        # ---- sources --------------------------------------------------------------------------
        for i in range(self.n):
            cur = self.cur[i]           # [beats, index, vc, tag, holding]
            ready = None
            if cur is None:
                nonempty = [v for v in range(NUM_VCS) if self.queues[i][v]]
                if nonempty and not (self.gap and rng.random() < self.gap):
                    ready = self.tx_ready[i].value.to_unsigned()
                    ok = [v for v in nonempty if (ready >> v) & 1]
                    if not ok and self.blind and rng.random() < self.blind:
                        ok = nonempty   # commit to a VC that is not ready and hold valid
                    if ok:
                        v = rng.choice(ok)
                        beats, tag = self.queues[i][v].popleft()
                        self.cur[i] = cur = [beats, 0, v, tag, False]
            want = cur is not None and (cur[4] or cur[1] == 0 or not (self.gap and rng.random() < self.gap))
            if not want:
                if self.valid[i]:
                    self.tx_valid[i].value = 0
                    self.valid[i] = 0
                continue
            beats, idx, v = cur[0], cur[1], cur[2]
            if not cur[4]:
                self.tx_payload[i].value = beats[idx]
                if not self.valid[i]:
                    self.tx_valid[i].value = 1
                    self.valid[i] = 1
            if ready is None:
                ready = self.tx_ready[i].value.to_unsigned()
            if (ready >> v) & 1:        # the beat moves at the coming edge
                self.in_beats[i] += 1
                if idx == 0:
                    self.hdr_in[cur[3]] = c
                cur[1] = idx + 1
                cur[4] = False
                if cur[1] == len(beats):
                    self.cur[i] = None
            else:
                cur[4] = True           # valid is up: hold it and the payload until the beat moves
        # ---- sinks -------------------------------------------------------------------------------
        for o in range(self.n):
            mask = self.sink_ready(o, c) | self.promised[o]
            mask2 = self.sink_ready2(o, c, mask) & mask
            self.rx_ready[o].value = mask
            self.rx_ready2[o].value = mask2
            self.promised[o] = 0
            valid = self.rx_valid[o].value
            if not int(valid):
                if self.rx_prev[o] is not None:
                    self.errors.append(f"cycle {c}: output {o} dropped valid before the beat moved")
                    self.rx_prev[o] = None
                continue
            beat = self.rx_payload[o].value.to_unsigned()
            if self.rx_prev[o] is not None and self.rx_prev[o] != beat:
                self.errors.append(f"cycle {c}: output {o} changed payload while valid")
            if (mask >> beat_vc(beat)) & 1:
                self.promised[o] = mask2 & (1 << beat_vc(beat))
                self.rx_prev[o] = None
                self.out_beats[o] += 1
                self._rx_beat(o, beat, c)
            else:
                self.rx_prev[o] = beat
        self.cycle += 1

    def _rx_beat(self, o, beat, c):
        part = self.rx_partial[o]
        if not part:
            if not beat_first(beat):
                self.errors.append(f"cycle {c}: output {o} packet does not start with first")
            part.append((c, beat))
        else:
            if beat_first(beat):
                self.errors.append(f"cycle {c}: output {o} first inside a packet (interleaved?)")
            if beat_vc(beat) != beat_vc(part[0][1]):
                self.errors.append(f"cycle {c}: output {o} VC changes inside a packet")
            part.append((c, beat))
        if beat_last(beat):
            beats = [b for _, b in part]
            self.rx_partial[o] = []
            self._rx_packet(o, beats, part[0][0], c)

    def _rx_packet(self, o, beats, hdr_cycle, last_cycle):
        try:
            HtaxPacket.from_beats(beats)
        except Exception as e:  # framing error
            self.errors.append(f"output {o}: {e}")
        hdr = beats[0]
        if hdr_dst(hdr) != o:
            self.errors.append(f"output {o} got a packet for port {hdr_dst(hdr)}")
        key = (hdr_src(hdr), o, beat_vc(hdr))
        q = self.expected.get(key)
        if not q:
            self.errors.append(f"output {o}: unexpected packet {key} {HtaxPacket.from_beats(beats)}")
            return
        exp, tag = q.popleft()
        if exp != beats:
            self.errors.append(f"output {o}: packet {key} differs from the next expected one "
                               f"(lost, reordered or corrupted): got {[hex(b) for b in beats]} "
                               f"expected {[hex(b) for b in exp]}")
        self.delivered[o].append((hdr_cycle, beats, tag, last_cycle))

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
            self.step()
            n += 1
            await FallingEdge(self.dut.clk)

    def drained(self):
        return self.queued() == 0 and self.pending() == 0

    def check(self):
        assert not self.errors, "\n".join(self.errors[:20])


def seeded_rng(seed, salt=0):
    r = random.Random(seed * 1000003 + salt)
    return r
