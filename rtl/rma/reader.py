"""The RMA DMA read engine (:class:`RmaReader`) and its request and data layouts."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.htax import ADDR_BITS, HtaxCmd, HtaxStatus, HtaxVC
from rtl.common.params import check_int, check_port, check_pow2

from .txarb import HtaxPacketSignature

__all__ = ["RmaReader", "RmaRead", "RmaReadData"]

#: one line segment to read: its physical quadword address (a 52-bit byte address) and 1..8 words
RmaRead = data.StructLayout({"addr_qw": ADDR_BITS - 3, "words": 4})
RmaReadData = data.StructLayout({"data": 64, "last": 1, "error": 1})


class RmaReader(wiring.Component):
    """RMA DMA read engine with reorder buffer (dissertation ch. 7.5.6: "the responder and requester unit
    both feature a reordering buffer which is necessary to bring DMA read responses from the host back
    into request order").

    Each read request (one line segment, 1..8 words) takes the tail slot of ``slots`` and leaves as a
    non-posted HTAX READ tagged ``tag_base + slot``; its response, in any order, fills the slot; words
    leave on ``data`` strictly in request order, the slot's last word with ``last``, from a register (the
    block RAM's read port, read one word ahead): a word leaves at the earliest in the cycle after its
    slot is complete.  A response with an
    error status fills its slot with zero words and sets ``error`` on each of them.

    Parameters
    ----------
    slots : int
        Outstanding reads (power of two, 2..16).
    tag_base : int
        First HTAX tag (a multiple of ``slots``); responses are routed here by tag.
    htax_port, host_port : int

    Members
    -------
    reads : In(stream.Signature(RmaRead))
    tx : Out(HtaxPacketSignature())
        The READs.
    rsp : In(HtaxPacketSignature())
        RESPONSE packets with this engine's tags; always ready (a slot is reserved before its read).
    data : Out(stream.Signature(RmaReadData))
    """

    def __init__(self, *, slots, tag_base, htax_port, host_port):
        self.slots = check_pow2("slots", slots, 2, 16)
        self.tag_base = check_int("tag_base", tag_base, 0, 32 - slots)
        if tag_base % slots:
            raise ValueError(f"tag_base must be a multiple of slots, not {tag_base}")
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({"reads": In(stream.Signature(RmaRead)), "tx": Out(HtaxPacketSignature()),
                          "rsp": In(HtaxPacketSignature()), "data": Out(stream.Signature(RmaReadData))})

    def elaborate(self, platform):
        m = Module()
        n = self.slots
        sb = (n - 1).bit_length()
        # block RAM: the words are read one cycle ahead into the read port's register (the output)
        m.submodules.buf = buf = Memory(shape=64, depth=8 * n, init=[], attrs={"ram_style": "block"})
        wr, rd = buf.write_port(), buf.read_port(transparent_for=())
        head = Signal(sb + 1)           # slots are head .. tail - 1 (one more bit: full vs empty)
        tail = Signal(sb + 1)
        done = Signal(n)                # the slot's response arrived
        err = Signal(n)
        words = [Signal(4, name=f"words{i}") for i in range(n)]
        word = Signal(3)                # the head slot's next word

        # issue: a READ leaves when a slot is free
        req = self.reads.payload
        beat = self.tx.payload
        h = beat.word.header
        full = (tail - head)[:sb + 1] == n
        m.d.comb += [beat.vc.eq(HtaxVC.NONPOSTED), beat.first.eq(1), beat.last.eq(1),
                     h.cmd.eq(HtaxCmd.READ), h.vc.eq(HtaxVC.NONPOSTED), h.src.eq(self.htax_port),
                     h.dst.eq(self.host_port), h.tag.eq(self.tag_base + tail[:sb]),
                     h.body.mem.addr.eq(Cat(Const(0, 3), req.addr_qw)), h.body.mem.length.eq(req.words),
                     h.body.mem.first_be.eq(0xFF), h.body.mem.last_be.eq(0xFF),
                     self.tx.valid.eq(self.reads.valid & ~full), self.reads.ready.eq(self.tx.ready & ~full)]
        with m.If(self.tx.valid & self.tx.ready):
            m.d.sync += tail.eq(tail + 1)
            for i in range(n):
                with m.If(tail[:sb] == i):
                    m.d.sync += [words[i].eq(req.words), done[i].eq(0), err[i].eq(0)]

        # responses: header (tag -> slot), then data words into the slot
        rsp = self.rsp
        slot = Signal(sb)
        widx = Signal(3)
        m.d.comb += rsp.ready.eq(1)
        rh = rsp.payload.word.header
        with m.If(rsp.valid & rsp.payload.first):
            m.d.sync += [slot.eq(rh.tag[:sb]), widx.eq(0)]
            with m.If(rsp.payload.last):        # no data: an error response
                for i in range(n):
                    with m.If(rh.tag[:sb] == i):
                        m.d.sync += [done[i].eq(1), err[i].eq(rh.status != HtaxStatus.OK)]
        with m.Elif(rsp.valid):
            m.d.comb += [wr.addr.eq(Cat(widx, slot)), wr.data.eq(rsp.payload.word.data), wr.en.eq(1)]
            m.d.sync += widx.eq(widx + 1)
            with m.If(rsp.payload.last):
                for i in range(n):
                    with m.If(slot == i):
                        m.d.sync += done[i].eq(1)

        # drain: the head slot's words in order
        hs = head[:sb]
        h_words = Signal(4)
        h_done = Signal()
        h_err = Signal()
        for i in range(n):
            with m.If(hs == i):
                m.d.comb += [h_words.eq(words[i]), h_done.eq(done[i]), h_err.eq(err[i])]
        # the output register: the read port's data, with last and error beside it; the next word is
        # read when the register is empty or leaves (a slot is free again once its last word is read)
        out = self.data.payload
        o_valid, o_last, o_err = Signal(), Signal(), Signal()
        advance = Signal()
        h_last = word == h_words - 1
        m.d.comb += [advance.eq((head != tail) & h_done & (~o_valid | self.data.ready)),
                     rd.addr.eq(Cat(word, hs)), rd.en.eq(advance),
                     self.data.valid.eq(o_valid), out.data.eq(Mux(o_err, 0, rd.data)),
                     out.last.eq(o_last), out.error.eq(o_err)]
        with m.If(advance):
            m.d.sync += [o_valid.eq(1), o_last.eq(h_last), o_err.eq(h_err), word.eq(word + 1)]
            with m.If(h_last):
                m.d.sync += [word.eq(0), head.eq(head + 1)]
        with m.Elif(self.data.ready):
            m.d.sync += o_valid.eq(0)
        return m
