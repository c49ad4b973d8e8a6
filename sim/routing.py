"""Routing software: topologies, route tables and their self-checks (ch. 8.2).

The dissertation's network management is SERU (ch. 8.2), a Python tool that reads the topology and the
node's id and computes shortest-path routes; this module is its counterpart for the fabric simulations,
the tests and the driver.  It builds on :mod:`sim.netroute` (one crossbar's routing step,
``docs/network.md``):

* :class:`Topology`: a 1-, 2- or 3-D torus of 1 to 32 nodes per dimension (:func:`ring`,
  :func:`torus_2d`, :func:`torus_3d`), or two nodes joined by one link (:func:`back_to_back`).  Node ids
  count x fastest; every node has its own link-port numbering, by default ``+x 0, -x 1, +y 2, -y 3,
  +z 4, -z 5`` (:data:`DIRECTIONS`).
* Routes: minimal and dimension order (x, then y, then z).  In a ring of even size a destination
  ``k / 2`` away either way is reached in the ``+`` direction.  The dateline of a ring is its
  wrap-around link (from the node at coordinate ``k - 1`` to the one at 0, whichever way it is
  crossed): the hops up to and including it run on dateline VC 0, the rest on VC 1; a route that does
  not cross it stays on VC 0.  :meth:`Topology.path` lists the hops.
* :meth:`Topology.crossbar_table` and :meth:`Topology.port_routes`: the contents of a node's route
  table (RLT, ch. 7.4: a :class:`~rtl.common.net.RouteEntry` per destination node, ``net.route``) and
  its crossbar's dateline rules (``xbar[p].route``), also around failed links.
* Self-checks: :func:`walk` follows a packet through the wiring with :func:`sim.netroute.table_step`
  at every crossbar; :func:`dependency_graph` and :func:`find_cycle` build and check the channel
  dependency graph (the deadlock argument of ``docs/network.md``).

Deviations from the dissertation: SERU read the topology from ``/etc/extoll/topology`` and wrote the
routes through the driver's sysfs files; here the topology is a Python object and the tables lists
that the driver writes to the registers.  The dissertation's routing strings (source paths in the
routing frame) are replaced by route tables in every crossbar.
"""

from dataclasses import dataclass
from typing import NamedTuple

from rtl.common.net import EJECT, RouteError
from rtl.common.params import check_distinct, check_int

from .netroute import port_route, route_entry, table_step

__all__ = ["DIRECTIONS", "MAX_RING", "Topology", "back_to_back", "ring", "torus_2d", "torus_3d",
           "Hop", "Walk", "walk", "dependency_graph", "graph_of_walks", "find_cycle"]

#: link directions in the order of a node's port numbering; the default numbering is their index
DIRECTIONS = ("+x", "-x", "+y", "-y", "+z", "-z")
MAX_RING = 32           # nodes per dimension: 32768 nodes (15-bit ids), a route within 63 link hops
MAX_NET_PORT = 15 - EJECT
_AXES = "xyz"


class Hop(NamedTuple):
    """A packet leaving ``node`` through link ``port`` on dateline VC ``dateline``: one channel of the
    channel dependency graph (within one message class)."""
    node: int
    port: int
    dateline: int


