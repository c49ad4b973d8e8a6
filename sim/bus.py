"""What every stream bus model in ``sim/`` shares: timing, the cycle count, source, sink and monitor.

The HTAX link (:mod:`sim.htax_bus`) and the FU <-> network-port stream (:mod:`sim.net_stream`) are both
valid/ready streams of packets framed by ``first``/``last``; they differ in the payload and in how many
``ready`` lanes there are (one per HTAX virtual channel, one for a plain stream).  The classes here do
the part that does not care: when to wake up, the handshake, the stream rules (``valid`` and
``payload`` hold until the beat moves), backpressure and pause generators, the packet queue; the
protocol modules add the framing.

A model runs one coroutine that is woken once per clock cycle while it has work, and not at all while
it has none (it waits on an :class:`cocotb.triggers.Event` or on a rising ``valid``).  Per active cycle
it *drives* its outputs for the coming clock edge, then *samples* the DUT's outputs, and from both
knows which transfer happens at that edge.  :class:`Timing` says where in the cycle that happens:

* ``Timing.READONLY`` (the default): drive after the rising edge, sample in the read-only phase of
  the same time step.  Correct for any DUT.
* ``Timing.FALLING``: drive and sample at the falling edge, one wake-up per cycle instead of two.
  Correct only when the DUT's outputs on the bus do not depend combinationally on inputs that other
  models drive at the same falling edge (a DUT whose ``ready`` and ``valid`` come from registers, as
  every HTAX switch port does).

Cycle ``k`` is the clock period that starts at the ``k``-th rising edge after time 0; models of one
testbench agree on it without sharing a counter (:meth:`Clocked.now`).
"""

import enum
import random
from collections import deque
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import Event, FallingEdge, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

__all__ = ["Timing", "Clocked", "Record", "StreamMonitor", "StreamSink", "StreamSource", "pause_source"]


class Timing(enum.Enum):
    READONLY = "readonly"
    FALLING = "falling"


def pause_source(pause, rng):
    """A per-cycle ``() -> bool`` from a probability (float), a callable, or ``None`` (never)."""
    if pause is None or pause == 0:
        return None
    if callable(pause):
        return pause
    if not 0 <= pause < 1:
        raise ValueError(f"a pause probability must be in [0, 1), not {pause}")
    return lambda: rng.random() < pause


class Clocked:
    """Base of the bus models: the clock, the reset, the cycle count and the per-cycle step.

    Parameters
    ----------
    clock : cocotb handle of the clock
    reset : cocotb handle of the active-high reset, or ``None``
    period_ns : float
        Clock period, for :meth:`now` and :meth:`cycles`.
    timing : Timing
    """

    def __init__(self, clock, reset=None, *, period_ns, timing=Timing.READONLY):
        if period_ns is None or period_ns <= 0:
            raise ValueError(f"period_ns must be a positive number, not {period_ns!r}")
        self.clock = clock
        self.reset = reset
        self.period_ns = period_ns
        self.timing = Timing(timing)
        self._task = None

    def now(self):
        """The current clock cycle."""
        return int(get_sim_time("ns") / self.period_ns + 1e-6)

    def in_reset(self):
        return self.reset is not None and bool(int(self.reset.value))

    async def cycles(self, n):
        """Wait ``n`` clock cycles without per-cycle Python (a timer, then the next edge)."""
        if n > 1:
            await Timer(round((n - 1) * self.period_ns * 1000), "ps")
        await RisingEdge(self.clock)

    async def to_drive(self):
        """Wait for the next point at which this model drives its outputs for the coming edge."""
        if self.timing is Timing.FALLING:
            await FallingEdge(self.clock)
        else:
            await RisingEdge(self.clock)

    async def to_sample(self):
        """After :meth:`to_drive`: wait for the point at which the DUT's outputs are settled."""
        if self.timing is Timing.READONLY:
            await ReadOnly()

    def _drive_idle(self):
        """Set the model's outputs to their idle values (models that drive something override it)."""

    def start(self):
        """Drive the idle values and start the model's coroutine.  Called in the read-only phase (after
        a wait that ended there), the idle values are driven at the model's first drive point."""
        try:
            self._drive_idle()
        except RuntimeError:                    # cocotb refuses writes in the read-only phase
            self._pending_idle = True
        self._task = cocotb.start_soon(self._run())
        return self

    _pending_idle = False

    async def _first_drive_point(self):
        await self.to_drive()
        if self._pending_idle:
            self._drive_idle()
            self._pending_idle = False

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None


