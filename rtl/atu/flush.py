"""The ATU's flush controller (dissertation ch. 5.3, fig. 5-11)."""

from amaranth.hdl import Array, Assert, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import FLUSH_ID_BITS, VPID_BITS

from .layout import LARGE_PAGE_BITS
from .util import count_step

__all__ = ["AtuFlush", "FlushControlSignature"]


class FlushControlSignature(wiring.Signature):
    """The flush request register as the register file drives it (``atu.flush``, ``docs/regs.md``).

    Members
    -------
    nla : Out(formats.page)
    extra : Out(32)
        Further pages after ``nla`` whose TLB sets the flush invalidates (``atu.flush_range``).
    vpid : Out(VPID_BITS)
    tlb, ats, gat, start : Out(1)
        ``start`` is a one-cycle strobe; ``gat``: invalidate the GAT cache entry of ``nla``'s GAT.
    done : In(1)
        One-cycle strobe: the flush is complete.
    """

    def __init__(self, formats):
        self._f = formats
        super().__init__({"nla": Out(formats.page), "extra": Out(32), "vpid": Out(VPID_BITS), "tlb": Out(1),
                          "ats": Out(1), "gat": Out(1), "start": Out(1), "done": In(1)})

    def __eq__(self, other):
        return type(other) is FlushControlSignature and other.members == self.members

    def __hash__(self):
        return hash(FlushControlSignature)

    def __repr__(self):
        return f"FlushControlSignature({self._f.page!r})"


