"""The register file's flip-flop registers: every field's SystemRDL semantics, their read data and the
interrupt pending state (ch. 7.2; docs/regs.md, "Field semantics")."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import ADDR_BITS, HtaxStatus

from .slots import FetchSignature, WriteSignature, expand_be

__all__ = ["RegFlops"]


class RegFlops(wiring.Component):
    """Every flip-flop register of the register file, with its fields' software and hardware effects.

    Software writes come from ``write`` (a word two cycles after its data beat); a read of a register
    captures its fields in stage B of the read engine (``fetch``), and a read-to-clear acts one cycle
    later (off the output-backpressure path), removing exactly the value that was read, so events in
    between are kept.  The fields' hardware members are the register file's ``hw`` members of these
    registers (each :class:`~rtl.regs.slots.FlopSlot` carries its ``port``): this block drives and
    reads them.

    The register file's own counters (``rf_role`` ``dropped``/``unmapped``, and the ``error``
    interrupt) count one cycle after their events: a packet dropped at the receiver or a READ answered
    ``MALFORMED``; an unmapped written word or a READ answered ``NO_TARGET``.

    Parameters
    ----------
    flops : list of :class:`~rtl.regs.slots.FlopSlot`
    arrays : int
        The register file's RAM and external arrays (``write.asel``'s width).
    fields : dict
        ``{"<top>.<path>.<field>": (slot, Field)}`` of every field (interrupt ``enable`` look-ups).
    top : str
        The register map's top block name.
    wbits : int
        Word-address bits of the window.
    banked : set of int
        The registers (indices in ``flops``) a counter bank holds (:mod:`rtl.regs.bank`): not built here.

    Members
    -------
    write : In(WriteSignature(...))
    fetch : In(FetchSignature(...))
    read_data : Out(64)
        The software-readable fields of the register ``fetch.fsel`` selects (combinational).
    rx_dropped : In(1)
        The receiver dropped a packet or beat.
    answered : In(1)
        A READ's response header is sent in this cycle, with status ``status``.
    status : In(HtaxStatus)
    pending : Out(1)
        An interrupt status bit is set and enabled.
    irq_written : Out(1)
        A software write to an interrupt status or mask register takes effect in this cycle.
    msi_addr : Out(ADDR_BITS)
        The ``rf_role = "msi_address"`` field as a byte address (0 without one).
    msi_data : Out(32)
        The ``rf_role = "msi_data"`` field.
    """

    def __init__(self, *, flops, arrays, fields, top, wbits, banked=frozenset()):
        self._flops, self._fields, self._top = flops, fields, top
        self._banked = frozenset(banked)
        roles = {f.role: (fl, f) for fl in flops for f in fl.reg.fields if f.role}
        #: the register file sends MSIs: it has both MSI fields
        self.has_msi = "msi_address" in roles
        if self.has_msi and "msi_data" not in roles:
            raise ValueError("a register file with an msi_address field needs an msi_data field")
        super().__init__({
            "write": In(WriteSignature(flops=len(flops), arrays=arrays, wbits=wbits)),
            "fetch": In(FetchSignature(flops=len(flops), wbits=wbits)),
            "read_data": Out(64), "rx_dropped": In(1), "answered": In(1), "status": In(HtaxStatus),
            "pending": Out(1), "irq_written": Out(1), "msi_addr": Out(ADDR_BITS), "msi_data": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        wr, fetch = self.write, self.fetch
        wmask = expand_be(wr.be)
        # the register file's own events, into its counters one cycle later (off the decode paths)
        ev_dropped = Signal(2)       # a packet or beat dropped at the receiver, and/or a READ answered MALFORMED
        ev_unmapped = Signal(2)      # an unmapped write word and/or a read answered NO_TARGET
        ev_dropped_q = Signal(2)
        ev_unmapped_q = Signal(2)
        m.d.comb += [
            ev_dropped.eq(self.rx_dropped.as_unsigned()
                          + (self.answered & (self.status == HtaxStatus.MALFORMED)).as_unsigned()),
            ev_unmapped.eq(wr.unmapped.as_unsigned()
                           + (self.answered & (self.status == HtaxStatus.NO_TARGET)).as_unsigned()),
        ]
        m.d.sync += [ev_dropped_q.eq(ev_dropped), ev_unmapped_q.eq(ev_unmapped)]

        values = {}
        flop_rdata = Const(0, 64)
        irq_written = Const(0, 1)
        pend_terms = []
        for k, fl in enumerate(self._flops):
            for f in fl.reg.fields:
                if k not in self._banked:
                    values[f"{fl.path}.{f.name}"] = Signal(f.width, init=f.reset, name=f"{fl.name}_{f.name}")
        for k, fl in enumerate(self._flops):
            if k in self._banked:
                continue
            sel_w = wr.fsel[k]
            sel_r = Const(0, 1)
            if any(f.onread == "rclr" for f in fl.reg.fields):
                sel_r = Signal(name=f"{fl.name}_rclr")
                m.d.sync += sel_r.eq(fetch.load & fetch.fsel[k])
            reg_rdata = Const(0, 64)
            for f in fl.reg.fields:
                v = values[f"{fl.path}.{f.name}"]
                self._field(m, fl, f, v, sel_w, sel_r, fetch.captured[f.lsb:f.lsb + f.width],
                            wr.data[f.lsb:f.lsb + f.width], wmask[f.lsb:f.lsb + f.width], ev_dropped_q,
                            ev_unmapped_q)
                if "r" in f.sw:
                    reg_rdata = reg_rdata | (v.as_unsigned() << f.lsb)
                if f.intr:
                    if f.enable:
                        en = values[".".join((self._top,) + tuple(f.enable))]
                    else:
                        en = Const(-1, f.width)
                    pend_terms.append((v & en).any())
                    irq_written = irq_written | sel_w
                if f.role == "msi_address":
                    m.d.comb += self.msi_addr.eq(Cat(Const(0, f.lsb), v))   # the field holds address bits lsb..
                if f.role == "msi_data":
                    m.d.comb += self.msi_data.eq(v)
            flop_rdata = flop_rdata | Mux(fetch.fsel[k], reg_rdata, 0)
        # mask writes also re-arm the MSI: find the registers holding enable fields
        enable_words = set()
        for fl in self._flops:
            for f in fl.reg.fields:
                if f.intr and f.enable:
                    key = ".".join((self._top,) + tuple(f.enable))
                    enable_words.add(self._fields[key][0].word)
        for k, fl in enumerate(self._flops):
            if fl.word in enable_words:
                irq_written = irq_written | wr.fsel[k]
        m.d.comb += [self.read_data.eq(flop_rdata), self.irq_written.eq(irq_written)]
        if pend_terms:
            m.d.comb += self.pending.eq(Cat(*pend_terms).any())
        return m

    def _field(self, m, fl, f, v, sel_w, sel_r, snap, wd, wm, ev_dropped, ev_unmapped):
        port = fl.port
        w = f.width
        ones = Const((1 << w) - 1, w)

        def member(suffix):
            return getattr(port, f.name + suffix)

        # software effect
        sw_wr = sel_w if "w" in f.sw else Const(0, 1)
        if f.onwrite == "woclr":
            sw_val = v & ~(wd & wm)
        elif f.onwrite == "woset":
            sw_val = v | (wd & wm)
        else:
            sw_val = (v & ~wm) | (wd & wm)
        sw_next = Signal(w, name=f"{v.name}_sw")
        m.d.comb += sw_next.eq(v)
        if "w" in f.sw:
            with m.If(sw_wr):
                m.d.comb += sw_next.eq(sw_val)
        if f.onread == "rclr":
            with m.If(sel_r):
                m.d.comb += sw_next.eq((v - snap) if f.counter else (v & ~snap))
        sw_touch = sw_wr | (sel_r if f.onread == "rclr" else Const(0, 1))

        # hardware effect on top of a base value
        def hw_apply(base):
            nxt = base
            if f.hw_driven:
                nxt = member("_next")
            if f.we:
                nxt = Mux(member("_we"), member("_next"), nxt)
            if f.hwclr:
                nxt = Mux(member("_clr"), 0, nxt)
            if f.hwset:
                nxt = Mux(member("_set"), ones, nxt)
            return nxt

        has_hw_write = f.hw_driven or f.we or f.hwset or f.hwclr
        if f.role in ("dropped", "unmapped", "error"):
            event = {"dropped": ev_dropped, "unmapped": ev_unmapped,
                     "error": (ev_dropped.any() | ev_unmapped.any()).replicate(w)}[f.role]
        elif f.counter:
            event = member("_incr")
        elif f.intr:
            event = member("_event")
        else:
            event = None

        # a read-to-clear counter that only events change: between the capture and the clear one cycle
        # later the counter moved by exactly what the previous cycle's event added, so the clear
        # loads that amount (plus this cycle's event) instead of subtracting the value read
        rclr_by_events = (f.counter and f.onread == "rclr" and "w" not in f.sw and not has_hw_write
                          and w >= 3)
        if f.counter:
            base = v if rclr_by_events else sw_next
            if has_hw_write:
                base = hw_apply(base)
            # events add at most 2 (the register file's own counters), so base + event overflows into
            # the carry bit only: saturation is that carry, not a comparator behind the adder
            total = Signal(w + 1, name=f"{v.name}_sum")
            m.d.comb += total.eq(base + event)
            nxt = (total[:w] | total[w].replicate(w)) if f.saturate else total[:w]
            if rclr_by_events:
                added = Signal(2, name=f"{v.name}_added")    # what this cycle's event adds
                if f.saturate:
                    # at the carry the counter stops at all-ones: it gains event - 1 - total[0]
                    m.d.sync += added.eq(Mux(total[w], event - 1 - total[0], event))
                else:
                    m.d.sync += added.eq(event)
                nxt = Mux(sel_r, added + event, nxt)
        elif f.intr:
            base = hw_apply(sw_next) if has_hw_write else sw_next
            nxt = base | event
        elif has_hw_write:
            if f.precedence == "hw":
                nxt = hw_apply(sw_next)
            else:
                nxt = Mux(sw_touch, sw_next, hw_apply(v))
        else:
            nxt = sw_next
        if f.singlepulse:
            nxt = Mux(sw_wr, sw_val, 0)
        m.d.sync += v.eq(nxt)

        if port is not None and not f.role:
            if "r" in f.hw:
                m.d.comb += member("").eq(v)
            if f.swmod:
                m.d.comb += member("_swmod").eq(sw_wr & wm.any())