class Topology:
    """A torus (ring, 2-D, 3-D) or mesh of nodes, its link-port numbering and its wiring.

    Node ``n`` has coordinates ``(x, y, z)`` with ``n = x + kx * (y + ky * z)`` (x fastest).  Along
    every dimension of size ``k >= 2`` the link port of direction ``+d`` of the node at coordinate
    ``c`` is cabled to the port of direction ``-d`` of the node at ``c + 1`` (mod ``k`` in a torus).
    A dimension of 1 has no links; a torus dimension of 2 has two parallel links between its two nodes
    (``+d`` of each node to ``-d`` of the other); a mesh dimension (``wrap=False``) has no wrap-around
    link, so two nodes of a mesh are joined by one link (:func:`back_to_back`).

    Parameters
    ----------
    shape : tuple of int
        Nodes per dimension, one to three dimensions of 1 to :data:`MAX_RING` each.
    ports : dict of int to sequence of int, optional
        Link-port numbering of the nodes that are not numbered by default: for node ``n``, the link
        port of each direction of :data:`DIRECTIONS` that the shape has (``+x, -x`` for one
        dimension, up to ``+x .. -z`` for three), distinct, each 0 to 7.  Default: the direction's
        index in :data:`DIRECTIONS`.
    wrap : bool
        ``True`` (default): a torus, with the wrap-around link of every ring.  ``False``: a mesh.

    Members
    -------
    shape, wrap : as given
    dims : int
        Number of dimensions.
    nodes : int
        Number of nodes.

    Raises
    ------
    TypeError, ValueError
        A parameter out of range (exact messages in ``tests/sim/test_routing.py``).
    """

    def __init__(self, *, shape, ports=None, wrap=True):
        shape = tuple(shape)
        if not 1 <= len(shape) <= 3:
            raise ValueError(f"shape must have 1, 2 or 3 dimensions, not {len(shape)}")
        for i, k in enumerate(shape):
            check_int(f"shape[{i}]", k, 1, MAX_RING)
        if not isinstance(wrap, bool):
            raise TypeError(f"wrap must be a bool, not {wrap!r}")
        self.shape = shape
        self.wrap = wrap
        self.dims = len(shape)
        self.nodes = 1
        self._strides = []
        for k in shape:
            self._strides.append(self.nodes)
            self.nodes *= k
        self._default = tuple(range(2 * self.dims))
        self._ports = {}
        if ports is None:
            ports = {}
        if not isinstance(ports, dict):
            raise TypeError(f"ports must be a dict from node to link ports, not {ports!r}")
        for node, numbering in ports.items():
            check_int("ports node", node, 0, self.nodes - 1)
            numbering = tuple(numbering)
            if len(numbering) != 2 * self.dims:
                raise ValueError(f"ports[{node}] must list {2 * self.dims} link ports "
                                 f"({', '.join(DIRECTIONS[:2 * self.dims])}), not {len(numbering)}")
            for d, port in enumerate(numbering):
                check_int(f"ports[{node}][{DIRECTIONS[d]}]", port, 0, EJECT - 1)
            check_distinct(f"ports[{node}]", numbering)
            if numbering != self._default:
                self._ports[node] = numbering

    def __repr__(self):
        ports = f", ports={self._ports}" if self._ports else ""
        return f"Topology(shape={self.shape}, wrap={self.wrap}{ports})"

    # -- nodes and ports ------------------------------------------------------------------------------

    def coords(self, node):
        """The coordinates of ``node``, one per dimension (x first)."""
        check_int("node", node, 0, self.nodes - 1)
        out = []
        for k in self.shape:
            node, c = divmod(node, k)
            out.append(c)
        return tuple(out)

    def node_id(self, coords):
        """The node at ``coords`` (one coordinate per dimension)."""
        coords = tuple(coords)
        if len(coords) != self.dims:
            raise ValueError(f"coords must have {self.dims} values, not {len(coords)}")
        for axis, c, k in zip(_AXES[:self.dims], coords, self.shape, strict=True):
            check_int(axis, c, 0, k - 1)
        return sum(c * s for c, s in zip(coords, self._strides, strict=True))

    def ports(self, node):
        """The link port of each direction at ``node`` (``+x, -x, ...`` as in :data:`DIRECTIONS`)."""
        check_int("node", node, 0, self.nodes - 1)
        return self._ports.get(node, self._default)

    def _neighbour(self, node, d):
        """The node one hop from ``node`` in direction ``d`` (an index of :data:`DIRECTIONS`), or
        ``None`` where that direction has no link."""
        dim, neg = divmod(d, 2)
        k, stride = self.shape[dim], self._strides[dim]
        if k == 1:
            return None
        c = node // stride % k
        step = -1 if neg else 1
        if not self.wrap and not 0 <= c + step < k:
            return None
        return node + ((c + step) % k - c) * stride

    def direction(self, node, port):
        """The direction (``"+x"``, ...) that link ``port`` of ``node`` is cabled to, or ``None`` if
        the port is not cabled."""
        numbering = self.ports(node)
        if port not in numbering:
            return None
        d = numbering.index(port)
        return DIRECTIONS[d] if self._neighbour(node, d) is not None else None

    def peer(self, node, port):
        """``(node, port)`` at the other end of the link cabled to ``port`` of ``node``, or ``None``."""
        numbering = self.ports(node)
        if port not in numbering:
            return None
        d = numbering.index(port)
        other = self._neighbour(node, d)
        if other is None:
            return None
        return other, self.ports(other)[d ^ 1]

    def link_ports(self, node):
        """The link ports the crossbar of ``node`` needs: one more than its highest cabled port (0 if none)."""
        numbering = self.ports(node)
        cabled = [numbering[d] for d in range(2 * self.dims) if self._neighbour(node, d) is not None]
        return max(cabled) + 1 if cabled else 0

    def wiring(self):
        """``{(node, port): (node, port)}`` for every cabled link port, both ends of every link."""
        return {(n, p): self.peer(n, p) for n in range(self.nodes) for p in self.ports(n)
                if self.peer(n, p) is not None}

    # -- routes ---------------------------------------------------------------------------------------

    def _segments(self, src, dst):
        """``[(dim, d, hops0, hops1)]``: the hops of the route in each dimension (x first) in direction
        ``d`` (an index of :data:`DIRECTIONS`), split at the ring's dateline."""
        out = []
        for dim, (k, stride) in enumerate(zip(self.shape, self._strides, strict=True)):
            s, t = src // stride % k, dst // stride % k
            if s == t:
                continue
            if not self.wrap:
                out.append((dim, 2 * dim + (t < s), abs(t - s), 0))
                continue
            up, down = (t - s) % k, (s - t) % k
            if up <= down:              # the tie of an even ring goes up
                wrap_at = k - s         # hops up to and including the link from k - 1 to 0
                out.append((dim, 2 * dim, min(up, wrap_at), max(0, up - wrap_at)))
            else:
                wrap_at = s + 1         # hops up to and including the link from 0 to k - 1
                out.append((dim, 2 * dim + 1, min(down, wrap_at), max(0, down - wrap_at)))
        return out

    def path(self, src, dst):
        """The hops of the route from ``src`` to ``dst``: a tuple of :class:`Hop`, empty for ``src == dst``."""
        check_int("src", src, 0, self.nodes - 1)
        check_int("dst", dst, 0, self.nodes - 1)
        hops = []
        node = src
        for _dim, d, hops0, hops1 in self._segments(src, dst):
            for i in range(hops0 + hops1):
                hops.append(Hop(node, self.ports(node)[d], 0 if i < hops0 else 1))
                node = self._neighbour(node, d)
        assert node == dst
        return tuple(hops)

    # -- route tables ----------------------------------------------------------------------------------

    def _ring_direction(self, node, dst, dim, failed):
        """The direction (an index of :data:`DIRECTIONS`) in which ``node`` sends a packet for ``dst``
        along dimension ``dim``: the minimal one (the tie of an even ring goes up), else, when its path
        takes a link of ``failed``, the other way round the ring; ``None`` if both take one."""
        k, stride = self.shape[dim], self._strides[dim]
        s, t = node // stride % k, dst // stride % k
        up, down = (t - s) % k, (s - t) % k
        if not self.wrap:
            order = [(2 * dim + (t < s), abs(t - s))]
        else:
            order = [(2 * dim, up), (2 * dim + 1, down)]
            if down < up:
                order.reverse()
        for d, n in order:
            here, clean = node, True
            for _ in range(n):
                if (here, self.ports(here)[d]) in failed:
                    clean = False
                    break
                here = self._neighbour(here, d)
            if clean:
                return d
        return None

    def _failed_ends(self, failed):
        """Both ends ``(node, port)`` of every link of ``failed`` (given by either end)."""
        ends = set()
        for end in failed:
            node, port = end
            peer = self.peer(node, port)
            if peer is None:
                raise ValueError(f"failed link {end!r}: port {port} of node {node} has no cable")
            ends |= {(node, port), peer}
        return ends

    def crossbar_table(self, node, *, net_port=0, entries=None, failed=()):
        """The route table of ``node``'s crossbar under table routing: a packed
        :class:`~rtl.common.net.RouteEntry` per destination node id.

        The entry for ``node`` itself ejects at network port ``net_port``; every other entry is the
        first hop of a dimension-order route (x, then y, then z), minimal unless ``failed`` (links
        given by one end, ``(node, port)``) lies on it, and then the other way round that ring.  The
        dateline VCs come from the crossbars' :meth:`port_routes`.

        Parameters
        ----------
        entries : int, optional
            Table size (the configuration's ``[system] nodes``), at least :attr:`nodes`; the entries
            past the topology's nodes are 0 (not valid: the crossbar drops such packets as
            ``NO_ROUTE``).  Default: :attr:`nodes`.

        Raises
        ------
        ValueError
            An argument out of range, a failed link that is not cabled, or a destination that no
            dimension-order route reaches around the failed links.
        """
        check_int("node", node, 0, self.nodes - 1)
        check_int("net_port", net_port, 0, MAX_NET_PORT)
        entries = self.nodes if entries is None else entries
        check_int("entries", entries, self.nodes)
        failed = self._failed_ends(failed)
        table = [self._entry(node, dst, net_port, failed) for dst in range(self.nodes)]
        return table + [0] * (entries - self.nodes)

    def _entry(self, node, dst, net_port, failed):
        """The route table entry of ``node`` for ``dst`` (:meth:`crossbar_table`)."""
        dims = [dim for dim in range(self.dims) if self.coords(node)[dim] != self.coords(dst)[dim]]
        if not dims:
            return route_entry(net_port=net_port)
        d = self._ring_direction(node, dst, dims[0], failed)
        if d is None:
            raise ValueError(f"no dimension-order route from node {node} to node {dst} avoids the failed links")
        return route_entry(port=self.ports(node)[d])

    def port_routes(self, node):
        """The routing registers of ``node``'s crossbar under table routing: a packed
        :class:`~rtl.common.net.PortRoute` for each of its :meth:`link_ports` (0 for a port without a
        cable): a packet arriving at a port goes on along its ring through the port of the opposite
        direction, and the link into the port is the wrap-around link of its ring where it joins the
        coordinates ``k - 1`` and 0 (the dateline of :meth:`path`)."""
        numbering = self.ports(node)
        regs = [0] * self.link_ports(node)
        for d, port in enumerate(numbering):
            if self._neighbour(node, d) is None:
                continue
            dim, neg = divmod(d, 2)
            k, c = self.shape[dim], self.coords(node)[dim]
            ahead = d ^ 1                   # a packet that came in from direction d travels towards d ^ 1
            straight = numbering[ahead] if self._neighbour(node, ahead) is not None else None
            wrapped = self.wrap and c == (0 if neg else k - 1)     # in from c - 1 (neg) or c + 1
            regs[port] = port_route(straight=straight, wrapped=int(wrapped))
        return regs


