"""The RMA unit (dissertation ch. 7.5): put, get, immediate and notification put, FCAA lock.

``docs/rma.md`` describes the unit; :func:`connect_regs` wires it to the generated register file
(``rdl/nic_regs.rdl``: :data:`REGISTERS`).
"""

from rtl.common.addrmap import AddressMap
from rtl.common.regview import connect_regs

from .rma import REGISTERS, Rma

__all__ = ["Rma", "REGISTERS", "rma_from_config", "connect_regs", "UNITS"]


def rma_from_config(cfg, **overrides):
    """The RMA unit the configuration describes (``[system]`` vpids, nodes and address map, ``[rma]`` ports,
    ``[atu] htax_port`` as the destination of its translation requests)."""
    amap = AddressMap.from_config(cfg)
    kw = dict(vpids=cfg["system"]["vpids"], window_base=amap["rma"].base, htax_port=cfg["rma"]["htax_port"],
              host_port=cfg["rma"]["host_port"], atu_port=cfg["atu"]["htax_port"], nodes=cfg["system"]["nodes"])
    kw.update(overrides)
    return Rma(**kw)


UNITS = {"rma": rma_from_config}
