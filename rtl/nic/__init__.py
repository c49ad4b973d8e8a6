"""The EXTOLL NIC top (dissertation ch. 7, fig. 7-1); see ``docs/nic.md``."""

from .netregs import LINK_REGISTERS, connect_network_regs
from .nic import Nic, nic_ports
from .nic_axi import NicAxi

__all__ = ["Nic", "NicAxi", "nic_ports", "nic_from_config", "nic_axi_from_config", "connect_network_regs",
           "LINK_REGISTERS", "UNITS"]


def nic_from_config(cfg, **overrides):
    """The NIC the configuration describes; ``overrides``: :class:`Nic`'s keyword parameters."""
    return Nic(cfg, **overrides)


def nic_axi_from_config(cfg, **overrides):
    """The NIC of the configuration behind AXI4 (:class:`NicAxi`)."""
    return NicAxi(cfg, **overrides)


UNITS = {"nic": nic_from_config, "nic_axi": nic_axi_from_config}