def back_to_back(*, ports=None):
    """Two nodes joined by one link: port ``+x`` (0) of node 0 to port ``-x`` (1) of node 1."""
    return Topology(shape=(2,), ports=ports, wrap=False)


def ring(*, k, ports=None):
    """A ring of ``k`` nodes (1 to 64)."""
    check_int("k", k, 1, MAX_RING)
    return Topology(shape=(k,), ports=ports)


def torus_2d(*, kx, ky, ports=None):
    """A ``kx`` x ``ky`` torus (1 to 64 nodes per dimension)."""
    check_int("kx", kx, 1, MAX_RING)
    check_int("ky", ky, 1, MAX_RING)
    return Topology(shape=(kx, ky), ports=ports)


def torus_3d(*, kx, ky, kz, ports=None):
    """A ``kx`` x ``ky`` x ``kz`` torus (1 to 64 nodes per dimension)."""
    check_int("kx", kx, 1, MAX_RING)
    check_int("ky", ky, 1, MAX_RING)
    check_int("kz", kz, 1, MAX_RING)
    return Topology(shape=(kx, ky, kz), ports=ports)


# -- self-checks --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Walk:
    """Where the route tables take a packet (:func:`walk`).

    Members
    -------
    hops : tuple of Hop
        Every link the packet crossed, in order.
    node : int
        The node where it left the network, was dropped, or left through an uncabled link port.
    net_port : int or None
        The network port of ``node`` it left through; ``None`` if it did not reach one.
    error : RouteError
        Why ``node``'s crossbar dropped it; ``RouteError.NONE`` if it did not.
    uncabled : bool
        The crossbar sent it through link port ``hops[-1].port``, which has no cable: it is lost.
    """
    hops: tuple
    node: int
    net_port: int | None
    error: RouteError
    uncabled: bool = False

    @property
    def delivered(self):
        return self.net_port is not None


