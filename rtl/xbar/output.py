"""A crossbar output port: least-recently-served grants, one packet at a time, a queue per VC.

Dissertation ch. 7.3; rules in ``docs/network.md``.  The port takes one packet at a time from the
input it granted (``cur``) into the queue of the packet's VC, and may already have granted the next
packet (``nxt``), which follows the current one's last beat without a gap.  A grant reserves room for
a whole packet of the largest size in the VC's queue (``free`` counts the queue's beats neither
stored nor reserved; a packet's unused reservation comes back when its last beat is stored), so a
granted packet never waits for room: a VC whose sink stops fills only its own queue, never holds the
port, and the other VCs keep moving (virtual cut-through, no head-of-line blocking between VCs).
The queues share one block RAM (:class:`~rtl.xbar.queues.VcQueues`); each VC's output stream comes
from registers.

Grants go to the requesting input granted least recently (a matrix arbiter: a granted input drops
below every other), so an input that requests a port whenever the port grants waits for at most
``ports - 1`` other packets, as with a round-robin pointer, with a shallower grant.

Timing: requests come from the inputs' registers, and the grant is computed from them and from
``avail`` (a register: the port's availability in the previous cycle, cleared after a grant, so it
never promises more than the port has now); the grant goes back to the input from a register, and
what follows from it (the reservation, the arbiter's order) is booked one cycle later, while the
port is unavailable anyway.  Beats leaving the queues and a packet's unused reservation come back
to ``free`` a cycle late, from registers.  A beat taken from an input is written into its queue a
cycle later, from a register (the write stage).
"""

from amaranth.hdl import Assert, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import MAX_PACKET_BEATS, NUM_NET_VCS, NetBeat, NetHeader, NetStreamSignature, last_index
from rtl.common.rr import one_hot_select

from .input import XbarRequestSignature
from .queues import VcQueues

__all__ = ["XbarOutput", "OutputEvents"]


class OutputEvents(data.Struct):
    """One-cycle strobes of an output port."""
    packet: 1       # a packet's first beat left the port


