"""Simulation top for the network-port tests: the port and counters of its event strobes."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NODE_BITS, NUM_NET_VCS, NetStreamSignature
from rtl.netport import NetworkPort

__all__ = ["NetPortTop", "TX_EVENTS", "RX_EVENTS"]

TX_EVENTS = ("sent", "malformed", "no_route")
RX_EVENTS = ("delivered", "unknown_unit", "misrouted", "malformed")


class NetPortTop(wiring.Component):
    """A :class:`rtl.netport.NetworkPort` with its event strobes counted.

    Members
    -------
    fu_tx : In(NetStreamSignature()).array(sources) ; fu_rx : Out(NetStreamSignature()).array(sinks)
        The port's FU streams.
    xbar_o : Out(NetStreamSignature()).array(NUM_NET_VCS) ; xbar_i : In(...).array(NUM_NET_VCS)
        The port's crossbar streams.
    node_id : In(NODE_BITS)
    tx_<event>, rx_<event> : Out(32).array(2)
        Counters of the port's event strobes per class (:data:`TX_EVENTS`, :data:`RX_EVENTS`).
    """

    def __init__(self, **params):
        self.np = NetworkPort(**params)
        n = self.np
        members = {
            "fu_tx": In(NetStreamSignature()).array(len(n.sources)),
            "fu_rx": Out(NetStreamSignature()).array(len(n.sinks)),
            "xbar_o": Out(NetStreamSignature()).array(NUM_NET_VCS),
            "xbar_i": In(NetStreamSignature()).array(NUM_NET_VCS),
            "node_id": In(NODE_BITS),
        }
        members.update({f"tx_{e}": Out(32).array(2) for e in TX_EVENTS})
        members.update({f"rx_{e}": Out(32).array(2) for e in RX_EVENTS})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.np = n = self.np
        m.d.comb += n.node_id.eq(self.node_id)
        for k in range(len(n.sources)):
            wiring.connect(m, wiring.flipped(self.fu_tx[k]), n.fu_tx[k])
        for k in range(len(n.sinks)):
            wiring.connect(m, n.fu_rx[k], wiring.flipped(self.fu_rx[k]))
        for v in range(NUM_NET_VCS):
            wiring.connect(m, n.xbar_o[v], wiring.flipped(self.xbar_o[v]))
            wiring.connect(m, wiring.flipped(self.xbar_i[v]), n.xbar_i[v])
        for c in range(2):
            for names, events, prefix in ((TX_EVENTS, n.tx_events[c], "tx"), (RX_EVENTS, n.rx_events[c], "rx")):
                for e in names:
                    counter = getattr(self, f"{prefix}_{e}")[c]
                    with m.If(getattr(events, e)):
                        m.d.sync += counter.eq(counter + 1)
        return m
