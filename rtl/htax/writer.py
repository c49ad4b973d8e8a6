"""The writer of an HTAX input port: header decode, error responses, the data memory's write side."""

from amaranth.hdl import Assert, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import (
    MAX_DATA_WORDS,
    NUM_VCS,
    HtaxCmd,
    HtaxHeader,
    HtaxLinkSignature,
    HtaxStatus,
    HtaxVC,
    HtaxWord,
    malformed,
)
from rtl.common.htax_rules import data_beats

from .layouts import (
    BEATS,
    ERR_CLASS,
    Timing,
    alloc_layout,
    data_write_signature,
    drop_signature,
    event_signature,
    link_state_signature,
    short_layout,
    word_address,
    writer_state_signature,
)

__all__ = ["HtaxWriter"]


def _stored_header(m, port, hdr, good, bad):
    """The header the writer stores: the packet's, or for a dropped one its error response's."""
    err_hdr = Signal(HtaxHeader, name="err_hdr")
    m.d.comb += [
        err_hdr.cmd.eq(HtaxCmd.RESPONSE),
        err_hdr.vc.eq(HtaxVC.RESPONSE),
        err_hdr.status.eq(Mux(bad, HtaxStatus.MALFORMED.value, HtaxStatus.NO_TARGET.value)),
        err_hdr.src.eq(hdr.dst),
        err_hdr.dst.eq(port),
        err_hdr.tag.eq(hdr.tag),
    ]
    return Mux(good, hdr.as_value(), err_hdr.as_value())


