"""The configuration VELO's system tests elaborate: the default one with a three-port switch (host,
register file, VELO) of the default variant (``[htax] variant``: ``HtaxPipelined`` in
``configs/default.toml``), which keeps the Verilator model small.  ``bench/velo.py`` measures the
loopback latency on the default configuration itself (eight ports)."""

import copy

from rtl.config import load

__all__ = ["small_config"]


def _update(section, name, **values):
    """``section.update(values)``, refusing keys the section does not have (a stale key would be
    ignored silently by the elaboration)."""
    for key in values:
        if key not in section:
            raise KeyError(f"[{name}] has no key {key!r}")
    section.update(values)


def small_config():
    cfg = copy.deepcopy(load())
    _update(cfg["htax"], "htax", ports=3, shared_slots=2)
    _update(cfg["velo"], "velo", htax_port=2)
    return cfg
