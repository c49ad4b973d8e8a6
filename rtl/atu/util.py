"""Small helpers the ATU's blocks share: a counter step, and (from :mod:`rtl.common.stream_rules`) the
stream rules as formal properties."""

from rtl.common.stream_rules import stream_rules

__all__ = ["count_step", "stream_rules"]


def count_step(m, counter, inc, dec):
    """``counter`` += ``inc`` - ``dec``, as a choice among the precomputed +1 and -1: the (late) strobes
    select a result instead of entering a carry chain."""
    with m.If(inc & ~dec):
        m.d.sync += counter.eq(counter + 1)
    with m.Elif(dec & ~inc):
        m.d.sync += counter.eq(counter - 1)
