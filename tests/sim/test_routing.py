"""The routing software (sim/routing.py): topologies, wiring, dimension-order route tables with the
dateline VC change, the walker and the channel dependency graph (docs/network.md)."""

import os
import random

import pytest

from rtl.common.net import RouteError
from sim.netroute import route_entry
from sim.routing import (
    DIRECTIONS,
    Hop,
    Topology,
    back_to_back,
    dependency_graph,
    find_cycle,
    graph_of_walks,
    ring,
    torus_2d,
    torus_3d,
    walk,
)

# -- an oracle that knows nothing of sim/routing.py's arithmetic ------------------------------------------


def ring_oracle(k, s, t, wrap=True):
    """``(direction, [dateline VC of every hop])`` of the minimal route from ``s`` to ``t`` in a ring
    of ``k`` (``+1``: up, tie up), found by stepping around the ring: VC 1 once a hop has crossed the
    wrap-around link (between ``k - 1`` and 0)."""
    if s == t:
        return 0, []
    if wrap:
        up = min(n for n in range(1, k + 1) if (s + n) % k == t)
        down = min(n for n in range(1, k + 1) if (s - n) % k == t)
        step, n = (1, up) if up <= down else (-1, down)
    else:
        step, n = (1 if t > s else -1), abs(t - s)
    vcs, crossed, c = [], False, s
    for _ in range(n):
        vcs.append(1 if crossed else 0)
        crossed |= c == (k - 1 if step > 0 else 0)     # this hop takes the wrap-around link
        c = (c + step) % k
    assert c == t
    return step, vcs


def check_walk(topo, src, dst, w, net_port=0):
    """``w`` (a :class:`Walk` of the route from ``src`` to ``dst``) reaches ``dst`` minimally, in
    dimension order, on the dateline VCs of :func:`ring_oracle`, through the default-numbered ports or
    whatever ``topo.ports`` says."""
    assert w.delivered and w.node == dst and w.net_port == net_port and w.error == RouteError.NONE
    s, t = topo.coords(src), topo.coords(dst)
    expected = []           # (node, direction index, VC) of every hop
    c = list(s)
    for dim, k in enumerate(topo.shape):
        step, vcs = ring_oracle(k, s[dim], t[dim], topo.wrap)
        for vc in vcs:
            d = 2 * dim + (step < 0)
            expected.append((topo.node_id(c), d, vc))
            c[dim] = (c[dim] + step) % k
    assert [(h.node, h.dateline) for h in w.hops] == [(n, vc) for n, _d, vc in expected]
    assert [h.port for h in w.hops] == [topo.ports(n)[d] for n, d, _vc in expected]


def seeded(name):
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print(f"{name}: seed {seed} (replay with SEED={seed})")
    return random.Random(seed)


# -- topologies and wiring ----------------------------------------------------------------------------------


def test_node_numbering_is_x_fastest():
    topo = torus_3d(kx=3, ky=4, kz=5)
    assert topo.nodes == 60 and topo.dims == 3
    assert topo.coords(0) == (0, 0, 0) and topo.coords(1) == (1, 0, 0)
    assert topo.coords(3) == (0, 1, 0) and topo.coords(12) == (0, 0, 1) and topo.coords(59) == (2, 3, 4)
    assert all(topo.node_id(topo.coords(n)) == n for n in range(topo.nodes))
    assert ring(k=5).coords(4) == (4,) and torus_2d(kx=2, ky=3).node_id((1, 2)) == 5


def test_back_to_back_has_one_link():
    topo = back_to_back()
    assert topo.nodes == 2 and topo.wiring() == {(0, 0): (1, 1), (1, 1): (0, 0)}
    assert [topo.link_ports(n) for n in (0, 1)] == [1, 2]
    assert topo.direction(0, 0) == "+x" and topo.direction(0, 1) is None and topo.direction(1, 0) is None
    # one link port on each side, if node 1 is numbered so
    one = back_to_back(ports={1: (1, 0)})
    assert one.wiring() == {(0, 0): (1, 0), (1, 0): (0, 0)} and [one.link_ports(n) for n in (0, 1)] == [1, 1]


