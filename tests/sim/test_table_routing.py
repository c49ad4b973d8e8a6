"""Table routing in the routing software and its reference step (sim/routing.py, sim/netroute.py
``table_step``): per-crossbar route tables and per-port dateline registers stay free of
channel-dependency cycles, route around a failed link, and drop bad input (no route, a missing port,
a loop) where it is found."""

import pytest

from rtl.common.net import EJECT, MAX_HOPS, RouteError
from sim.netroute import port_route, route_entry, table_step
from sim.routing import (
    Hop,
    Topology,
    back_to_back,
    dependency_graph,
    find_cycle,
    ring,
    torus_2d,
    torus_3d,
    walk,
)

TOPOLOGIES = [
    back_to_back(), ring(k=2), ring(k=5), ring(k=8), torus_2d(kx=4, ky=3), torus_3d(kx=3, ky=2, kz=4),
    torus_3d(kx=4, ky=4, kz=4), Topology(shape=(4, 3), wrap=False),
    ring(k=6, ports={2: (5, 3), 3: (1, 0)}), torus_2d(kx=3, ky=3, ports={4: (7, 6, 1, 0)}),
]


def tables_of(topo, **kwargs):
    return ([topo.crossbar_table(n, **kwargs) for n in range(topo.nodes)],
            [topo.port_routes(n) for n in range(topo.nodes)])


@pytest.mark.parametrize("topo", TOPOLOGIES, ids=repr)
def test_table_routing_has_no_dependency_cycle(topo):
    assert find_cycle(dependency_graph(topo)) is None


@pytest.mark.parametrize("k", [4, 5, 8])
def test_ring_tables_without_dateline_have_a_cycle(k):
    cycle = find_cycle(dependency_graph(ring(k=k), dateline=False))
    assert cycle is not None and all(h.dateline == 0 for h in cycle)


def test_port_routes_of_a_ring():
    """Node 0 of a ring of 4: packets in at -x (1) go on through +x (0) and came over the wrap link
    (from node 3); packets in at +x go on through -x and did not."""
    regs = ring(k=4).port_routes(0)
    assert regs == [port_route(straight=1, wrapped=0), port_route(straight=0, wrapped=1)]
    assert ring(k=4).port_routes(3) == [port_route(straight=1, wrapped=1), port_route(straight=0, wrapped=0)]
    # a mesh end: nothing goes on through the uncabled side, nothing wraps
    mesh = Topology(shape=(3,), wrap=False)
    assert mesh.port_routes(0) == [port_route(straight=None)]
    assert back_to_back().port_routes(1) == [0, port_route(straight=None)]


def _uses(w, topo, link):
    ends = {link, topo.peer(*link)}
    return any((h.node, h.port) in ends for h in w.hops)


@pytest.mark.parametrize("topo, failed", [
    (ring(k=8), [(1, 0)]),
    (ring(k=5), [(4, 0)]),                              # the wrap-around link itself
    (torus_2d(kx=4, ky=4), [(5, 0), (2, 3)]),           # one x link and one y link
    (torus_3d(kx=3, ky=3, kz=3), [(13, 5)]),
], ids=repr)
def test_tables_route_around_failed_links(topo, failed):
    """Every pair is delivered without using a failed link; pairs whose minimal route did not use
    one keep it; the dependency graph stays acyclic."""
    tables, regs = tables_of(topo, failed=failed)
    for src in range(topo.nodes):
        for dst in range(topo.nodes):
            w = walk(topo, src, dst, tables=tables, port_routes=regs)
            assert w.delivered and w.node == dst, (src, dst, w)
            assert not any(_uses(w, topo, link) for link in failed), (src, dst, w)
            minimal = walk(topo, src, dst)
            if not any(_uses(minimal, topo, link) for link in failed):
                assert w.hops == minimal.hops == topo.path(src, dst)
            else:
                assert len(w.hops) > len(minimal.hops) or w.hops != minimal.hops
    assert find_cycle(dependency_graph(topo, tables=tables, port_routes=regs)) is None


def test_two_failed_links_split_a_ring():
    with pytest.raises(ValueError, match=r"^no dimension-order route from node 0 to node 2 avoids the failed links$"):
        ring(k=6).crossbar_table(0, failed=[(1, 0), (4, 0)])
    with pytest.raises(ValueError, match=r"^failed link \(0, 1\): port 1 of node 0 has no cable$"):
        back_to_back().crossbar_table(0, failed=[(0, 1)])


