"""The booking and head lookup of an input port of :class:`rtl.htax.HtaxPipelined`."""

from amaranth.hdl import Assert, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.rr import one_hot_index, one_hot_select

from .layouts import (
    ERR_CLASS,
    Timing,
    event_signature,
    queue_event,
    slot_state_signature,
    start_layout,
    take_layout,
)

__all__ = ["HtaxHeadLookup"]


class HtaxHeadLookup(wiring.Component):
    """Takes an input's booking from the matching and looks up the booked packet (``docs/htax.md``,
    "Pipelined switch").

    A booking (``book``) names a virtual output queue (VC, output); it takes a packet out of the
    queue's request counter in the next cycle (``dequeue``).  In that cycle the lookup finds the
    queue's head, the oldest packet of the queue that is not being read, from a register of the heads
    of all queues taken in the accept cycle (in between no slot starts being read, a released slot was
    already being read, and a new packet is younger than the booked queue's head), and offers it to
    the read engine (``next``) until the engine loads it.  The input may book again (``can_book``)
    when no booking waits and its engine is idle or near the end of its packet (``near``).

    Parameters
    ----------
    ports, slots : int

    Members
    -------
    book : In(event_signature(take_layout(ports)))
        The matching books queue (``vc``, ``dst``) now (only while ``can_book``).
    slots : In(slot_state_signature(ports, slots, Timing.REGISTERED))
    busy : In(slots)
        The slots being read (one-hot).
    load : In(1)
        The read engine loads ``next`` now.
    near, near_next : In(1)
        The read engine is idle or near its packet's end, now and in the next cycle.
    can_book : Out(1)
    dequeue : Out(event_signature(queue_event(ports)))
    next : Out(event_signature(start_layout(ports, slots)))
        The looked-up packet.
    """

    def __init__(self, *, ports, slots):
        self._n, self._slots = ports, slots
        super().__init__({
            "book": In(event_signature(take_layout(ports))),
            "slots": In(slot_state_signature(ports, slots, Timing.REGISTERED)),
            "busy": In(slots),
            "load": In(1),
            "near": In(1),
            "near_next": In(1),
            "can_book": Out(1),
            "dequeue": Out(event_signature(queue_event(ports))),
            "next": Out(event_signature(start_layout(ports, slots))),
        })

    def elaborate(self, platform):
        m = Module()
        n, nslots = self._n, self._slots
        book, state = self.book, self.slots
        bk = Signal(name="bk")                      # a booking waits for its lookup
        bk_dst = Signal(range(n), name="bk_dst")
        bk_vc = Signal(2, name="bk_vc")
        nx = Signal(name="nx")                      # the looked-up packet waits for the read engine
        nx_pkt = Signal(start_layout(n, nslots), name="nx_pkt")
        # can_book: ~bk & ~nx & near, from registers (set from the next values of bk, nx and near), so
        # the grant step's requests, which cross the switch, start at registers: the booking's part (a
        # booking sets bk) is q_dec, the booking registered, so the register can_book_q holds the rest
        # and its input does not wait for the accept step (~can_book_q | q_dec is ~can_book)
        can_book_q = Signal(init=1, name="can_book_q")
        # The queue counter drops in the cycle after the booking (a register cut between the accept and
        # the counters): the input cannot book again before (bk is set), so nothing reads the count in
        # between.  The queue is the booking's (bk_vc, bk_dst: loaded at the booking).
        q_dec = Signal(name="q_dec")
        m.d.sync += q_dec.eq(book.valid)
        m.d.comb += [self.dequeue.valid.eq(q_dec), self.dequeue.payload.vc.eq(bk_vc),
                     self.dequeue.payload.dst.eq(bk_dst), self.can_book.eq(can_book_q & ~q_dec)]
        with m.If(book.valid):
            m.d.sync += [bk.eq(1), bk_dst.eq(book.payload.dst), bk_vc.eq(book.payload.vc)]
        # the next ~bk & ~nx & near but for a booking now (q_dec covers it): a lookup needs bk, so without
        # bk nx only clears, at the load, and with bk set either bk stays or nx is set by the lookup
        m.d.sync += can_book_q.eq(~bk & ~(nx & ~self.load) & self.near_next)
        with m.If(self.load):
            m.d.sync += nx.eq(0)

        # The heads of all queues, registered in the cycle of the accept and used in the next, the cycle
        # of the lookup (bk & ~nx).
        waiting = state.occ & ~self.busy
        heads = Signal(nslots, name="heads")
        m.d.sync += heads.eq(Cat(waiting[k] & ~(waiting & state.older[k]).any() for k in range(nslots)))
        rec = state.record
        hit = Signal(nslots, name="head_hit")
        m.d.comb += hit.eq(Cat(heads[k] & (rec[k].vc == bk_vc) & (rec[k].dst == bk_dst) for k in range(nslots)))
        # The head's fields come through AND-OR trees on the one-hot hit (not a multiplexer on its index).
        head = one_hot_index(m, hit, name="head_slot")
        head_nb = one_hot_select(m, hit, [r.nb for r in rec], name="head_nb")
        head_err = Signal(name="head_err")
        m.d.comb += head_err.eq((hit & Cat(r.err for r in rec)).any())
        head_last = Signal(name="head_last")
        m.d.comb += head_last.eq((hit & Cat(r.nb == 0 for r in rec)).any())
        with m.If(bk & ~nx):
            m.d.sync += [
                bk.eq(0), nx.eq(1), nx_pkt.slot.eq(head), nx_pkt.nb.eq(head_nb), nx_pkt.last.eq(head_last),
                nx_pkt.dst.eq(bk_dst), nx_pkt.vc.eq(bk_vc), nx_pkt.cls.eq(Mux(head_err, ERR_CLASS, bk_vc)),
            ]
        m.d.comb += [self.next.valid.eq(nx), self.next.payload.eq(nx_pkt)]

        if platform == "formal":
            # the head lookup from the registered heads finds the booked queue's oldest packet that is
            # not being read, as a search of this cycle's slots would (and never nothing)
            now = Cat(waiting[k] & ~(waiting & state.older[k]).any() & (rec[k].vc == bk_vc) & (rec[k].dst == bk_dst)
                      for k in range(nslots))
            with m.If(bk & ~nx):
                m.d.comb += [Assert(hit == now), Assert(hit != 0)]
            with m.If(nx):
                m.d.comb += Assert(nx_pkt.last == (nx_pkt.nb == 0))
            # can_book (from registers) is "no booking waiting and the engine idle or near its end"
            m.d.comb += Assert(self.can_book == (~bk & ~nx & self.near))
        return m