class _Tables:
    """The topology's :meth:`~Topology.crossbar_table` of every node, an entry computed when it is read
    (a walk through a large torus reads a few of its millions of entries)."""

    def __init__(self, topology):
        self._topo = topology

    def __getitem__(self, node):
        return _Table(self._topo, node)


class _Table:
    def __init__(self, topology, node):
        self._topo, self._node = topology, node

    def __len__(self):
        return self._topo.nodes

    def __getitem__(self, dst):
        return self._topo._entry(self._node, dst, 0, frozenset())


class _PortRoutes:
    """The topology's :meth:`~Topology.port_routes` of every node, computed when read."""

    def __init__(self, topology):
        self._topo = topology

    def __getitem__(self, node):
        return self._topo.port_routes(node)


def _follow(topology, src, link_ports, step):
    """The :class:`Walk` of a packet from ``src``'s crossbar: ``step(node, link_ports, came)`` is a
    crossbar's step (``error``, ``eject``, ``port``, ``dateline``), ``came`` ``None`` at ``src`` and
    else ``(in_port, the previous crossbar's step)``."""
    hops, node, came = [], src, None
    while True:
        lp = topology.link_ports(node) if link_ports is None else link_ports
        s = step(node, lp, came)
        if s.error != RouteError.NONE:
            return Walk(tuple(hops), node, None, s.error)
        if s.eject:
            return Walk(tuple(hops), node, s.port, RouteError.NONE)
        hops.append(Hop(node, s.port, s.dateline))
        peer = topology.peer(node, s.port)
        if peer is None:
            return Walk(tuple(hops), node, None, RouteError.NONE, uncabled=True)
        node, came = peer[0], (peer[1], s)