def test_bad_tables_are_dropped_where_found():
    topo = ring(k=6)
    tables, regs = tables_of(topo)
    # a destination beyond the table (the network), at the first crossbar
    w = walk(topo, 2, 6, tables=tables, port_routes=regs)
    assert (w.node, w.hops, w.error) == (2, (), RouteError.NO_ROUTE)
    # padding entries are not valid
    padded = [topo.crossbar_table(n, entries=8) for n in range(6)]
    assert walk(topo, 2, 7, tables=padded, port_routes=regs).error == RouteError.NO_ROUTE
    # an entry cleared at the second crossbar of the route
    bad = [list(t) for t in tables]
    bad[1][3] = 0
    w = walk(topo, 0, 3, tables=bad, port_routes=regs)
    assert (w.node, w.hops, w.error) == (1, (Hop(0, 0, 0),), RouteError.NO_ROUTE)
    # a link port the crossbar does not have, and a network port it does not have
    bad = [list(t) for t in tables]
    bad[1][3] = route_entry(port=5)
    bad[2][2] = route_entry(net_port=1)
    assert walk(topo, 0, 3, tables=bad, port_routes=regs).error == RouteError.MISSING_PORT
    assert walk(topo, 2, 2, tables=bad, port_routes=regs).error == RouteError.MISSING_PORT
    assert walk(topo, 2, 2, tables=bad, port_routes=regs, net_ports=2).net_port == 1
    # a loop: node 1 sends packets for 3 back to node 0, which sends them on to node 1
    bad = [list(t) for t in tables]
    bad[1][3] = route_entry(port=1)
    w = walk(topo, 0, 3, tables=bad, port_routes=regs)
    assert (w.error, len(w.hops)) == (RouteError.LOOP, MAX_HOPS)
    assert [h.node for h in w.hops[:4]] == [0, 1, 0, 1]
    # an entry that ejects at the wrong node delivers there (the network port checks dst_node)
    bad = [list(t) for t in tables]
    bad[1][3] = route_entry(net_port=0)
    w = walk(topo, 0, 3, tables=bad, port_routes=regs)
    assert (w.node, w.net_port) == (1, 0)
    # a mesh end: an entry through the uncabled side loses the packet there
    mesh = Topology(shape=(3,), wrap=False)
    mt, mr = tables_of(mesh)
    mt[0][1] = route_entry(port=1)
    w = walk(mesh, 0, 1, tables=mt, port_routes=mr, link_ports=2)
    assert w.uncabled and w.hops == (Hop(0, 1, 0),)


def test_table_step():
    regs = [port_route(straight=1, wrapped=1), port_route(straight=0), 0]
    table = [route_entry(port=0), route_entry(port=1), route_entry(port=1, dateline=1), route_entry(net_port=1), 0]
    step = table_step
    kw = dict(port_routes=regs, link_ports=3, net_ports=2)
    # from a network port: VC 0 unless the entry says 1; hops count up
    assert step(table, 1, hops=0, in_port=None, in_dateline=1, **kw) == step(table, 1, hops=0, in_port=2,
                                                                             in_dateline=1, **kw)
    s = step(table, 1, hops=0, in_port=None, in_dateline=0, **kw)
    assert (s.error, s.port, s.eject, s.dateline, s.hops) == (RouteError.NONE, 1, False, 0, 1)
    assert step(table, 2, hops=7, in_port=None, in_dateline=0, **kw).dateline == 1
    assert step(table, 2, hops=7, in_port=None, in_dateline=0, dateline=False, **kw).dateline == 0
    # straight on from port 0 (wrapped) to port 1: VC 1; from port 1 (not wrapped) to port 0: the VC it came on
    assert step(table, 1, hops=3, in_port=0, in_dateline=0, **kw).dateline == 1
    assert step(table, 0, hops=3, in_port=1, in_dateline=0, **kw).dateline == 0
    assert step(table, 0, hops=3, in_port=1, in_dateline=1, **kw).dateline == 1
    # a turn (port 2 has no straight) starts on VC 0 whatever it came on
    assert step(table, 0, hops=3, in_port=2, in_dateline=1, **kw).dateline == 0
    # eject: no hop counted, no hop limit
    s = step(table, 3, hops=MAX_HOPS, in_port=0, in_dateline=1, **kw)
    assert (s.error, s.port, s.eject, s.hops) == (RouteError.NONE, 1, True, MAX_HOPS)
    assert step(table, 3, hops=0, in_port=0, in_dateline=1, **{**kw, "net_ports": 1}).error == RouteError.MISSING_PORT
    assert step(table, 0, hops=MAX_HOPS, in_port=None, in_dateline=0, **kw).error == RouteError.LOOP
    assert step(table, 0, hops=MAX_HOPS - 1, in_port=None, in_dateline=0, **kw).hops == MAX_HOPS
    assert step(table, 4, hops=0, in_port=None, in_dateline=0, **kw).error == RouteError.NO_ROUTE
    assert step(table, 5, hops=0, in_port=None, in_dateline=0, **kw).error == RouteError.NO_ROUTE
    assert step(table, 1, hops=0, in_port=None, in_dateline=0, **{**kw, "link_ports": 1}).error == \
        RouteError.MISSING_PORT


@pytest.mark.parametrize("call, message", [
    (lambda: route_entry(), "a route entry names a link port or a network port, not both or neither"),
    (lambda: route_entry(port=1, net_port=0), "a route entry names a link port or a network port, not both or neither"),
    (lambda: route_entry(port=EJECT), f"link port must be between 0 and {EJECT - 1}, not {EJECT}"),
    (lambda: route_entry(net_port=8), f"network port must be between 0 and {15 - EJECT}, not 8"),
    (lambda: port_route(straight=9), f"straight must be a link port between 0 and {EJECT - 1}, not 9"),
    (lambda: ring(k=4).crossbar_table(0, entries=3), "entries must be at least 4, not 3"),
])
def test_messages(call, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        call()
