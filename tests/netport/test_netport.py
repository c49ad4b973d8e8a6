# amaranth: UnusedElaboratable=no
"""Network-port tests: parameters (Amaranth) and both directions against stream models (cocotb)."""

import pytest

from rtl.common.net import NetClass, NetUnit
from rtl.netport import NIC_SINKS, NIC_SOURCES, NetworkPort
from sim.runner import run_cocotb
from sim.tops.netport import NetPortTop


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(sinks=(NetUnit.VELO, NetUnit.VELO)), ValueError, "sinks must be distinct, not [<NetUnit.VELO: 1>, "
                                                           "<NetUnit.VELO: 1>]"),
    (dict(entries=0), ValueError, "entries must be between 1 and 32768, not 0"),
    (dict(sources=()), ValueError, "a network port needs at least one source and one sink"),
])
def test_parameter_errors(kwargs, exc, msg):
    kw = dict(sources=NIC_SOURCES, sinks=NIC_SINKS, entries=16) | kwargs
    with pytest.raises(exc) as e:
        NetworkPort(**kw)
    assert str(e.value) == msg


@pytest.mark.parametrize("testcase", ["transmit", "receive"])
def test_netport(testcase):
    params = dict(sources=[c.value for c in NIC_SOURCES], sinks=[u.value for u in NIC_SINKS], entries=16,
                  packets=40)
    run_cocotb(NetPortTop(sources=NIC_SOURCES, sinks=NIC_SINKS, entries=16), name="netport",
               test_module="tests.netport.tb_netport", testcase=testcase, params=params)


def test_one_class_two_units():
    """Only requests, delivered to two units, always ready: the merge paths of a single class."""
    sources, sinks = (NetClass.REQUEST, NetClass.REQUEST), (NetUnit.VELO, NetUnit.RMA_COMPLETER)
    params = dict(sources=[c.value for c in sources], sinks=[u.value for u in sinks], entries=8, packets=30,
                  ready=1.0, gap=0.0)
    run_cocotb(NetPortTop(sources=sources, sinks=sinks, entries=8), name="netport_small",
               test_module="tests.netport.tb_netport", testcase="transmit", params=params)
