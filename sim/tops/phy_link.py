"""Two link ports over the SerDes PHY: each port behind a :class:`rtl.phy.SerdesPhy` and a
:class:`~sim.tops.dcu_model.DcuModel`, the models' lines joined, traffic on every VC both ways
(:class:`PhyLinkLoop`).  Not part of the NIC: the test of the PHY with the link protocol on top.

Four clocks: ``sync`` is node a's core, ``core_b`` node b's, ``line_a`` and ``line_b`` the two
transmit word clocks (a testbench gives them slightly different periods, as two boards' oscillators
would be).
"""

from amaranth.hdl import DomainRenamer, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.phit import PhitCtl
from rtl.link.link_port import COUNTERS, LinkPort
from rtl.phy import SerdesPhy
from rtl.phy.phy import PhyMode, RxCounters, TxCounters
from rtl.phy.prbs import PrbsPattern

from .dcu_model import DcuModel
from .link import attach_traffic, traffic_members

__all__ = ["PhyLinkLoop", "PHY_STATUS"]

PHY_STATUS = ("tx_ready", "rx_ready", "tx_retries", "rx_retries", "tx_dropped", "rx_underflows")


class PhyLinkLoop(wiring.Component):
    """Parameters
    ----------
    lock_stable : int
        The PHYs' lock hold (core cycles; short in simulation).
    idle_gap : int
        The link ports' (1: their idle control flits fit the line, ``docs/phy.md``).
    **link_params
        :class:`rtl.link.LinkPort`'s.

    Members
    -------
    packets, src_stall, dst_stall, fixed, fixed_cw, fixed_pw, replay_timeout : In
        As :class:`sim.tops.link.LinkLoop`'s.
    mode, pattern, prbs_clear, restart : In
        To both PHYs.
    retrain : In(1)
        To both link ports.
    a_loopback, b_loopback : In(1)
        Each PHY's internal loopback.
    a_error_rate, b_error_rate : In(32)
        Wrong bytes at the receiver of ``a`` / ``b`` (per word, times 2**32).
    a_cut, b_cut : In(1)
        The line into ``a`` / ``b`` is cut.
    <x>_<counter>, <x>_link_error : Out
        Link port ``<x>``'s counters and state.
    <x>_<status> : Out
        PHY ``<x>``'s members named in ``PHY_STATUS``; ``<x>_tx_<field>``, ``<x>_rx_<field>``: the fields
        of its :class:`~rtl.phy.phy.TxCounters` and :class:`~rtl.phy.phy.RxCounters`.
    <x>_injected : Out(32)
        Wrong words made by ``<x>``'s receiver model.
    <x>_tx_phit, <x>_tx_ctl, <x>_tx_data, <x>_rx_phit, <x>_rx_ctl : Out
        Port ``<x>``'s phits to its PHY (``tx_data``: of a data flit) and from it (latency figures).
    <x><v>_sent, <x><v>_received, <x><v>_errors, <x><v>_payload : Out(32)
        Traffic of VC ``<v>`` sent by ``<x>``.
    """

    def __init__(self, *, lock_stable=64, idle_gap=1, **link_params):
        self.a = LinkPort(idle_gap=idle_gap, **link_params)
        self.b = LinkPort(idle_gap=idle_gap, **link_params)
        self.params = p = self.a.params
        self._phy = {x: SerdesPhy(reset_pulse=8, lock_stable=lock_stable, lock_timeout=1 << 14)
                     for x in "ab"}
        members = {"packets": In(32), "src_stall": In(32), "dst_stall": In(32), "fixed": In(1),
                   "fixed_cw": In(2), "fixed_pw": In(4), "replay_timeout": In(16, init=512),
                   "mode": In(PhyMode), "pattern": In(PrbsPattern), "prbs_clear": In(1),
                   "restart": In(1), "retrain": In(1)}
        for x in "ab":
            members.update({f"{x}_loopback": In(1), f"{x}_error_rate": In(32), f"{x}_cut": In(1),
                            f"{x}_link_error": Out(1), f"{x}_injected": Out(32),
                            f"{x}_tx_phit": Out(16), f"{x}_tx_ctl": Out(PhitCtl), f"{x}_tx_data": Out(1),
                            f"{x}_rx_phit": Out(16), f"{x}_rx_ctl": Out(PhitCtl)})
            for side, layout in (("tx", TxCounters), ("rx", RxCounters)):
                for field, member in data.Layout.cast(layout):
                    members[f"{x}_{side}_{field}"] = Out(member.shape)
            for name in COUNTERS:
                members[f"{x}_{name}"] = Out(p.counter_bits)
            for name in PHY_STATUS:
                members[f"{x}_{name}"] = self._phy["a"].signature.members[name]
        members.update(traffic_members(p.vcs))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        # core_b, line_a and line_b stay undefined here: the top's clock and reset ports
        core = {"a": "sync", "b": "core_b"}
        ports = {x: DomainRenamer(core[x])(port) for x, port in (("a", self.a), ("b", self.b))}
        phys = {x: DomainRenamer(core[x])(phy) for x, phy in self._phy.items()}
        self._dcus = dcus = {"a": DcuModel(tx_domain="line_a", rx_domain="line_b", seed=0x51),
                "b": DcuModel(tx_domain="line_b", rx_domain="line_a", seed=0x73)}
        for x, y, seed in (("a", "b", 0x1234567), ("b", "a", 0x7654321)):
            port, phy, dcu = self.a if x == "a" else self.b, self._phy[x], dcus[x]
            m.submodules[f"port_{x}"] = ports[x]
            m.submodules[f"phy_{x}"] = phys[x]
            m.submodules[f"dcu_{x}"] = dcu
            wiring.connect(m, dcu.lane, phy.lane)
            m.d.comb += [dcu.line_rx.eq(dcus[y].line_tx), dcu.error_rate.eq(getattr(self, f"{x}_error_rate")),
                         dcu.cut.eq(getattr(self, f"{x}_cut")), getattr(self, f"{x}_injected").eq(dcu.injected),
                         phy.link.tx_phit.eq(port.tx_phit), phy.link.tx_ctl.eq(port.tx_ctl),
                         port.rx_phit.eq(phy.link.rx_phit), port.rx_ctl.eq(phy.link.rx_ctl),
                         phy.mode.eq(self.mode), phy.pattern.eq(self.pattern),
                         phy.prbs_clear.eq(self.prbs_clear), phy.restart.eq(self.restart),
                         phy.loopback.eq(getattr(self, f"{x}_loopback")),
                         port.replay_timeout.eq(self.replay_timeout),
                         getattr(self, f"{x}_link_error").eq(port.link_error), port.retrain.eq(self.retrain),
                         getattr(self, f"{x}_tx_phit").eq(port.tx_phit), getattr(self, f"{x}_tx_ctl").eq(port.tx_ctl),
                         getattr(self, f"{x}_tx_data").eq(port.tx_data_phit),
                         getattr(self, f"{x}_rx_phit").eq(phy.link.rx_phit),
                         getattr(self, f"{x}_rx_ctl").eq(phy.link.rx_ctl)]
            for side, layout in (("tx", TxCounters), ("rx", RxCounters)):
                for field, _ in data.Layout.cast(layout):
                    m.d.comb += getattr(self, f"{x}_{side}_{field}").eq(getattr(getattr(phy, side), field))
            for name in COUNTERS:
                m.d.comb += getattr(self, f"{x}_{name}").eq(getattr(port, name))
            for name in PHY_STATUS:
                m.d.comb += getattr(self, f"{x}_{name}").eq(getattr(phy, name))
            attach_traffic(m, self, x, port, self.b if x == "a" else self.a, seed, vcs=self.params.vcs,
                           src_domain=core[x], dst_domain=core[y])
        return m
