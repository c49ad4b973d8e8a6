"""A crossbar input port: per-VC routing decision, VC choice, request, and the beats of one packet.

Dissertation ch. 7.3 (the EXTOLL crossbar switches cut-through with source-path routing); the rules
are in ``docs/network.md``.  The port has one stream per VC (from a link port's receive buffers or a
network port).  The head of every stream that is not being read is the route beat of its next packet;
a :class:`~rtl.xbar.route.RouteStep` per VC decodes it.  Among the VCs whose output (port and VC) is
available, and the VCs whose packet is to be dropped, one is chosen round-robin; a drop starts at once,
anything else is requested from its output.  Once granted, the port feeds that packet to the output,
the route beat replaced by the updated route word, until its last beat; a packet is read whole before
the next (the port reads one stream at a time).  Because only VCs with an available output are
chosen, a VC blocked downstream never holds the port: no head-of-line blocking between VCs.

The next packet may be requested in the cycle in which the current packet's last beat moves.
"""

from amaranth.hdl import Array, Assert, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NUM_NET_VCS, NetBeat, NetBeatKind, NetClass, NetStreamSignature, RouteError
from rtl.htax.rr import one_hot_index, past_mask, round_robin_mask

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
        ``avail[o][u]``: output ``o`` grants requests for its VC ``u`` (from registers).
    req : Out(XbarRequestSignature(ports))
    grant : In(1)
        The requested output granted the request (in the cycle of the request).
    beat : Out(stream.Signature(NetBeat))
        The granted packet's beats; ``ready`` is high while the output takes them.
    dest_port, dest_vc : Out(range(ports)), Out(2)
        The output port and VC of the granted packet (registers; for the crossbar's formal contract).
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
        busy = Signal()                     # a packet of cur_vc is granted (or being dropped)
        dropping = Signal()
        cur_vc = Signal(range(V))
        first = Signal()                    # the next beat of the packet is its route beat
        new_route = Signal(64)              # the route word the packet leaves with
        vc_mask = Signal(V, init=(1 << V) - 1)

        cur_valid = Signal()
        cur_beat = Signal(NetBeat)
        m.d.comb += [cur_valid.eq(Array(s.valid for s in self.i)[cur_vc]),
                     cur_beat.eq(Array(s.payload.as_value() for s in self.i)[cur_vc])]
        moves = Signal()                    # a beat of the packet moves (or is dropped) now
        m.d.comb += moves.eq(busy & cur_valid & (dropping | self.beat.ready))
        ending = Signal()
        m.d.comb += ending.eq(moves & cur_beat.last)
        free = Signal()                     # a new packet may be chosen now
        m.d.comb += free.eq(~busy | ending)

        # Per VC: the head packet's routing decision, and whether it can go (or be dropped) now.
        steps, eligible, drop, err = [], [], [], []
        for v in range(V):
            m.submodules[f"route{v}"] = step = RouteStep(link_ports=self._links, net_ports=self._nets,
                                                         dateline=self._dateline)
            head = self.i[v].payload
            m.d.comb += [step.route.eq(head.data), step.cls.eq(NetClass.RESPONSE if v >= 2 else NetClass.REQUEST)]
            bad = Signal(RouteError, name=f"vc{v}_error")
            m.d.comb += bad.eq(Mux(head.first & (head.kind == NetBeatKind.ROUTE), step.error, RouteError.MALFORMED))
            ok = Signal(name=f"vc{v}_eligible")
            reading = busy & (cur_vc == v)      # its head is inside the packet being read
            m.d.comb += ok.eq(self.i[v].valid & ~reading
                              & ((bad != RouteError.NONE) | self.avail[step.port].bit_select(step.vc, 1)))
            steps.append(step)
            eligible.append(ok)
            err.append(bad)
            drop.append(bad != RouteError.NONE)

        grant_vc = round_robin_mask(m, Cat(eligible), vc_mask, name="vc_rr")
        chosen = one_hot_index(m, grant_vc, name="chosen_vc")
        c_drop = Signal()
        c_err = Signal(RouteError)
        m.d.comb += [c_drop.eq(Cat(drop).bit_select(chosen, 1)), c_err.eq(Array(err)[chosen])]
        pick = Signal()
        m.d.comb += pick.eq(free & grant_vc.any())
        m.d.comb += [
            self.req.valid.eq(pick & ~c_drop),
            self.req.port.eq(Array(s.port for s in steps)[chosen]),
            self.req.vc.eq(Array(s.vc for s in steps)[chosen]),
        ]
        start = Signal()                    # a new packet starts being read after this cycle
        m.d.comb += start.eq(pick & (c_drop | self.grant))

        # The packet's beats: the route beat replaced by the route word it leaves with.
        m.d.comb += [
            self.beat.valid.eq(busy & ~dropping & cur_valid),
            self.beat.payload.eq(cur_beat),
        ]
        with m.If(first):
            m.d.comb += self.beat.payload.data.eq(new_route)
        for v in range(V):
            m.d.comb += self.i[v].ready.eq(busy & (cur_vc == v) & (dropping | self.beat.ready))

        with m.If(moves):
            m.d.sync += first.eq(0)
        with m.If(ending):
            m.d.sync += busy.eq(0)
        with m.If(start):
            m.d.sync += [busy.eq(1), dropping.eq(c_drop), cur_vc.eq(chosen), first.eq(1),
                         new_route.eq(Array(s.next.as_value() for s in steps)[chosen]),
                         self.dest_port.eq(self.req.port), self.dest_vc.eq(self.req.vc),
                         vc_mask.eq(past_mask(grant_vc))]
        m.d.comb += [
            self.events.packet.eq(pick & ~c_drop & self.grant),
            self.events.missing.eq(pick & c_drop & (c_err == RouteError.MISSING_PORT)),
            self.events.exhausted.eq(pick & c_drop & (c_err == RouteError.EXHAUSTED)),
            self.events.malformed.eq(pick & c_drop & (c_err == RouteError.MALFORMED)),
        ]
        if platform == "formal":
            self._properties(m, busy, dropping, first, cur_vc, steps)
        return m

    def _properties(self, m, busy, dropping, first, cur_vc, steps):
        """The input's contract: only a granted packet's beats are offered; its first beat is its
        route beat, which leaves as the route step of the route beat still at the stream's head, for
        the output port and VC that step names; a packet keeps its message class."""
        with m.If(self.beat.valid):
            m.d.comb += Assert(busy & ~dropping)
        with m.If(self.beat.valid & first):
            head = Array(s.payload for s in self.i)[cur_vc]
            step = Array(steps)[cur_vc]
            m.d.comb += [Assert(self.beat.payload.first), Assert(head.kind == NetBeatKind.ROUTE),
                         Assert(self.beat.payload.data == step.next.as_value()),
                         Assert(self.dest_port == step.port), Assert(self.dest_vc == step.vc)]
        if self._vcs == NUM_NET_VCS:
            with m.If(busy & ~dropping):
                m.d.comb += Assert(self.dest_vc[1] == cur_vc[1])
