"""The HTAX on-chip crossbar (dissertation ch. 7.1, 5.2.9); see ``docs/htax.md``."""

from .rr import RoundRobin
from .switch import Htax

__all__ = ["Htax", "RoundRobin", "UNITS"]

UNITS = {
    "htax": lambda cfg: Htax(ports=cfg["htax"]["ports"], slots_per_vc=cfg["htax"]["slots_per_vc"],
                             shared_slots=cfg["htax"]["shared_slots"],
                             counter_bits=cfg["htax"]["counter_bits"]),
}
