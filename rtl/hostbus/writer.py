"""The bridge's posted-write path: HTAX WRITEs from the NIC become AXI4 write bursts (``docs/hostbus.md``)."""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import SIZE_8B, AxiBurst, AxiResp, axi_addr, axi_bresp, axi_wdata
from rtl.common.htax import ADDR_BITS, HtaxBeat, HtaxHeader
from rtl.common.params import check_int

__all__ = ["HostWriter", "hazard_signature", "LINE_BITS"]

LINE_BITS = ADDR_BITS - 6       # a 64-byte line's number


def hazard_signature(entries):
    """The writes in flight, for the read path: entry ``k`` holds the line of a write whose B has not
    arrived (``valid[k]``); ``retire`` is one-hot: the entry whose B arrives now."""
    return wiring.Signature({"line": Out(LINE_BITS).array(entries), "valid": Out(entries),
                             "retire": Out(entries)})


class HostWriter(wiring.Component):
    """HTAX WRITE packets (header and 1..8 data beats, one 64-byte line at most) to AXI4 write bursts.

    The header beat becomes an AW (``len = length - 1``, 8-byte beats, INCR, ID 0), each data beat a W
    beat whose strobes are the packet's ``first_be`` (first word), ``last_be`` (last word of a packet of
    two or more) or all ones.  Every write uses ID 0, so a memory subordinate performs them in order
    (the HTAX rule "posted writes stay in order"); the write's line stays in a table until its B
    arrives, and the read path holds a read of that line until then (a read never passes an earlier
    write to the same line).  A write into the 4 KiB MSI page ``msi_address`` is an interrupt: with
    ``msi=False`` it is consumed here (the NIC's ``irq`` wire signals it); with ``msi=True`` it goes out
    only after every earlier write's B, because an interrupt controller is a subordinate of its own.

    Parameters
    ----------
    entries : int
        Writes in flight (AW issued, B not yet arrived), 1..32.
    msi_address : int
    msi : bool
        Forward interrupt writes as AXI writes.
    id_bits : int
        Width of the AXI IDs (the manager's); every write uses ID 0, and B's ID is not looked at.

    Members
    -------
    i : In(stream.Signature(HtaxBeat))
        WRITE packets (the demultiplexer's posted VC).
    aw : Out(stream.Signature(axi_addr(id_bits, ADDR_BITS)))
    w : Out(stream.Signature(axi_wdata()))
    b : In(stream.Signature(axi_bresp(id_bits)))
    hazard : Out(hazard_signature(entries))
    b_error : Out(1)
        A B with a response other than OKAY (the write is lost), or with no write in flight, arrives now
        (counted by the bridge).
    msi_dropped : Out(1)
        An interrupt write is consumed now (``msi=False``).
    """

    def __init__(self, *, entries=8, msi_address, msi=False, id_bits=1):
        self._n = check_int("entries", entries, 1, 32)
        self._msi_page, self._msi = msi_address >> 12, bool(msi)
        super().__init__({
            "i": In(stream.Signature(HtaxBeat)),
            "aw": Out(stream.Signature(axi_addr(id_bits, ADDR_BITS))),
            "w": Out(stream.Signature(axi_wdata())),
            "b": In(stream.Signature(axi_bresp(id_bits))),
            "hazard": Out(hazard_signature(entries)),
            "b_error": Out(1), "msi_dropped": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        beat = self.i.payload
        hdr = HtaxHeader(beat.word.as_value())
        mem = hdr.body.mem

        # the table of writes in flight: a ring, filled at the header, emptied by B (in order: one ID)
        line = [Signal(LINE_BITS, name=f"line{k}") for k in range(n)]
        valid = Signal(n)
        head = Signal(range(n))
        tail = Signal(range(n))
        count = Signal(range(n + 1))
        full = Signal()
        m.d.comb += full.eq(count == n)

        in_packet = Signal()        # between a header and its last data beat
        dropping = Signal()         # the current packet is an interrupt write that is consumed
        first_word = Signal()
        length = Signal(4)
        first_be = Signal(8)
        last_be = Signal(8)
        aw_pend = Signal()          # an AW waits in its register
        aw_fence = Signal()         # ... and it is an interrupt write that waits for the earlier B
        aw = Signal.like(self.aw.payload)

        # an interrupt write (msi=True) leaves only as the last write in flight
        m.d.comb += [self.aw.valid.eq(aw_pend & (~aw_fence | (count == 1))), self.aw.payload.eq(aw)]
        with m.If(self.aw.valid & self.aw.ready):
            m.d.sync += aw_pend.eq(0)
        with m.If(self.w.ready):
            m.d.sync += self.w.valid.eq(0)
        aw_free = ~aw_pend
        w_free = ~self.w.valid | self.w.ready
        # (ready from registers and the AXI readies only, never from the beat: the HTAX link rule)
        m.d.comb += self.i.ready.eq(Mux(in_packet, dropping | w_free, aw_free & ~full))

        is_msi = Signal()
        consume = Signal()          # the header of an interrupt write that ends here (msi=False)
        m.d.comb += [is_msi.eq((mem.addr >> 12) == self._msi_page),
                     consume.eq(is_msi if not self._msi else Const(0))]
        alloc = Signal()
        with m.If(self.i.valid & self.i.ready):
            with m.If(~in_packet):
                m.d.sync += [in_packet.eq(1), dropping.eq(consume), first_word.eq(1), length.eq(mem.length),
                             first_be.eq(mem.first_be), last_be.eq(mem.last_be)]
                with m.If(~consume):
                    m.d.comb += alloc.eq(1)
                    m.d.sync += [aw_pend.eq(1), aw_fence.eq(is_msi),
                                 aw.id.eq(0), aw.addr.eq(mem.addr), aw.len.eq(mem.length - 1),
                                 aw.size.eq(SIZE_8B), aw.burst.eq(AxiBurst.INCR)]
            with m.Else():
                m.d.sync += first_word.eq(0)
                with m.If(beat.last):
                    m.d.sync += in_packet.eq(0)
                with m.If(~dropping):
                    strb = Mux(first_word, first_be, Mux(beat.last & (length > 1), last_be, 0xFF))
                    m.d.sync += [self.w.valid.eq(1), self.w.payload.data.eq(beat.word.data),
                                 self.w.payload.strb.eq(strb), self.w.payload.last.eq(beat.last)]
        m.d.comb += self.msi_dropped.eq(self.i.valid & self.i.ready & ~in_packet & consume)

        retire = Signal()
        m.d.comb += [self.b.ready.eq(1), retire.eq(self.b.valid & valid.bit_select(head, 1)),
                     self.b_error.eq(self.b.valid & ((self.b.payload.resp != AxiResp.OKAY)
                                                     | ~valid.bit_select(head, 1)))]
        with m.If(alloc):
            m.d.sync += tail.eq(Mux(tail == n - 1, 0, tail + 1))
            for k in range(n):
                with m.If(tail == k):
                    m.d.sync += line[k].eq(mem.addr >> 6)
        with m.If(retire):
            m.d.sync += head.eq(Mux(head == n - 1, 0, head + 1))
        set_mask = Mux(alloc, Const(1, n) << tail, 0)
        clr_mask = Mux(retire, Const(1, n) << head, 0)
        m.d.sync += [valid.eq((valid | set_mask) & ~clr_mask), count.eq(count + alloc - retire)]
        m.d.comb += [self.hazard.valid.eq(valid), self.hazard.retire.eq(clr_mask)]
        m.d.comb += [self.hazard.line[k].eq(line[k]) for k in range(n)]
        return m
