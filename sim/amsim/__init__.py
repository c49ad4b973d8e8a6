"""Bus models for the Amaranth simulator (``amaranth.sim``), the counterpart of the cocotb models in
:mod:`sim.bus`: every Amaranth testbench drives and samples streams through these."""

from .stream import run_sim, stream_get, stream_put

__all__ = ["stream_put", "stream_get", "run_sim"]
