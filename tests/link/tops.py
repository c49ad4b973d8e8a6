"""Simulation tops for the link port tests: two ports side by side, PHY sides left open."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.link import LinkPort

__all__ = ["LinkPair"]


class LinkPair(wiring.Component):
    """Ports ``a`` and ``b``; every member of each appears as ``a_<name>`` / ``b_<name>``.

    The testbench moves phits between ``a_tx_phit`` and ``b_rx_phit`` (and back) through a channel.
    """

    def __init__(self, **params):
        self.a = LinkPort(**params)
        self.b = LinkPort(**params)
        self.params = self.a.params
        members = {}
        for side in ("a", "b"):
            for name, member in self.a.signature.members.items():
                members[f"{side}_{name}"] = member
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.a = self.a
        m.submodules.b = self.b
        for side, port in (("a", self.a), ("b", self.b)):
            for name, member in port.signature.members.items():
                outer, inner = getattr(self, f"{side}_{name}"), getattr(port, name)
                if member.is_signature:
                    for v in range(len(inner)):
                        wiring.connect(m, wiring.flipped(outer[v]), inner[v])
                elif member.flow == In:
                    m.d.comb += inner.eq(outer)
                else:
                    assert member.flow == Out
                    m.d.comb += outer.eq(inner)
        return m