def _read_payload(handle):
    raw = handle.value
    return raw.to_unsigned() if raw.is_resolvable else None


@dataclass
class Record:
    """One packet seen on a bus: its beats (integers), the cycle its first beat moved and the cycle its
    last beat moved, and the packet decoded by the protocol module (``None`` with a framing error)."""
    beats: list
    header_cycle: int
    last_cycle: int
    packet: object = None
    meta: dict = field(default_factory=dict)


class StreamMonitor(Clocked):
    """Watches one stream, checks the stream rules, assembles packets and reports them.

    Subclasses give the protocol: :meth:`_lane` (the ``ready`` bit a beat needs), :meth:`_frame` (checks
    a beat's framing against the packet so far; returns whether it ends the packet) and
    :meth:`_decode` (a packet object from its beats).

    Parameters
    ----------
    bus
        An object with the handles ``valid``, ``payload``, ``ready`` and, for lanes with a promise,
        ``ready2`` (or ``None``).
    callback : callable(Record) or None
        Called for every complete packet; without one, packets collect in :attr:`queue`.
    name : str
        Used in error messages.
    """

    def __init__(self, bus, clock, reset=None, *, period_ns, callback=None, timing=Timing.READONLY, name=""):
        super().__init__(clock, reset, period_ns=period_ns, timing=timing)
        self.bus = bus
        self.name = name
        self.callback = callback
        self.queue = deque()
        self._queue_event = Event()
        self.errors = []
        self.beats = 0
        self.packets = 0
        self._partial = []
        self._header_cycle = 0
        self._held = None               # beat offered and not taken in the last sampled cycle
        self._promised = 0              # lanes the sink promised for this cycle (ready2)

    # -- protocol hooks ---------------------------------------------------------------------------
    def _lane(self, beat):
        return 0

    def _frame(self, cycle, part, beat):
        raise NotImplementedError

    def _decode(self, record):
        return None

    # -- the per-cycle observation ----------------------------------------------------------------
    def _observe(self, ready, ready2, valid, beat):
        """One sampled cycle: ``ready``/``ready2`` masks, ``valid``, the payload (int, or ``None`` when
        unresolved).  Returns whether a beat moves at the coming edge."""
        cycle = self.now()
        if ready2 & ~ready:
            self._error(cycle, f"ready2 {ready2:b} without ready {ready:b}")
        if self._promised & ~ready:
            self._error(cycle, f"ready2 promised lanes {self._promised:b}, ready is {ready:b}")
        self._promised = 0
        if self.in_reset():
            self._partial, self._held = [], None
            return False
        if not valid:
            if self._held is not None:
                self._error(cycle, "valid dropped before the beat moved")
                self._held = None
            return False
        if beat is None:
            self._error(cycle, "valid with an unresolved payload")
            return False
        if self._held is not None and self._held != beat:
            self._error(cycle, "payload changed while valid")
        lane = self._lane(beat)
        if not (ready >> lane) & 1:
            self._held = beat
            return False
        self._held = None
        self._promised = ready2 & (1 << lane)
        self.beats += 1
        if not self._partial:
            self._header_cycle = cycle
        self._partial.append(beat)
        if self._frame(cycle, self._partial, beat):
            record = Record(self._partial, self._header_cycle, cycle)
            self._partial = []
            record.packet = self._decode(record)
            self.packets += 1
            if self.callback is not None:
                self.callback(record)
            else:
                self.queue.append(record)
                self._queue_event.set()
        return True

    @property
    def in_packet(self):
        """Beats of a packet that has started and not ended."""
        return len(self._partial)

    def _error(self, cycle, text):
        self.errors.append(f"cycle {cycle}: {self.name}: {text}")

    def _read(self):
        b = self.bus
        valid = int(b.valid.value)
        ready2 = int(b.ready2.value) if b.ready2 is not None else 0
        return int(b.ready.value), ready2, valid, _read_payload(b.payload) if valid else None

    async def _run(self):
        await self._first_drive_point()
        await self.to_sample()
        while True:
            _, _, valid, _ = args = self._read()
            self._observe(*args)
            if not valid and not self._promised:
                await RisingEdge(self.bus.valid)
                if self.timing is Timing.FALLING:
                    await self.to_drive()
                else:
                    await ReadOnly()
                continue
            await self.to_drive()
            await self.to_sample()

    async def recv(self):
        """The next packet record (without a callback)."""
        while not self.queue:
            self._queue_event.clear()
            await self._queue_event.wait()
        return self.queue.popleft()