def test_ring_of_two_has_two_parallel_links():
    assert ring(k=2).wiring() == {(0, 0): (1, 1), (1, 1): (0, 0), (1, 0): (0, 1), (0, 1): (1, 0)}
    assert ring(k=1).wiring() == {} and ring(k=1).link_ports(0) == 0
    assert repr(ring(k=2)) == "Topology(shape=(2,), wrap=True)"
    assert repr(back_to_back(ports={0: (0, 1), 1: (1, 0)})) == "Topology(shape=(2,), wrap=False, ports={1: (1, 0)})"


@pytest.mark.parametrize("topo, links", [
    (ring(k=3), 3), (ring(k=32), 32), (torus_2d(kx=3, ky=3), 18), (torus_2d(kx=1, ky=4), 4),
    (torus_2d(kx=2, ky=2), 8), (torus_3d(kx=2, ky=2, kz=2), 24), (torus_3d(kx=3, ky=1, kz=4), 24),
    (Topology(shape=(3, 3), wrap=False), 12),
])
def test_wiring_is_symmetric_and_complete(topo, links):
    wiring = topo.wiring()
    assert len(wiring) == 2 * links
    for (n, p), (m, q) in wiring.items():
        assert wiring[(m, q)] == (n, p) and n != m
        # +d of one end is cabled to -d of the other, one coordinate step apart
        d, e = DIRECTIONS.index(topo.direction(n, p)), DIRECTIONS.index(topo.direction(m, q))
        assert d ^ 1 == e and p == topo.ports(n)[d]
        a, b = topo.coords(n), topo.coords(m)
        dim, k = d // 2, topo.shape[d // 2]
        assert [i for i in range(topo.dims) if a[i] != b[i]] == [dim]
        assert b[dim] == (a[dim] + (1 if d % 2 == 0 else -1)) % k


def test_port_numbering_per_node():
    topo = torus_2d(kx=3, ky=3, ports={4: (3, 2, 1, 0), 5: [0, 1, 2, 3]})
    assert topo.ports(4) == (3, 2, 1, 0) and topo.ports(5) == (0, 1, 2, 3) and topo.ports(0) == (0, 1, 2, 3)
    assert topo.peer(4, 3) == (5, 1) and topo.peer(5, 1) == (4, 3)      # +x of 4 is its port 3
    assert topo.peer(4, 0) == (1, 2) and topo.peer(1, 2) == (4, 0)      # -y of 4 is its port 0
    assert topo.peer(3, 0) == (4, 2) and topo.direction(4, 2) == "-x"
    wide = ring(k=3, ports={1: (7, 6)})
    assert wide.link_ports(1) == 8 and wide.peer(0, 0) == (1, 6) and wide.peer(1, 7) == (2, 1)


# -- routes -------------------------------------------------------------------------------------------------


def test_every_ring_route_of_32x32x32():
    """Every (source, destination) pair of every ring size 1..32 in each dimension of a 3-D torus whose
    other two dimensions are 32: the table walk takes the minimal path on the oracle's VCs."""
    for k in range(1, 33):
        tori = [Topology(shape=[k if i == dim else 32 for i in range(3)]) for dim in range(3)]
        others = [topo.node_id([0 if i == dim else 17 for i in range(3)]) for dim, topo in enumerate(tori)]
        for s in range(k):
            for t in range(k):
                for dim, (topo, base) in enumerate(zip(tori, others, strict=True)):
                    stride = 32 ** dim
                    check_walk(topo, base + s * stride, base + t * stride,
                               walk(topo, base + s * stride, base + t * stride))


def test_longest_route_of_32x32x32():
    topo = torus_3d(kx=32, ky=32, kz=32)
    src, dst = topo.node_id((20, 10, 31)), topo.node_id((4, 26, 15))     # 16 hops in every dimension
    w = walk(topo, src, dst)
    check_walk(topo, src, dst, w)
    assert len(w.hops) == 48


def test_random_3d_routes_walk_end_to_end():
    rng = seeded("random 3-D routes")
    for _ in range(40):
        topo = torus_3d(kx=rng.randint(1, 32), ky=rng.randint(1, 32), kz=rng.randint(1, 32))
        for _ in range(10):
            src, dst = rng.randrange(topo.nodes), rng.randrange(topo.nodes)
            w = walk(topo, src, dst)
            check_walk(topo, src, dst, w)
            assert w.hops == topo.path(src, dst)


