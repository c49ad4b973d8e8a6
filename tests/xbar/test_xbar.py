# amaranth: UnusedElaboratable=no
"""Crossbar tests: parameters (Amaranth) and random traffic through every port and VC (cocotb)."""

import pytest

from rtl.xbar import Crossbar
from sim.runner import run_cocotb
from sim.tops.xbar import CountingCrossbar


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(link_ports=0, net_ports=1), ValueError, "link_ports must be between 1 and 7, not 0"),
    (dict(link_ports=8, net_ports=1), ValueError, "link_ports must be between 1 and 7, not 8"),
    (dict(link_ports=2, net_ports=5), ValueError, "net_ports must be between 1 and 4, not 5"),
    (dict(link_ports=2, net_ports=1, vcs=3), ValueError, "vcs must be 2 or 4, not 3"),
    (dict(link_ports=2, net_ports=1, depth=11), ValueError, "depth must be between 12 and 64, not 11"),
    (dict(link_ports=2, net_ports=1, nodes=48), ValueError, "nodes must be a power of two, not 48"),
    (dict(link_ports=2.0, net_ports=1), TypeError, "link_ports must be an integer, not 2.0"),
    (dict(link_ports=2, net_ports=1, link_prefetch=3), ValueError, "link_prefetch must be 1 or 2, not 3"),
])
def test_parameter_errors(kwargs, exc, msg):
    with pytest.raises(exc) as e:
        Crossbar(**kwargs)
    assert str(e.value) == msg


@pytest.mark.parametrize("links, nets, params", [
    (2, 1, dict(packets=40)),
    (6, 2, dict(packets=12, gap=0.1, ready=0.8)),
    (1, 1, dict(packets=60, ready=0.3, bad=0.2)),
])
def test_random_traffic(links, nets, params):
    run_cocotb(CountingCrossbar(link_ports=links, net_ports=nets), name=f"xbar_{links}_{nets}",
               test_module="tests.xbar.tb_xbar", testcase="random_traffic",
               params=dict(params, links=links, nets=nets, vcs=4))