class StreamSink(StreamMonitor):
    """A monitor that also drives ``ready`` (and ``ready2`` where the bus has it).

    Parameters
    ----------
    lanes : int
        Width of ``ready``.
    ready : None, float or callable(cycle) -> int
        ``None``: always ready on every lane (and ``ready2`` promised on every lane).  A float ``p``:
        each lane is ready with probability ``p`` per cycle, drawn one cycle ahead, so ``ready2`` is
        promised exactly where the next cycle is ready too.  A callable: the ready mask of a cycle.
    ready2 : None or callable(cycle, ready) -> int
        With a callable ``ready``: the ``ready2`` mask of a cycle (bits outside ``ready`` ignored); the
        sink keeps its promise (a lane promised in a cycle in which one of its beats moved is ready in
        the next).  ``None``: no promise.
    rng : random.Random
    """

    def __init__(self, bus, clock, reset=None, *, lanes, period_ns, ready=None, ready2=None, rng=None,
                 callback=None, timing=Timing.READONLY, name=""):
        super().__init__(bus, clock, reset, period_ns=period_ns, callback=callback, timing=timing, name=name)
        self.rng = rng or random.Random(0)
        self._all = (1 << lanes) - 1
        self._always = ready is None
        self._ready_fn = self._draw = None
        if isinstance(ready, (int, float)) and not callable(ready):
            if not 0 < ready <= 1:
                raise ValueError(f"ready probability must be in (0, 1], not {ready}")
            p = float(ready)
            self._always = p >= 1.0
            self._draw = lambda: sum(1 << v for v in range(lanes) if self.rng.random() < p)
        else:
            self._ready_fn = ready
        self._ready2_fn = ready2
        self._next = None
        self._drove = (0, 0)

    def _set(self, ready, ready2):
        if (ready, ready2) != self._drove:
            self.bus.ready.value = ready
            if self.bus.ready2 is not None:
                self.bus.ready2.value = ready2
            self._drove = (ready, ready2)

    def _drive_idle(self):
        self._drove = (None, None)
        self._set(self._all if self._always else 0, self._all if self._always else 0)

    def _masks(self, promise):
        if self._draw is not None:
            cur = self._draw() if self._next is None else self._next
            self._next = self._draw()
            return cur, cur & self._next
        ready = self._ready_fn(self.now()) | promise
        ready2 = (self._ready2_fn(self.now(), ready) & ready) if self._ready2_fn else 0
        return ready, ready2

    async def _run(self):
        if self._always:
            await StreamMonitor._run(self)     # nothing to drive per cycle: a monitor
            return
        b = self.bus
        await self._first_drive_point()
        while True:
            ready, ready2 = self._masks(self._promised)
            if self.bus.ready2 is None:
                ready2 = 0
            self._set(ready, ready2)
            await self.to_sample()
            valid = int(b.valid.value)
            self._observe(ready, ready2, valid, _read_payload(b.payload) if valid else None)
            await self.to_drive()


