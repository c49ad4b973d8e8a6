"""The routing software (sim/routing.py): topologies, wiring, dimension-order routes with the dateline
VC change, route tables, the walker and the channel dependency graph (docs/network.md)."""

import os
import random

import pytest

from rtl.common.net import EJECT, RouteError
from sim.netroute import route_chars
from sim.routing import (
    DIRECTIONS,
    Hop,
    Topology,
    all_routes,
    back_to_back,
    dependency_graph,
    encode_route,
    find_cycle,
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
    (ring(k=3), 3), (ring(k=64), 64), (torus_2d(kx=3, ky=3), 18), (torus_2d(kx=1, ky=4), 4),
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


def test_every_ring_route_of_64x64x64_fits():
    """Every (source, destination) pair of every ring size 1..64 in each dimension of a 3-D torus whose
    other two dimensions are 64: one link character with the minimal hop count, split at the dateline
    as the oracle steps it, and the ejecting character."""
    for k in range(1, 65):
        tori = [Topology(shape=[k if i == dim else 64 for i in range(3)]) for dim in range(3)]
        others = [topo.node_id([0 if i == dim else 37 for i in range(3)]) for dim, topo in enumerate(tori)]
        for s in range(k):
            for t in range(k):
                step, vcs = ring_oracle(k, s, t)
                assert len(vcs) <= 32
                for dim, (topo, base) in enumerate(zip(tori, others, strict=True)):
                    stride = 64 ** dim
                    chars = route_chars(topo.route(base + s * stride, base + t * stride))
                    if s == t:
                        assert chars == [(EJECT, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)]
                    else:
                        link = (2 * dim + (step < 0), vcs.count(0), vcs.count(1))
                        assert chars == [link, (EJECT, 0, 0), (0, 0, 0), (0, 0, 0)], (k, dim, s, t)


def test_longest_route_of_64x64x64():
    topo = torus_3d(kx=64, ky=64, kz=64)
    src, dst = topo.node_id((40, 10, 63)), topo.node_id((8, 42, 31))     # 32 hops in every dimension
    word = topo.route(src, dst, net_port=3)
    assert route_chars(word) == [(0, 24, 8), (2, 32, 0), (4, 1, 31), (EJECT + 3, 0, 0)]
    w = walk(topo, src, word, net_ports=4)
    check_walk(topo, src, dst, w, net_port=3)
    assert len(w.hops) == 96


def test_random_3d_routes_walk_end_to_end():
    rng = seeded("random 3-D routes")
    for _ in range(40):
        topo = torus_3d(kx=rng.randint(1, 64), ky=rng.randint(1, 64), kz=rng.randint(1, 64))
        for _ in range(10):
            src, dst = rng.randrange(topo.nodes), rng.randrange(topo.nodes)
            w = walk(topo, src, topo.route(src, dst))
            check_walk(topo, src, dst, w)
            assert w.hops == topo.path(src, dst)
    topo = torus_3d(kx=64, ky=64, kz=64)
    for _ in range(300):
        src, dst = rng.randrange(topo.nodes), rng.randrange(topo.nodes)
        word = topo.route(src, dst)
        check_walk(topo, src, dst, walk(topo, src, word))
        # one link character per dimension with hops, the ejecting one, then nothing
        n = sum(a != b for a, b in zip(topo.coords(src), topo.coords(dst), strict=True))
        chars = route_chars(word)
        assert all(c[0] < EJECT for c in chars[:n]) and chars[n:] == [(EJECT, 0, 0)] + [(0, 0, 0)] * (3 - n)


def test_route_to_self_is_the_ejecting_character():
    assert torus_2d(kx=3, ky=3).route(4, 4) == EJECT
    assert ring(k=1).route(0, 0, net_port=2) == EJECT + 2
    w = walk(ring(k=1), 0, EJECT + 2, net_ports=3)
    assert w.hops == () and w.node == 0 and w.net_port == 2


# (topology, src, dst, route word, hops (node, port, dateline VC))
WALKS = [
    (back_to_back(), 0, 1, 0x0008_0010, [(0, 0, 0)]),
    (back_to_back(), 1, 0, 0x0008_0011, [(1, 1, 0)]),
    (ring(k=2), 1, 0, 0x0008_0010, [(1, 0, 0)]),                        # the tie goes up, over the wrap
    (ring(k=4), 1, 3, 0x0008_0020, [(1, 0, 0), (2, 0, 0)]),            # tie up, no wrap
    (ring(k=4), 3, 1, 0x0008_0410, [(3, 0, 0), (0, 0, 1)]),            # wrap, then VC 1
    (ring(k=4), 2, 0, 0x0008_0020, [(2, 0, 0), (3, 0, 0)]),            # the wrap is the last hop: VC 0
    (ring(k=4), 0, 3, 0x0008_0011, [(0, 1, 0)]),                       # down over the wrap
    (ring(k=4), 3, 2, 0x0008_0011, [(3, 1, 0)]),
    (torus_2d(kx=3, ky=3), 0, 8, 0x0008_0013_0011, [(0, 1, 0), (2, 3, 0)]),
    (torus_2d(kx=3, ky=3), 4, 0, 0x0008_0013_0011, [(4, 1, 0), (3, 3, 0)]),
    (torus_2d(kx=3, ky=3), 2, 6, 0x0008_0013_0010, [(2, 0, 0), (0, 3, 0)]),
    (torus_2d(kx=3, ky=3), 3, 5, 0x0008_0011, [(3, 1, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 0, 7, 0x0008_0014_0012_0010, [(0, 0, 0), (1, 2, 0), (3, 4, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 7, 0, 0x0008_0014_0012_0010, [(7, 0, 0), (6, 2, 0), (4, 4, 0)]),
    (torus_3d(kx=2, ky=2, kz=2), 5, 6, 0x0008_0012_0010, [(5, 0, 0), (4, 2, 0)]),
    (torus_3d(kx=5, ky=1, kz=6), 24, 6, 0x0008_0424_0410, [(24, 0, 0), (20, 0, 1), (21, 4, 0), (26, 4, 0),
                                                         (1, 4, 1)]),
]


@pytest.mark.parametrize("topo, src, dst, word, hops", WALKS)
def test_walks(topo, src, dst, word, hops):
    assert topo.route(src, dst) == word
    w = walk(topo, src, word)
    assert w.hops == tuple(Hop(*h) for h in hops) and w.node == dst and w.net_port == 0
    assert w.error == RouteError.NONE and not w.uncabled
    check_walk(topo, src, dst, w)


def test_walk_with_dateline_disabled_stays_on_vc0():
    topo = ring(k=4)
    w = walk(topo, 3, topo.route(3, 1), dateline=False)
    assert w.hops == (Hop(3, 0, 0), Hop(0, 0, 0)) and w.node == 1


def test_non_default_port_numbering():
    # node 1 of a 4-ring cabled with +x on port 3 and -x on port 5
    topo = ring(k=4, ports={1: (3, 5)})
    assert topo.peer(0, 0) == (1, 5) and topo.peer(1, 3) == (2, 1) and topo.link_ports(1) == 6
    cases = [
        (0, 2, [(0, 1, 0), (3, 1, 0)], [(0, 0, 0), (1, 3, 0)]),     # the port changes: two characters
        (3, 1, [(0, 1, 1)], [(3, 0, 0), (0, 0, 1)]),
        (1, 3, [(3, 1, 0), (0, 1, 0)], [(1, 3, 0), (2, 0, 0)]),
        (2, 1, [(1, 1, 0)], [(2, 1, 0)]),
        (1, 0, [(5, 1, 0)], [(1, 5, 0)]),
    ]
    for src, dst, links, hops in cases:
        word = topo.route(src, dst)
        assert word == encode_route(links)
        w = walk(topo, src, word)
        assert w.hops == tuple(Hop(*h) for h in hops) and w.node == dst and w.net_port == 0
        check_walk(topo, src, dst, w)


def test_characters_merge_across_a_turn_on_the_same_port():
    # node 1 of a 3 x 3 torus has +y on port 0, the port the x hop into it used: one character
    topo = torus_2d(kx=3, ky=3, ports={1: (1, 3, 0, 2)})
    assert route_chars(topo.route(0, 4)) == [(0, 2, 0), (EJECT, 0, 0), (0, 0, 0), (0, 0, 0)]
    check_walk(topo, 0, 4, walk(topo, 0, topo.route(0, 4)))
    # but not where the first character has reached VC 1 and the next starts on VC 0
    topo = torus_2d(kx=4, ky=4, ports={1: (1, 3, 0, 2)})
    assert route_chars(topo.route(3, 5)) == [(0, 1, 1), (0, 1, 0), (EJECT, 0, 0), (0, 0, 0)]
    w = walk(topo, 3, topo.route(3, 5))
    assert w.hops == (Hop(3, 0, 0), Hop(0, 0, 1), Hop(1, 0, 0))
    check_walk(topo, 3, 5, w)


def test_route_that_does_not_fit_is_refused():
    topo = ring(k=8, ports={1: (2, 1), 3: (2, 1)})      # +x alternates between ports 0 and 2
    with pytest.raises(ValueError) as e:
        topo.route(0, 4)
    assert str(e.value) == ("the route from node 0 to node 4 does not fit a route word: a route word holds "
                            "3 link characters and the ejecting one, not 4 link characters")
    assert route_chars(topo.route(0, 3))[:3] == [(0, 1, 0), (2, 1, 0), (0, 1, 0)]


@pytest.mark.parametrize("links, net_port, message", [
    ([(0, 1, 0)] * 4, 0, "a route word holds 3 link characters and the ejecting one, not 4 link characters"),
    ([(0, 64, 0)], 0, "hops0 of link character 0 must be between 0 and 63, not 64"),
    ([(1, 1, 0), (0, 0, 64)], 0, "hops1 of link character 1 must be between 0 and 63, not 64"),
    ([(8, 1, 0)], 0, "port of link character 0 must be between 0 and 7, not 8"),
    ([(2, 0, 0)], 0, "link character 0 has no hops (a crossbar would drop the packet as EXHAUSTED)"),
    ([], 8, "net_port must be between 0 and 7, not 8"),
])
def test_encode_route_messages(links, net_port, message):
    with pytest.raises(ValueError) as e:
        encode_route(links, net_port=net_port)
    assert str(e.value) == message


def test_encode_route():
    assert encode_route([]) == EJECT
    assert encode_route([(3, 63, 63), (1, 0, 1)], net_port=7) == 0x000F_0401_FFF3


# -- walker outcomes ----------------------------------------------------------------------------------------


def test_walk_drops():
    topo = torus_2d(kx=3, ky=3)
    w = walk(topo, 4, topo.route(4, 8, net_port=1))            # network port 1 missing at node 8
    assert (w.node, w.net_port, w.error, len(w.hops)) == (8, None, RouteError.MISSING_PORT, 2)
    assert walk(topo, 4, topo.route(4, 8, net_port=1), net_ports=2).net_port == 1
    w = walk(topo, 4, 0)                                        # exhausted before it starts
    assert (w.node, w.hops, w.error) == (4, (), RouteError.EXHAUSTED)
    w = walk(topo, 0, encode_route([(0, 1, 0), (5, 1, 0)]))    # node 1 has no link port 5
    assert (w.node, w.hops, w.error) == (1, (Hop(0, 0, 0),), RouteError.MISSING_PORT)
    w = walk(topo, 0, encode_route([(0, 2, 0)], net_port=1), link_ports=1)   # crossbars of one link port
    assert (w.node, w.error, len(w.hops)) == (2, RouteError.MISSING_PORT, 2)
    w = walk(topo, 0, encode_route([(0, 1, 0)]) & ~0xF0000)   # the link character is followed by a 0
    assert (w.node, w.error) == (1, RouteError.EXHAUSTED)


def test_walk_through_an_uncabled_port():
    topo = torus_2d(kx=1, ky=4)                                 # x has no links: ports 0 and 1 uncabled
    assert topo.link_ports(0) == 4 and topo.peer(0, 0) is None and topo.direction(0, 1) is None
    w = walk(topo, 0, encode_route([(1, 1, 0)]))
    assert w.uncabled and w.hops == (Hop(0, 1, 0),) and w.node == 0 and w.net_port is None
    assert w.error == RouteError.NONE and not w.delivered


# -- route tables -------------------------------------------------------------------------------------------

SMALL = [back_to_back(), back_to_back(ports={1: (1, 0)}), *(ring(k=k) for k in range(1, 9)),
         torus_2d(kx=3, ky=3), torus_2d(kx=4, ky=4), torus_2d(kx=2, ky=5), torus_2d(kx=1, ky=4),
         torus_3d(kx=2, ky=2, kz=2), torus_3d(kx=3, ky=3, kz=3), torus_3d(kx=2, ky=3, kz=4),
         Topology(shape=(3, 4), wrap=False), ring(k=4, ports={1: (3, 5)}),
         torus_3d(kx=2, ky=2, kz=2, ports={3: (5, 4, 3, 2, 1, 0), 6: (1, 0, 7, 6, 3, 2)})]


@pytest.mark.parametrize("topo", SMALL, ids=repr)
def test_route_tables_round_trip(topo):
    for src in range(topo.nodes):
        table = topo.route_table(src)
        assert len(table) == topo.nodes
        for dst, word in enumerate(table):
            w = walk(topo, src, word)
            check_walk(topo, src, dst, w)
            assert w.hops == topo.path(src, dst)


def test_route_table_padding_and_network_port():
    topo = torus_2d(kx=3, ky=3)
    table = topo.route_table(4, net_port=2, entries=64)
    assert len(table) == 64 and table[9:] == [0] * 55 and table[4] == EJECT + 2
    for dst in range(9):
        check_walk(topo, 4, dst, walk(topo, 4, table[dst], net_ports=3), net_port=2)
    assert walk(topo, 4, table[20]).error == RouteError.EXHAUSTED


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


def test_dependency_graph_of_given_routes():
    topo = ring(k=4)
    graph = dependency_graph(topo, [(3, topo.route(3, 1)), (0, topo.route(0, 0))])
    assert graph == {Hop(3, 0, 0): {Hop(0, 0, 1)}, Hop(0, 0, 1): set()}
    routes = [(n, topo.route(n, (n + 2) % 4)) for n in range(4)]
    assert find_cycle(dependency_graph(topo, routes)) is None
    assert find_cycle(dependency_graph(topo, routes, dateline=False)) == [Hop(n, 0, 0) for n in range(4)]


def test_find_cycle():
    assert find_cycle({}) is None
    assert find_cycle({1: {2}, 2: {3}, 3: set(), 4: {2}}) is None
    assert find_cycle({1: {2}, 2: {3}, 3: {1}}) == [1, 2, 3]
    assert find_cycle({1: {1}}) == [1]
    assert find_cycle({1: {2, 5}, 2: {3}, 3: {4}, 4: {2}, 5: set()}) == [2, 3, 4]
    assert find_cycle({1: {2}, 2: {3}}) is None                 # 3 has no entry of its own


def test_all_routes():
    topo = ring(k=3)
    routes = list(all_routes(topo, net_port=1))
    assert [(s, d) for s, d, _w in routes] == [(s, d) for s in range(3) for d in range(3)]
    assert all(w == topo.route(s, d, net_port=1) for s, d, w in routes)


# -- parameter messages -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, message", [
    (lambda: ring(k=0), ValueError, "k must be between 1 and 64, not 0"),
    (lambda: ring(k=65), ValueError, "k must be between 1 and 64, not 65"),
    (lambda: ring(k=4.0), TypeError, "k must be an integer, not 4.0"),
    (lambda: torus_2d(kx=3, ky=0), ValueError, "ky must be between 1 and 64, not 0"),
    (lambda: torus_3d(kx=65, ky=2, kz=2), ValueError, "kx must be between 1 and 64, not 65"),
    (lambda: torus_3d(kx=2, ky=2, kz=True), TypeError, "kz must be an integer, not True"),
    (lambda: Topology(shape=()), ValueError, "shape must have 1, 2 or 3 dimensions, not 0"),
    (lambda: Topology(shape=(2, 2, 2, 2)), ValueError, "shape must have 1, 2 or 3 dimensions, not 4"),
    (lambda: Topology(shape=(4, 100)), ValueError, "shape[1] must be between 1 and 64, not 100"),
    (lambda: Topology(shape=(4,), wrap=1), TypeError, "wrap must be a bool, not 1"),
    (lambda: ring(k=4, ports=[(0, 1)]), TypeError, "ports must be a dict from node to link ports, not [(0, 1)]"),
    (lambda: ring(k=4, ports={4: (0, 1)}), ValueError, "ports node must be between 0 and 3, not 4"),
    (lambda: ring(k=4, ports={1: (0, 1, 2)}), ValueError, "ports[1] must list 2 link ports (+x, -x), not 3"),
    (lambda: torus_3d(kx=2, ky=2, kz=2, ports={0: (0, 1)}), ValueError,
     "ports[0] must list 6 link ports (+x, -x, +y, -y, +z, -z), not 2"),
    (lambda: torus_2d(kx=2, ky=2, ports={3: (0, 1, 2, 8)}), ValueError, "ports[3][-y] must be between 0 and 7, not 8"),
    (lambda: ring(k=4, ports={2: (1, 1)}), ValueError, "ports[2] must be distinct, not [1, 1]"),
    (lambda: ring(k=4).route(4, 0), ValueError, "src must be between 0 and 3, not 4"),
    (lambda: ring(k=4).route(0, -1), ValueError, "dst must be between 0 and 3, not -1"),
    (lambda: ring(k=4).route(0, 1, net_port=8), ValueError, "net_port must be between 0 and 7, not 8"),
    (lambda: ring(k=4).route_table(5), ValueError, "node must be between 0 and 3, not 5"),
    (lambda: torus_2d(kx=3, ky=3).route_table(0, entries=8), ValueError, "entries must be at least 9, not 8"),
    (lambda: torus_2d(kx=3, ky=3).coords(9), ValueError, "node must be between 0 and 8, not 9"),
    (lambda: torus_2d(kx=3, ky=3).node_id((1, 2, 0)), ValueError, "coords must have 2 values, not 3"),
    (lambda: torus_2d(kx=3, ky=4).node_id((1, 4)), ValueError, "y must be between 0 and 3, not 4"),
    (lambda: walk(ring(k=4), 4, 0), ValueError, "src must be between 0 and 3, not 4"),
    (lambda: walk(ring(k=4), 0, 1 << 64), ValueError, "word must be between 0 and 18446744073709551615, "
     "not 18446744073709551616"),
    (lambda: walk(ring(k=4), 0, 0, net_ports=0), ValueError, "net_ports must be between 1 and 8, not 0"),
    (lambda: walk(ring(k=4), 0, 0, link_ports=9), ValueError, "link_ports must be between 0 and 8, not 9"),
])
def test_messages(call, exc, message):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == message
