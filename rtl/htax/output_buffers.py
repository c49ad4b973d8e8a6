"""The VC buffers of an output port of :class:`rtl.htax.HtaxPipelined` and their space accounting."""

from amaranth.hdl import Assert, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import MAX_DATA_WORDS, NUM_VCS, HtaxBeat

from .layouts import BEATS, RESERVE, BufferEntry, booking_layout, event_signature

__all__ = ["HtaxOutputBuffers"]


class HtaxOutputBuffers(wiring.Component):
    """One buffer per VC (``depth`` beats, LUT RAM) behind an output's crossbar register ``ow``, and
    the space the bookings may take in each (``docs/htax.md``, "Pipelined switch").

    ``ow``'s beat is always written to its VC's buffer, and a beat that leaves always pops: a beat that
    the link engine takes from ``ow`` directly (the buffer is empty) is written at the write pointer
    and read past in the same cycle, so the RAM's write enable does not wait for the link engine.
    A buffer keeps no count: a push with a pop keeps its "not empty" flag, a pop alone empties it when
    the read pointer reaches the write pointer.

    A booking takes ``RESERVE`` beats of its VC's space one cycle after the output learns it (it is
    not granted before: the booking waits in the output's ``obk``) and gets back the beats its packet
    does not use one cycle later (``booked_nb``: the booked input's head lookup, registered here);
    every beat that leaves frees one, one cycle later (a register cut between the link engine and the
    grant step).  ``space_ok`` ("space >= RESERVE", for the grant step) is registered from the next
    space without the booking's take and refund: in the two cycles after a take the output is not
    open, and from the cycle after the refund on the flag is exact again (formal: exact when open).

    Parameters
    ----------
    depth : int
        Beats per VC buffer.

    Members
    -------
    ow : In(HtaxBeat)
    ow_vc : In(NUM_VCS)
        ``ow``'s VC, one-hot (0: empty).
    leave : In(NUM_VCS)
        The link engine takes a beat of VC ``v`` now.
    booked : In(event_signature(booking_layout(ports)))
        The output learns a booking now.
    booked_nb : In(BEATS)
    head : Out(BufferEntry).array(NUM_VCS)
        The beat at each buffer's read pointer.
    buffered : Out(NUM_VCS)
        Bit ``v``: VC ``v``'s buffer holds a beat.
    space : Out(range(depth + 1)).array(NUM_VCS)
        Beats not reserved, per VC.
    space_ok : Out(NUM_VCS)
    """

    def __init__(self, *, ports, depth):
        self._depth = depth
        super().__init__({
            "ow": In(HtaxBeat),
            "ow_vc": In(NUM_VCS),
            "leave": In(NUM_VCS),
            "booked": In(event_signature(booking_layout(ports))),
            "booked_nb": In(BEATS),
            "head": Out(BufferEntry).array(NUM_VCS),
            "buffered": Out(NUM_VCS),
            "space": Out(range(depth + 1)).array(NUM_VCS),
            "space_ok": Out(NUM_VCS),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        ow = self.ow

        # The booking of the last cycle (bk1) and its refund one cycle later.
        bk1 = Signal(name="booked_d1")
        bk1_vc = Signal(2, name="booked_d1_vc")
        refund = Signal(name="refund")
        refund_vc = Signal(2, name="refund_vc")
        booked_nb_q = Signal(BEATS, name="booked_nb_q")
        m.d.sync += [bk1.eq(self.booked.valid), bk1_vc.eq(self.booked.payload.vc),
                     refund.eq(bk1), refund_vc.eq(bk1_vc), booked_nb_q.eq(self.booked_nb)]

        for v in range(NUM_VCS):
            wp = Signal(range(depth), name=f"vc{v}_wp")
            rdp = Signal(range(depth), name=f"vc{v}_rp")
            push = Signal(name=f"vc{v}_push")
            pop = Signal(name=f"vc{v}_pop")
            leave_q = Signal(name=f"vc{v}_left")
            buffered = Signal(name=f"vc{v}_buffered")
            space = Signal(range(depth + 1), init=depth, name=f"vc{v}_space")
            space_ok = Signal(init=1, name=f"vc{v}_space_ok")
            mem = memory.Memory(shape=BufferEntry, depth=depth, init=[])
            m.submodules[f"vc{v}_buf"] = mem
            wport = mem.write_port()
            rport = mem.read_port(domain="comb")
            m.d.comb += [
                pop.eq(self.leave[v]),
                push.eq(self.ow_vc[v]),
                wport.en.eq(push), wport.addr.eq(wp),
                wport.data.word.eq(ow.word), wport.data.first.eq(ow.first), wport.data.last.eq(ow.last),
                rport.addr.eq(rdp),
            ]
            with m.If(push):
                m.d.sync += wp.eq(Mux(wp == depth - 1, 0, wp + 1))
            rdp_next = Mux(rdp == depth - 1, 0, rdp + 1)
            with m.If(pop):
                m.d.sync += rdp.eq(rdp_next)
            # (wp == rp with buffered set is a full buffer)
            with m.If(push & ~pop):
                m.d.sync += buffered.eq(1)
            with m.If(pop & ~push):
                m.d.sync += buffered.eq(rdp_next != wp)
            take_v = bk1 & (bk1_vc == v)
            refund_v = refund & (refund_vc == v)
            m.d.sync += [leave_q.eq(self.leave[v]),
                         space.eq(space - Mux(take_v, RESERVE, 0)
                                  + Mux(refund_v, MAX_DATA_WORDS - booked_nb_q, 0) + leave_q)]
            m.d.sync += space_ok.eq(Mux(leave_q, space >= RESERVE - 1, space >= RESERVE))
            m.d.comb += [self.head[v].eq(rport.data), self.buffered[v].eq(buffered), self.space[v].eq(space),
                         self.space_ok[v].eq(space_ok)]

            if platform == "formal":
                # the buffer's beats (counted here: the buffer keeps only the pointers and a "not
                # empty" flag), never more than its depth; the pointers and the flag agree with them; and
                # the free space never counts a beat that is in the buffer or on its way into it
                cnt = Signal(range(depth + 2), name=f"f_vc{v}_count")
                m.d.sync += cnt.eq(cnt + push - pop)
                m.d.comb += [Assert(cnt <= depth), Assert(buffered == (cnt != 0)),
                             Assert(wp == (rdp + cnt) % depth),
                             Assert(space + cnt + self.ow_vc[v] <= depth)]
        return m
