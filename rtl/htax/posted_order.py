"""HyperTransport's "a non-posted request does not pass a posted write" at an output of
:class:`rtl.htax.HtaxPipelined`, whose VC buffers let packets of different VCs pass each other."""

from amaranth.hdl import Assert, Module, Mux, Signal
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS, HtaxVC

__all__ = ["HtaxPostedOrder"]

POSTED, NONPOSTED = HtaxVC.POSTED.value, HtaxVC.NONPOSTED.value


class HtaxPostedOrder(wiring.Component):
    """Holds the non-posted VC's next packet at an output while a posted packet that reached the output
    before it has not started on the link (``docs/htax.md``, "Ordering across VCs").

    Posted packets leave an output in the order they reached it, so it suffices to number them: ``p_in``
    counts the posted headers that reached the output, ``p_out`` those that started on the link.  Each
    non-posted header takes a *stamp*, ``p_in`` when it arrives (a FIFO of stamps, one per non-posted
    packet that has not started); the non-posted packet whose stamp is at the FIFO's head (``p_in`` for a
    header that arrives into an empty FIFO) may start once ``p_out`` has reached its stamp: it waits while
    ``1 <= stamp - p_out <= p_in - p_out`` (modulo ``2^width``, so a stamp that newer posted packets have
    passed does not wait; only after ``2^width - depth`` of them could it look pending again, and then
    only until the pending ones have started).  Posted packets never wait for a non-posted one.

    The check is per output, not per input: a non-posted packet also waits for older posted packets of
    other inputs at its output.  That adds no wait that a posted packet could turn into a cycle (posted
    packets never wait for non-posted ones), and it is what the link downstream would see anyway.

    Parameters
    ----------
    depth : int
        Beats per VC buffer: at most that many non-posted packets and that many posted packets wait.

    Members
    -------
    arrive : In(NUM_VCS)
        A header of VC ``v`` reaches the output's buffers now (one-hot).
    start : In(NUM_VCS)
        A packet of VC ``v`` starts on the link now (one-hot).
    hold : Out(NUM_VCS)
        Bit ``NONPOSTED``: the non-posted VC's next packet may not start now (the other bits are 0); a
        register, set in the cycle after a non-posted packet starts.
    """

    arrive: In(NUM_VCS)
    start: In(NUM_VCS)
    hold: Out(NUM_VCS)

    def __init__(self, *, depth):
        self._depth = depth
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        # p_in - p_out (the posted packets pending) is at most depth; five more bits make a stale stamp
        # (a read that newer posted packets passed) look pending only after some 31 x depth of them, and
        # then only while that many are pending, which drain without the read (below)
        width = (self._depth + 1).bit_length() + 5
        p_in = Signal(width, name="posted_in")
        p_out = Signal(width, name="posted_out")
        with m.If(self.arrive[POSTED]):
            m.d.sync += p_in.eq(p_in + 1)
        with m.If(self.start[POSTED]):
            m.d.sync += p_out.eq(p_out + 1)

        m.submodules.stamps = stamps = fifo.SyncFIFO(width=width, depth=self._depth)
        # A header that arrives into an empty FIFO and starts at once takes no stamp.
        bypass = ~stamps.r_rdy & self.start[NONPOSTED]
        m.d.comb += [stamps.w_en.eq(self.arrive[NONPOSTED] & ~bypass), stamps.w_data.eq(p_in),
                     stamps.r_en.eq(self.start[NONPOSTED])]
        # ``hold`` is a register, set for the next cycle from this cycle's registers and arrival: the
        # next cycle's p_in exactly, this cycle's p_out (a posted start now is ignored: that makes
        # ahead and pending one larger, which only holds longer), and the head stamp the FIFO will
        # show unless a non-posted packet starts now (then the next head is not known yet: hold one
        # cycle, a cycle between two non-posted starts).  So no path runs from the start back into it.
        p_in_next = Signal(width, name="posted_in_next")
        m.d.comb += p_in_next.eq(p_in + self.arrive[POSTED])
        head = Signal(width, name="head_stamp")
        m.d.comb += head.eq(Mux(stamps.r_rdy, stamps.r_data, p_in_next))
        pending = Signal(width, name="posted_pending")      # posted packets arrived, not started
        ahead = Signal(width, name="posted_ahead")          # of them, older than the head (modulo 2^width)
        m.d.comb += [pending.eq(p_in_next - p_out), ahead.eq(head - p_out)]
        # The head waits while 1 <= ahead <= pending.  A stamp that newer posted packets have passed
        # (head behind p_out) wraps to a large ahead: no wait, except once 2^width - pending of them have
        # passed, and then only until the pending ones have started: posted packets never wait for it.
        hold = Signal(name="hold_np")
        m.d.sync += hold.eq(self.start[NONPOSTED] | ((ahead != 0) & (ahead <= pending)))
        m.d.comb += self.hold[NONPOSTED].eq(hold)

        if platform == "formal":
            # a stamp is never lost, no packet starts that has not arrived, and the registered hold
            # holds whenever the head's older posted packets are pending (it may hold longer)
            with m.If(stamps.w_en):
                m.d.comb += Assert(stamps.w_rdy)
            m.d.comb += Assert(p_in - p_out <= self._depth)
            now = Mux(stamps.r_rdy, stamps.r_data, p_in) - p_out
            with m.If((now != 0) & (now <= p_in - p_out)):
                m.d.comb += Assert(hold)
        return m
