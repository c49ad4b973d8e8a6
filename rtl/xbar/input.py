"""A crossbar input port: per-VC routing decision, VC choice, request, and the beats of one packet.

Dissertation ch. 7.3 (the EXTOLL crossbar switches cut-through with table routing); the rules are in
``docs/network.md``. The port has one stream per VC (from a link port's receive buffers or a network
port). The head of every stream that is not being read is the header beat of its next packet; a
:class:`~rtl.xbar.route.RouteStep` per VC routes it, with the crossbar's route table entry for its
``dst_node`` (one combinational read port per VC; a network port injects on dateline VC 0 only, so
its VC 1 packets are dropped as malformed without a read) and the port's dateline rule, into a
register per VC: a head is routed in the cycle it arrives and can be chosen from the next (the route
and the choice are two register stages). Among the VCs whose
output (port and VC) is available now (``avail``, the outputs' registers; the output of the packet
being read counts as available, it becomes so near that packet's end) one is chosen round-robin, and
the choice is registered (the *decision*): a drop starts from the register, anything else is requested
from its output, from the register. The decision is kept while its output is available (it may have
been granted: the grant comes back from the output's register one cycle later) and made afresh in every
other cycle, so a VC whose output is unavailable never holds the port: no head-of-line blocking between
VCs. Once granted, the port feeds that packet to the output, its header's hop count replaced by the
decision's, until its last beat; a packet is read whole before the next (the port reads one stream at a
time).

Look-ahead: the next decision is made while a packet is read (among the other VCs) and requested in
the cycle in which the packet's last beat moves (known from the header's lengths), so a grant then
lets the next packet move in the following cycle, without a gap.  A grant that comes while the packet
is still read (its source stalled) is kept (``pend``) and the next packet starts in the cycle after
the last beat; the granting output waits for it.  The next packet of the same VC is decided once its
header has been routed at the head, so idle cycles separate two packets of one VC.
"""

from amaranth.hdl import Array, Assert, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import (
    MAX_PACKET_BEATS,
    NUM_NET_VCS,
    NetBeat,
    NetBeatKind,
    NetClass,
    NetHeader,
    NetStreamSignature,
    PortRoute,
    RouteEntry,
    RouteError,
    injection_vcs,
    last_index,
)
from rtl.common.rr import past_mask, round_robin_select

from .route import RouteStep

__all__ = ["XbarInput", "XbarRequestSignature", "InputEvents"]


