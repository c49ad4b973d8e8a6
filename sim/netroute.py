"""Route words and network packets in Python: build, decode, and one crossbar's routing step.

The formats are :mod:`rtl.common.net`'s (packed through :mod:`sim.layout`); :func:`route_step` is the
reference of what a crossbar does with a packet's route word (``docs/network.md``): the crossbar RTL,
the routing software's self-check and the fabric scoreboards all compare against it.

:func:`table_step` is the reference of *table routing*, the step that replaces the route word (issue
44: a packet without a route beat of its own): every crossbar looks the packet's destination up in its
own route table (:class:`~rtl.common.net.RouteEntry`, written by software), takes the dateline VC from
the per-link-port rule of :class:`~rtl.common.net.PortRoute`, and counts the packet's link hops, so a
table that sends packets round in a loop drops them after :data:`~rtl.common.net.MAX_HOPS` hops.
"""

from dataclasses import dataclass

from rtl.common.net import (
    EJECT,
    MAX_HOPS,
    ROUTE_CHARS,
    NetHeader,
    NetRoute,
    PortRoute,
    RouteEntry,
    RouteError,
)

from .layout import fields, pack, unpack

__all__ = ["route_char", "eject_char", "route_word", "route_chars", "RouteStep", "route_step",
           "net_header", "header_fields", "network_packet", "fu_packet",
           "route_entry", "port_route", "TableStep", "table_step"]

_CHAR_BITS = 16
_H = fields(NetHeader)


def route_char(port, hops0, hops1=0):
    """A link character: ``hops0`` hops through link port ``port`` on dateline VC 0, then ``hops1`` on 1."""
    if not 0 <= port < EJECT:
        raise ValueError(f"link port must be between 0 and {EJECT - 1}, not {port}")
    if not (0 <= hops0 <= MAX_HOPS and 0 <= hops1 <= MAX_HOPS):
        raise ValueError(f"hop counts must be between 0 and {MAX_HOPS}, not {hops0}/{hops1}")
    return port | hops0 << 4 | hops1 << 10


def eject_char(net_port):
    """The character that hands the packet to network port ``net_port`` of the crossbar it reaches."""
    if not 0 <= net_port < 16 - EJECT:
        raise ValueError(f"network port must be between 0 and {15 - EJECT}, not {net_port}")
    return EJECT + net_port


def route_word(chars):
    """The 64-bit route word for up to four characters (the first is current); unused ones are 0."""
    chars = list(chars)
    if len(chars) > ROUTE_CHARS:
        raise ValueError(f"a route word holds {ROUTE_CHARS} characters, not {len(chars)}")
    for c in chars:
        if not 0 <= c < 1 << _CHAR_BITS:
            raise ValueError(f"a routing character has {_CHAR_BITS} bits, not {c:#x}")
    return sum(c << (_CHAR_BITS * i) for i, c in enumerate(chars))


def route_chars(word):
    """``[(port, hops0, hops1)]`` of the four characters of a route word."""
    out = []
    for i in range(ROUTE_CHARS):
        c = (word >> (_CHAR_BITS * i)) & 0xFFFF
        out.append((c & 0xF, (c >> 4) & 0x3F, (c >> 10) & 0x3F))
    return out


@dataclass(frozen=True)
class RouteStep:
    """What a crossbar does with a route word: ``error`` (a :class:`RouteError`), else the output:
    ``eject`` (a network port) or ``port`` (a link port) on ``dateline`` VC, and the ``route`` word the
    packet leaves with."""
    error: RouteError
    port: int = 0
    eject: bool = False
    dateline: int = 0
    route: int = 0


def route_step(word, *, link_ports, net_ports, dateline=True):
    """One crossbar's step on route word ``word``: the crossbar has ``link_ports`` link ports and
    ``net_ports`` network ports; ``dateline=False`` keeps every packet on dateline VC 0 (the test-only
    switch that shows the deadlock the dateline prevents)."""
    port, h0, h1 = route_chars(word)[0]
    if port >= EJECT:
        if port - EJECT >= net_ports:
            return RouteStep(RouteError.MISSING_PORT)
        return RouteStep(RouteError.NONE, port=port - EJECT, eject=True, route=word)
    if port >= link_ports:
        return RouteStep(RouteError.MISSING_PORT)
    if h0 == 0 and h1 == 0:
        return RouteStep(RouteError.EXHAUSTED)
    vc = 0 if h0 else 1
    h0, h1 = (h0 - 1, h1) if h0 else (h0, h1 - 1)
    if h0 == 0 and h1 == 0:
        nxt = word >> _CHAR_BITS                      # character consumed: the next one is current
    else:
        nxt = (word & ~0xFFFF) | port | h0 << 4 | h1 << 10
    return RouteStep(RouteError.NONE, port=port, dateline=vc if dateline else 0, route=nxt)


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
        ``False`` keeps every packet on dateline VC 0 (the test-only switch of :func:`route_step`).

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


def net_header(*, dst_node=0, unit=1, command_words=0, payload_words=0, src_node=0, specific=0):
    """The network header word (:class:`rtl.common.net.NetHeader`)."""
    return pack(NetHeader, {"dst_node": dst_node, "unit": unit, "command_words": command_words,
                            "payload_words": payload_words, "src_node": src_node, "specific": specific})


def header_fields(word):
    """``{field: value}`` of a network header word."""
    return {name: (word >> off) & ((1 << width) - 1) for name, (off, width) in _H.items()}


def fu_packet(header, commands=(), payload=()):
    """The FU-side packet (its words): header, command words, payload words."""
    return [header, *commands, *payload]


def network_packet(route, header, commands=(), payload=()):
    """The network-side packet (its words): route word first."""
    return [route, header, *commands, *payload]


assert fields(NetRoute)["chars.0.port"] == (0, 4) and fields(NetRoute)["chars.1.port"] == (16, 4)
