"""The VELO unit (dissertation ch. 7.4): small messages from one CPU store to a receive ring."""

from rtl.common.addrmap import AddressMap
from rtl.common.regview import connect_regs

from .completer import VeloCompleter
from .requester import VeloRequester
from .velo import REGISTERS, Velo
from .wplt import VeloWritePointers

__all__ = ["Velo", "REGISTERS", "VeloRequester", "VeloCompleter", "VeloWritePointers", "connect_regs",
           "velo_from_config", "UNITS"]


def velo_from_config(cfg, **overrides):
    """The VELO unit the configuration describes (``[system]`` vpids/nodes/address map, ``[velo]`` ports)."""
    amap = AddressMap.from_config(cfg)
    kw = dict(vpids=cfg["system"]["vpids"], nodes=cfg["system"]["nodes"], window_base=amap["velo"].base,
              htax_port=cfg["velo"]["htax_port"], host_port=cfg["velo"]["host_port"])
    kw.update(overrides)
    return Velo(**kw)


UNITS = {"velo": velo_from_config}