class HtaxWriter(wiring.Component):
    """Takes packets from an input link into the slots (dissertation ch. 7.1; the error handling is
    this design's, ``docs/htax.md``, "Errors").

    A header beat is decoded where it arrives: a header that breaks a rule of
    :func:`rtl.common.htax.malformed` (or whose beat ``vc`` differs from the header's) is *malformed*,
    a well-formed one with ``dst >= ports`` has *no target*; either packet is dropped with every beat
    up to ``last`` and reported on ``drops``.  A dropped READ that arrived on the non-posted VC is
    answered: the writer stores an error response in its place (``RESPONSE``, status ``MALFORMED`` or
    ``NO_TARGET``, length 0, the request's tag, ``dst`` the port it arrived on, ``src`` the ``dst`` it
    asked for).  A stored header takes the lowest free slot (``free_slot``) and is announced on
    ``alloc``; its data words are written to the data memory as they arrive, at most as many as the
    header announces (extra beats up to ``last`` are consumed and dropped).  A packet whose ``last``
    comes before its header's length is announced on ``short`` with the words that did arrive (0 for a
    header beat with ``last``: ``alloc``'s ``got``): the read engine sends zeros for the others, never
    what the slot's memory held before.

    Parameters
    ----------
    port : int
        The input port's number (the ``dst`` of its error responses).
    ports : int
        Ports of the switch.
    slots : int
        Packet slots of the input.
    timing : Timing
        ``DIRECT``: a beat is stored in the cycle it moves; ``REGISTERED``: the link's beat and its
        decode are registered where they arrive and stored one cycle later (an input register), and
        headers are written to the data memory too (word 7 of the slot's header half).

    Members
    -------
    link : In(HtaxLinkSignature())
        The input link (``ready2`` is 0: the switch makes no promise).
    ready : In(NUM_VCS)
        The link's ``ready``, from the slot accounting.
    free_slot : In(range(slots))
        The lowest free slot.
    alloc : Out(event_signature(alloc_layout(ports, timing)))
        A header is stored now in slot ``free_slot``.
    short : Out(event_signature(short_layout(slots)))
        A packet's ``last`` came early: only ``words`` data words arrived.
    link_state : Out(link_state_signature())
        The link's packet state and handshake, for the slot accounting's ``ready``.
    store : Out(writer_state_signature(slots))
        The storing writer's state, for the read engine.
    drops : Out(drop_signature())
    write : In(data_write_signature(slots, timing))
        The data memory's write port.
    """

    def __init__(self, *, port, ports, slots, timing):
        self._port, self._n, self._slots, self._timing = port, ports, slots, Timing(timing)
        super().__init__({
            "link": In(HtaxLinkSignature()),
            "ready": In(NUM_VCS),
            "free_slot": In(range(slots)),
            "alloc": Out(event_signature(alloc_layout(ports, self._timing))),
            "short": Out(event_signature(short_layout(slots))),
            "link_state": Out(link_state_signature()),
            "store": Out(writer_state_signature(slots)),
            "drops": Out(drop_signature()),
            "write": In(data_write_signature(slots, self._timing)),
        })

    def elaborate(self, platform):
        m = Module()
        n, i, slots = self._n, self._port, self._slots
        registered = self._timing is Timing.REGISTERED
        link = self.link
        beat = link.payload
        hdr = beat.word.header
        m.d.comb += link.ready.eq(self.ready)

        # ---- the link: handshake and header decode ------------------------------------------
        in_pkt = Signal(name="in_pkt")              # the link is inside a packet
        wvc = Signal(2, name="wvc")                 # ... of this VC
        moved = Signal(name="moved")
        m.d.comb += moved.eq(link.transfer())
        hmove = Signal(name="hmove")
        m.d.comb += hmove.eq(moved & ~in_pkt)
        bad = Signal(name="malformed")
        m.d.comb += bad.eq(malformed(hdr) | (hdr.vc.as_value() != beat.vc.as_value()))
        no_target = Signal(name="no_target")
        m.d.comb += no_target.eq(~bad & (hdr.dst >= n) if n < 16 else Const(0))
        good = Signal(name="good")
        m.d.comb += good.eq(~bad & ~no_target)
        err_rsp = Signal(name="err_rsp")
        m.d.comb += err_rsp.eq(~good & (hdr.cmd == HtaxCmd.READ) & (beat.vc == HtaxVC.NONPOSTED))
        m.d.comb += [self.drops.malformed.eq(hmove & bad), self.drops.no_target.eq(hmove & no_target)]
        m.d.comb += [self.link_state.in_packet.eq(in_pkt), self.link_state.packet_vc.eq(wvc),
                     self.link_state.moved.eq(moved), self.link_state.vc.eq(beat.vc),
                     self.link_state.last.eq(beat.last)]

        # The header's allocation: its slot record and class (an error response: the response VC,
        # class ERR, back to this port).
        alloc_vc = Signal(2, name="alloc_vc")
        m.d.comb += alloc_vc.eq(Mux(good, beat.vc.as_value(), HtaxVC.RESPONSE.value))
        alloc = Signal(name="alloc")
        m.d.comb += alloc.eq(hmove & (good | err_rsp))
        alloc_dst = Signal(range(n), name="alloc_dst")
        m.d.comb += alloc_dst.eq(Mux(good, hdr.dst, i))
        alloc_cls = Signal(range(ERR_CLASS + 1), name="alloc_cls")
        m.d.comb += alloc_cls.eq(Mux(good, beat.vc.as_value(), ERR_CLASS))
        nbeats = Signal(range(16), name="hdr_beats")
        m.d.comb += nbeats.eq(data_beats(hdr))

        # The beat the writer stores (s_*; alloc, alloc_vc, alloc_dst, alloc_cls, nbeats): the link's, or
        # with Timing.REGISTERED the input register's (the same, decoded and registered at the link), one
        # cycle later.
        s_moved, s_hmove, s_last, s_good, s_bad = moved, hmove, beat.last, good, bad
        if not registered:
            s_hdr, s_data = _stored_header(m, i, hdr, good, bad), beat.word.data
        else:
            # The link's word is registered as it is (st_word, no logic in front of its 92 flip-flops);
            # the error response's header is made behind the register, from it and the registered
            # decode (st_good, st_malformed).
            st_word = Signal(HtaxWord, name="st_word")
            decoded = (moved, hmove, good, bad, alloc, alloc_vc, alloc_dst, alloc_cls, nbeats)
            stored = [Signal.like(v, name=f"st_{v.name}") for v in decoded]
            m.d.sync += [r.eq(v) for r, v in zip(stored, decoded, strict=True)]
            st_last = Signal(name="st_last")
            m.d.sync += [st_last.eq(beat.last), st_word.eq(beat.word)]
            s_moved, s_hmove, s_good, s_bad, alloc, alloc_vc, alloc_dst, alloc_cls, nbeats = stored
            s_last = st_last
            s_hdr, s_data = _stored_header(m, i, st_word.header, s_good, s_bad), st_word.data

        # ---- the storing writer ---------------------------------------------------------------
        wslot = Signal(range(slots), name="wslot")
        wdrop = Signal(name="wdrop")
        wcount = Signal(BEATS, name="wcount")
        wexp = Signal(range(16), name="wexp")
        # wmore: the next data beat is stored (~wdrop & (wcount < wexp)), a register set from the next
        # values, so the memory's write enable does not start with the count's comparison
        wmore = Signal(name="wmore")
        # The link's in-packet state and VC (for hmove and ready), and the storing writer's (s_in_pkt,
        # wslot, wdrop, wcount, wexp): one and the same with Timing.DIRECT.
        s_in_pkt = in_pkt
        if registered:
            s_in_pkt = Signal(name="st_in_pkt")
            with m.If(hmove):
                m.d.sync += [in_pkt.eq(~beat.last), wvc.eq(beat.vc)]
            with m.Elif(moved & beat.last):
                m.d.sync += in_pkt.eq(0)

        # The memory write of this cycle (wen, waddr, wdata).  The data is the header on a header
        # move, else the data word, whether or not the word is written (only wen decides that), so the
        # writer's state does not reach the data inputs.
        wen = Signal(name="wen")
        waddr = Signal.like(self.write.addr, name="waddr")
        wdata = Signal.like(self.write.data, name="wdata")
        m.d.comb += wdata.eq(Mux(s_hmove, s_hdr, s_data) if registered else s_data)
        data_addr = word_address(m, slots, self._timing, slot=wslot, word=wcount, header=0, name="data_addr")
        with m.If(s_hmove):
            if registered:
                hdr_addr = word_address(m, slots, self._timing, slot=self.free_slot, word=Const(0, 3), header=1,
                                        name="hdr_addr")
                m.d.comb += [wen.eq(alloc), waddr.eq(hdr_addr)]
            m.d.sync += [
                s_in_pkt.eq(~s_last),
                wslot.eq(self.free_slot),
                wdrop.eq(~s_good),
                wcount.eq(0),
                wexp.eq(nbeats),
                wmore.eq(s_good & (nbeats != 0)),
            ]
            if not registered:
                m.d.sync += wvc.eq(beat.vc)
        with m.Elif(s_moved):
            with m.If(s_last):
                m.d.sync += s_in_pkt.eq(0)
            with m.If(wmore):
                m.d.sync += [wcount.eq(wcount + 1), wmore.eq(wcount + 1 < wexp)]
                m.d.comb += [wen.eq(1), waddr.eq(data_addr)]
        m.d.comb += [self.write.en.eq(wen), self.write.addr.eq(waddr), self.write.data.eq(wdata)]

        # A packet that ends before its header's length: a header beat with last (no data words arrive)
        # or a data beat with last while more were announced.
        nb = Mux(s_good, nbeats, 0)
        m.d.comb += [
            self.alloc.valid.eq(alloc),
            self.alloc.payload.dst.eq(alloc_dst),
            self.alloc.payload.vc.eq(alloc_vc),
            self.alloc.payload.err.eq(~s_good),
            self.alloc.payload.nb.eq(nb),
            self.alloc.payload.got.eq(Mux(s_last, 0, nb)),
            self.alloc.payload.cls.eq(alloc_cls),
            self.short.valid.eq(s_moved & ~s_hmove & wmore & s_last & (wcount + 1 != wexp)),
            self.short.payload.slot.eq(wslot),
            self.short.payload.words.eq(wcount + 1),
            self.store.in_packet.eq(s_in_pkt),
            self.store.drop.eq(wdrop),
            self.store.slot.eq(wslot),
            self.store.count.eq(wcount),
            self.store.header.eq(s_hmove),
            self.store.word.eq(s_moved & ~s_hmove & wmore),
        ]
        if not registered:
            m.d.comb += self.alloc.payload.hdr.eq(s_hdr)

        if platform == "formal":
            # A stored header is well formed and agrees with its slot record.
            stored_hdr = HtaxHeader(s_hdr)
            with m.If(alloc):
                m.d.comb += [Assert(~malformed(stored_hdr)), Assert(stored_hdr.dst == alloc_dst),
                             Assert(stored_hdr.vc.as_value() == alloc_vc),
                             Assert(data_beats(stored_hdr) == self.alloc.payload.nb)]
            # A packet the writer stores has at most MAX_DATA_WORDS data words, and the writer is at or
            # before its end, so its writes stay inside its slot.
            with m.If(s_in_pkt & ~wdrop):
                m.d.comb += [Assert(wexp <= MAX_DATA_WORDS), Assert(wcount <= wexp)]
            m.d.comb += Assert(wmore == (~wdrop & (wcount < wexp)))
        return m
