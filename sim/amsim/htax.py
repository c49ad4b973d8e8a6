"""HTAX source and sink for Amaranth-simulator testbenches: the counterpart of :mod:`sim.htax_bus`.

Both move whole packets (:class:`sim.htax_packet.HtaxPacket`) over one HTAX link direction: an
:class:`rtl.common.htax.HtaxLinkSignature` (one ``ready`` per virtual channel) or an
:class:`rtl.common.htax.HtaxPacketSignature` (one ``ready``).  A beat's ``vc``, ``first`` and ``last``
are read through the :class:`rtl.common.htax.HtaxBeat` view, never at hand-written bit offsets; a beat
moves when ``valid`` and ``ready[vc]`` are both high at the edge (:func:`lane`).

* :class:`HtaxSource` sends queued packets (or packets a callable picks between packets), with
  optional idle cycles before each beat, committing to a VC before it is ready (``valid`` held until
  the beat moves, as the link rules allow) or waiting for ``ready[vc]`` first.
* :class:`HtaxSink` drives ``ready`` (always, random stalls per cycle or per VC, or a callable),
  checks the link rules (``valid`` and ``payload`` hold until the beat moves; packets framed by
  ``first``/``last`` on one VC) and assembles packets into :class:`Received` records.

Both are :class:`sim.amsim.clock.Clocked` models: step them with a :class:`sim.amsim.clock.Clock`
(one cycle count for the testbench) or run them as background testbenches.
"""

from collections import deque
from dataclasses import dataclass

from amaranth.lib import data

from rtl.common.htax import HtaxBeat
from sim.htax_packet import HtaxPacket

from .clock import Clocked
from .stream import _check_p

__all__ = ["HtaxSource", "HtaxSink", "Received", "lane", "beat_view"]

_BEAT = HtaxBeat.as_shape()
ALL_VCS = 0b1111


def beat_view(beat):
    """An integer beat as an :class:`HtaxBeat` constant view (``.vc``, ``.first``, ``.last``, ...)."""
    return beat if isinstance(beat, data.Const) else data.Const(_BEAT, beat)


def lane(ready, vc):
    """``ready[vc]``: whether a ``ready`` value (one bit per VC) accepts a beat of virtual channel ``vc``."""
    return (int(ready) >> int(getattr(vc, "value", vc))) & 1


def _beats(packet):
    return list(packet.beats()) if hasattr(packet, "beats") else [int(b) for b in packet]


def _width(signal):
    return signal.shape().width


class HtaxSource(Clocked):
    """Sends HTAX packets on ``link``, beat by beat, in the order they were queued.

    Parameters
    ----------
    link : HtaxLinkInterface or stream.Interface
        The link into the design: the model drives ``valid`` and ``payload`` and samples ``ready``
        (one bit per VC, or a single bit for an :class:`~rtl.common.htax.HtaxPacketSignature`).
    rng : random.Random or None
        Generator of the idle cycles.
    idle : float
        Probability, per cycle, of an idle cycle (``valid`` low) before each beat, in [0, 1).
    wait_ready : bool
        Raise ``valid`` only in a cycle in which ``ready[vc]`` is high (read before the edge; the link
        rules say ``ready`` does not depend on ``valid``); by default ``valid`` is raised at once and
        held until the beat moves.
    next_packet : callable or None
        ``next_packet(ctx, now)``: called between packets when the queue is empty; returns the next
        packet to send (an :class:`~sim.htax_packet.HtaxPacket` or a list of integer beats) or ``None``.

    Attributes
    ----------
    sent : list of (int, int, object)
        ``(header cycle, last cycle, packet)`` of every packet sent completely.
    moved : int
        Beats moved so far.
    """

    def __init__(self, link, *, rng=None, idle=0.0, wait_ready=False, next_packet=None):
        self.link, self.rng, self.idle = link, rng, _check_p("idle", idle)
        self.wait_ready, self.next_packet = wait_ready, next_packet
        self._per_vc = _width(link.ready) > 1
        self.queue = deque()
        self.sent = []
        self.moved = 0
        self._pkt = None            # the packet being sent
        self._beats = deque()       # its beats not yet moved
        self._offer = None          # the beat offered in this cycle, as a view
        self._header = None         # cycle its header moved

    def send(self, packet):
        """Queue ``packet`` (an :class:`~sim.htax_packet.HtaxPacket` or a list of integer beats)."""
        self.queue.append(packet)

    @property
    def busy(self):
        """A packet is queued or being sent."""
        return bool(self.queue) or self._pkt is not None

    @property
    def offered(self):
        """The beat offered in this cycle (an :class:`HtaxBeat` view), ``None`` if ``valid`` is low; valid
        once the model drove (:meth:`sim.amsim.clock.Clock.drive`)."""
        return self._offer

    def _ready(self, ready, vc):
        return lane(ready, vc) if self._per_vc else int(ready) & 1

    def drive(self, ctx, now):
        if self._pkt is None:
            pkt = self.queue.popleft() if self.queue else (
                self.next_packet(ctx, now) if self.next_packet else None)
            if pkt is not None:
                self._pkt, self._beats, self._header = pkt, deque(_beats(pkt)), None
                if not self._beats:
                    raise ValueError(f"a packet has at least one beat, not {pkt!r}")
        if self._offer is None and self._beats and not (self.rng is not None and self.idle
                                                           and self.rng.random() < self.idle):
            beat = beat_view(self._beats[0])
            if not self.wait_ready or self._ready(ctx.get(self.link.ready), beat.vc):
                self._offer = beat
                ctx.set(self.link.payload, beat)
        ctx.set(self.link.valid, self._offer is not None)

    def signals(self):
        return (self.link.ready,)

    def observe(self, now, values):
        if self._offer is None or not self._ready(values[0], self._offer.vc):
            return
        self._offer = None
        self.moved += 1
        self._beats.popleft()
        if self._header is None:
            self._header = now
        if not self._beats:
            self.sent.append((self._header, now, self._pkt))
            self._pkt = None

    async def transmit(self, ctx, packet, *, clock=None, limit=10_000):
        """Queue ``packet`` and step ``clock`` (default: one of this model alone) until it is sent;
        return ``(header cycle, last cycle)``."""
        clock = clock or self._clock()
        self.send(packet)
        for _ in range(limit):
            for header, last, pkt in reversed(self.sent):
                if pkt is packet:
                    return header, last
            await clock.tick(ctx)
        raise AssertionError(f"packet not sent within {limit} cycles")


