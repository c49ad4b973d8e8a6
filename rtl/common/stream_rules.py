"""The stream rules of ``amaranth.lib.stream`` as formal properties, for any unit's proofs.

:func:`stream_rules` adds, as ``Assert`` (a unit's output) or ``Assume`` (an input the environment
drives): once ``valid`` is raised, ``valid`` and ``payload`` hold until the transfer.
:func:`packet_length_rule` bounds the beats between a stream's ``first`` and ``last`` (packets of
:class:`~rtl.common.net.NetBeat`).
"""

from amaranth.hdl import Signal, Value

__all__ = ["stream_rules", "packet_length_rule"]


def stream_rules(m, s, check, *, name="stream"):
    """``valid`` and ``payload`` of stream ``s`` hold from the cycle ``valid`` rises to the transfer."""
    held = Signal(name=f"{name}_held")
    payload = Value.cast(s.payload)
    prev = Signal.like(payload, name=f"{name}_prev")
    m.d.sync += [held.eq(s.valid & ~s.ready), prev.eq(payload)]
    m.d.comb += [check(~held | s.valid), check(~held | (payload == prev))]


def packet_length_rule(m, s, check, *, max_beats, name="stream"):
    """Every packet on ``s`` (``first`` .. ``last``) has at most ``max_beats`` beats, and ``first`` is set
    exactly on a packet's first beat.  Returns the count of beats of the current packet that moved."""
    count = Signal(range(max_beats + 1), name=f"{name}_beats")
    moved = s.valid & s.ready
    with m.If(s.valid):
        m.d.comb += check(s.payload.first == (count == 0))
        m.d.comb += check((count < max_beats - 1) | s.payload.last)
    with m.If(moved):
        m.d.sync += count.eq(count + 1)
        with m.If(s.payload.last):
            m.d.sync += count.eq(0)
    return count
