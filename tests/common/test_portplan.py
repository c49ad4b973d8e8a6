# amaranth: UnusedElaboratable=no
"""HtaxPortPlan (rtl/common/portplan.py): the plan's checks with their exact messages, and the tie-off
of unused switch ports seen in simulation."""

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module
from amaranth.sim import Simulator

from rtl.common.portplan import HtaxPortPlan
from rtl.htax import Htax


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(ports=20, units={"host": 0}), ValueError, "ports must be between 2 and 16, not 20"),
    (dict(ports=4.0, units={"host": 0}), TypeError, "ports must be an integer, not 4.0"),
    (dict(ports=6, units={}), ValueError, "units must name at least one unit, not {}"),
    (dict(ports=6, units={"host": 0, "velo": 6}), ValueError, "velo HTAX port must be between 0 and 5, not 6"),
    (dict(ports=6, units={"host": 0, "rma": -1}), ValueError, "rma HTAX port must be between 0 and 5, not -1"),
    (dict(ports=6, units={"host": 0, "rma": "3"}), TypeError, "rma HTAX port must be an integer, not '3'"),
    (dict(ports=6, units={"host": 0, 3: 3}), TypeError, "unit names must be strings, not 3"),
    (dict(ports=8, units={"host": 0, "regs": 1, "rma": 3, "velo": 3}), ValueError,
     "rma and velo HTAX ports must differ, both are 3"),
])
def test_messages(kwargs, exc, message):
    with pytest.raises(exc) as e:
        HtaxPortPlan(**kwargs)
    assert str(e.value) == message


def test_ports():
    plan = HtaxPortPlan(ports=8, units={"host": 0, "velo": 6, "regs": 1})
    assert plan["velo"] == 6
    assert plan.used == [0, 1, 6]
    assert plan.unused == [2, 3, 4, 5, 7]


def test_tie_off_length_message():
    with pytest.raises(ValueError) as e:
        HtaxPortPlan(ports=8, units={"host": 0}).tie_off(Module(), Htax(ports=4).ports)
    assert str(e.value) == "switch_ports must have the plan's 8 ports, not 4"


def _tied(units):
    m = Module()
    m.submodules.switch = sw = Htax(ports=4)
    HtaxPortPlan(ports=4, units=units).tie_off(m, sw.ports)
    return m, sw


def test_tie_off_values():
    """An unused port sends nothing and is ready on every VC, ready2 included."""
    m, sw = _tied({"host": 0, "regs": 2})
    seen = {}

    async def tb(ctx):
        for p in (1, 3):
            seen[p] = (ctx.get(sw.ports[p].tx.valid), ctx.get(sw.ports[p].rx.ready),
                       ctx.get(sw.ports[p].rx.ready2))

    sim = Simulator(m)
    sim.add_testbench(tb)
    sim.run()
    assert seen == {1: (0, 0xF, 0xF), 3: (0, 0xF, 0xF)}


def test_tie_off_leaves_used_ports():
    """A used port is left to its unit: a unit (another module) driving it is no driver conflict."""
    m, sw = _tied({"host": 0, "regs": 2})
    m.submodules.units = units = Module()
    for p in (0, 2):
        units.d.comb += [sw.ports[p].tx.valid.eq(1), sw.ports[p].rx.ready.eq(1), sw.ports[p].rx.ready2.eq(1)]
    rtlil.convert(m, ports=[])