def test_route_to_self_ejects():
    topo = ring(k=1)
    table = topo.crossbar_table(0, net_port=2)
    assert table == [route_entry(net_port=2)]
    w = walk(topo, 0, 0, tables=[table], net_ports=3)
    assert w.hops == () and w.node == 0 and w.net_port == 2


# (topology, src, dst, hops (node, port, dateline VC))
WALKS = [
    (back_to_back(), 0, 1, [(0, 0, 0)]),
    (back_to_back(), 1, 0, [(1, 1, 0)]),
    (ring(k=2), 1, 0, [(1, 0, 0)]),                        # the tie goes up, over the wrap
    (ring(k=4), 1, 3, [(1, 0, 0), (2, 0, 0)]),            # tie up, no wrap
    (ring(k=4), 3, 1, [(3, 0, 0), (0, 0, 1)]),            # wrap, then VC 1
    (ring(k=4), 2, 0, [(2, 0, 0), (3, 0, 0)]),            # the wrap is the last hop: VC 0
    (ring(k=4), 0, 3, [(0, 1, 0)]),                       # down over the wrap
    (ring(k=4), 3, 2, [(3, 1, 0)]),
    (torus_2d(kx=3, ky=3), 0, 8, [(0, 1, 0), (2, 3, 0)]),
    (torus_2d(kx=3, ky=3), 4, 0, [(4, 1, 0), (3, 3, 0)]),
    (torus_2d(kx=3, ky=3), 2, 6, [(2, 0, 0), (0, 3, 0)]),
    (torus_2d(kx=3, ky=3), 3, 5, [(3, 1, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 0, 7, [(0, 0, 0), (1, 2, 0), (3, 4, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 7, 0, [(7, 0, 0), (6, 2, 0), (4, 4, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 5, 6, [(5, 0, 0), (4, 2, 0)]),
    (torus_3d(kx=5, ky=1, kz=6), 24, 6, [(24, 0, 0), (20, 0, 1), (21, 4, 0), (26, 4, 0), (1, 4, 1)]),
]


@pytest.mark.parametrize("topo, src, dst, hops", WALKS)
def test_walks(topo, src, dst, hops):
    w = walk(topo, src, dst)
    assert w.hops == tuple(Hop(*h) for h in hops) and w.node == dst and w.net_port == 0
    assert w.error == RouteError.NONE and not w.uncabled
    check_walk(topo, src, dst, w)


def test_walk_with_dateline_disabled_stays_on_vc0():
    w = walk(ring(k=4), 3, 1, dateline=False)
    assert w.hops == (Hop(3, 0, 0), Hop(0, 0, 0)) and w.node == 1


def test_non_default_port_numbering():
    # node 1 of a 4-ring cabled with +x on port 3 and -x on port 5
    topo = ring(k=4, ports={1: (3, 5)})
    assert topo.peer(0, 0) == (1, 5) and topo.peer(1, 3) == (2, 1) and topo.link_ports(1) == 6
    cases = [
        (0, 2, [(0, 0, 0), (1, 3, 0)]),
        (3, 1, [(3, 0, 0), (0, 0, 1)]),
        (1, 3, [(1, 3, 0), (2, 0, 0)]),
        (2, 1, [(2, 1, 0)]),
        (1, 0, [(1, 5, 0)]),
    ]
    for src, dst, hops in cases:
        w = walk(topo, src, dst)
        assert w.hops == tuple(Hop(*h) for h in hops) and w.node == dst and w.net_port == 0
        check_walk(topo, src, dst, w)


def test_turn_onto_the_same_port():
    # node 1 of a 4 x 4 torus has +y on port 0, the port the x hop into it used: the y hop starts on VC 0
    topo = torus_2d(kx=4, ky=4, ports={1: (1, 3, 0, 2)})
    w = walk(topo, 3, 5)
    assert w.hops == (Hop(3, 0, 0), Hop(0, 0, 1), Hop(1, 0, 0))
    check_walk(topo, 3, 5, w)


# -- route tables -------------------------------------------------------------------------------------------

SMALL = [back_to_back(), back_to_back(ports={1: (1, 0)}), *(ring(k=k) for k in range(1, 9)),
         torus_2d(kx=3, ky=3), torus_2d(kx=4, ky=4), torus_2d(kx=2, ky=5), torus_2d(kx=1, ky=4),
         torus_3d(kx=2, ky=2, kz=2), torus_3d(kx=3, ky=3, kz=3), torus_3d(kx=2, ky=3, kz=4),
         Topology(shape=(3, 4), wrap=False), ring(k=4, ports={1: (3, 5)}),
         torus_3d(kx=2, ky=2, kz=2, ports={3: (5, 4, 3, 2, 1, 0), 6: (1, 0, 7, 6, 3, 2)})]


@pytest.mark.parametrize("topo", SMALL, ids=repr)
def test_route_tables_walk_every_path(topo):
    tables = [topo.crossbar_table(n) for n in range(topo.nodes)]
    regs = [topo.port_routes(n) for n in range(topo.nodes)]
    for src in range(topo.nodes):
        assert len(tables[src]) == topo.nodes
        for dst in range(topo.nodes):
            w = walk(topo, src, dst, tables=tables, port_routes=regs)
            check_walk(topo, src, dst, w)
            assert w.hops == topo.path(src, dst)


def test_route_table_padding_and_network_port():
    topo = torus_2d(kx=3, ky=3)
    tables = [topo.crossbar_table(n, net_port=2, entries=64) for n in range(9)]
    assert len(tables[4]) == 64 and tables[4][9:] == [0] * 55 and tables[4][4] == route_entry(net_port=2)
    for dst in range(9):
        check_walk(topo, 4, dst, walk(topo, 4, dst, tables=tables, net_ports=3), net_port=2)
    assert walk(topo, 4, 20, tables=tables).error == RouteError.NO_ROUTE


# -- channel dependency graph -------------------------------------------------------------------------------

TORI = [back_to_back(), *(ring(k=k) for k in range(1, 13)), torus_2d(kx=3, ky=3), torus_2d(kx=4, ky=4),
        torus_2d(kx=5, ky=4), torus_2d(kx=2, ky=6), torus_3d(kx=2, ky=2, kz=2), torus_3d(kx=4, ky=4, kz=4),
        torus_3d(kx=3, ky=4, kz=5), ring(k=6, ports={2: (1, 0), 3: (4, 2)})]


@pytest.mark.parametrize("topo", TORI, ids=repr)
def test_dateline_breaks_every_cycle(topo):
    graph = dependency_graph(topo)
    assert find_cycle(graph) is None
    # the VC 1 channel of a wrap-around link is never used: a packet crosses a dateline at most once
    for node, port, vc in graph:
        if vc == 1:
            d = DIRECTIONS.index(topo.direction(node, port))
            c, k = topo.coords(node)[d // 2], topo.shape[d // 2]
            assert c != (k - 1 if d % 2 == 0 else 0)


@pytest.mark.parametrize("k", range(4, 13))
def test_ring_without_dateline_has_a_cycle(k):
    topo = ring(k=k)
    graph = dependency_graph(topo, dateline=False)
    cycle = find_cycle(graph)
    assert cycle is not None and all(b in graph[a] for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True))
    # the cycle goes once round the ring in one direction, on VC 0
    assert len(cycle) == k and len({(p, vc) for _n, p, vc in cycle}) == 1 and cycle[0].dateline == 0
    assert sorted(n for n, _p, _vc in cycle) == list(range(k))


@pytest.mark.parametrize("topo, cyclic", [
    (ring(k=2), False), (ring(k=3), False),         # every route one hop: no dependency at all
    (torus_2d(kx=3, ky=3), False), (torus_3d(kx=2, ky=2, kz=2), False),
    (torus_2d(kx=4, ky=3), True), (torus_3d(kx=2, ky=2, kz=4), True),
], ids=repr)
def test_torus_without_dateline(topo, cyclic):
    graph = dependency_graph(topo, dateline=False)
    assert (find_cycle(graph) is not None) == cyclic
    if not cyclic:
        # no channel is followed by one of its own ring: every route takes one hop per dimension
        assert all(b.port != a.port for a, nxt in graph.items() for b in nxt)


def test_graph_of_given_walks():
    topo = ring(k=4)
    graph = graph_of_walks([walk(topo, 3, 1), walk(topo, 0, 0)])
    assert graph == {Hop(3, 0, 0): {Hop(0, 0, 1)}, Hop(0, 0, 1): set()}
    walks = [walk(topo, n, (n + 2) % 4) for n in range(4)]
    assert find_cycle(graph_of_walks(walks)) is None
    walks = [walk(topo, n, (n + 2) % 4, dateline=False) for n in range(4)]
    assert find_cycle(graph_of_walks(walks)) == [Hop(n, 0, 0) for n in range(4)]


def test_find_cycle():
    assert find_cycle({}) is None
    assert find_cycle({1: {2}, 2: {3}, 3: set(), 4: {2}}) is None
    assert find_cycle({1: {2}, 2: {3}, 3: {1}}) == [1, 2, 3]
    assert find_cycle({1: {1}}) == [1]
    assert find_cycle({1: {2, 5}, 2: {3}, 3: {4}, 4: {2}, 5: set()}) == [2, 3, 4]
    assert find_cycle({1: {2}, 2: {3}}) is None                 # 3 has no entry of its own


# -- parameter messages -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, message", [
    (lambda: ring(k=0), ValueError, "k must be between 1 and 32, not 0"),
    (lambda: ring(k=33), ValueError, "k must be between 1 and 32, not 33"),
    (lambda: ring(k=4.0), TypeError, "k must be an integer, not 4.0"),
    (lambda: torus_2d(kx=3, ky=0), ValueError, "ky must be between 1 and 32, not 0"),
    (lambda: torus_3d(kx=33, ky=2, kz=2), ValueError, "kx must be between 1 and 32, not 33"),
    (lambda: torus_3d(kx=2, ky=2, kz=True), TypeError, "kz must be an integer, not True"),
    (lambda: Topology(shape=()), ValueError, "shape must have 1, 2 or 3 dimensions, not 0"),
    (lambda: Topology(shape=(2, 2, 2, 2)), ValueError, "shape must have 1, 2 or 3 dimensions, not 4"),
    (lambda: Topology(shape=(4, 100)), ValueError, "shape[1] must be between 1 and 32, not 100"),
    (lambda: Topology(shape=(4,), wrap=1), TypeError, "wrap must be a bool, not 1"),
    (lambda: ring(k=4, ports=[(0, 1)]), TypeError, "ports must be a dict from node to link ports, not [(0, 1)]"),
    (lambda: ring(k=4, ports={4: (0, 1)}), ValueError, "ports node must be between 0 and 3, not 4"),
    (lambda: ring(k=4, ports={1: (0, 1, 2)}), ValueError, "ports[1] must list 2 link ports (+x, -x), not 3"),
    (lambda: torus_3d(kx=2, ky=2, kz=2, ports={0: (0, 1)}), ValueError,
     "ports[0] must list 6 link ports (+x, -x, +y, -y, +z, -z), not 2"),
    (lambda: torus_2d(kx=2, ky=2, ports={3: (0, 1, 2, 8)}), ValueError, "ports[3][-y] must be between 0 and 7, not 8"),
    (lambda: ring(k=4, ports={2: (1, 1)}), ValueError, "ports[2] must be distinct, not [1, 1]"),
    (lambda: ring(k=4).path(4, 0), ValueError, "src must be between 0 and 3, not 4"),
    (lambda: ring(k=4).path(0, -1), ValueError, "dst must be between 0 and 3, not -1"),
    (lambda: ring(k=4).crossbar_table(0, net_port=8), ValueError, "net_port must be between 0 and 7, not 8"),
    (lambda: ring(k=4).crossbar_table(5), ValueError, "node must be between 0 and 3, not 5"),
    (lambda: torus_2d(kx=3, ky=3).crossbar_table(0, entries=8), ValueError, "entries must be at least 9, not 8"),
    (lambda: torus_2d(kx=3, ky=3).coords(9), ValueError, "node must be between 0 and 8, not 9"),
    (lambda: torus_2d(kx=3, ky=3).node_id((1, 2, 0)), ValueError, "coords must have 2 values, not 3"),
    (lambda: torus_2d(kx=3, ky=4).node_id((1, 4)), ValueError, "y must be between 0 and 3, not 4"),
    (lambda: walk(ring(k=4), 4, 0), ValueError, "src must be between 0 and 3, not 4"),
    (lambda: walk(ring(k=4), 0, -1), ValueError, "dst must be at least 0, not -1"),
    (lambda: walk(ring(k=4), 0, 0, net_ports=0), ValueError, "net_ports must be between 1 and 8, not 0"),
    (lambda: walk(ring(k=4), 0, 0, link_ports=9), ValueError, "link_ports must be between 0 and 8, not 9"),
])
def test_messages(call, exc, message):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == message
