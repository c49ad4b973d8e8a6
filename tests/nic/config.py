"""The configuration the NIC system tests elaborate: the default one cut down so that two NICs make an
affordable Verilator model.

* ``[htax]``: five ports (host 0, register file 1, ATU 2, RMA 3, VELO 4), the ``direct`` switch, two
  shared slots per input;
* ``[system]``: 8 VPIDs, 4 nodes (route table and VELO tables);
* ``[atu]``: 64 TLB entries, 16 GATs, flushes to RMA only;
* ``[xbar]``, ``[regs]``: one link port (back to back), one network port;
* ``[link]``: 32 beats of receive buffer per VC, 8-flit replay buffer.

:func:`system_config` is the same with more link ports and route-table entries (ring: 2, 2 x 2 x 2
torus: 6), :func:`ring_config` the ring of ``bench/system.py``'s 8-node simulation-speed run.
"""

import copy

from rtl.config import load

__all__ = ["small_config", "system_config", "ring_config"]


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


def system_config(link_ports, nodes=4):
    """:func:`small_config` with ``link_ports`` link ports (``[xbar]`` and ``[regs]``) and ``nodes``
    route-table entries (``[system]``): 2 link ports for a ring, 6 for a 3-D torus (a 2 x 2 x 2 torus
    cables all six, :func:`rtl.nic.system.topology`)."""
    cfg = small_config()
    _update(cfg, "system", nodes=nodes)
    _update(cfg, "xbar", link_ports=link_ports)
    _update(cfg, "regs", link_ports=link_ports)
    return cfg


def ring_config(nodes=8):
    """:func:`system_config` of a ring of ``nodes`` nodes (two link ports)."""
    return system_config(2, max(nodes, 4))
