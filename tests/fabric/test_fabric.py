"""Fabric tests (cocotb): several nodes' network layers wired in HDL (sim/tops/fabric.py)."""

import pytest

from sim.routing import back_to_back, ring, torus_2d, torus_3d
from sim.runner import run_cocotb
from sim.tops.fabric import Fabric

TOPOLOGIES = {
    "b2b": (back_to_back, {}),
    "ring4": (ring, {"k": 4}),
    "ring6": (ring, {"k": 6}),
    "torus3x3": (torus_2d, {"kx": 3, "ky": 3}),
    "torus2x2x2": (torus_3d, {"kx": 2, "ky": 2, "kz": 2}),
}


def fabric(name, **kw):
    make, args = TOPOLOGIES[name]
    topo = make(**args)
    return topo, Fabric(topo, **kw)


@pytest.mark.long_build
@pytest.mark.parametrize("name, params", [
    ("b2b", dict(packets=60, flit_error=1e-2)),
    pytest.param("ring4", dict(packets=25, flit_error=1e-3), marks=pytest.mark.soak),
    pytest.param("torus3x3", dict(packets=10, flit_error=1e-3), marks=pytest.mark.soak),
    pytest.param("torus2x2x2", dict(packets=12, flit_error=1e-3), marks=pytest.mark.soak),
])
def test_stream_traffic(name, params):
    """Random traffic through the stream models, bit errors on every link: every packet once, in order."""
    topo, top = fabric(name, latency=2)
    run_cocotb(top, name=f"fabric_{name}", test_module="tests.fabric.tb_fabric", testcase="stream_traffic",
               params=dict(params, nodes=topo.nodes, shape=list(topo.shape), wrap=topo.wrap))


#: small link buffers (5-beat flits, 8 beats of receive buffer per VC), so the buffers of a ring fill
#: (and, without the dateline, deadlock) within a short run
SMALL_LINKS = {"flit_phits": 22, "rx_buffer_beats": 8}


@pytest.mark.long_build
@pytest.mark.parametrize("dateline, expect", [
    (True, "flow"),
    pytest.param(False, "stall", marks=pytest.mark.soak),   # its own build (~2 min): the proof that it can fail
])
def test_ring_deadlock_needs_the_dateline(dateline, expect):
    """Saturated wrap-around traffic on a 6-node ring (every node to the node 3 ahead, so two of every
    packet's three hops are transit) keeps flowing with the dateline and stops without it (so the test
    can fail).  (On a 4-node ring, where half of the packets in every buffer are about to leave the
    ring, the cycle of full buffers did not form in 100,000 cycles.)"""
    topo, top = fabric("ring6", traffic=True, dateline=dateline, link=SMALL_LINKS)
    run_cocotb(top, name=f"fabric_ring6_traffic_{int(dateline)}", test_module="tests.fabric.tb_fabric",
               testcase="hdl_traffic", params=dict(nodes=topo.nodes, rate=1.0, offset=3, phases=4,
                                                   cycles=4000, expect=expect))


@pytest.mark.long_build
def test_request_response_ring():
    """Saturated requests, every one answered by its receiver, on the 6-node ring (the deadlock test's
    build) with bit errors on every link: both classes keep delivering."""
    topo, top = fabric("ring6", traffic=True, link=SMALL_LINKS)
    run_cocotb(top, name="fabric_ring6_traffic_1", test_module="tests.fabric.tb_fabric", testcase="hdl_traffic",
               params=dict(nodes=topo.nodes, rate=1.0, respond=True, phases=3, cycles=3000, flit_error=1e-3))


@pytest.mark.soak
def test_request_response_torus():
    """The same on the 2 x 2 x 2 torus with default links."""
    topo, top = fabric("torus2x2x2", traffic=True)
    run_cocotb(top, name="fabric_torus2x2x2_traffic", test_module="tests.fabric.tb_fabric",
               testcase="hdl_traffic", params=dict(nodes=topo.nodes, rate=1.0, respond=True, phases=10, cycles=5000,
                                                   flit_error=1e-3))


@pytest.mark.soak
def test_ring_deadlock_soak():
    """The issue's 100,000 cycles of saturated wrap-around traffic on the ring."""
    topo, top = fabric("ring6", traffic=True, link=SMALL_LINKS)
    run_cocotb(top, name="fabric_ring6_traffic_1", test_module="tests.fabric.tb_fabric", testcase="hdl_traffic",
               params=dict(nodes=topo.nodes, rate=1.0, offset=3, phases=20, cycles=5000))
