"""The HTAX on-chip crossbar (dissertation ch. 7.1, 5.2.9); see ``docs/htax.md``."""

from .pipelined import HtaxPipelined
from .rr import RoundRobin
from .switch import Htax

__all__ = ["Htax", "HtaxPipelined", "RoundRobin", "UNITS", "from_config"]


def from_config(cfg, **overrides):
    """The switch ``[htax]`` of ``cfg`` describes (``Htax``, or ``HtaxPipelined`` with ``pipelined``);
    ``overrides`` replace single parameters (``ports=4``)."""
    c = {k: cfg["htax"][k] for k in ("ports", "slots_per_vc", "shared_slots", "counter_bits",
                                     "pipelined", "out_depth")}
    c.update(overrides)
    if c.pop("pipelined"):
        return HtaxPipelined(**c)
    c.pop("out_depth")
    return Htax(**c)


UNITS = {
    "htax": from_config,
    "htax_pipelined": lambda cfg: from_config(cfg, pipelined=True),
}