class InputEvents(data.Struct):
    """One-cycle strobes of an input port."""
    packet: 1       # a packet was granted an output
    missing: 1      # a packet was dropped: its table entry names a port this crossbar does not have
    malformed: 1    # a packet was dropped: no header beat first, or a network port's dateline VC 1
    no_route: 1     # a packet was dropped: its destination is beyond the table, or the entry is not valid
    loop: 1         # a packet was dropped: it had taken MAX_HOPS link hops


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
    from_link : bool
        The port is a link port (its dateline rule applies).
    nodes : int
        Route table entries (a power of two).
    vcs : int
        VCs per port: 2 (one message class) or 4 (two).
    dateline : bool
        As :class:`~rtl.xbar.route.RouteStep` (test only).

    Members
    -------
    i : In(NetStreamSignature()).array(vcs)
        The port's packets, one stream per VC.
    lookup : Out(range(nodes)).array(vcs) ; entries : In(RouteEntry).array(vcs)
        Per VC the route table's read address (the head's ``dst_node``) and entry (combinational);
        only the VCs of :attr:`routed_vcs` read the table (the others' ``entries`` are ignored).
    port_route : In(PortRoute)
        The port's dateline rule (a register of the crossbar).
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
    dest_onehot : Out(ports)
        ``dest_port`` one-hot (a register: the outputs' beat valid and the port's ready are one gate
        after it).
    events : Out(InputEvents)
    """

    def __init__(self, *, link_ports, net_ports, from_link, nodes, vcs=NUM_NET_VCS, dateline=True):
        self._links, self._nets, self._vcs, self._dateline = link_ports, net_ports, vcs, dateline
        self._from_link, self._nodes = from_link, nodes
        #: the VCs whose packets are routed (a table read each): every VC at a link port, dateline VC 0
        #: at a network port (its packets on dateline VC 1 are dropped as ``MALFORMED``)
        self.routed_vcs = tuple(range(vcs)) if from_link else injection_vcs(vcs)
        ports = link_ports + net_ports
        super().__init__({
            "i": In(NetStreamSignature()).array(vcs),
            "lookup": Out(range(nodes)).array(vcs), "entries": In(RouteEntry).array(vcs),
            "port_route": In(PortRoute),
            "avail": In(data.ArrayLayout(NUM_NET_VCS, ports)),
            "req": Out(XbarRequestSignature(ports)),
            "grant": In(1),
            "beat": Out(stream.Signature(NetBeat)),
            "dest_port": Out(range(ports)), "dest_vc": Out(2), "dest_onehot": Out(ports, init=1),
            "events": Out(InputEvents),
        })

    def elaborate(self, platform):
        m = Module()
        V = self._vcs
        # The packet being read (its fields loaded from the decision while the port waits for a grant).
        busy = Signal()                     # a granted packet (from the cycle after its grant) or a drop
        dropping = Signal()
        cur_vc = Signal(range(V))
        first = Signal()                    # the next beat of the packet is its header
        hops = Signal(6)                    # the hop count it leaves with
        vc_mask = Signal(V, init=(1 << V) - 1)
        dec = Signal(_Decision(V, len(self.dest_port)), name="decision")

        pend = Signal()                     # dec was granted while another packet was read: it is next
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
        done = Signal()                     # no packet is read after this cycle unless one is queued
        m.d.comb += done.eq(~active | ending)
        queued = Signal()                   # the decision's packet starts next: granted during a packet, or a drop
        m.d.comb += queued.eq(pend | (self.grant & busy) | dec.drop)

        # The packet's beats still to move (``left``), known once its header has moved (``sized``), and
        # ``near`` (a register): no packet is read, or the one read has at most one beat to go.
        sized = Signal()
        left = Signal(range(MAX_PACKET_BEATS))
        near = Signal(init=1)
        hdr = NetHeader(cur_beat.data)
        after = Signal(range(MAX_PACKET_BEATS))     # the beats after the header
        m.d.comb += after.eq(last_index(hdr))
        with m.If(done):
            m.d.sync += [sized.eq(0), near.eq(~queued)]
        with m.Elif(moves & first):
            m.d.sync += [sized.eq(1), left.eq(after), near.eq(after <= 1)]
        with m.Elif(moves & sized):
            m.d.sync += [left.eq(left - 1), near.eq(left <= 2)]
        with m.Elif(self.grant & ~busy):
            m.d.sync += near.eq(0)

        # The decision: kept while its output is available (it may be granted now) or while it waits
        # for the packet being read; else made afresh, also while a packet is read (the look-ahead).
        # It is requested while no packet is read, or in the cycle of the last beat of the one read:
        # granted then, the next packet moves right after it.
        asked = Signal()
        m.d.comb += asked.eq(self.req.valid & self.avail[dec.port].bit_select(dec.ovc, 1))
        keep = Signal()
        m.d.comb += keep.eq(asked | (queued & ~done))
        free = Signal()                     # a new decision may be made now
        m.d.comb += free.eq(~queued)
        choice = self._choose(m, active, cur_vc, vc_mask)
        with m.If(~keep):
            m.d.sync += [dec.eq(choice), dec.req.eq(free & choice.req), dec.drop.eq(free & choice.drop)]
        m.d.comb += [self.req.valid.eq(dec.req & ~pend & near), self.req.port.eq(dec.port), self.req.vc.eq(dec.ovc)]

        # When no packet is read after this cycle, the packet's fields follow the decision: a queued
        # one starts in the next cycle, a requested one when its grant comes.
        with m.If(done & (queued | dec.req)):
            m.d.sync += [cur_vc.eq(dec.vc), self.dest_port.eq(dec.port), self.dest_onehot.eq(1 << dec.port),
                         self.dest_vc.eq(dec.ovc),
                         hops.eq(dec.hops), first.eq(1), dropping.eq(dec.drop)]
        with m.Elif(moves):
            m.d.sync += first.eq(0)
        m.d.sync += [busy.eq(Mux(done, queued, 1)), pend.eq(~done & (pend | (self.grant & busy)))]
        with m.If((self.grant & ~busy) | (done & queued)):    # a packet starts: dec still holds it
            m.d.sync += vc_mask.eq(past_mask(Cat(dec.vc == v for v in range(V))))

        # The packet's beats: the header with the hop count it leaves with.
        m.d.comb += [
            self.beat.valid.eq(active & ~dropping & cur_valid),
            self.beat.payload.eq(cur_beat),
        ]
        with m.If(first):
            m.d.comb += NetHeader(self.beat.payload.data).hops.eq(hops)
        for v in range(V):
            m.d.comb += self.i[v].ready.eq(active & (cur_vc == v) & (dropping | self.beat.ready))

        dropped = Signal()                  # a drop starts (the decision may wait for the packet before it)
        m.d.comb += dropped.eq(dec.drop & done)
        m.d.comb += [
            self.events.packet.eq(self.grant),
            self.events.missing.eq(dropped & (dec.err == RouteError.MISSING_PORT)),
            self.events.malformed.eq(dropped & (dec.err == RouteError.MALFORMED)),
            self.events.no_route.eq(dropped & (dec.err == RouteError.NO_ROUTE)),
            self.events.loop.eq(dropped & (dec.err == RouteError.LOOP)),
        ]
        if platform == "formal":
            self._properties(m, busy, pend, near, active, dropping, first, cur_vc, dec)
        return m

    def _choose(self, m, active, cur_vc, vc_mask):
        """Per VC the head packet's routing decision, registered (``vc#_route``, valid in ``vc#_routed``
        while the head it was made for is still at the stream's head); among the VCs whose head is not
        being read and whose output is available, the round-robin choice of those registers (``req``
        or ``drop`` set if there is one).  The output the packet being read goes to counts as
        available (it becomes so near that packet's end, when the choice is requested)."""
        V = self._vcs
        rows, eligible = [], []
        for v in range(V):
            head = self.i[v].payload
            row = Signal(_Decision(V, len(self.dest_port)), name=f"vc{v}_route")
            routed = Signal(name=f"vc{v}_routed")       # row is the current head's
            blocked = Signal(name=f"vc{v}_blocked")
            # the head stays until it moves: next cycle's head is this one's unless it moves now
            m.d.sync += routed.eq(self.i[v].valid & ~self.i[v].ready)
            m.d.sync += row.vc.eq(v)
            if v in self.routed_vcs:
                m.d.comb += self.lookup[v].eq(NetHeader(head.data).dst_node)
                step = self._step(m, f"route{v}", head, self.entries[v], v)
                bad = Mux(head.first & (head.kind == NetBeatKind.HEADER), step.error, RouteError.MALFORMED)
                m.d.sync += [row.req.eq(bad == RouteError.NONE), row.drop.eq(bad != RouteError.NONE),
                             row.err.eq(bad), row.port.eq(step.port), row.ovc.eq(step.vc),
                             row.hops.eq(step.next_hops)]
                # A hint only (the output checks availability itself): the head's output is unavailable.
                m.d.comb += blocked.eq(row.req & ~self.avail[row.port].bit_select(row.ovc, 1)
                                       & ~(active & (row.port == self.dest_port)))
            else:       # a network port injects on dateline VC 0 only: anything else is malformed
                m.d.sync += [row.drop.eq(1), row.err.eq(RouteError.MALFORMED)]
            ok = Signal(name=f"vc{v}_eligible")
            m.d.comb += ok.eq(self.i[v].valid & routed & ~(active & (cur_vc == v)) & ~blocked)
            rows.append(row)
            eligible.append(ok)
        choice = Signal(_Decision(V, len(self.dest_port)))
        m.d.comb += choice.eq(round_robin_select(m, Cat(eligible), vc_mask, [r.as_value() for r in rows],
                                                 name="vc_rr"))
        return choice

    def _step(self, m, name, head, entry, vc):
        """A :class:`RouteStep` of the packet whose header is the beat ``head`` on VC ``vc``, with its
        route table entry ``entry``."""
        m.submodules[name] = step = RouteStep(link_ports=self._links, net_ports=self._nets,
                                              from_link=self._from_link, dateline=self._dateline)
        hdr = NetHeader(head.data)
        bits = (self._nodes - 1).bit_length()
        m.d.comb += [step.entry.eq(entry), step.in_table.eq((hdr.dst_node >> bits) == 0), step.hops.eq(hdr.hops),
                     step.port_route.eq(self.port_route), step.in_dateline.eq(vc % 2 if isinstance(vc, int) else vc[0])]
        if isinstance(vc, int):
            m.d.comb += step.cls.eq(NetClass.RESPONSE if vc >= 2 else NetClass.REQUEST)
        else:
            m.d.comb += step.cls.as_value().eq(vc[1] if self._vcs == NUM_NET_VCS else 0)
        return step

    def _properties(self, m, busy, pend, near, active, dropping, first, cur_vc, dec):
        """The input's contract: a grant comes only for the registered request, whose fields the port
        then reads with; only a granted packet's beats are offered; its first beat is its header, which
        leaves with the hop count of the route step of the header still at the stream's head, for the
        output port and VC that step names (the table entries must not change meanwhile: software
        writes a table while no packet uses the entry); a packet keeps its message class."""
        with m.If(self.grant):
            m.d.comb += Assert(dec.req & ~pend)
            with m.If(~busy):
                m.d.comb += [Assert(cur_vc == dec.vc), Assert(self.dest_port == dec.port),
                             Assert(self.dest_vc == dec.ovc)]
        with m.If(pend):
            m.d.comb += [Assert(busy & dec.req & ~dec.drop), Assert(dec.vc != cur_vc)]
        with m.If(~busy):
            m.d.comb += Assert(near)
        m.d.comb += Assert(self.dest_onehot == (1 << self.dest_port)[:len(self.dest_onehot)])
        with m.If(self.beat.valid):
            m.d.comb += Assert(active & ~dropping)
        with m.If(self.beat.valid & first):
            head = Array(s.payload for s in self.i)[cur_vc]
            step = self._step(m, "f_step", head, Array(self.entries)[cur_vc], cur_vc)
            out = NetHeader(self.beat.payload.data)
            m.d.comb += [Assert(self.beat.payload.first), Assert(head.kind == NetBeatKind.HEADER),
                         Assert(out.hops == step.next_hops),
                         Assert(self.beat.payload.data == Cat(head.data[:_HOPS[0]], out.hops, head.data[sum(_HOPS):])),
                         Assert(self.dest_port == step.port), Assert(self.dest_vc == step.vc)]
        if self._vcs == NUM_NET_VCS:
            with m.If(active & ~dropping):
                m.d.comb += Assert(self.dest_vc[1] == cur_vc[1])


def _Decision(vcs, port_width):
    """The layout of an input port's decision: request (``req``) or drop (``drop``, with the cause
    ``err``) the head packet of VC ``vc``, for output ``port``, VC ``ovc``, leaving with hop count
    ``hops``."""
    return data.StructLayout({"req": 1, "drop": 1, "err": RouteError, "vc": range(vcs), "port": port_width,
                              "ovc": 2, "hops": 6})


#: (offset, width) of NetHeader.hops
_HOPS = (NetHeader.as_shape()["hops"].offset, NetHeader.as_shape()["hops"].width)
