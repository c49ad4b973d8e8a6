"""Simulation tops for the network fabric: N nodes' network layers wired in HDL, and HDL traffic.

Not part of the NIC. :class:`Fabric` builds one :class:`~rtl.netlayer.NetworkLayer` per node of a
:mod:`sim.routing` topology, its crossbar's route table and dateline rules built in (from
``sim.routing``: what the driver writes into a NIC), and its node id, and connects every cable through
two :class:`~sim.tops.link.LfsrChannel` (latency, and bit errors at the ``flip`` threshold, from seeded
generators), so no Python runs per cycle on a link.

Traffic enters and leaves either at the network ports' unit streams (``fu_tx__N__S``, ``fu_rx__N__S``,
driven by the stream models of :mod:`sim.net_stream`), or, with ``traffic=True``, from an
:class:`Endpoint` per node: a generator of request packets (uniform random destinations, or every node
to the node ``offset`` ahead), a checker of every packet it receives (source, order, payload, length),
and a responder that answers every request with a response packet (``respond``).  The endpoints count
what they send and receive and the latency of every packet, so long runs need no Python per packet.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NODE_BITS, NetBeatKind, NetClass, NetHeader, NetStreamSignature, NetUnit
from rtl.link.params import PhitCtl
from rtl.netlayer import NetworkLayer
from sim.tops.link import LfsrChannel, _xorshift

__all__ = ["Fabric", "Endpoint", "SOURCES", "SINKS", "ENDPOINT_COUNTERS"]

#: unit streams of every fabric node's network port: requests, responses in; two units out
SOURCES = (NetClass.REQUEST, NetClass.RESPONSE)
SINKS = (NetUnit.VELO, NetUnit.RMA_COMPLETER)
ENDPOINT_COUNTERS = ("sent", "received", "beats", "answered", "responses", "errors", "latency_sum", "latency_max")

_K = 0x9E3779B97F4A7C15


SEQ_BITS = 19       # a request's number travels in the header's unit-specific field
MAX_NODES = 16      # the checker keeps the last number per source


def _word(src, seq, i):
    """Payload word ``i`` of request ``seq`` of node ``src``: a function the checker recomputes."""
    return (Cat(i[:4], src[:8], seq[:SEQ_BITS]) * _K)[:64] ^ Cat(seq[:SEQ_BITS], src[:8], i[:4])


def _words(seq):
    """Payload words of request ``seq`` after its time stamp: 0..7."""
    return (seq[:16] * 0x2545)[4:7]


class Endpoint(wiring.Component):
    """The traffic of one node: requests out, requests and responses in, responses out.

    Members
    -------
    req_o, rsp_o : Out(NetStreamSignature())
        Requests (to random or fixed destinations) and responses (one per request received, with
        ``respond``) into the network port.
    req_i, rsp_i : In(NetStreamSignature())
        Requests and responses from the network port.
    node_id, nodes, enable, rate, offset, respond, cycle : In
        This node; the number of nodes; send requests; the probability per cycle of starting a request
        (a 32-bit threshold); 0: uniform destinations, else every request to ``(node + offset) mod
        nodes``; answer requests; the global cycle counter (for latency).
    sent, received, beats, answered, responses, errors, latency_sum, latency_max : Out(32)
        Requests sent; requests received (checked) and their beats (FU side); responses sent; responses
        received (checked); packets that failed a check (source beyond the nodes, a request out of order or repeated,
        wrong length or payload); the sum and maximum of the latency of the requests received (cycles
        from the generator offering the header to the checker taking it).

    A request is a header (``unit`` VELO, ``specific`` its number), a time stamp and 0..7 payload words,
    all functions of (source, number); a response is a header and one word.
    """

    def __init__(self, *, seed):
        self._seed = seed
        super().__init__({
            "req_o": Out(NetStreamSignature()), "rsp_o": Out(NetStreamSignature()),
            "req_i": In(NetStreamSignature()), "rsp_i": In(NetStreamSignature()),
            "node_id": In(NODE_BITS), "nodes": In(NODE_BITS), "enable": In(1), "rate": In(32),
            "offset": In(NODE_BITS), "respond": In(1), "cycle": In(32),
            **{name: Out(32) for name in ENDPOINT_COUNTERS},
        })

    def elaborate(self, platform):
        m = Module()
        rng = _xorshift(m, Signal(32, init=(self._seed & 0xFFFFFFFF) | 1))
        self._generator(m, rng)
        pending = Signal()
        src = self._requests(m, pending)
        self._responses(m)
        self._responder(m, pending, src)
        return m

    def _generator(self, m, rng):
        seq = Signal(SEQ_BITS)
        idx = Signal(4)
        n = Signal(3)
        dst = Signal(NODE_BITS)
        stamp = Signal(32)
        active = Signal()
        o = self.req_o
        hdr = Signal(NetHeader)
        m.d.comb += [hdr.dst_node.eq(dst), hdr.unit.eq(NetUnit.VELO), hdr.payload_words.eq(n + 1),
                     hdr.src_node.eq(self.node_id), hdr.specific.eq(seq)]
        m.d.comb += [o.valid.eq(active),
                     o.payload.data.eq(Mux(idx == 0, hdr.as_value(),
                                           Mux(idx == 1, stamp, _word(self.node_id, seq, idx)))),
                     o.payload.kind.eq(Mux(idx == 0, NetBeatKind.HEADER, NetBeatKind.PAYLOAD)),
                     o.payload.first.eq(idx == 0), o.payload.last.eq(idx == n + 1)]
        uniform = (rng[8:24] * self.nodes)[16:16 + NODE_BITS]           # 0 .. nodes - 1
        target = self.node_id + self.offset
        with m.If(~active & self.enable & (rng < self.rate)):
            m.d.sync += [active.eq(1), idx.eq(0), stamp.eq(self.cycle), n.eq(_words(seq)),
                         dst.eq(Mux(self.offset == 0, uniform,
                                    Mux(target >= self.nodes, target - self.nodes, target)))]
        with m.If(o.valid & o.ready):
            m.d.sync += idx.eq(idx + 1)
            with m.If(o.payload.last):
                m.d.sync += [active.eq(0), seq.eq(seq + 1), self.sent.eq(self.sent + 1)]

    def _requests(self, m, pending):
        """Check every request: source, number strictly after the last from that source, length and
        payload; its latency from the stamp.  Returns its source, for the responder."""
        i = self.req_i
        beat = i.payload
        h = NetHeader(beat.data)
        hdr = Signal(NetHeader)
        idx = Signal(4)
        bad = Signal()
        last = [Signal(SEQ_BITS, name=f"last{k}") for k in range(MAX_NODES)]
        seen = Signal(MAX_NODES)
        prev = Signal(SEQ_BITS)
        m.d.comb += prev.eq(0)
        for k in range(MAX_NODES):
            with m.If(h.src_node == k):
                m.d.comb += prev.eq(last[k])
        step = Signal(SEQ_BITS)
        m.d.comb += step.eq(h.specific - prev)
        order_bad = (h.src_node < MAX_NODES) & seen.bit_select(h.src_node[:4], 1) & ((step == 0) | step[-1])
        wrong = Signal()
        with m.If(idx == 0):
            m.d.comb += wrong.eq((h.src_node >= self.nodes) | order_bad
                                 | (h.payload_words != _words(h.specific) + 1))
        with m.Elif(idx >= 2):
            m.d.comb += wrong.eq(beat.data != _word(hdr.src_node, hdr.specific, idx))
        m.d.comb += i.ready.eq(~pending)
        with m.If(i.valid & i.ready):
            m.d.sync += [idx.eq(idx + 1), self.beats.eq(self.beats + 1)]
            with m.If(idx == 0):
                m.d.sync += [hdr.eq(h), seen.bit_select(h.src_node[:4], 1).eq(1)]
                for k in range(MAX_NODES):
                    with m.If(h.src_node == k):
                        m.d.sync += last[k].eq(h.specific)
            with m.If(idx == 1):
                lat = Signal(32)
                m.d.comb += lat.eq(self.cycle - beat.data[:32])
                m.d.sync += self.latency_sum.eq(self.latency_sum + lat)
                with m.If(lat > self.latency_max):
                    m.d.sync += self.latency_max.eq(lat)
            with m.If(wrong):
                m.d.sync += bad.eq(1)
            with m.If(beat.last):
                m.d.sync += [idx.eq(0), bad.eq(0), self.received.eq(self.received + 1)]
                with m.If(bad | wrong | (idx != Mux(idx == 0, h.payload_words, hdr.payload_words))):
                    m.d.sync += self.errors.eq(self.errors + 1)
                with m.If(self.respond):
                    m.d.sync += pending.eq(1)
        return hdr.src_node

    def _responses(self, m):
        """Check every response: a header from a node of the fabric and one word."""
        i = self.rsp_i
        h = NetHeader(i.payload.data)
        idx = Signal(4)
        bad = Signal()
        m.d.comb += i.ready.eq(1)
        with m.If(i.valid):
            m.d.sync += idx.eq(idx + 1)
            with m.If((idx == 0) & ((h.src_node >= self.nodes) | (h.payload_words != 1))):
                m.d.sync += bad.eq(1)
            with m.If(i.payload.last):
                m.d.sync += [idx.eq(0), bad.eq(0), self.responses.eq(self.responses + 1)]
                with m.If(bad | (idx != 1)):
                    m.d.sync += self.errors.eq(self.errors + 1)

    def _responder(self, m, pending, src):
        """One response (header and one word) per request received, to its source; no request is taken
        while a response waits, so a blocked response class would hold the requests."""
        o = self.rsp_o
        idx = Signal()
        hdr = Signal(NetHeader)
        m.d.comb += [hdr.dst_node.eq(src), hdr.unit.eq(NetUnit.RMA_COMPLETER), hdr.payload_words.eq(1),
                     hdr.src_node.eq(self.node_id)]
        m.d.comb += [o.valid.eq(pending), o.payload.data.eq(Mux(idx == 0, hdr.as_value(), 0)),
                     o.payload.kind.eq(Mux(idx == 0, NetBeatKind.HEADER, NetBeatKind.PAYLOAD)),
                     o.payload.first.eq(idx == 0), o.payload.last.eq(idx == 1)]
        with m.If(o.valid & o.ready):
            m.d.sync += idx.eq(~idx)
            with m.If(idx == 1):
                m.d.sync += [pending.eq(0), self.answered.eq(self.answered + 1)]

class Fabric(wiring.Component):
    """The nodes of ``topology`` (a :class:`sim.routing.Topology`) and their cables.

    Parameters
    ----------
    topology
    link : dict
        Link port parameters.
    latency : int
        Channel latency in cycles (each direction); 0: cables wired directly, no errors.
    traffic : bool
        An :class:`Endpoint` per node instead of the ``fu_*`` streams.
    dateline : bool
        Test only: ``False`` keeps every packet on dateline VC 0.

    Members
    -------
    flip : In(32)
        Bit-flip threshold of every channel (probability per phit times 2**32).
    cycles : Out(32)
        Cycles since reset.
    enable, rate, offset, respond : In
        With ``traffic``: the endpoints' switch, injection rate (per cycle times 2**32), destination
        offset (node ``k`` sends to ``k + offset``) and whether they answer requests.
    <counter> : Out(32).array(nodes)
        With ``traffic``: every endpoint's counters (:data:`ENDPOINT_COUNTERS`).
    fu_tx : In(NetStreamSignature()).array(nodes, sources) ; fu_rx : Out(...).array(nodes, sinks)
        Without ``traffic``: every node's FU streams (:data:`SOURCES`, :data:`SINKS`).
    drops, link_errors : Out(32)
        Packets the network ports dropped; CRC errors the link ports counted, over all nodes.
    """

    def __init__(self, topology, *, link=None, latency=1, traffic=False, dateline=True, depth=16):
        self.topology, self.latency, self.traffic = topology, latency, traffic
        n = topology.nodes
        entries = 1 << (n - 1).bit_length()
        self.nodes = [NetworkLayer(link_ports=max(topology.link_ports(k), 1), entries=entries, sources=SOURCES,
                                   sinks=SINKS, link=link, depth=depth, dateline=dateline,
                                   table_init=topology.crossbar_table(k, entries=entries)) for k in range(n)]
        members = {"flip": In(32), "cycles": Out(32)}
        if traffic:
            members.update({"enable": In(1), "rate": In(32), "offset": In(NODE_BITS), "respond": In(1)})
            members.update({name: Out(32).array(n) for name in ENDPOINT_COUNTERS})
        else:
            members.update({"fu_tx": In(NetStreamSignature()).array(n, len(SOURCES)),
                            "fu_rx": Out(NetStreamSignature()).array(n, len(SINKS))})
        members.update({"drops": Out(32), "link_errors": Out(32)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        topo = self.topology
        m.d.sync += self.cycles.eq(self.cycles + 1)
        drop_events = []
        for k, node in enumerate(self.nodes):
            m.submodules[f"node{k}"] = node
            m.d.comb += node.node_id.eq(k)
            m.d.comb += [node.port_routes[p].eq(r) for p, r in enumerate(topo.port_routes(k))]
            for p in range(len(node.phy)):
                peer = topo.peer(k, p)
                if peer is None:
                    m.d.comb += [node.phy[p].rx_phit.eq(0), node.phy[p].rx_ctl.eq(PhitCtl.IDLE)]
                    continue
                other = self.nodes[peer[0]].phy[peer[1]]
                if not self.latency:
                    m.d.comb += [other.rx_phit.eq(node.phy[p].tx_phit), other.rx_ctl.eq(node.phy[p].tx_ctl)]
                    continue
                ch = LfsrChannel(phit_bits=len(node.phy[p].tx_phit), latency=self.latency, seed=1 + 97 * k + p)
                m.submodules[f"ch{k}_{p}"] = ch
                m.d.comb += [ch.i_phit.eq(node.phy[p].tx_phit), ch.i_ctl.eq(node.phy[p].tx_ctl),
                             other.rx_phit.eq(ch.o_phit), other.rx_ctl.eq(ch.o_ctl),
                             ch.flip.eq(self.flip), ch.drop.eq(0), ch.burst.eq(0)]
            for e in node.xbar_in_events:
                drop_events += [e.missing, e.malformed, e.no_route, e.loop]
            for e in node.tx_events:
                drop_events += [e.malformed, e.no_route]
            for e in node.rx_events:
                drop_events += [e.unknown_unit, e.misrouted, e.malformed]
            if self.traffic:
                m.submodules[f"ep{k}"] = ep = Endpoint(seed=0x1234567 + 7919 * k)
                wiring.connect(m, ep.req_o, node.fu_tx[0])
                wiring.connect(m, ep.rsp_o, node.fu_tx[1])
                wiring.connect(m, node.fu_rx[0], ep.req_i)
                wiring.connect(m, node.fu_rx[1], ep.rsp_i)
                m.d.comb += [ep.node_id.eq(k), ep.nodes.eq(topo.nodes), ep.enable.eq(self.enable),
                             ep.rate.eq(self.rate), ep.offset.eq(self.offset), ep.respond.eq(self.respond),
                             ep.cycle.eq(self.cycles)]
                m.d.comb += [getattr(self, name)[k].eq(getattr(ep, name)) for name in ENDPOINT_COUNTERS]
            else:
                for s in range(len(SOURCES)):
                    wiring.connect(m, wiring.flipped(self.fu_tx[k][s]), node.fu_tx[s])
                for s in range(len(SINKS)):
                    wiring.connect(m, node.fu_rx[s], wiring.flipped(self.fu_rx[k][s]))
        m.d.sync += self.drops.eq(self.drops + sum(drop_events))
        m.d.sync += self.link_errors.eq(self.link_errors + sum(
            node.link_error[p] for node in self.nodes for p in range(len(node.phy))))
        return m
