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
    header that arrives into an empty FIFO) may start once ``p_out`` has reached its stamp.  Newer posted
    packets never hold it back, and posted packets never wait for it.

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
        Bit ``NONPOSTED``: the non-posted VC's next packet may not start now (the other bits are 0).
    """

    arrive: In(NUM_VCS)
    start: In(NUM_VCS)
    hold: Out(NUM_VCS)

    def __init__(self, *, depth):
        self._depth = depth
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        # wide enough that p_in - p_out (at most depth + 1 posted packets) keeps a sign bit
        width = (self._depth + 1).bit_length() + 1
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
        head = Signal(width, name="head_stamp")
        m.d.comb += head.eq(Mux(stamps.r_rdy, stamps.r_data, p_in))
        ahead = Signal(width, name="posted_ahead")          # head - p_out, negative when newer ones left
        m.d.comb += ahead.eq(head - p_out)
        m.d.comb += self.hold[NONPOSTED].eq((ahead != 0) & ~ahead[-1])

        if platform == "formal":
            # a stamp is never lost, and no packet starts that has not arrived
            with m.If(stamps.w_en):
                m.d.comb += Assert(stamps.w_rdy)
            m.d.comb += Assert((p_in - p_out)[-1] == 0)
        return m
