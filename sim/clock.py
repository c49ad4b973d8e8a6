"""The clock of every cocotb testbench: driven by the simulator, no Python per edge.

cocotb 2.x runs :class:`cocotb.clock.Clock` as a Python coroutine (two wake-ups per cycle) unless it
is told ``impl="gpi"`` or ``COCOTB_TRUST_INERTIAL_WRITES`` is set; the GPI clock toggles the signal
from a timer callback inside the simulator interface.  Its edges fall at the same simulation times
(a deposit at each half period), so a testbench sees the same cycles either way; only the Python
that ran per edge is gone.
"""

from cocotb.clock import Clock

__all__ = ["start_clock"]


def start_clock(signal, period_ns, *, start_high=True):
    """Drive ``signal`` with a 50 % clock of ``period_ns`` (high first unless ``start_high=False``)
    from the simulator; return the clock's task, as :meth:`cocotb.clock.Clock.start` does
    (cancelling it stops the clock)."""
    return Clock(signal, period_ns, unit="ns", impl="gpi").start(start_high=start_high)
