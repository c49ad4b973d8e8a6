"""Integration top for tests and benchmarks: HTAX crossbar + register file + ATU (fig. 5-9, 7-1).

Not a unit of its own (no ``UNITS`` entry): it composes the real :class:`rtl.htax.Htax`, the generated
register file and :class:`rtl.atu.Atu` so that cocotb drives the system as software and FUs do:

* ``htax``: the host's HTAX port (port ``[atu] host_port``), in the orientation
  :class:`sim.host.HostModel` expects (``tx`` carries beats from the NIC to the host).
* ``fu<p>`` for each ``p`` in ``[atu] fu_ports``: FU models, same orientation.
* ``probe``: copies of the ATU's own link handshakes and of the first FU's, so benchmarks count cycles
  at the ATU port and as a FU sees them.
Unused HTAX ports are tied off (never send, always ready).
"""

import copy

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.atu import atu_from_config, connect_regs
from rtl.common.htax import HtaxPortSignature, expose_port
from rtl.common.params import check_choice
from rtl.common.portplan import HtaxPortPlan
from rtl.htax import from_config as htax_from_config
from rtl.regs.generate import build as build_regs

__all__ = ["AtuSystem", "SWITCHES", "with_switch"]

SWITCHES = ("pipelined", "direct")


def with_switch(cfg, switch):
    """A copy of ``cfg`` whose ``[htax]`` section selects the switch: ``"pipelined"``
    (:class:`~rtl.htax.HtaxPipelined`, the default configuration's) or ``"direct"`` (the 2-cycle
    :class:`~rtl.htax.Htax`).  Tests and benchmarks choose the switch only through this function."""
    check_choice("switch", switch, SWITCHES)
    out = copy.deepcopy(cfg)
    out["htax"]["variant"] = switch
    return out


class AtuSystem(wiring.Component):
    """Host port, register file, ATU and FU ports around one HTAX.

    Members
    -------
    htax : Out(HtaxPortSignature)
        Host side.
    fu<p> : Out(HtaxPortSignature)
        FU side for each FU port ``p``.
    probe : Out(8)
        bit 0: a beat moves on the ATU's rx link, 1: on its tx link, 2: ``flush_start`` reaches the
        ATU, 3: ``flush_done``, 4: a packet header moves from the first FU of ``[atu] fu_ports`` into
        the switch, 5: one moves from the switch to that FU; 6..7 unused.
    """

    def __init__(self, cfg, **atu_overrides):
        self.cfg = cfg
        self.atu = atu_from_config(cfg, **atu_overrides)
        # version register pinned to 0: the test design must not change (and rebuild) with every commit
        self.regs = build_regs(cfg, revision=(0, False))
        a = cfg["atu"]
        if cfg["regs"]["host_port"] != a["host_port"]:
            raise ValueError("[regs] host_port and [atu] host_port must agree")
        members = {"htax": Out(HtaxPortSignature()), "probe": Out(8)}
        for p in self.atu.fu_ports:
            members[f"fu{p}"] = Out(HtaxPortSignature())
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        m.submodules.switch = sw = htax_from_config(cfg)
        m.submodules.regs = rf = self.regs
        m.submodules.atu = atu = self.atu
        a = cfg["atu"]
        wiring.connect(m, rf.htax, sw.ports[cfg["regs"]["htax_port"]])
        wiring.connect(m, atu.htax, sw.ports[a["htax_port"]])
        for name, p in [("htax", a["host_port"])] + [(f"fu{p}", p) for p in atu.fu_ports]:
            # the model's tx is what the switch sends to port p, its rx what it sends into the switch
            expose_port(m, getattr(self, name), sw.ports[p])
        HtaxPortPlan(ports=cfg["htax"]["ports"], units={
            "host": a["host_port"], "regs": cfg["regs"]["htax_port"], "atu": a["htax_port"],
            **{f"fu{p}": p for p in atu.fu_ports}}).tie_off(m, sw.ports)
        fu = getattr(self, f"fu{atu.fu_ports[0]}") if atu.fu_ports else None
        if fu is not None:
            m.d.comb += [self.probe[4].eq(fu.rx.header_moves()), self.probe[5].eq(fu.tx.header_moves())]
        connect_regs(m, atu, rf)
        m.d.comb += self.probe[:4].eq(atu.htax.rx.transfer() | (atu.htax.tx.transfer() << 1)
                                      | (atu.regs.atu.flush.start << 2) | (atu.regs.atu.flush.done_set << 3))
        return m
