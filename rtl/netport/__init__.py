"""The network port (dissertation ch. 7.3, 7.4); see ``docs/network.md``."""

from rtl.common.arbiter import PacketArbiter
from rtl.common.net import NetClass, NetUnit

from .ejector import Ejector, EjectorEvents
from .injector import Injector, InjectorEvents
from .netport import NetworkPort

__all__ = ["NetworkPort", "PacketArbiter", "Injector", "InjectorEvents", "Ejector", "EjectorEvents",
           "NIC_SOURCES", "NIC_SINKS", "UNITS", "connect_regs"]

#: the NIC's unit streams into the network port: VELO requester, RMA requester (requests), RMA
#: responder (responses)
NIC_SOURCES = (NetClass.REQUEST, NetClass.REQUEST, NetClass.RESPONSE)
#: and out of it: VELO completer, RMA responder, RMA completer
NIC_SINKS = (NetUnit.VELO, NetUnit.RMA_RESPONDER, NetUnit.RMA_COMPLETER)


def from_config(cfg, **overrides):
    """The NIC's network port: its units' streams, a route table entry per node of ``[system] nodes``."""
    kw = dict(sources=NIC_SOURCES, sinks=NIC_SINKS, entries=cfg["system"]["nodes"])
    kw.update(overrides)
    return NetworkPort(**kw)


def connect_regs(m, port, rf):
    """Wire the network port ``port`` to the generated register file ``rf`` (its ``hw`` ports): node id
    and the ``net`` counters.

    ``net.sent`` and ``net.delivered`` have a field per class.  The drop counters have one field for
    both classes and count one event per cycle: both classes' strobes of one counter in the same cycle
    count once.
    """
    net, tx, rx = rf.hw.net, port.tx_events, port.rx_events
    m.d.comb += [
        port.node_id.eq(net.node.id),
        net.sent.requests_incr.eq(tx[0].sent), net.sent.responses_incr.eq(tx[1].sent),
        net.delivered.requests_incr.eq(rx[0].delivered), net.delivered.responses_incr.eq(rx[1].delivered),
        net.tx_drops.malformed_incr.eq(tx[0].malformed | tx[1].malformed),
        net.tx_drops.no_route_incr.eq(tx[0].no_route | tx[1].no_route),
        net.rx_drops.unknown_unit_incr.eq(rx[0].unknown_unit | rx[1].unknown_unit),
        net.rx_drops.misrouted_incr.eq(rx[0].misrouted | rx[1].misrouted),
        net.rx_malformed.malformed_incr.eq(rx[0].malformed | rx[1].malformed),
    ]


UNITS = {"netport": from_config}
