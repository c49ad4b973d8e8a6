"""The slot accounting of an HTAX input port: slots per class, shared slots in use, the link's ``ready``."""

from amaranth.hdl import Array, Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS, HtaxVC

from .counting import below_after, up_down
from .layouts import (
    ERR_CLASS,
    NUM_CLASSES,
    Timing,
    alloc_layout,
    event_signature,
    link_state_signature,
    release_signature,
    reservations,
    slot_count,
)

__all__ = ["HtaxAccounting"]


class HtaxAccounting(wiring.Component):
    """Counts an input's slots per accounting class and decides its link's ``ready`` (``docs/htax.md``,
    "Queueing").

    The classes are the four VCs (RESPONSE: the unit's own responses) and ERR, the switch's error
    responses.  Every VC owns ``slots_per_vc`` reserved slots, ERR one, and the ``shared_slots`` go to
    any class; ``shared`` counts the slots held beyond their class's reservation.  A class has room
    while it holds fewer than its reservation or a shared slot is free.  Between packets ``ready[v]``
    is VC *v*'s room (the non-posted VC also needs ERR's, for a possible error response); inside a
    packet only the packet's VC is ready.  So a VC blocked downstream may fill the shared slots but
    never takes another VC's reserved ones (fig. 6-7), and the unit's own responses never take ERR's
    slot, so they never hold back its non-posted requests.

    Parameters
    ----------
    ports : int
    slots_per_vc, shared_slots : int
    timing : Timing
        ``DIRECT``: ``ready`` is a function of the counters and the link's state.  ``REGISTERED``:
        ``ready`` is a register, computed in the cycle before from the counters as they will be after
        that cycle's store and release and with the header that moves then counted as taking a slot
        of its VC's class (or of ERR, on the non-posted VC) and a shared slot: it never promises a
        slot that is not there.  The class flags "beyond / at the reservation" are registers too,
        and the counters count in LUTs.

    Members
    -------
    alloc : In(event_signature(alloc_layout(ports, timing)))
        A header is stored now (class ``cls``).
    release : In(release_signature(slots))
        A slot of class ``cls`` is released now.
    link : In(link_state_signature())
    ready : Out(NUM_VCS)
        The input link's ``ready``.
    count : Out(range(slots + 1)).array(NUM_CLASSES)
        Slots held per class.
    shared : Out(range(shared_slots + 1))
        Shared slots in use.
    """

    def __init__(self, *, ports, slots_per_vc, shared_slots, timing):
        self._s, self._sh, self._timing = slots_per_vc, shared_slots, Timing(timing)
        nslots = slot_count(slots_per_vc, shared_slots)
        super().__init__({
            "alloc": In(event_signature(alloc_layout(ports, self._timing))),
            "release": In(release_signature(nslots)),
            "link": In(link_state_signature()),
            "ready": Out(NUM_VCS),
            "count": Out(range(nslots + 1)).array(NUM_CLASSES),
            "shared": Out(range(shared_slots + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        sh = self._sh
        registered = self._timing is Timing.REGISTERED
        res = reservations(self._s)
        nslots = sum(res) + sh
        classes = range(NUM_CLASSES)
        np_ = HtaxVC.NONPOSTED.value
        alloc, alloc_cls = self.alloc.valid, self.alloc.payload.cls
        release, rel_cls = self.release.valid, self.release.cls
        in_pkt, wvc = self.link.in_packet, self.link.packet_vc

        def count(counter, up, down):
            up_down(m, counter, up, down, lut=registered)

        cnt = [Signal(range(nslots + 1), name=f"cnt{c}") for c in classes]
        shared = Signal(range(sh + 1), name="shared")
        shared_ok = Signal(name="shared_ok")
        m.d.comb += shared_ok.eq(shared < sh)
        room = []
        for c in classes:
            r = Signal(name=f"room{c}")
            m.d.comb += r.eq((cnt[c] < res[c]) | shared_ok)
            room.append(r)

        def ready_value(in_pkt, wvc, room, v):
            """``ready[v]``: inside a packet only its VC; between packets the VCs whose class has room (the
            non-posted VC also needs room for its possible error response, class ERR)."""
            return Mux(in_pkt, wvc == v, room[v] & room[ERR_CLASS] if v == np_ else room[v])

        ready = Signal(NUM_VCS, name="ready")
        if not registered:
            m.d.comb += [ready[v].eq(ready_value(in_pkt, wvc, room, v)) for v in range(NUM_VCS)]
        m.d.comb += self.ready.eq(ready)

        for c in classes:
            count(cnt[c], alloc & (alloc_cls == c), release & (rel_cls == c))
        over = full = None
        if sh:
            # cnt[c] > res[c] and cnt[c] >= res[c]: with Timing.REGISTERED registers, set from the
            # counters' next values (comparisons with constants chosen by the events, below_after), so
            # the shared count's events start at registers, not at comparisons of the counters.
            if registered:
                over = [Signal(name=f"cnt{c}_over", init=res[c] < 0) for c in classes]
                full = [Signal(name=f"cnt{c}_full", init=res[c] <= 0) for c in classes]
                for c in classes:
                    up, down = alloc & (alloc_cls == c), release & (rel_cls == c)
                    m.d.sync += [
                        over[c].eq(~below_after(m, f"cnt{c}_le_res", cnt[c], res[c] + 1, up, down, Const(0))),
                        full[c].eq(~below_after(m, f"cnt{c}_lt_res", cnt[c], res[c], up, down, Const(0))),
                    ]
            else:
                over = [cnt[c] > res[c] for c in classes]
                full = [cnt[c] >= res[c] for c in classes]
            shared_down = Signal(name="shared_down")
            m.d.comb += shared_down.eq(release & Array(over)[rel_cls])
            # The allocation's class is beyond its reservation after this cycle's release: compared
            # per class from the counters, then chosen by the header's class (the header decode is
            # not in front of the comparisons).
            beyond = Signal(len(classes), name="cnt_beyond")
            m.d.comb += beyond.eq(Cat(Mux(release & (rel_cls == c), over[c], full[c]) for c in classes))
            shared_up = Signal(name="shared_up")
            m.d.comb += shared_up.eq(alloc & beyond.bit_select(alloc_cls, 1))
            count(shared, shared_up, shared_down)

        if registered:
            # ready as the counters will be in the next cycle: this cycle's store and release counted
            # exactly, the header that moves now (if any) as taking a slot of class vc (a good packet) or
            # of ERR (an error response: non-posted VC only) and a shared slot.
            bvc = self.link.vc

            def room_after(hm):
                """The classes' room after this cycle with ``hm`` standing for "a header moves now".
                (Each "after" is compared without an adder: value + up - down + take < limit is
                value < limit - (up - down + take), one of four comparisons of the register with
                constants, chosen by the three events.)"""
                takes = [hm & (bvc == c) for c in range(NUM_VCS)] + [hm & (bvc == np_)]
                if sh:
                    shared_next_ok = below_after(m, "shared_next_ok", shared, sh, shared_up, shared_down, hm)
                else:
                    shared_next_ok = Const(0)
                return [below_after(m, f"cnt{c}_next_ok", cnt[c], res[c], alloc & (alloc_cls == c),
                                    release & (rel_cls == c), takes[c]) | shared_next_ok
                        for c in classes]

            # Both outcomes of the link's handshake are computed from registers and the link's beat, and
            # the handshake (moved: valid & ready of the beat's VC) chooses between them: ready -> moved
            # -> one multiplexer -> ready, instead of ready -> the header move -> the counters' events
            # -> ready.  (moved: a header moves unless the link is inside a packet; not moved: nothing
            # moves, the link's state stays.)
            moved, last = self.link.moved, self.link.last
            if_moved, if_not = room_after(~in_pkt), room_after(Const(0))
            m.d.sync += [ready[v].eq(Mux(moved, ready_value(~last, Mux(in_pkt, wvc, bvc), if_moved, v),
                                         ready_value(in_pkt, wvc, if_not, v)))
                         for v in range(NUM_VCS)]

        m.d.comb += [self.count[c].eq(cnt[c]) for c in classes]
        m.d.comb += self.shared.eq(shared)

        if platform == "formal":
            if registered and sh:
                # the registered class flags: the counters beyond / at their reservation
                for c in classes:
                    m.d.comb += [Assert(over[c] == (cnt[c] > res[c])), Assert(full[c] == (cnt[c] >= res[c]))]
            if not registered:
                # reservations: between packets a VC with a free reserved slot is ready, whatever the
                # other VCs hold; the non-posted VC also needs its possible error response's reserved
                # slot, which the unit's responses never take (a unit's responses never hold back its
                # requests)
                with m.If(~in_pkt):
                    for v in range(NUM_VCS):
                        own = cnt[v] < res[v]
                        if v == np_:
                            own = own & (cnt[ERR_CLASS] == 0)
                        with m.If(own):
                            m.d.comb += Assert(ready[v])
        return m
