"""Self-test target for the host bus functional model (not a NIC unit of the dissertation)."""

from .scratch import HtaxScratch

__all__ = ["HtaxScratch", "UNITS"]

UNITS = {
    "scratch": lambda cfg: HtaxScratch(words=cfg["scratch"]["words"],
                                       max_outstanding=cfg["scratch"]["max_outstanding"]),
}
