"""The configuration the ATU system tests and ``bench/atu.py`` elaborate: the default one with three
FUs (``[atu] fu_ports = [3, 4, 5]``), so a flush waits for several FUs (one of them late).  The NIC
itself has one FU that answers flushes (RMA), and ``configs/default.toml`` says so."""

import copy

from rtl.config import load

__all__ = ["atu_config", "FU_PORTS"]

FU_PORTS = [3, 4, 5]


def atu_config(path=None):
    cfg = copy.deepcopy(load(path))
    cfg["atu"]["fu_ports"] = list(FU_PORTS)
    return cfg
