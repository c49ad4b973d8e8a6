"""The crossbar's routing step against sim.netroute.table_step, over every entry, dateline rule and hop
count it can see."""

import itertools

import pytest
from amaranth.sim import Simulator

from rtl.common.net import MAX_HOPS, RouteError
from rtl.xbar.route import RouteStep
from sim.netroute import table_step


def _check(link_ports, net_ports, from_link, dateline, hop_counts=(0, MAX_HOPS - 1, MAX_HOPS)):
    dut = RouteStep(link_ports=link_ports, net_ports=net_ports, from_link=from_link, dateline=dateline)
    cases = itertools.product(range(64), (0, 1), range(32), (0, 1), hop_counts, (0, 1))

    async def bench(ctx):
        for entry, in_table, rule, in_dateline, hops, cls in cases:
            ctx.set(dut.entry.as_value(), entry)
            ctx.set(dut.in_table, in_table)
            ctx.set(dut.port_route.as_value(), rule)
            ctx.set(dut.in_dateline, in_dateline)
            ctx.set(dut.hops, hops)
            ctx.set(dut.cls, cls)
            # the reference: a one-entry table (or none, for a destination beyond it), the rule at port 0
            ref = table_step([entry] if in_table else [], 0, hops=hops, in_port=0 if from_link else None,
                             in_dateline=in_dateline, port_routes=[rule], link_ports=link_ports,
                             net_ports=net_ports, dateline=dateline)
            case = (entry, in_table, rule, in_dateline, hops, cls, ref)
            assert ctx.get(dut.error) == ref.error, case
            if ref.error != RouteError.NONE:
                continue
            assert ctx.get(dut.port) == (link_ports + ref.port if ref.eject else ref.port), case
            assert ctx.get(dut.vc) == 2 * cls + ref.dateline, case
            assert ctx.get(dut.next_hops) == ref.hops, case

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("from_link", [True, False])
@pytest.mark.parametrize("dateline", [True, False])
def test_every_entry(from_link, dateline):
    """Every entry, in and beyond the table, every dateline rule and input VC, hop counts around the
    limit, both classes, on a 6-link 2-network-port crossbar, at a link input and a network input."""
    _check(6, 2, from_link, dateline)


def test_small_crossbars():
    for links, nets in ((1, 1), (7, 4), (3, 2)):
        _check(links, nets, True, True, hop_counts=(1,))