@dataclass
class Received:
    """One packet an :class:`HtaxSink` took: the packet, the cycles its header and its last beat
    moved, and its beats as integers."""
    packet: object
    header_cycle: int
    last_cycle: int
    beats: list


class HtaxSink(Clocked):
    """Takes HTAX packets from ``link`` and checks the link rules.

    ``ready`` (and ``ready2``, held at 0: this sink promises nothing) is, per cycle: ``ready`` if it
    is a callable (``ready()`` returns the bits), else all VCs, except that with probability ``stall``
    the cycle is refused (all VCs, or each VC on its own with ``per_vc``).  A framing error (no
    ``first`` on a header, ``first`` inside a packet, the VC changing inside a packet) or a ``valid``
    or ``payload`` that changes before its beat moved raises ``AssertionError`` at once.

    Parameters
    ----------
    link : HtaxLinkInterface or stream.Interface
        The link out of the design: the model samples ``valid`` and ``payload`` and drives ``ready``.
    rng : random.Random or None
    stall : float
        Probability of a refused cycle (or VC), in [0, 1).
    per_vc : bool
        Draw the stalls for each VC on its own.
    ready : callable or None
        ``ready()`` gives the ``ready`` bits of a cycle (overrides ``stall``).
    on_packet : callable or None
        ``on_packet(received)`` for every packet, when its last beat moved.

    Attributes
    ----------
    packets : list of Received
    """

    def __init__(self, link, *, rng=None, stall=0.0, per_vc=False, ready=None, on_packet=None):
        self.link, self.rng, self.stall = link, rng, _check_p("stall", stall)
        self.per_vc, self.ready_fn, self.on_packet = per_vc, ready, on_packet
        self._lanes = _width(link.ready)
        self._ready2 = getattr(link, "ready2", None)
        self.packets = []
        self._ready = 0
        self._part = []             # beats of the packet being received
        self._header = None
        self._pending = None        # a beat offered and not taken: it must be offered again

    @property
    def busy(self):
        """A packet is partly received."""
        return bool(self._part)

    def _draw(self):
        full = (1 << self._lanes) - 1
        if self.ready_fn is not None:
            return self.ready_fn() & full
        if self.rng is None or not self.stall:
            return full
        if self.per_vc:
            return sum(1 << v for v in range(self._lanes) if self.rng.random() >= self.stall)
        return 0 if self.rng.random() < self.stall else full

    def drive(self, ctx, now):
        self._ready = self._draw()
        ctx.set(self.link.ready, self._ready)
        if self._ready2 is not None:
            ctx.set(self._ready2, 0)

    def signals(self):
        return (self.link.valid, self.link.payload)

    def observe(self, now, values):
        valid, beat = values
        if self._pending is not None:
            if not valid:
                raise AssertionError(f"cycle {now}: valid dropped before the beat moved")
            if beat.as_value().value != self._pending:
                raise AssertionError(f"cycle {now}: payload changed from {self._pending:#x} to "
                                     f"{beat.as_value().value:#x} before the beat moved")
            self._pending = None
        if not valid:
            return
        moved = lane(self._ready, beat.vc) if self._lanes > 1 else self._ready & 1
        if not moved:
            self._pending = beat.as_value().value
            return
        self._take(now, beat)

    def _take(self, now, beat):
        if not self._part:
            if not beat.first:
                raise AssertionError(f"cycle {now}: a packet does not start with a first beat")
            self._header, self._vc = now, beat.vc
        elif beat.first:
            raise AssertionError(f"cycle {now}: first set inside a packet (beat {len(self._part)})")
        elif beat.vc != self._vc:
            raise AssertionError(f"cycle {now}: the VC changed inside a packet")
        self._part.append(beat.as_value().value)
        if beat.last:
            rec = Received(HtaxPacket.from_beats(self._part), self._header, now, self._part)
            self._part = []
            self.packets.append(rec)
            if self.on_packet is not None:
                self.on_packet(rec)

    async def wait_packets(self, ctx, n, *, clock=None, limit=1000):
        """Step ``clock`` until ``n`` packets in all were received; return :attr:`packets`."""
        clock = clock or self._clock()
        for _ in range(limit):
            if len(self.packets) >= n:
                return self.packets
            await clock.tick(ctx)
        raise AssertionError(f"{len(self.packets)} packets of {n} within {limit} cycles")
