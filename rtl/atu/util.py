"""Small helpers the ATU's blocks share: a counter step and the stream rules as formal properties."""

from amaranth.hdl import Signal, Value

__all__ = ["count_step", "stream_rules"]


def count_step(m, counter, inc, dec):
    """``counter`` += ``inc`` - ``dec``, as a choice among the precomputed +1 and -1: the (late) strobes
    select a result instead of entering a carry chain."""
    with m.If(inc & ~dec):
        m.d.sync += counter.eq(counter + 1)
    with m.Elif(dec & ~inc):
        m.d.sync += counter.eq(counter - 1)


def stream_rules(m, stream, check, *, name):
    """Add the stream rules of ``stream`` (a :class:`amaranth.lib.stream` interface) to ``m`` with
    ``check`` (``Assert`` or ``Assume``): once ``valid`` is up, ``valid`` and ``payload`` hold until
    ``ready``.  For the ``platform == "formal"`` sections of the blocks."""
    held = Signal(name=f"{name}_held")
    prev = Signal.like(Value.cast(stream.payload), name=f"{name}_prev")
    m.d.sync += [held.eq(stream.valid & ~stream.ready), prev.eq(Value.cast(stream.payload))]
    with m.If(held):
        m.d.comb += [check(stream.valid), check(Value.cast(stream.payload) == prev)]
