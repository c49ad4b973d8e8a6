# amaranth: UnusedElaboratable=no
"""sim.shared: one design converted once, instantiated per clock domain (the NIC and board systems
simulate through it: tests/nic, tests/boards)."""

import re

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from sim.shared import SharedModule


class _Word(data.Struct):
    value: 5
    last: 1


class _Counter(wiring.Component):
    """Counts ``i.value`` into ``total`` on ``sync``."""

    def __init__(self, second_domain=False):
        self.second_domain = second_domain
        super().__init__({"i": In(_Word), "en": In(1).array(2), "total": Out(12)})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.total.eq(self.total + (self.i.value & self.en[0].replicate(5)))
        if self.second_domain:         # used, not defined: a clock (and reset) port
            seen = Signal()
            m.d.other += seen.eq(self.en[1])
        return m


class _Top(wiring.Component):
    def __init__(self):
        self.shared = SharedModule(_Counter(), "counter")
        self.modules = (self.shared,)
        super().__init__({"i": In(_Word), "total_a": Out(12), "total_b": Out(12)})

    def elaborate(self, platform):
        m = Module()        # "fast" stays undefined: a clock and reset port of the top
        for name, domain in (("a", "sync"), ("b", "fast")):
            m.submodules[name] = c = self.shared.instance(domain)
            m.d.comb += [c.i.eq(self.i), c.en[0].eq(1), c.en[1].eq(0), getattr(self, f"total_{name}").eq(c.total)]
        return m


def test_two_instances_of_one_module():
    top = _Top()
    text = verilog.convert(top, name="top", emit_src=False)
    assert top.shared.text.count("module counter(") == 1
    assert "module counter" not in text                 # the top refers to it only
    insts = re.findall(r"^  counter (\w+) \((.*?)\n  \);", text, re.M | re.S)
    assert [name for name, _ in insts] == ["a", "b"]
    ports = {name: dict(re.findall(r"\.(\w+)\(([^)]*)\)", body)) for name, body in insts}
    for name in ("a", "b"):    # every port of the module, the struct as one vector, the array flattened
        assert set(ports[name]) == {"clk", "rst", "i", "en__0", "en__1", "total"}
    assert ports["a"]["clk"] == "clk" and ports["b"]["clk"] == "fast_clk"
    assert ports["b"]["rst"] == "fast_rst"


def test_second_domain_refused():
    with pytest.raises(ValueError, match=r"ports beyond its signature and sync: \['other_clk', 'other_rst'\]"):
        SharedModule(_Counter(second_domain=True), "counter")


@pytest.mark.parametrize("name", ["Counter", "top.counter", "1x", ""])
def test_bad_name(name):
    with pytest.raises(ValueError, match="plain Verilog identifier"):
        SharedModule(_Counter(), name)
