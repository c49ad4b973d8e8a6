"""Network packets in Python: build and decode headers, and one crossbar's routing step.

The formats are :mod:`rtl.common.net`'s (packed through :mod:`sim.layout`).  :func:`table_step` is the
reference of what a crossbar does with a packet (``docs/network.md``): it looks the packet's destination
up in its route table (:class:`~rtl.common.net.RouteEntry`, written by software), takes the dateline VC
from the per-link-port rule of :class:`~rtl.common.net.PortRoute`, and counts the packet's link hops, so
a table that sends packets round in a loop drops them after :data:`~rtl.common.net.MAX_HOPS` hops.  The
crossbar RTL, the routing software's self-check and the fabric scoreboards all compare against it.
"""

from dataclasses import dataclass

from rtl.common.net import EJECT, MAX_HOPS, NetHeader, PortRoute, RouteEntry, RouteError

from .layout import fields, pack, unpack

__all__ = ["net_header", "header_fields", "fu_packet", "route_entry", "port_route", "TableStep", "table_step"]

_H = fields(NetHeader)


def route_entry(*, port=None, net_port=None, dateline=0):
    """A packed :class:`~rtl.common.net.RouteEntry`: to link port ``port`` or network port
    ``net_port`` (exactly one of them), ``dateline`` forcing dateline VC 1 on the hop."""
    if (port is None) == (net_port is None):
        raise ValueError("a route entry names a link port or a network port, not both or neither")
    if port is not None and not 0 <= port < EJECT:
        raise ValueError(f"link port must be between 0 and {EJECT - 1}, not {port}")
    if net_port is not None and not 0 <= net_port < 16 - EJECT:
        raise ValueError(f"network port must be between 0 and {15 - EJECT}, not {net_port}")
    code = port if net_port is None else EJECT + net_port
    return pack(RouteEntry, {"valid": 1, "port": code, "dateline": dateline})


def port_route(*, straight=None, wrapped=0):
    """A packed :class:`~rtl.common.net.PortRoute`: packets arriving at the port go on along their
    ring through link port ``straight`` (``None``: none does), ``wrapped`` if the link into the port is
    its ring's wrap-around link."""
    if straight is not None and not 0 <= straight < EJECT:
        raise ValueError(f"straight must be a link port between 0 and {EJECT - 1}, not {straight}")
    return pack(PortRoute, {"straight": straight or 0, "has_straight": straight is not None,
                            "wrapped": wrapped})


@dataclass(frozen=True)
class TableStep:
    """What a crossbar does with a packet under table routing: ``error`` (a :class:`RouteError`), else
    the output: ``eject`` (a network port) or ``port`` (a link port) on ``dateline`` VC, and the link
    hop count ``hops`` the packet leaves with."""
    error: RouteError
    port: int = 0
    eject: bool = False
    dateline: int = 0
    hops: int = 0


_ENTRY = tuple(fields(RouteEntry))
_PORT = tuple(fields(PortRoute))


def table_step(table, dst, *, hops, in_port, in_dateline, port_routes, link_ports, net_ports, dateline=True):
    """One crossbar's step under table routing.

    Parameters
    ----------
    table : sequence of int
        The crossbar's route table, packed :class:`~rtl.common.net.RouteEntry` per destination node.
    dst : int
        The packet's ``dst_node``.
    hops : int
        Link hops the packet has taken (0 when injected).
    in_port : int or None
        The link port the packet arrived at; ``None``: from a network port.
    in_dateline : int
        The dateline VC it arrived on (ignored from a network port).
    port_routes : sequence of int
        Packed :class:`~rtl.common.net.PortRoute` per link port of the crossbar.
    link_ports, net_ports : int
        The crossbar's ports.
    dateline : bool
        ``False`` keeps every packet on dateline VC 0 (the test-only switch that shows the deadlock the
        dateline prevents).

    Rules, in order: a destination beyond the table or an entry not ``valid``: ``NO_ROUTE``; a port
    the crossbar does not have: ``MISSING_PORT``; a network port: eject; a link port after
    :data:`MAX_HOPS` link hops: ``LOOP``; else the link hop, on dateline VC 1 if the entry says so or
    the packet goes on along its ring (``in_port``'s ``straight``) and arrived on VC 1 or through
    the ring's wrap-around link.
    """
    if not 0 <= dst < len(table):
        return TableStep(RouteError.NO_ROUTE)
    e = unpack(RouteEntry, table[dst], _ENTRY)
    if not e["valid"]:
        return TableStep(RouteError.NO_ROUTE)
    port = e["port"]
    if port >= EJECT:
        if port - EJECT >= net_ports:
            return TableStep(RouteError.MISSING_PORT)
        return TableStep(RouteError.NONE, port=port - EJECT, eject=True, hops=hops)
    if port >= link_ports:
        return TableStep(RouteError.MISSING_PORT)
    if hops >= MAX_HOPS:
        return TableStep(RouteError.LOOP)
    vc = e["dateline"]
    if in_port is not None:
        r = unpack(PortRoute, port_routes[in_port], _PORT)
        if r["has_straight"] and r["straight"] == port and (in_dateline or r["wrapped"]):
            vc = 1
    return TableStep(RouteError.NONE, port=port, dateline=vc if dateline else 0, hops=hops + 1)


def net_header(*, dst_node=0, unit=1, command_words=0, payload_words=0, src_node=0, hops=0, specific=0):
    """The network header word (:class:`rtl.common.net.NetHeader`)."""
    return pack(NetHeader, {"dst_node": dst_node, "unit": unit, "command_words": command_words,
                            "payload_words": payload_words, "src_node": src_node, "hops": hops,
                            "specific": specific})


def header_fields(word):
    """``{field: value}`` of a network header word."""
    return {name: (word >> off) & ((1 << width) - 1) for name, (off, width) in _H.items()}


def fu_packet(header, commands=(), payload=()):
    """The FU-side packet (its words): header, command words, payload words."""
    return [header, *commands, *payload]