class XbarOutput(wiring.Component):
    """Output port ``index`` of a crossbar with ``ports`` ports and ``vcs`` VCs.

    Parameters
    ----------
    index : int
        This port's number (it grants requests whose ``port`` is ``index``).
    ports : int
    vcs : int
    depth : int
        Beats per VC queue, at least :data:`~rtl.common.net.MAX_PACKET_BEATS`.
    prefetch : int
        Registers per VC in front of its output stream (:class:`~rtl.xbar.queues.VcQueues`): 2 streams
        a VC from the memory at one beat per cycle, 1 at one beat every second cycle.

    Members
    -------
    reqs : In(XbarRequestSignature(ports)).array(ports)
        Every input's request.
    grant : Out(ports)
        One-hot: the input granted in the previous cycle (a register).
    granting : Out(ports)
        One-hot: the input granted in this cycle (``grant``'s next value; the crossbar registers, per
        input, whether any output grants it).
    beats : In(stream.Signature(NetBeat)).array(ports)
        Every input's packet beats, ``valid`` only while the input's packet is for this port; this
        port takes (``ready``) those of ``cur``.
    beat_vcs : In(ArrayLayout(2, ports))
        Every input's ``dest_vc``: the VC queue its beats go to.
    taking : Out(ports)
        One-hot: the input whose beats this port takes (from registers).  It may be an input still
        sending its previous packet to another port (granted while it did): its beats follow.
    avail : Out(4)
        ``avail[u]``: this port grants requests for VC ``u`` (a register).
    o : Out(NetStreamSignature()).array(vcs)
        The VC queues' outputs, from registers.
    events : Out(OutputEvents)
    """

    AHEAD = 3

    def __init__(self, *, index, ports, vcs=NUM_NET_VCS, depth=16, prefetch=2):
        self._index, self._ports, self._vcs, self._depth = index, ports, vcs, depth
        self._prefetch = prefetch
        super().__init__({
            "reqs": In(XbarRequestSignature(ports)).array(ports),
            "grant": Out(ports), "granting": Out(ports),
            "beats": In(stream.Signature(NetBeat)).array(ports),
            "beat_vcs": In(data.ArrayLayout(2, ports)),
            "taking": Out(ports),
            "avail": Out(NUM_NET_VCS),
            "o": Out(NetStreamSignature()).array(vcs),
            "events": Out(OutputEvents),
        })

    def elaborate(self, platform):
        m = Module()
        P, V, D = self._ports, self._vcs, self._depth
        cur_act, cur_src = Signal(), Signal(P)              # cur_src, nxt_src: one-hot, zero if none
        nxt_act, nxt_src = Signal(), Signal(P)
        free = [Signal(range(D + 1), init=D, name=f"vc{u}_free") for u in range(V)]
        written = Signal(range(MAX_PACKET_BEATS + 1))      # beats of cur stored so far
        length = Signal(range(MAX_PACKET_BEATS + 1))       # cur's length, known once its header is stored

        # Grants: to the least recently served of the inputs requesting this port for an available VC.
        # Available: the port is idle or its current packet has at most AHEAD beats to go (so a booked input waits
        # at most that long, and its packet follows the current one without a gap), and the VC's queue
        # has room for a whole packet; registered, and cleared in the cycle after a grant.
        near, grant_any = Signal(), Signal()
        m.d.comb += near.eq(~cur_act | ((written >= 1) & (length - written <= self.AHEAD)))
        room = Cat(free[u] >= MAX_PACKET_BEATS for u in range(V))
        m.d.sync += self.avail.eq(Mux(grant_any | nxt_act | ~near, 0, room))
        wants = Cat(r.valid & (r.port == self._index) & self.avail.bit_select(r.vc, 1) for r in self.reqs)
        grant, update = _least_recent(m, wants)
        m.d.comb += grant_any.eq(wants.any())
        m.d.sync += self.grant.eq(grant)
        m.d.comb += self.granting.eq(grant)

        # The current packet's beats into its VC queue.
        src_valid = Signal()
        src = Signal(NetBeat)
        src_vc = Signal(2)
        m.d.comb += [src_valid.eq((cur_src & Cat(b.valid for b in self.beats)).any()),
                     src.eq(one_hot_select(m, cur_src, [b.payload.as_value() for b in self.beats], name="src")),
                     src_vc.eq(one_hot_select(m, cur_src, list(self.beat_vcs), name="src_vc"))]
        store = Signal()
        m.d.comb += store.eq(cur_act & src_valid)
        ending = Signal()
        m.d.comb += ending.eq(store & src.last)
        m.d.comb += self.taking.eq(cur_src)
        for i in range(P):
            m.d.comb += self.beats[i].ready.eq(cur_src[i])
        with m.If(store):
            m.d.sync += written.eq(written + 1)
            with m.If(written == 0):
                hdr = NetHeader(src.data)
                m.d.sync += length.eq(last_index(hdr) + 1)
        # A grant finds nxt empty (avail was cleared when nxt was booked).
        with m.If(ending | ~cur_act):
            m.d.sync += [written.eq(0), cur_act.eq(nxt_act | grant_any), cur_src.eq(Mux(nxt_act, nxt_src, grant)),
                         nxt_act.eq(0), nxt_src.eq(0)]
        with m.Elif(grant_any):
            m.d.sync += [nxt_act.eq(1), nxt_src.eq(grant)]

        # Booked one cycle after the grant: the arbiter's order and the reservation (for the VC of the
        # granted request, registered: the input may still be sending another packet elsewhere).
        update(self.grant)
        g_vc = Signal(2)
        m.d.sync += g_vc.eq(one_hot_select(m, grant, [r.vc for r in self.reqs], name="g_vc"))

        # A registered write stage: a beat taken in this cycle is written into its queue in the next,
        # so the inputs' beat path (VC and port multiplexers) and the queues' write side (bypass into
        # the registers, memory write, pointers) are separate register stages.  The beat is reserved
        # (at the grant) while it is in the stage.
        m.submodules.queues = queues = VcQueues(vcs=V, depth=D, prefetch=self._prefetch)
        m.d.sync += [queues.w_en.eq(store), queues.w_vc.eq(src_vc), queues.w_data.eq(src)]
        # Beats leaving and a packet's unused reservation come back to `free` a cycle late (from
        # registers: the sinks' ready and the input's `last` do not reach the counters).
        popped = Signal(V)
        refund, refund_vc = Signal(range(MAX_PACKET_BEATS)), Signal(2)
        m.d.sync += [popped.eq(Cat(o.valid & o.ready for o in self.o)),
                     refund.eq(Mux(ending, MAX_PACKET_BEATS - 1 - written, 0)), refund_vc.eq(src_vc)]
        for u in range(V):
            wiring.connect(m, queues.o[u], wiring.flipped(self.o[u]))
            take = self.grant.any() & (g_vc == u)
            m.d.sync += free[u].eq(free[u] - Mux(take, MAX_PACKET_BEATS, 0) + popped[u]
                                   + Mux(refund_vc == u, refund, 0))
        m.d.comb += self.events.packet.eq(Cat(o.valid & o.ready & o.payload.first for o in self.o).any())

        if platform == "formal":
            self._properties(m, queues, free, wants, grant, grant_any, nxt_act, popped, refund, refund_vc)
        return m

    def _properties(self, m, queues, free, wants, grant, grant_any, nxt_act, popped, refund, refund_vc):
        """The output's contract: a stored beat always finds room (reserved at the grant), the free
        count never promises room that is taken, and an input that requests this port in every cycle
        in which it may waits for at most ``ports - 1`` grants to others (least recently served first)."""
        P, D = self._ports, self._depth
        m.d.comb += Assert(~(grant_any & nxt_act))
        for u in range(self._vcs):
            with m.If(queues.w_en & (queues.w_vc == u)):
                m.d.comb += Assert(queues.level[u] < D)
            # with what comes back a cycle late counted
            m.d.comb += Assert(free[u] + queues.level[u] + popped[u] + Mux(refund_vc == u, refund, 0) <= D)
        for i in range(P):
            passed = Signal(range(P + 1), name=f"f_passed{i}")     # grants to others while i waits
            with m.If(wants[i] & ~grant[i]):
                with m.If(grant.any()):
                    m.d.sync += passed.eq(passed + 1)
            with m.Else():
                m.d.sync += passed.eq(0)
            m.d.comb += Assert(passed <= P - 1)


def _least_recent(m, requests):
    """A matrix arbiter among ``len(requests)`` requesters: the one-hot grant of the requester granted
    least recently (lowest index first after reset), and ``update(granted)``, which puts the one-hot
    ``granted`` requester below every other (it may come a cycle after the grant, when no request is
    granted).  ``above[j][k]`` (``j < k``, one register each): ``j`` comes before ``k``.  A grant bit is
    its request and no request from above it: two LUT levels after the requests, against four or more
    for a pointer and a priority mask."""
    n = len(requests)
    above = {(j, k): Signal(name=f"above_{j}_{k}", init=1) for j in range(n) for k in range(j + 1, n)}

    def before(j, k):
        return above[j, k] if j < k else ~above[k, j]

    grant = Signal(n, name="grant")
    m.d.comb += grant.eq(Cat(requests[k] & ~Cat(requests[j] & before(j, k) for j in range(n) if j != k).any()
                             for k in range(n)))

    def update(granted):
        for (j, k), bit in above.items():
            with m.If(granted[j]):
                m.d.sync += bit.eq(0)
            with m.If(granted[k]):
                m.d.sync += bit.eq(1)

    return grant, update
