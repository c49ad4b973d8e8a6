"""The network layer's registers: node id, route table, network port, link port and crossbar counters
(``rdl/nic_regs.rdl`` blocks ``net``, ``link``, ``xbar`` and ``irq.status.link_error``)."""

from amaranth.hdl import Signal

from rtl.link import COUNTERS
from rtl.netport import connect_regs as connect_netport_regs

__all__ = ["connect_network_regs", "LINK_REGISTERS"]

#: where each link-port counter of :data:`rtl.link.COUNTERS` counts: (register, field) of a ``link``
#: block; ``malformed_packets`` and ``protocol_errors`` have no register yet
LINK_REGISTERS = {
    "crc_errors": ("errors", "crc_errors"), "retransmissions": ("errors", "retransmissions"),
    "naks_sent": ("naks", "naks_sent"), "naks_received": ("naks", "naks_received"),
    "replay_timeouts": ("timeouts", "replay_timeouts"), "link_errors": ("timeouts", "link_errors"),
}


def _rose(m, value, name):
    """One-cycle strobe: ``value`` (one bit) rose."""
    prev = Signal(name=f"{name}_prev")
    m.d.sync += prev.eq(value)
    return value & ~prev


def _changed(m, value, name):
    """One-cycle strobe: ``value`` differs from its value in the previous cycle."""
    prev = Signal.like(value, name=f"{name}_prev")
    m.d.sync += prev.eq(value)
    return value != prev


def connect_network_regs(m, layer, rf):
    """Wire the :class:`~rtl.netlayer.NetworkLayer` ``layer`` to the register file ``rf``.

    * ``net``: as :func:`rtl.netport.connect_regs` (node id, network port counters) and the route table
      ``net.route``, external: its storage is the crossbar's;
    * ``link[k]``: link port ``k``'s counters.  A link port keeps its own 16-bit saturating counters
      and increments each by at most one per cycle for the counters here, so a change of its value is
      one event of the 32-bit register; ``status.state`` bit 0 is the link-error state;
    * ``irq.status.link_error[k]``: set when link port ``k`` enters the link-error state;
    * ``xbar[p]``: crossbar port ``p`` (the link ports, then the network port): counters, and a link
      port's dateline rule ``route``.

    Raises
    ------
    ValueError
        The register file has fewer ``link`` or ``xbar`` blocks than the layer has ports.
    """
    hw = rf.hw
    links, ports = len(layer.phy), len(layer.xbar_in_events)
    if len(hw.link) < links or len(hw.xbar) < ports:
        raise ValueError(f"the register file has {len(hw.link)} link and {len(hw.xbar)} crossbar port blocks, "
                         f"the network layer {links} link and {ports} crossbar ports")
    connect_netport_regs(m, layer, rf)
    table = hw.net.route
    m.d.comb += [layer.table_r_addr.eq(table.r_addr), layer.table_r_en.eq(table.r_en),
                 layer.table_w_addr.eq(table.w_addr), layer.table_w_en.eq(table.w_en),
                 layer.table_w_be.eq(table.w_be), table.r_data.eq(layer.table_r_data),
                 layer.table_w_data.eq(table.w_data)]
    for k in range(links):
        regs = hw.link[k]
        for j, name in enumerate(COUNTERS):
            if name in LINK_REGISTERS:
                reg, field = LINK_REGISTERS[name]
                m.d.comb += getattr(getattr(regs, reg), f"{field}_incr").eq(
                    _changed(m, layer.link_counters[k][j], f"link{k}_{name}"))
        err = layer.link_error[k]
        m.d.comb += [regs.status.state_next.eq(err),
                     hw.irq.status.link_error_event[k].eq(_rose(m, err, f"link{k}_error"))]
    for p in range(ports):
        i, o, regs = layer.xbar_in_events[p], layer.xbar_out_events[p], hw.xbar[p]
        m.d.comb += [regs.packets.packets_in_incr.eq(i.packet), regs.packets.packets_out_incr.eq(o.packet),
                     regs.drops.missing_port_incr.eq(i.missing), regs.drops.no_route_incr.eq(i.no_route),
                     regs.malformed.malformed_incr.eq(i.malformed), regs.malformed.loop_incr.eq(i.loop)]
        if p < links:
            rule = layer.port_routes[p]
            m.d.comb += [rule.straight.eq(regs.route.straight), rule.has_straight.eq(regs.route.has_straight),
                         rule.wrapped.eq(regs.route.wrapped)]