def walk(topology, src, dst, *, tables=None, port_routes=None, net_ports=1, link_ports=None,
                dateline=True):
    """Follow a packet for ``dst`` from ``src``'s crossbar under table routing, applying
    :func:`sim.netroute.table_step` at every crossbar.

    Parameters
    ----------
    tables : sequence of sequence of int, optional
        Each node's route table; default: :meth:`Topology.crossbar_table` of every node.
    port_routes : sequence of sequence of int, optional
        Each node's routing registers; default: :meth:`Topology.port_routes` of every node.
    net_ports : int
        Network ports of every crossbar.
    link_ports : int, optional
        Link ports of every crossbar; default: each node's :meth:`Topology.link_ports`.
    dateline : bool
        ``False``: every hop on dateline VC 0 (the crossbars' test-only switch).

    Returns
    -------
    Walk
        Ends in a network port, an error (``LOOP`` after :data:`~rtl.common.net.MAX_HOPS` link hops:
        every walk ends), or an uncabled port.
    """
    check_int("src", src, 0, topology.nodes - 1)
    check_int("net_ports", net_ports, 1, MAX_NET_PORT + 1)
    check_int("dst", dst, 0)
    if link_ports is not None:
        check_int("link_ports", link_ports, 0, EJECT)
    if tables is None:
        tables = _Tables(topology)
    if port_routes is None:
        port_routes = _PortRoutes(topology)

    def step(node, lp, came):
        in_port, prev = came if came is not None else (None, None)
        return table_step(tables[node], dst, hops=prev.hops if prev else 0, in_port=in_port,
                          in_dateline=prev.dateline if prev else 0, port_routes=port_routes[node],
                          link_ports=lp, net_ports=net_ports, dateline=dateline)
    return _follow(topology, src, link_ports, step)


def dependency_graph(topology, *, tables=None, port_routes=None, dateline=True, net_ports=1):
    """The channel dependency graph within one message class: the walks (:func:`walk`) from every
    node to every node over ``tables`` and ``port_routes`` (default: the topology's).

    A channel is a :class:`Hop` ``(node, link port, dateline VC)``; there is an edge from each channel a
    walk uses to the next one it uses.

    Returns
    -------
    dict of Hop to set of Hop
        Every channel a walk uses, with the channels that follow it.
    """
    if tables is None:
        tables = [topology.crossbar_table(n) for n in range(topology.nodes)]
    if port_routes is None:
        port_routes = [topology.port_routes(n) for n in range(topology.nodes)]
    return graph_of_walks(walk(topology, src, dst, tables=tables, port_routes=port_routes,
                                      net_ports=net_ports, dateline=dateline)
                          for src in range(topology.nodes) for dst in range(topology.nodes))


def graph_of_walks(walks):
    """``{Hop: set of Hop}``: every channel the :class:`Walk` s use, with the channels that follow it."""
    graph = {}
    for w in walks:
        hops = w.hops
        for i, hop in enumerate(hops):
            nxt = graph.setdefault(hop, set())
            if i + 1 < len(hops):
                nxt.add(hops[i + 1])
    return graph


def find_cycle(graph):
    """A cycle of ``graph`` (``{vertex: successors}``) as the list of its vertices, or ``None``."""
    done, on_path = set(), {}
    for root in sorted(graph):
        if root in done:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        on_path[root] = 0
        while stack:
            v = next(stack[-1], None)
            if v is None:
                stack.pop()
                done.add(path[-1])
                del on_path[path.pop()]
            elif v in on_path:
                return path[on_path[v]:]
            elif v not in done:
                on_path[v] = len(path)
                path.append(v)
                stack.append(iter(sorted(graph.get(v, ()))))
    return None
