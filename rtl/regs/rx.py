"""The register file's receive side: HTAX packets in, written words and read requests out (ch. 7.2)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import MAX_DATA_WORDS, NUM_VCS, TAG_BITS, HtaxCmd, HtaxLinkSignature, HtaxStatus, HtaxVC, malformed

from .slots import ReadRequestSignature, WriteSignature

__all__ = ["RegRx"]


class RegRx(wiring.Component):
    """Frames the register file's HTAX receive link: WRITE data beats become registered words, a READ
    header a read request with its status decided, everything else is consumed and dropped
    (docs/regs.md, "HTAX side").

    ``rx.ready``: the posted, response and ATS VCs are always ready (and promise two beats with
    ``ready2``); the non-posted VC is ready while ``busy`` is low (no read in progress) and no read
    request is offered on ``read``.  ``ready``
    never depends on ``valid`` or ``payload``.

    Parameters
    ----------
    flops : list of :class:`~rtl.regs.slots.FlopSlot`
    arrays : list of :class:`~rtl.regs.slots.ArraySlot`
    window_base : int
    win_bits : int
        log2 of the window size.

    Members
    -------
    rx : In(HtaxLinkSignature())
        The register file's receive link.
    busy : In(1)
        A read is in progress: the non-posted VC is not ready.
    write : Out(WriteSignature(...))
        Each word of a well-formed WRITE, two cycles after its data beat moved: the word address is
        decoded against the registers as the beat arrives, into one registered select bit per
        register and array.
    read : Out(ReadRequestSignature(...))
        A READ header on the non-posted VC, in the cycle after it moved (from registers); ``status`` is
        ``MALFORMED`` for a header that breaks a rule, ``NO_TARGET`` when the address is outside the
        window or any word requested decodes to no register, else ``OK``.
    dropped : Out(1)
        A packet (other than a WRITE or such a READ) or a beat outside any packet was dropped.
    """

    def __init__(self, *, flops, arrays, window_base, win_bits):
        self._flops, self._arrays = flops, arrays
        self._window_base, self._win_bits = window_base, win_bits
        super().__init__({
            "rx": In(HtaxLinkSignature()), "busy": In(1),
            "write": Out(WriteSignature(flops=len(flops), arrays=len(arrays), wbits=win_bits - 3)),
            "read": Out(ReadRequestSignature(tag_bits=TAG_BITS)), "dropped": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rx, w, rd = self.rx, self.write, self.read
        win_bits = self._win_bits
        wbits = win_bits - 3
        beat = rx.payload
        hdr = beat.word.header
        mem = hdr.body.mem
        moved = rx.transfer()

        # a READ's request is offered in the cycle after its header moved (rd.valid, a register): the
        # non-posted VC is held while it is and while the read is in progress
        m.d.comb += [rx.ready.eq(Cat(Const(1, 1), ~self.busy & ~rd.valid, Const(0b11, NUM_VCS - 2))),
                     # always-ready VCs keep the ready2 promise; a read makes the unit busy
                     rx.ready2.eq(Cat(Const(1, 1), Const(0, 1), Const(0b11, NUM_VCS - 2)))]

        in_pkt = Signal()
        # the state of a well-formed WRITE is kept as flags, so the beat-accept condition is a few gates
        wr_more = Signal()          # the current packet is a WRITE with words still to come
        wr_ok = Signal()            # ... inside the window
        wr_addr = Signal(wbits)     # the word address of the next data beat
        wr_left = Signal(4)         # words still to come
        wr_first = Signal()         # the next data beat is the first (first_be)
        wr_lastw = Signal()         # ... the last (last_be)
        wr_first_be = Signal(8)
        wr_last_be = Signal(8)
        beat_w = Signal()           # a WRITE data beat moves that carries a word to apply

        in_window = (mem.addr[win_bits:] == (self._window_base >> win_bits))
        cmd = hdr.cmd.as_value()
        hdr_mal = malformed(hdr)

        # the write word, its address and byte enables are registered every cycle (they matter only
        # with a select bit set): no enable with a high fanout on the beat-accept path
        m.d.sync += [w.addr.eq(wr_addr), w.data.eq(beat.word.data),
                     w.be.eq(Mux(wr_first, wr_first_be, Mux(wr_lastw, wr_last_be, 0xFF)))]
        m.d.sync += rd.valid.eq(0)
        with m.If(moved):
            with m.If(beat.first):
                m.d.sync += [in_pkt.eq(~beat.last), wr_more.eq(0)]
                is_write = (cmd == HtaxCmd.WRITE.value) & ~hdr_mal
                is_read = (cmd == HtaxCmd.READ.value) & (hdr.vc.as_value() == HtaxVC.NONPOSTED.value)
                with m.If(is_write):
                    m.d.sync += [
                        wr_more.eq(mem.length != 0), wr_ok.eq(in_window), wr_addr.eq(mem.addr[3:win_bits]),
                        wr_left.eq(mem.length), wr_first.eq(1), wr_lastw.eq(mem.length == 1),
                        wr_first_be.eq(mem.first_be), wr_last_be.eq(mem.last_be),
                    ]
                with m.Elif(is_read):
                    m.d.sync += rd.valid.eq(1)
                with m.Else():
                    m.d.comb += self.dropped.eq(1)
            with m.Elif(in_pkt):
                m.d.sync += in_pkt.eq(~beat.last)
                with m.If(wr_more):
                    m.d.comb += beat_w.eq(1)
                    m.d.sync += [
                        wr_left.eq(wr_left - 1), wr_more.eq(wr_left != 1), wr_first.eq(0),
                        wr_lastw.eq(wr_left == 2), wr_addr.eq(wr_addr + 1),
                    ]
            with m.Else():
                m.d.comb += self.dropped.eq(1)       # a data beat outside any packet

        # write decode, one cycle ahead of the update: wr_addr is the address of the arriving beat
        fhit = Cat(*(wr_addr == fl.word for fl in self._flops))
        ahit = Cat(*(arr.hit(wr_addr) for arr in self._arrays))
        # unmapped: a word written with no select bit set (from the registers, not the decode)
        w_beat = Signal()
        m.d.sync += [w.fsel.eq(Mux(beat_w & wr_ok, fhit, 0)), w.asel.eq(Mux(beat_w & wr_ok, ahit, 0)),
                     w_beat.eq(beat_w)]
        m.d.comb += w.unmapped.eq(w_beat & ~(w.fsel.any() | w.asel.any()))

        # the read's status, decided in two register stages: as the header arrives, whether it breaks a
        # rule, lies in the window, and which of its line's words decode to a register and which it
        # requests; in the next cycle (rd.valid) whether every requested word is mapped
        hdr_base = mem.addr[3:win_bits]
        line = hdr_base[3:]
        mapped = []
        for i in range(MAX_DATA_WORDS):
            word = Cat(Const(i, 3), line)
            hit = Const(0, 1)
            for fl in self._flops:
                hit = hit | (word == fl.word)
            for arr in self._arrays:
                hit = hit | arr.hit(word)
            mapped.append(hit)
        first = hdr_base[:3]
        st_mal, st_window = Signal(), Signal()
        st_mapped, st_want = Signal(MAX_DATA_WORDS), Signal(MAX_DATA_WORDS)
        m.d.sync += [st_mal.eq(hdr_mal), st_window.eq(in_window), st_mapped.eq(Cat(*mapped)),
                     st_want.eq((((Const(1, 9) << mem.length) - 1) << first)[:MAX_DATA_WORDS])]
        with m.If(st_mal):
            m.d.comb += rd.status.eq(HtaxStatus.MALFORMED)
        with m.Elif(~st_window | ((st_want & ~st_mapped) != 0)):
            m.d.comb += rd.status.eq(HtaxStatus.NO_TARGET)
        with m.Else():
            m.d.comb += rd.status.eq(HtaxStatus.OK)
        m.d.sync += [rd.src.eq(hdr.src), rd.tag.eq(hdr.tag), rd.addr.eq(mem.addr), rd.length.eq(mem.length),
                     rd.be.eq(Cat(mem.first_be, mem.last_be))]
        return m
