"""The configuration RMA's system tests elaborate: the default one with a four-port direct HTAX (host,
register file, ATU, RMA), which keeps the Verilator model small."""

import copy

from rtl.config import load

__all__ = ["small_config"]


def small_config():
    cfg = copy.deepcopy(load())
    cfg["htax"].update(ports=4, variant="direct", shared_slots=2)
    cfg["regs"]["htax_port"] = 1
    cfg["atu"].update(htax_port=2, fu_ports=[3], tlb_entries=64, gat_entries=16)
    cfg["rma"]["htax_port"] = 3
    return cfg
