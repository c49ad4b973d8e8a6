"""Bus models for the Amaranth simulator (``amaranth.sim``), the counterpart of the cocotb models in
:mod:`sim.bus` and :mod:`sim.htax_bus`: every Amaranth testbench drives and samples streams and HTAX
links through these.

* :mod:`.clock`: :class:`Clocked` (drive, sample, observe once per cycle) and :class:`Clock` (steps
  models from one testbench with one cycle count).
* :mod:`.stream`: :func:`stream_put`, :func:`stream_get`, :func:`run_sim`, :func:`random_seed`, and the models
  :class:`StreamSource` and :class:`StreamSink` with seeded random stalls.
* :mod:`.htax`: :class:`HtaxSource` and :class:`HtaxSink`, whole packets over an HTAX link, fields
  read through :class:`rtl.common.htax.HtaxBeat`.
* :mod:`.host`: :class:`HtaxHost`, a host memory that answers a unit's reads and applies its writes.
* :mod:`.board`: AXI4 manager and subordinate over flat ports, and a UART pin model, for the board
  blocks (``rtl/board``).
"""

from .clock import Clock, Clocked
from .host import HtaxHost
from .htax import HtaxSink, HtaxSource, Received, beat_view, lane
from .stream import StreamSink, StreamSource, random_seed, run_sim, stream_get, stream_put

__all__ = ["stream_put", "stream_get", "run_sim", "random_seed", "Clock", "Clocked", "StreamSource", "StreamSink",
           "HtaxSource", "HtaxSink", "Received", "HtaxHost", "beat_view", "lane"]