class StreamSource(Clocked):
    """Sends packets on one stream: a queue of ``(lane, beats, tag)`` items, the handshake, pauses.

    Subclasses give :meth:`_item` (a packet object to an item) and may override :meth:`_pick` (which
    queued packet goes next, given the ``ready`` mask).

    Parameters
    ----------
    bus
        An object with the handles ``valid``, ``payload``, ``ready``.
    pause : None, float or callable() -> bool
        An idle cycle (``valid`` low) before a beat: never, with this probability, or when the
        callable says so.  A beat whose ``valid`` is up is never paused (the stream rules).
    rng : random.Random
    on_header : callable(tag, cycle) or None
        Called when a packet's first beat moves (``tag`` as given to :meth:`send`).
    fetch : callable() -> (packet, tag) or None
        Pulled for the next packet when the queue is empty (a model that decides what to send only
        when the bus can take it); after it has returned ``None`` the source idles until :meth:`kick`.
    """

    def __init__(self, bus, clock, reset=None, *, period_ns, pause=None, rng=None, timing=Timing.READONLY,
                 on_header=None, fetch=None, name=""):
        super().__init__(clock, reset, period_ns=period_ns, timing=timing)
        self.bus = bus
        self.name = name
        self.rng = rng or random.Random(0)
        self._pause = pause_source(pause, self.rng)
        self.on_header = on_header
        self.fetch = fetch
        self._kicked = False
        self._queue = deque()
        self._event = Event()
        self._idle_event = Event()
        self._idle_event.set()
        self.log = deque(maxlen=4096)   # (cycle the first beat was first offered, first beat)
        self.beats = 0
        self.packets = 0
        self.queued_packets = 0
        self._cur = None                # [beats, index, lane, tag]
        self._holding = False
        #: a first beat the sink did not take goes back to the queue (valid drops) instead of being held:
        #: a credit link, which never commits a packet to a lane without room
        self.withdraw = False
        self._ready = 0

    def _item(self, pkt, tag, **options):
        """``(lane, beats, tag)`` for a packet as :meth:`send` takes it."""
        raise NotImplementedError

    def _enqueue(self, item):
        self._queue.append(item)

    def send(self, pkt, *, tag=None, **options):
        """Queue a packet; returns at once.  ``tag`` is handed to ``on_header``; ``options`` go to
        the protocol's :meth:`_item`."""
        self._enqueue(self._item(pkt, tag, **options))
        self.queued_packets += 1
        self._idle_event.clear()
        self._event.set()

    def kick(self):
        """Tell a source with ``fetch`` that it may have a packet to send."""
        self._kicked = True
        self._event.set()

    def pending(self):
        """Packets queued and not yet completely sent."""
        return self.queued_packets

    def idle(self):
        return self.queued_packets == 0

    async def wait(self):
        """Until every queued packet has been sent."""
        while self.queued_packets:
            await self._idle_event.wait()

    def _fetched(self):
        if self.fetch is None or not self._kicked:
            return None
        got = self.fetch()
        if got is None:
            self._kicked = False
            return None
        self.queued_packets += 1
        self._idle_event.clear()
        return self._item(got[0], got[1])

    def _pick(self, ready):
        if self._queue:
            return self._queue.popleft()
        return self._fetched()

    def _requeue(self, item):
        """A withdrawn packet goes back where :meth:`_pick` took it from, so withdrawing never
        reorders the queue (a packet that may pass an older one must not stay ahead of it)."""
        self._queue.appendleft(item)

    def _has_work(self):
        return self._cur is not None or bool(self._queue) or self._kicked

    async def _resync(self):
        """After an idle spell (woken at any point of a cycle): to the next drive point, with the
        ``ready`` of the cycle before it known."""
        if self.timing is Timing.READONLY:
            await RisingEdge(self.clock)
            await ReadOnly()
            self._ready = int(self.bus.ready.value)
        await self.to_drive()

    def _drive_idle(self):
        self.bus.valid.value = 0

    async def _run(self):
        b = self.bus
        driving = False
        await self._first_drive_point()
        while True:                             # at a drive point: outputs set now hold at the coming edge
            if self.timing is Timing.FALLING:
                self._ready = int(b.ready.value)
            if self.in_reset():
                self._cur, self._holding = None, False
            elif self._cur is None and not (self._pause and self._pause()):
                item = self._pick(self._ready)
                if item is not None:
                    lane, beats, tag = item
                    self._cur = [beats, 0, lane, tag]
            cur = self._cur
            offer = cur is not None and (self._holding or cur[1] == 0 or not (self._pause and self._pause()))
            if not offer:
                if driving:
                    b.valid.value = 0
                    driving = False
                if cur is None and not self._has_work():
                    self._event.clear()
                    await self._event.wait()
                    await self._resync()
                    continue
                await self.to_sample()
                if self.timing is Timing.READONLY:
                    self._ready = int(b.ready.value)
                await self.to_drive()
                continue
            beats, idx, lane = cur[0], cur[1], cur[2]
            if not self._holding:
                b.payload.value = beats[idx]
                if not driving:
                    b.valid.value = 1
                    driving = True
                if idx == 0:
                    self.log.append((self.now(), beats[0]))
            await self.to_sample()
            if self.timing is Timing.READONLY:
                self._ready = int(b.ready.value)
            if (self._ready >> lane) & 1:       # the beat moves at the coming edge
                self.beats += 1
                self._holding = False
                if idx == 0 and self.on_header is not None:
                    self.on_header(cur[3], self.now())
                cur[1] = idx + 1
                if cur[1] == len(beats):
                    self._cur = None
                    self.packets += 1
                    self.queued_packets -= 1
                    if not self.queued_packets:
                        self._idle_event.set()
            elif self.withdraw and idx == 0:
                self._requeue((lane, beats, cur[3]))
                self._cur = None
                self.log.pop()                  # offered again later: logged then
            else:
                self._holding = True
            await self.to_drive()
