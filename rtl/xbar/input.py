"""A crossbar input port: per-VC routing decision, VC choice, request, and the beats of one packet.

Dissertation ch. 7.3 (the EXTOLL crossbar switches cut-through with source-path routing); the rules
are in ``docs/network.md``.  The port has one stream per VC (from a link port's receive buffers or a
network port).  The head of every stream that is not being read is the route beat of its next packet;
a :class:`~rtl.xbar.route.RouteStep` per VC decodes it.  Among the VCs not known to be blocked (their
output, port and VC, was unavailable in the previous cycle) one is chosen round-robin, and the choice
is registered (the *decision*): a drop starts from the register, anything else is requested from its
output, from the register.  The decision is kept while its output is available (it may have been
granted: the grant comes back from the output's register one cycle later) and made afresh in every
other cycle, so a VC whose output is unavailable holds the port for at most one cycle: no lasting
head-of-line blocking between VCs.  Once granted, the port feeds that packet to the output, the route
beat replaced by the updated route word (rebuilt from the consumed flag and the new hop counts of the
decision, not kept per VC), until its last beat; a packet is read whole before the next (the port
reads one stream at a time).

The next packet is chosen in the cycle in which the current packet's last beat moves, requested in
the next cycle and, if granted, moves in the cycle after: one cycle between packets of an input.
"""

from amaranth.hdl import Array, Assert, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import (
    NUM_NET_VCS,
    ROUTE_CHARS,
    NetBeat,
    NetBeatKind,
    NetClass,
    NetRoute,
    NetStreamSignature,
    RouteChar,
    RouteError,
)
from rtl.common.rr import past_mask, round_robin_select

from .route import RouteStep

__all__ = ["XbarInput", "XbarRequestSignature", "InputEvents"]


class InputEvents(data.Struct):
    """One-cycle strobes of an input port."""
    packet: 1       # a packet was granted an output
    missing: 1      # a packet was dropped: its route names a port this crossbar does not have
    exhausted: 1    # a packet was dropped: its route ends before a network port
    malformed: 1    # a packet was dropped: it does not start with a route beat


class XbarRequestSignature(wiring.Signature):
    """An input port's request for an output: ``valid``, the output ``port`` and VC ``vc``.

    Members
    -------
    valid : Out(1)
    port : Out(range(ports))
    vc : Out(2)
    """

    def __init__(self, ports):
        self._ports = ports
        super().__init__({"valid": Out(1), "port": Out(range(ports)), "vc": Out(2)})

    def __eq__(self, other):
        return type(other) is XbarRequestSignature and other._ports == self._ports

    def __hash__(self):
        return hash((XbarRequestSignature, self._ports))

    def __repr__(self):
        return f"XbarRequestSignature({self._ports})"


