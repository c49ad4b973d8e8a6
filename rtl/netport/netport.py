"""The network port: between the functional units and the crossbar (dissertation ch. 7.3, 7.4).

Transmit: the units' streams are merged per message class (requests, responses) round-robin by whole
packets (:class:`~rtl.common.arbiter.PacketArbiter`), and each class's :class:`~rtl.netport.injector.
Injector` sets the header's ``src_node`` and ``hops`` and sends the packet on the class's VC of the
crossbar port (``2 * class``: dateline VC 0).  Receive: each class's
:class:`~rtl.netport.ejector.Ejector` checks the header and passes the packet to the unit it names; a
unit that receives both classes gets them merged by whole packets.  The two classes never wait for
each other: a request class blocked in the network does not hold a response.

The units address nodes, not routes: every crossbar routes by ``dst_node`` in its own route table
(``docs/network.md``).

Deviations from the dissertation: the seed's network port also serializes 64-bit words into 16-bit
phits; here the crossbar switches 64-bit beats and the link ports serialize.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.arbiter import PacketArbiter
from rtl.common.net import NODE_BITS, NUM_NET_VCS, NetClass, NetStreamSignature, NetUnit, injection_vcs, net_vc
from rtl.common.params import check_distinct, check_int

from .ejector import Ejector, EjectorEvents
from .injector import Injector, InjectorEvents

__all__ = ["NetworkPort"]

_CLASSES = (NetClass.REQUEST, NetClass.RESPONSE)


class NetworkPort(wiring.Component):
    """The network port.

    Parameters
    ----------
    sources : tuple of NetClass
        The message class of each unit stream into the port (``fu_tx[k]``).
    sinks : tuple of NetUnit
        The unit of each stream out of the port (``fu_rx[k]``), distinct.
    entries : int
        Destination nodes, 1..2**15: a packet for a node at or above is dropped (``no_route``).

    Members
    -------
    fu_tx : In(NetStreamSignature()).array(len(sources))
        Packets from the units.
    fu_rx : Out(NetStreamSignature()).array(len(sinks))
        Packets to the units.
    xbar_o : Out(NetStreamSignature()).array(4)
        Packets into the crossbar port, per VC (only VCs 0 and 2 are used).
    xbar_i : In(NetStreamSignature()).array(4)
        Packets out of the crossbar port, per VC (only 0 and 2 carry packets; the others are always
        ready).
    node_id : In(NODE_BITS)
        This node's id: the ``src_node`` of packets sent, the ``dst_node`` of packets accepted.
    tx_events : Out(InjectorEvents).array(2)
        Per class.
    rx_events : Out(EjectorEvents).array(2)
        Per class.
    """

    def __init__(self, *, sources, sinks, entries):
        sources = tuple(NetClass(s) for s in sources)
        sinks = check_distinct("sinks", tuple(NetUnit(s) for s in sinks))
        check_int("entries", entries, 1, 1 << NODE_BITS)
        if not sources or not sinks:
            raise ValueError("a network port needs at least one source and one sink")
        self.sources, self.sinks, self.entries = sources, sinks, entries
        super().__init__({
            "fu_tx": In(NetStreamSignature()).array(len(sources)),
            "fu_rx": Out(NetStreamSignature()).array(len(sinks)),
            "xbar_o": Out(NetStreamSignature()).array(NUM_NET_VCS),
            "xbar_i": In(NetStreamSignature()).array(NUM_NET_VCS),
            "node_id": In(NODE_BITS),
            "tx_events": Out(InjectorEvents).array(2),
            "rx_events": Out(EjectorEvents).array(2),
        })

    def elaborate(self, platform):
        m = Module()
        merges = [[] for _ in self.sinks]               # per sink: the ejector lanes feeding it
        for c, cls in enumerate(_CLASSES):
            feeds = [k for k, s in enumerate(self.sources) if s == cls]
            vc = net_vc(cls, 0)
            m.submodules[f"inject{c}"] = inj = Injector(entries=self.entries)
            m.submodules[f"eject{c}"] = ej = Ejector(units=self.sinks)
            m.d.comb += [inj.node_id.eq(self.node_id), ej.node_id.eq(self.node_id),
                         self.tx_events[c].eq(inj.events), self.rx_events[c].eq(ej.events)]
            if feeds:
                m.submodules[f"merge{c}"] = arb = PacketArbiter(count=len(feeds))
                for j, k in enumerate(feeds):
                    wiring.connect(m, wiring.flipped(self.fu_tx[k]), arb.i[j])
                wiring.connect(m, arb.o, inj.i)
            wiring.connect(m, inj.o, wiring.flipped(self.xbar_o[vc]))
            wiring.connect(m, wiring.flipped(self.xbar_i[vc]), ej.i)
            for k in range(len(self.sinks)):
                merges[k].append(ej.lanes[k])
        for v in range(NUM_NET_VCS):
            if v not in injection_vcs():
                m.d.comb += self.xbar_i[v].ready.eq(1)
        for k, lanes in enumerate(merges):
            # no fallback: the ejectors' ready does not follow their lanes' valid (a packet of the
            # class the unit did not take last waits a cycle at an idle port)
            m.submodules[f"deliver{k}"] = arb = PacketArbiter(count=len(lanes), fallback=False)
            for j, lane in enumerate(lanes):
                wiring.connect(m, lane, arb.i[j])
            wiring.connect(m, arb.o, wiring.flipped(self.fu_rx[k]))
        return m
