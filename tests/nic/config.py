"""The configuration the NIC system tests elaborate: the default one cut down so that two NICs make an
affordable Verilator model.

* ``[htax]``: five ports (host 0, register file 1, ATU 2, RMA 3, VELO 4), the ``direct`` switch, two
  shared slots per input;
* ``[system]``: 8 VPIDs, 4 nodes (route table and VELO tables);
* ``[atu]``: 64 TLB entries, 16 GATs, flushes to RMA only;
* ``[xbar]``, ``[regs]``: one link port (back to back), one network port;
* ``[link]``: 32 beats of receive buffer per VC, 8-flit replay buffer.

:func:`ring_config` is the same with two link ports (``+x``, ``-x``) and room for ``nodes`` nodes, for
:class:`rtl.nic.system.NicSystem` rings (``bench/system.py``'s 8-node simulation-speed run).
"""

import copy

from rtl.config import load

__all__ = ["small_config", "ring_config"]


def _update(cfg, name, **values):
    """``cfg[name].update(values)``, refusing keys the section does not have."""
    for key in values:
        if key not in cfg[name]:
            raise KeyError(f"[{name}] has no key {key!r}")
    cfg[name].update(values)


def small_config():
    cfg = copy.deepcopy(load())
    _update(cfg, "system", vpids=8, nodes=4)
    _update(cfg, "htax", ports=5, variant="direct", shared_slots=2)
    _update(cfg, "atu", fu_ports=[3], tlb_entries=64, gat_entries=16, request_fifo=16, reorder_entries=8)
    _update(cfg, "velo", htax_port=4)
    _update(cfg, "xbar", link_ports=1, net_ports=1)
    _update(cfg, "regs", link_ports=1)
    _update(cfg, "link", rx_buffer_beats=32, replay_flits=8)
    return cfg


def ring_config(nodes=8):
    cfg = small_config()
    _update(cfg, "system", nodes=max(nodes, cfg["system"]["nodes"]))
    _update(cfg, "xbar", link_ports=2)
    _update(cfg, "regs", link_ports=2)
    return cfg
