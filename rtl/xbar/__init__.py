"""The network crossbar (dissertation ch. 7.3); see ``docs/network.md``."""

from .crossbar import Crossbar, XbarPortSignature
from .input import InputEvents, XbarInput
from .output import OutputEvents, XbarOutput
from .route import RouteStep

__all__ = ["Crossbar", "XbarPortSignature", "XbarInput", "XbarOutput", "RouteStep", "InputEvents",
           "OutputEvents", "UNITS"]


def from_config(cfg, **overrides):
    """The crossbar ``[xbar]`` of ``cfg`` describes; ``overrides`` replace single parameters."""
    c = {k: cfg["xbar"][k] for k in ("link_ports", "net_ports", "vcs", "depth")}
    c.update(overrides)
    return Crossbar(**c)


UNITS = {"xbar": from_config}
