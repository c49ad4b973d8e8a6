"""Route look-up for the network port: one read port of the route table, shared round-robin.

Dissertation ch. 7.4 (the routing look-up table, RLT) and 7.3.  The table itself is a RAM of the
register file (``net.route``, one 64-bit route word per destination node; synchronous read, data one
cycle after the address).  Each requester (one injector per message class) raises ``req`` with a node;
one is granted per cycle, and its route word arrives in the next cycle with ``done``.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NODE_BITS
from rtl.common.rr import one_hot_index, past_mask, round_robin_mask

__all__ = ["RouteLookup", "LookupSignature"]


class LookupSignature(wiring.Signature):
    """A requester's side of the look-up: ``req`` and ``node`` out; ``grant`` (this cycle), ``done``
    and ``route`` (the next cycle) in.

    Members
    -------
    req : Out(1)
    node : Out(NODE_BITS)
    grant : In(1)
    done : In(1)
    route : In(64)
    """

    def __init__(self):
        super().__init__({"req": Out(1), "node": Out(NODE_BITS), "grant": In(1), "done": In(1), "route": In(64)})

    def __eq__(self, other):
        return type(other) is LookupSignature

    def __hash__(self):
        return hash(LookupSignature)

    def __repr__(self):
        return "LookupSignature()"


class RouteLookup(wiring.Component):
    """``count`` requesters on one synchronous table read port of ``entries`` entries.

    Members
    -------
    users : In(LookupSignature()).array(count)
    addr : Out(range(entries))
        The table's read address.
    data : In(64)
        The table's read data, one cycle after ``addr``.
    """

    def __init__(self, *, count, entries):
        self._count, self._entries = count, entries
        super().__init__({"users": In(LookupSignature()).array(count), "addr": Out(range(entries)),
                          "data": In(64)})

    def elaborate(self, platform):
        m = Module()
        n = self._count
        mask = Signal(n, init=(1 << n) - 1)
        reqs = Signal(n)
        m.d.comb += reqs.eq(Cat(u.req for u in self.users))
        grant = round_robin_mask(m, reqs, mask, name="lookup")
        who = one_hot_index(m, grant, name="lookup_idx")
        for k, u in enumerate(self.users):
            with m.If(who == k):
                m.d.comb += self.addr.eq(u.node)
        done = Signal(n)
        m.d.sync += done.eq(grant)
        with m.If(grant.any()):
            m.d.sync += mask.eq(past_mask(grant))
        for k, u in enumerate(self.users):
            m.d.comb += [u.grant.eq(grant[k]), u.done.eq(done[k]), u.route.eq(self.data)]
        return m
