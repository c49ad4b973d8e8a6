"""The per-cycle step every Amaranth-simulator bus model shares, and one cycle count for a testbench.

A model (:class:`Clocked`) does three things in each clock cycle: it *drives* its outputs
(:meth:`Clocked.drive`), names the signals it needs *sampled* at the coming edge
(:meth:`Clocked.signals`), and *observes* their values at that edge (:meth:`Clocked.observe`), from
which it knows which transfer happened.  Sampling at the edge (``ctx.tick().sample(...)``) sees the
values every testbench set in that cycle, so a handshake is decided exactly as the gateware decides it.

:class:`Clock` steps several models from one testbench with one cycle count, so that figures such as
"response header two cycles after the request header" are exact; :meth:`Clocked.run` steps a model
alone, as a background testbench.  Cycle ``k`` is the clock period that ends with the ``k``-th edge
the clock stepped (counted from 0).
"""

__all__ = ["Clocked", "Clock"]


class Clocked:
    """Base of the Amaranth-simulator bus models: drive, sample, observe, once per cycle."""

    def signals(self):
        """The signals (or other values) to sample at the edge that ends this cycle."""
        return ()

    def drive(self, ctx, now):
        """Set the model's outputs for cycle ``now`` (called once per cycle, before the edge)."""

    def observe(self, now, values):
        """The values of :meth:`signals` at the edge that ends cycle ``now``."""

    def _clock(self):
        """A :class:`Clock` of this model alone, the same one every time it is asked for."""
        if getattr(self, "_own_clock", None) is None:
            self._own_clock = Clock(self)
        return self._own_clock

    async def run(self, ctx):
        """Step this model alone, forever (add it with ``add_testbench(..., background=True)``)."""
        clock = self._clock()
        while True:
            await clock.tick(ctx)


class Clock:
    """Steps ``models`` once per clock cycle from one testbench and counts the cycles.

    Parameters
    ----------
    *models : Clocked
        The models to step, in the order they drive.
    limit : int or None
        :meth:`tick` raises ``AssertionError`` past this many cycles (a watchdog), ``None`` for none.

    Attributes
    ----------
    now : int
        The current cycle: the number of edges :meth:`tick` has waited for.
    """

    def __init__(self, *models, limit=None):
        self.models = list(models)
        self.limit = limit
        self.now = 0
        self._driven = False

    def add(self, model):
        """Step ``model`` too, from the next cycle on."""
        self.models.append(model)
        return model

    def drive(self, ctx):
        """Let every model drive its outputs for this cycle now, so that the testbench can read the
        design's response to them before :meth:`tick` (otherwise :meth:`tick` does it)."""
        if not self._driven:
            for model in self.models:
                model.drive(ctx, self.now)
            self._driven = True

    async def tick(self, ctx, *exprs):
        """Finish this cycle: drive (if not done yet), wait for the edge, hand every model its sampled
        values.  Returns the values of ``exprs`` at the edge (a tuple)."""
        if self.limit is not None and self.now >= self.limit:
            raise AssertionError(f"no end after {self.limit} cycles")
        self.drive(ctx)
        groups = [tuple(model.signals()) for model in self.models]
        flat = [s for g in groups for s in g] + list(exprs)
        if flat:
            sampled = (await ctx.tick().sample(*flat))[-len(flat):]    # after the clock and reset values
        else:
            await ctx.tick()
            sampled = ()
        k = 0
        for model, group in zip(self.models, groups, strict=True):
            model.observe(self.now, tuple(sampled[k:k + len(group)]))
            k += len(group)
        self.now += 1
        self._driven = False
        return tuple(sampled[k:])

    async def until(self, ctx, condition, *, limit=1000):
        """Tick until ``condition()`` holds at the start of a cycle (after the models drove); return that
        cycle.  ``AssertionError`` after ``limit`` cycles."""
        for _ in range(limit):
            self.drive(ctx)
            if condition():
                return self.now
            await self.tick(ctx)
        raise AssertionError(f"condition not met within {limit} cycles")

    async def repeat(self, ctx, n):
        """Tick ``n`` cycles."""
        for _ in range(n):
            await self.tick(ctx)