class AtuFlush(wiring.Component):
    """Flush controller: TLB invalidation, ATS flush requests to the FUs, completion.

    ``control.start`` (the register file's strobe; ignored while a flush runs) starts a flush:

    * with ``control.tlb``, ``invalidate`` clears the 4 KB-page TLB set of ``control.nla`` and ``linvalidate``
      the large-page TLB set of its 2 MB page in that cycle; with ``control.extra`` > 0 (a range of
      ``extra + 1`` pages) the sets of the following pages follow, one per cycle, each set at most
      once (at most ``sets`` cycles; the large-page TLB's sets of the range's 2 MB pages in the same
      cycles).  ``starting`` holds the lookup in every invalidation cycle, so no lookup reads a row while
      it is written;
    * ``epoch`` flips.  Every translation carries the epoch of its TLB read; a counter per epoch of
      translations in flight (``lookups`` in, ``answered`` out) tells when every translation that read
      the TLB before the flush has been answered, and a GATE read in the old epoch never fills the TLB;
    * with ``control.ats``, one flush request {``vpid``, ``nla``, flush ID} goes to every FU of ``fu_ports``: the
      first offered in the start cycle itself (from the register fields), the others one per cycle from
      a copy (which follows the register fields while no flush runs, so the start strobe drives few
      flops);
    * ``control.done`` strobes when every translation of the old epoch has been answered and (with ``ats``) a
      flush response with the current flush ID has arrived from every FU, counted in the cycle it
      arrives.

    Deviations from ch. 5.3: one flush at a time; a FU that never answers keeps the flush from
    completing (no timeout); flush responses with another ID or from another port are dropped and
    counted (``dropped``).

    Parameters
    ----------
    formats : AtuFormats
    fu_ports : tuple of int

    Members
    -------
    control : In(FlushControlSignature)
        The flush request register's fields and strobe, and the ``done`` strobe.
    starting : Out(1)
        A flush starts or invalidates TLB sets in this cycle (holds the lookup).
    busy : Out(1)
        A flush runs (a register: ``control.start`` is ignored).
    tlb_flush : Out(1)
        A flush with ``tlb`` starts in this cycle (the counter's strobe).
    epoch : Out(1)
    invalidate, linvalidate : Out(stream.Signature(formats.page, always_ready=True))
        Invalidate the set of this page in the 4 KB-page TLB, in the large-page TLB.
    ginvalidate : Out(stream.Signature(formats.gat_bits, always_ready=True))
        Invalidate the GAT cache entry of this GAT (the start cycle of a flush with ``gat``).
    requests : Out(stream.Signature(formats.flush_request))
        Flush requests for the FUs.  While a flush runs they obey the stream rules; a FU that answers a
        flush request it has not received can end a flush early, and a request then not yet taken may
        be replaced by the next flush's.
    responses : In(stream.Signature(formats.flush_response, always_ready=True))
    lookups : In(1)
        A translation request reads the TLB in this cycle (it carries the current epoch).
    answered : In(stream.Signature(1, always_ready=True))
        A translation response of epoch ``payload`` leaves the ATU.
    dropped : Out(1)
        One cycle after a flush response that was not waited for.
    """

    def __init__(self, *, formats, fu_ports):
        self._f = formats
        self._fu_ports = tuple(fu_ports)
        super().__init__({
            "control": In(FlushControlSignature(formats)),
            "starting": Out(1),
            "busy": Out(1),
            "tlb_flush": Out(1),
            "epoch": Out(1),
            "invalidate": Out(stream.Signature(formats.page, always_ready=True)),
            "linvalidate": Out(stream.Signature(formats.page, always_ready=True)),
            "ginvalidate": Out(stream.Signature(formats.gat_bits, always_ready=True)),
            "requests": Out(stream.Signature(formats.flush_request)),
            "responses": In(stream.Signature(formats.flush_response, always_ready=True)),
            "lookups": In(1),
            "answered": In(stream.Signature(1, always_ready=True)),
            "dropped": Out(1),
        })

    def _sweep(self, m, start_now):
        """The TLB invalidations of a flush: the start cycle's (from the register fields), then one set
        per cycle while the range has more (from counters); returns "a sweep cycle after the start", a
        flop (it holds the lookup)."""
        f = self._f
        c = self.control
        small_n = Signal(range(f.small.sets + 1))       # sets still to invalidate, each TLB
        large_n = Signal(range(f.large.sets + 1))
        small_p = Signal(f.page)                         # the next page (4 KB TLB), the next 2 MB page
        large_p = Signal(f.nla_bits - LARGE_PAGE_BITS)
        sweep = Signal()                                 # = (small_n != 0) | (large_n != 0)
        first_large = Value.cast(c.nla)[LARGE_PAGE_BITS:]
        # pages of the range, and its 2 MB pages, less the first (both capped at the TLB's sets)
        last = Value.cast(c.nla) + c.extra
        more_large = last[LARGE_PAGE_BITS:] - first_large
        m.d.comb += [
            self.invalidate.valid.eq(Mux(sweep, small_n != 0, start_now & c.tlb)),
            self.invalidate.payload.eq(Mux(sweep, Value.cast(small_p), Value.cast(c.nla))),
            self.linvalidate.valid.eq(Mux(sweep, large_n != 0, start_now & c.tlb)),
            self.linvalidate.payload.eq(Mux(sweep, Cat(Const(0, LARGE_PAGE_BITS), large_p),
                                            Value.cast(c.nla))),
        ]
        with m.If(start_now & c.tlb):
            n_small = Mux(c.extra >= f.small.sets, f.small.sets - 1, c.extra)
            n_large = Mux(more_large >= f.large.sets, f.large.sets - 1, more_large)
            m.d.sync += [small_n.eq(n_small), large_n.eq(n_large), sweep.eq((n_small != 0) | (n_large != 0)),
                         small_p.eq(Value.cast(c.nla) + 1), large_p.eq(first_large + 1)]
        with m.Elif(sweep):
            m.d.sync += sweep.eq((small_n > 1) | (large_n > 1))
            with m.If(small_n != 0):
                m.d.sync += [small_n.eq(small_n - 1), small_p.eq(Value.cast(small_p) + 1)]
            with m.If(large_n != 0):
                m.d.sync += [large_n.eq(large_n - 1), large_p.eq(large_p + 1)]
        return sweep, small_n, large_n

    def elaborate(self, platform):
        m = Module()
        f = self._f
        nfu = len(self._fu_ports)
        epoch = Signal()                    # flips at each flush start
        busy = Signal()                     # a flush is running
        start_now = self.control.start & ~busy
        fl_nla = Signal(f.page)
        fl_vpid = Signal(VPID_BITS)
        fl_ats = Signal()
        fl_id = Signal(FLUSH_ID_BITS)
        fl_sent = Signal(range(nfu + 1))
        fl_got = Signal(max(1, nfu))
        fl_first = (start_now & self.control.ats) if nfu else Const(0)
        fl_more = Signal()                  # busy & ats & fewer than nfu requests sent, as a flop
        fl_load = self.requests.valid & self.requests.ready
        # padded to a power of two so the index mux is complete (a request leaves only for fl_sent < nfu)
        dsts = list(self._fu_ports) or [0]
        dsts += [dsts[-1]] * ((1 << len(fl_sent)) - len(dsts))
        fu_dst = Array(Const(p, 4) for p in dsts)
        req = self.requests.payload
        sweep, small_n, large_n = self._sweep(m, start_now)
        m.d.comb += [
            self.starting.eq(start_now | sweep),
            self.busy.eq(busy),
            self.tlb_flush.eq(start_now & self.control.tlb),
            self.ginvalidate.valid.eq(start_now & self.control.gat),
            self.ginvalidate.payload.eq(self.control.nla.gat_index),
            self.epoch.eq(epoch),
            self.requests.valid.eq(fl_more | fl_first),
            req.dst.eq(fu_dst[Mux(fl_more, fl_sent, 0)]),
            req.vpid.eq(Mux(fl_more, fl_vpid, self.control.vpid)),
            req.nla.eq(Mux(fl_more, Value.cast(fl_nla), Value.cast(self.control.nla))),
            req.flush_id.eq(Mux(fl_more, fl_id, fl_id + 1)),
        ]

        inflight = [Signal(range(f.slots + 4), name=f"inflight{e}") for e in range(2)]
        # a lookup counts one cycle late (from a flop, so the lookup's late load strobe drives one flop): a
        # flush cannot start in the cycle of a lookup (it holds the lookup), and ``done`` is first
        # possible in the cycle after the start, when the late count has landed
        lookup_d = Signal()
        lookup_epoch = Signal()
        m.d.sync += [lookup_d.eq(self.lookups), lookup_epoch.eq(epoch)]
        for e in range(2):
            count_step(m, inflight[e], lookup_d & (lookup_epoch == e),
                       self.answered.valid & (self.answered.payload == e))
        old_drained = Mux(epoch, inflight[0], inflight[1]) == 0
        # a flush response counts in the cycle it arrives (done may strobe in that cycle)
        rsp = self.responses.payload
        match = self.responses.valid & busy & (rsp.flush_id == fl_id)
        got_now = Signal(max(1, nfu))
        for i, p in enumerate(self._fu_ports):
            m.d.comb += got_now[i].eq(fl_got[i] | (match & (rsp.src == p)))
        taken = match & (got_now != fl_got)
        m.d.sync += [fl_got.eq(got_now), self.dropped.eq(self.responses.valid & ~taken)]
        all_got = got_now.all() if nfu else Const(1)
        done = busy & ~sweep & old_drained & (~fl_ats | all_got)
        m.d.comb += self.control.done.eq(done)
        with m.If(~busy):
            m.d.sync += [fl_nla.eq(self.control.nla), fl_vpid.eq(self.control.vpid), fl_ats.eq(self.control.ats),
                         fl_got.eq(0)]
        with m.If(start_now):
            m.d.sync += [busy.eq(1), epoch.eq(~epoch), fl_id.eq(fl_id + 1), fl_sent.eq(fl_load),
                         fl_more.eq(self.control.ats & Mux(fl_load, nfu > 1, nfu > 0))]
        with m.Else():
            with m.If(fl_load):
                m.d.sync += [fl_sent.eq(fl_sent + 1), fl_more.eq(fl_sent + 1 < nfu)]
            with m.If(done):
                m.d.sync += busy.eq(0)

        if platform == "formal":
            # every translation in flight sits in s1, s2, a reorder-buffer slot or the output register
            m.d.comb += [Assert(inflight[0] + inflight[1] <= f.slots + 3), Assert(fl_sent <= nfu),
                         Assert(sweep == ((small_n != 0) | (large_n != 0)))]
            with m.If(self.answered.valid):
                m.d.comb += Assert(Mux(self.answered.payload, inflight[1], inflight[0]) != 0)
            # while a flush runs, its requests obey the stream rules
            held = Signal()
            prev = Signal.like(Value.cast(req))
            m.d.sync += [held.eq(self.requests.valid & ~self.requests.ready & busy),
                         prev.eq(Value.cast(req))]
            with m.If(held):
                m.d.comb += [Assert(self.requests.valid), Assert(Value.cast(req) == prev)]
        return m
