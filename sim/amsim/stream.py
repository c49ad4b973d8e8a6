"""Stream helpers for Amaranth-simulator testbenches (``amaranth.lib.stream`` interfaces
and :class:`rtl.atu.formats.OfferSignature`): one producer and one consumer per stream, with random
stalls drawn from a seeded generator.

The coroutines :func:`stream_put` and :func:`stream_get` move one item each; the models
:class:`StreamSource` and :class:`StreamSink` (:class:`sim.amsim.clock.Clocked`) queue, count cycles
and check the stream rules.
"""

import os
import random
from collections import deque

from amaranth.sim import Simulator

from .clock import Clocked

__all__ = ["stream_put", "stream_get", "run_sim", "random_seed", "StreamSource", "StreamSink"]

_NONE = object()        # no item (``None`` may be a payload)


async def stream_put(ctx, stream, payload, *, rng=None, idle=0.0):
    """Offer ``payload`` on ``stream`` until it is taken; before it, idle cycles with probability
    ``idle`` each (drawn from ``rng``)."""
    while rng is not None and rng.random() < idle:
        await ctx.tick()
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, payload)
    await ctx.tick().until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, rng=None, idle=0.0):
    """Take one item from ``stream`` (``ready`` low for random cycles first) and return its payload."""
    while rng is not None and rng.random() < idle:
        await ctx.tick()
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick().sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return payload


def random_seed():
    """A random test's seed: ``$SEED`` if set (a replay), else a random one; printed either way."""
    seed = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {seed}")
    return seed


def run_sim(dut, *testbenches, monitors=()):
    """Run ``testbenches`` (async functions of ``ctx``) on ``dut`` with a 100 MHz ``sync`` clock until
    they return; ``monitors`` run beside them in the background (they may loop forever)."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for tb in testbenches:
        sim.add_testbench(tb)
    for tb in monitors:
        sim.add_testbench(tb, background=True)
    sim.run()


def _chance(rng, p):
    return rng is not None and p > 0 and rng.random() < p


def _check_p(name, p):
    if not 0 <= p < 1:
        raise ValueError(f"{name} must be in [0, 1), not {p}")
    return p


class StreamSource(Clocked):
    """Offers queued payloads on an ``amaranth.lib.stream`` interface, one per handshake.

    Before each payload it stays idle (``valid`` low) for a random number of cycles: each cycle with
    probability ``idle``, drawn from ``rng``.  Once ``valid`` is raised, it and ``payload`` hold until
    the item moves (the stream rules).

    Parameters
    ----------
    stream : stream.Interface
        The stream the model drives (``valid``, ``payload``) and samples (``ready``).
    rng : random.Random or None
        The generator of the idle cycles (seed it, print the seed).
    idle : float
        Probability of an idle cycle before an item, in [0, 1).

    Attributes
    ----------
    sent : list of (int, object)
        ``(cycle, payload)`` of every item that moved.
    """

    def __init__(self, stream, *, rng=None, idle=0.0):
        self.stream, self.rng, self.idle = stream, rng, _check_p("idle", idle)
        self.queue = deque()
        self.sent = []
        self._cur = _NONE

    def put(self, payload):
        """Queue ``payload``; it is offered after the ones queued before it."""
        self.queue.append(payload)

    @property
    def busy(self):
        """An item is queued or offered."""
        return bool(self.queue) or self._cur is not _NONE

    def drive(self, ctx, now):
        if self._cur is _NONE and self.queue and not _chance(self.rng, self.idle):
            self._cur = self.queue.popleft()
            ctx.set(self.stream.payload, self._cur)
        ctx.set(self.stream.valid, self._cur is not _NONE)

    def signals(self):
        return (self.stream.ready,)

    def observe(self, now, values):
        if self._cur is not _NONE and values[0]:
            self.sent.append((now, self._cur))
            self._cur = _NONE

    async def send(self, ctx, payloads, *, clock=None):
        """Queue ``payloads`` and step ``clock`` (default: one of this model alone) until all moved."""
        clock = clock or self._clock()
        for p in payloads:
            self.put(p)
        while self.busy:
            await clock.tick(ctx)


class StreamSink(Clocked):
    """Takes items from an ``amaranth.lib.stream`` interface and checks the stream rules.

    In each cycle ``ready`` is low with probability ``stall`` (drawn from ``rng``).  A ``valid`` that
    is not taken must stay high with the same ``payload`` in the next cycle; a source that breaks
    that raises ``AssertionError`` at once.

    Parameters
    ----------
    stream : stream.Interface
        The stream the model samples (``valid``, ``payload``) and drives (``ready``).
    rng : random.Random or None
    stall : float
        Probability of ``ready`` low in a cycle, in [0, 1).

    Attributes
    ----------
    items : list of (int, object)
        ``(cycle, payload)`` of every item taken (the payload as sampled: an ``int`` or a
        ``data.Const``).
    """

    def __init__(self, stream, *, rng=None, stall=0.0):
        self.stream, self.rng, self.stall = stream, rng, _check_p("stall", stall)
        self.items = []
        self._ready = False
        self._pending = _NONE

    def drive(self, ctx, now):
        self._ready = not _chance(self.rng, self.stall)
        ctx.set(self.stream.ready, self._ready)

    def signals(self):
        return (self.stream.valid, self.stream.payload)

    def observe(self, now, values):
        valid, payload = values
        if self._pending is not _NONE:
            if not valid:
                raise AssertionError(f"cycle {now}: valid dropped before the item moved")
            if payload != self._pending:
                raise AssertionError(f"cycle {now}: payload changed from {self._pending!r} to {payload!r} "
                                     "before it moved")
        self._pending = _NONE
        if valid and self._ready:
            self.items.append((now, payload))
        elif valid:
            self._pending = payload

    async def get(self, ctx, *, clock=None, limit=10_000):
        """Step ``clock`` (default: one of this model alone) until an item is taken; return its payload."""
        clock = clock or self._clock()
        n = len(self.items)
        for _ in range(limit):
            if len(self.items) > n:
                return self.items[n][1]
            await clock.tick(ctx)
        raise AssertionError(f"no item within {limit} cycles")