class XbarInput(wiring.Component):
    """One input port of a crossbar with ``link_ports`` + ``net_ports`` ports and ``vcs`` VCs.

    Parameters
    ----------
    link_ports, net_ports : int
    vcs : int
        VCs per port: 2 (one message class) or 4 (two).
    dateline : bool
        As :class:`~rtl.xbar.route.RouteStep` (test only).

    Members
    -------
    i : In(NetStreamSignature()).array(vcs)
        The port's packets, one stream per VC.
    avail : In(ArrayLayout(4, ports))
        ``avail[o][u]``: output ``o`` grants requests for its VC ``u`` (registers).
    req : Out(XbarRequestSignature(ports))
        The registered decision's request.
    grant : In(1)
        An output granted the request in the previous cycle (from the outputs' grant registers).
    beat : Out(stream.Signature(NetBeat))
        The granted packet's beats; ``ready`` is high while the output takes them.
    dest_port, dest_vc : Out(range(ports)), Out(2)
        The output port and VC of the packet granted or requested (registers; ``dest_vc`` chooses the
        output's VC queue).
    events : Out(InputEvents)
    """

    def __init__(self, *, link_ports, net_ports, vcs=NUM_NET_VCS, dateline=True):
        self._links, self._nets, self._vcs, self._dateline = link_ports, net_ports, vcs, dateline
        ports = link_ports + net_ports
        super().__init__({
            "i": In(NetStreamSignature()).array(vcs),
            "avail": In(data.ArrayLayout(NUM_NET_VCS, ports)),
            "req": Out(XbarRequestSignature(ports)),
            "grant": In(1),
            "beat": Out(stream.Signature(NetBeat)),
            "dest_port": Out(range(ports)), "dest_vc": Out(2),
            "events": Out(InputEvents),
        })

    def elaborate(self, platform):
        m = Module()
        V = self._vcs
        # The packet being read (its fields loaded from the decision while the port waits for a grant).
        busy = Signal()                     # a granted packet (from the cycle after its grant) or a drop
        dropping = Signal()
        cur_vc = Signal(range(V))
        first = Signal()                    # the next beat of the packet is its route beat
        consume = Signal()                  # the route word's current character is consumed here
        char = Signal(RouteChar)            # else it leaves with this character's hop counts
        vc_mask = Signal(V, init=(1 << V) - 1)
        dec = Signal(_Decision(V, len(self.dest_port)), name="decision")

        active = Signal()                   # the packet of cur_vc is read (granted, or dropped)
        m.d.comb += active.eq(busy | self.grant)
        cur_valid = Signal()
        cur_beat = Signal(NetBeat)
        m.d.comb += [cur_valid.eq(Array(s.valid for s in self.i)[cur_vc]),
                     cur_beat.eq(Array(s.payload.as_value() for s in self.i)[cur_vc])]
        moves = Signal()                    # a beat of the packet moves (or is dropped) now
        m.d.comb += moves.eq(active & cur_valid & (dropping | self.beat.ready))
        ending = Signal()
        m.d.comb += ending.eq(moves & cur_beat.last)

        # The decision: kept while its output is available (it may be granted now), else made afresh.
        asked = Signal()
        m.d.comb += asked.eq(dec.req & self.avail[dec.port].bit_select(dec.ovc, 1))
        free = Signal()                     # a new decision may be made now
        m.d.comb += free.eq((~busy | ending) & ~self.grant & ~dec.drop)
        choice = self._choose(m, busy, cur_vc, vc_mask)
        with m.If(~asked):
            m.d.sync += [dec.eq(choice), dec.req.eq(free & choice.req), dec.drop.eq(free & choice.drop)]
        m.d.comb += [self.req.valid.eq(dec.req), self.req.port.eq(dec.port), self.req.vc.eq(dec.ovc)]

        # While the port waits for a grant, the packet's fields follow the decision.
        with m.If((dec.req | dec.drop) & ~busy & ~self.grant):
            m.d.sync += [cur_vc.eq(dec.vc), self.dest_port.eq(dec.port), self.dest_vc.eq(dec.ovc),
                         consume.eq(dec.consume), char.eq(dec.char), first.eq(1), dropping.eq(dec.drop)]
        with m.If(moves):
            m.d.sync += first.eq(0)
        m.d.sync += busy.eq(~ending & (busy | self.grant | dec.drop))
        with m.If(self.grant | dec.drop):
            m.d.sync += vc_mask.eq(past_mask(Cat(dec.vc == v for v in range(V))))

        # The packet's beats: the route beat replaced by the route word it leaves with.
        m.d.comb += [
            self.beat.valid.eq(active & ~dropping & cur_valid),
            self.beat.payload.eq(cur_beat),
        ]
        route, new = NetRoute(cur_beat.data), Signal(NetRoute)
        with m.If(consume):
            m.d.comb += [new.chars[k].eq(route.chars[k + 1]) for k in range(ROUTE_CHARS - 1)]
        with m.Else():
            m.d.comb += [new.eq(route), new.chars[0].hops0.eq(char.hops0), new.chars[0].hops1.eq(char.hops1)]
        with m.If(first):
            m.d.comb += self.beat.payload.data.eq(new)
        for v in range(V):
            m.d.comb += self.i[v].ready.eq(active & (cur_vc == v) & (dropping | self.beat.ready))

        m.d.comb += [
            self.events.packet.eq(self.grant),
            self.events.missing.eq(dec.drop & (dec.err == RouteError.MISSING_PORT)),
            self.events.exhausted.eq(dec.drop & (dec.err == RouteError.EXHAUSTED)),
            self.events.malformed.eq(dec.drop & (dec.err == RouteError.MALFORMED)),
        ]
        if platform == "formal":
            self._properties(m, busy, active, dropping, first, cur_vc, dec)
        return m

    def _choose(self, m, busy, cur_vc, vc_mask):
        """Per VC the head packet's routing decision; among the VCs whose head is not being read and
        not known to be blocked, the round-robin choice (``req`` or ``drop`` set if there is one)."""
        V = self._vcs
        rows, eligible = [], []
        for v in range(V):
            m.submodules[f"route{v}"] = step = RouteStep(link_ports=self._links, net_ports=self._nets,
                                                         dateline=self._dateline)
            head = self.i[v].payload
            m.d.comb += [step.route.eq(head.data), step.cls.eq(NetClass.RESPONSE if v >= 2 else NetClass.REQUEST)]
            row = Signal(_Decision(V, len(self.dest_port)), name=f"vc{v}_decision")
            bad = Mux(head.first & (head.kind == NetBeatKind.ROUTE), step.error, RouteError.MALFORMED)
            m.d.comb += [row.req.eq(bad == RouteError.NONE), row.drop.eq(bad != RouteError.NONE),
                         row.err.eq(bad), row.vc.eq(v), row.port.eq(step.port), row.ovc.eq(step.vc),
                         row.consume.eq(step.consume), row.char.eq(step.next.chars[0])]
            # A hint only (the output checks availability itself): the head's output was unavailable.
            blocked = Signal(name=f"vc{v}_blocked")
            m.d.sync += blocked.eq(row.req & ~self.avail[step.port].bit_select(step.vc, 1))
            ok = Signal(name=f"vc{v}_eligible")
            m.d.comb += ok.eq(self.i[v].valid & ~(busy & (cur_vc == v)) & ~blocked)
            rows.append(row)
            eligible.append(ok)
        choice = Signal(_Decision(V, len(self.dest_port)))
        m.d.comb += choice.eq(round_robin_select(m, Cat(eligible), vc_mask, [r.as_value() for r in rows],
                                                 name="vc_rr"))
        return choice

    def _properties(self, m, busy, active, dropping, first, cur_vc, dec):
        """The input's contract: a grant comes only for the registered request, whose fields the port
        then reads with; only a granted packet's beats are offered; its first beat is its route beat,
        which leaves as the route step of the route beat still at the stream's head, for the output
        port and VC that step names; a packet keeps its message class."""
        with m.If(self.grant):
            m.d.comb += [Assert(dec.req & ~busy), Assert(cur_vc == dec.vc), Assert(self.dest_port == dec.port),
                         Assert(self.dest_vc == dec.ovc)]
        with m.If(self.beat.valid):
            m.d.comb += Assert(active & ~dropping)
        with m.If(self.beat.valid & first):
            head = Array(s.payload for s in self.i)[cur_vc]
            m.submodules.f_step = step = RouteStep(link_ports=self._links, net_ports=self._nets,
                                                   dateline=self._dateline)
            m.d.comb += [step.route.eq(head.data), step.cls.as_value().eq(cur_vc[1] if self._vcs == NUM_NET_VCS else 0)]
            m.d.comb += [Assert(self.beat.payload.first), Assert(head.kind == NetBeatKind.ROUTE),
                         Assert(self.beat.payload.data == step.next.as_value()),
                         Assert(self.dest_port == step.port), Assert(self.dest_vc == step.vc)]
        if self._vcs == NUM_NET_VCS:
            with m.If(active & ~dropping):
                m.d.comb += Assert(self.dest_vc[1] == cur_vc[1])


def _Decision(vcs, port_width):
    """The layout of an input port's decision: request (``req``) or drop (``drop``, with the cause
    ``err``) the head packet of VC ``vc``, for output ``port``, VC ``ovc``; ``consume`` and ``char``
    (its hop counts) rebuild its route word as it leaves."""
    return data.StructLayout({"req": 1, "drop": 1, "err": RouteError, "vc": range(vcs), "port": port_width,
                              "ovc": 2, "consume": 1, "char": RouteChar})
