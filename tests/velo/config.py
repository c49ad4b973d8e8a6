"""The configuration VELO's system tests elaborate: the default one with a three-port direct HTAX
(host, register file, VELO), which keeps the Verilator model small."""

import copy

from rtl.config import load

__all__ = ["small_config"]


def small_config():
    cfg = copy.deepcopy(load())
    cfg["htax"].update(ports=3, pipelined=False, shared_slots=2)
    cfg["velo"]["htax_port"] = 2
    return cfg
