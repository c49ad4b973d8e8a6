"""The RMA unit's HTAX receive side (:class:`RmaRx`)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import AtsMessage
from rtl.common.blockfifo import BlockRamFIFO
from rtl.common.htax import HtaxCmd, HtaxLinkSignature, HtaxStatus, HtaxVC
from rtl.common.params import check_int

from .requester import RmaCommandIn
from .txarb import HtaxPacketSignature

__all__ = ["RmaRx"]


class RmaRx(wiring.Component):
    """RMA receive side of the HTAX port: descriptor stores into the command buffer, DMA read responses to
    the requester's or the responder's read engine (dissertation ch. 7.5.1, 7.5.6: "the requester features
    a command buffer to de-couple the HyperTransport interface respectively the CPU from the network"), ATS
    messages (translation responses, flush requests; ch. 5.3, fig. 5-10) to the ATS client.

    A descriptor is a posted WRITE of two whole words to a 16-byte-aligned address of the ``rma`` window
    (fig. 7-6); the address gives VPID, interrupt bit and :class:`~rtl.rma.formats.RmaPageOffset`.  Any other
    posted or non-posted packet is consumed and counted in ``dropped_incr`` (a READ gets no response).
    RESPONSE packets go by tag: ``tag_split`` and above to ``rsp1`` (responder), below to ``rsp0``.  An ATS
    packet (``cmd`` ATS, one beat, status OK) goes to ``ats``; a longer one or one with an error status is
    consumed and counted.

    Rule (``docs/rma.md``, "Ordering"): responses are never blocked behind requests.  The non-posted,
    response and ATS VCs are ready in every cycle, whatever the command buffer holds, and a read
    response's header reaches its read engine in the cycle it moves; only the posted VC (descriptor
    stores) waits for the buffer.  The answers to the unit's own DMA reads, which drain the buffer, so
    never wait behind a store that waits for it.  ``formal/rma.py`` (``rx_responses``) proves it; a
    buffer with one ``ready`` for every VC in front of this block breaks it (``tests/rma/test_order.py``).

    Parameters
    ----------
    vpid_bits : int
        VPID bits of the store address (1..5).
    window_base : int
        Absolute base of the ``rma`` window (aligned to ``2**(12 + vpid_bits + 1)``).
    tag_split : int
        Responses with this tag and above go to ``rsp1``.
    depth : int
        Command buffer entries (1..64).

    Members
    -------
    rx : In(HtaxLinkSignature)
        ``ready`` is 1 on every VC but posted; on posted it is the command buffer's room between packets
        and 1 inside a posted one (registered state only).  It falls only when a posted beat moves: inside a
        packet of another VC it is the buffer's room too, so the switch never commits a posted header on a
        ``ready`` that then falls (the fresh ``ready`` rule, ``docs/htax.md``).
    cmds : Out(stream.Signature(RmaCommandIn))
    rsp0, rsp1 : Out(HtaxPacketSignature())
        Responses; the read engines are always ready.
    ats : Out(stream.Signature(AtsMessage, always_ready=True))
        The ATS client takes every message (it is ready on the ATS VC at all times).
    dropped_incr : Out(1)
    """

    def __init__(self, *, vpid_bits, window_base, tag_split, depth=4):
        self.vpid_bits = check_int("vpid_bits", vpid_bits, 1, 5)
        self.window_bits = 12 + vpid_bits + 1
        if window_base % (1 << self.window_bits):
            raise ValueError(f"window_base must be aligned to {1 << self.window_bits:#x}, not {window_base:#x}")
        self.window_base = window_base
        self.tag_split = check_int("tag_split", tag_split, 1, 31)
        self.depth = check_int("depth", depth, 1, 64)
        super().__init__({"rx": In(HtaxLinkSignature()), "cmds": Out(stream.Signature(RmaCommandIn)),
                          "rsp0": Out(HtaxPacketSignature()), "rsp1": Out(HtaxPacketSignature()),
                          "ats": Out(stream.Signature(AtsMessage, always_ready=True)), "dropped_incr": Out(1)})

    def elaborate(self, platform):
        m = Module()
        width = data.Layout.cast(RmaCommandIn).size
        m.submodules.buf = buf = BlockRamFIFO(width=width, depth=self.depth)
        rx = self.rx
        beat = rx.payload
        hdr = beat.word.header
        mem = hdr.body.mem
        vb = self.vpid_bits
        posted = 1 << HtaxVC.POSTED.value
        inside = Signal()                   # after a posted header, until its last beat
        # a descriptor's header is taken only with room in the buffer, and nothing else writes it until
        # its last beat: the data beats are always taken, so a response never waits behind them
        m.d.comb += rx.ready.eq(Mux(buf.w_rdy | inside, 0xF, 0xF & ~posted))
        moves = rx.transfer()
        with m.If(moves):
            m.d.sync += inside.eq(~beat.last & (beat.vc == HtaxVC.POSTED))

        good = ((hdr.cmd == HtaxCmd.WRITE) & (hdr.vc == HtaxVC.POSTED) & ~beat.last & (mem.length == 2)
                & (mem.addr[self.window_bits:] == self.window_base >> self.window_bits) & (mem.addr[:4] == 0)
                & (mem.first_be == 0xFF) & (mem.last_be == 0xFF))
        cmd = Signal(RmaCommandIn)
        kind = Signal(2)                    # of the packet in progress: 0 drop, 1 descriptor, 2 response
        to1 = Signal()                      # the response goes to rsp1
        word = Signal()
        m.d.comb += [buf.w_data.eq(cmd), self.cmds.payload.eq(buf.r_data), self.cmds.valid.eq(buf.r_rdy),
                     buf.r_en.eq(self.cmds.ready)]
        m.d.comb += [self.rsp0.payload.eq(beat), self.rsp1.payload.eq(beat)]
        is_rsp = hdr.cmd == HtaxCmd.RESPONSE
        hdr_to1 = hdr.tag >= self.tag_split
        is_ats = (hdr.cmd == HtaxCmd.ATS) & beat.last & (hdr.status == HtaxStatus.OK)
        m.d.comb += self.ats.payload.eq(hdr.body.ats)
        with m.If(moves & beat.first):
            m.d.sync += [kind.eq(Mux(is_rsp, 2, good)), to1.eq(hdr_to1), word.eq(0)]
            m.d.sync += [cmd.vpid.eq(mem.addr[12:12 + vb]), cmd.irq.eq(mem.addr[12 + vb]),
                         cmd.offset.eq(mem.addr[:12])]
            m.d.comb += [self.rsp0.valid.eq(is_rsp & ~hdr_to1), self.rsp1.valid.eq(is_rsp & hdr_to1),
                         self.ats.valid.eq(is_ats), self.dropped_incr.eq(~is_rsp & ~is_ats & ~good)]
        with m.Elif(moves):
            with m.If(kind == 2):
                m.d.comb += [self.rsp0.valid.eq(~to1), self.rsp1.valid.eq(to1)]
            with m.If(kind == 1):
                m.d.sync += word.eq(1)
                with m.If(word == 0):
                    m.d.sync += cmd.desc.as_value()[:64].eq(beat.word.data)
                with m.Else():
                    m.d.comb += [buf.w_en.eq(1), buf.w_data.eq(cmd.as_value() | (beat.word.data << (width - 64)))]
        return m
