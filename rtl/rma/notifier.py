"""The RMA notification writer (:class:`RmaNotifier`)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxVC
from rtl.common.params import check_port, check_pow2

from .formats import RMA_VPID_BITS, RmaNotification
from .txarb import HtaxPacketSignature

__all__ = ["RmaNotifier", "RmaNoteRequest"]

#: a notification on its way to the queue of ``vpid``
RmaNoteRequest = data.StructLayout({"vpid": RMA_VPID_BITS, "irq": 1, "entry": RmaNotification})


class RmaNotifier(wiring.Component):
    """RMA notification writer: 128-bit notifications into the per-VPID notification queues
    (dissertation ch. 7.5, table 7-8).

    Each VPID has a ring of ``size`` 16-byte entries at ``base`` (register file), a write pointer kept here
    (``nq_wp``, external in the RDL) and a read pointer software writes on its user page.  A notification
    goes to ``base + 16 * wp`` as one posted HTAX WRITE of two words, then ``wp`` advances modulo ``size``
    and, if the operation asked for an interrupt, the VPID's bit of ``irq`` pulses.

    Queue full (``wp + 1 == rp`` modulo ``size``, or ``size < 2``): the notification is dropped and
    ``dropped_incr`` strobes.  Nothing waits for software, so a full queue never blocks another VPID or
    the network, and no notification is lost without a count.

    The write pointers are a :class:`~amaranth.lib.memory.Memory` (block RAM) with one write port: the
    pointer advances in a cycle after the notification's last beat in which software does not write
    (a software write to another pointer delays it by a cycle; one to the same pointer wins).  The full
    test and the header address are registered one cycle after the look-up.

    Parameters
    ----------
    vpids : int
        VPIDs (power of two, 2..32).
    htax_port, host_port : int
        The unit's HTAX port and host memory's.

    Members
    -------
    notes : In(stream.Signature(RmaNoteRequest))
        Notifications to write, from the requester, completer and responder.
    tx : Out(HtaxPacketSignature())
    vpid : Out(range(vpids))
        The look-up address of ``base`` and ``rp`` (the head notification's VPID); data one cycle later.
    base : In(48) ; rp : In(32) ; size : In(32)
        Queue base (bits 51:4), read pointer, size in entries (one for all queues).
    sw_r_addr, sw_r_en : In ; sw_r_data : Out(32)
        The register file's read port of the write pointers (``nq_wp`` is external in the RDL): data one
        cycle after ``sw_r_en``, held while ``sw_r_en`` is low.
    sw_w_addr, sw_w_en, sw_w_data, sw_w_be : In
        Its write port (byte enables of the 64-bit register; bits 0..3 cover the pointer).  A software
        write in the cycle a notification advances the same pointer wins.
    irq : Out(vpids)
    dropped_incr : Out(1)
    """

    def __init__(self, *, vpids, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "notes": In(stream.Signature(RmaNoteRequest)), "tx": Out(HtaxPacketSignature()),
            "vpid": Out(range(vpids)), "base": In(48), "rp": In(32), "size": In(32),
            "sw_r_addr": In(range(vpids)), "sw_r_en": In(1), "sw_r_data": Out(32),
            "sw_w_addr": In(range(vpids)), "sw_w_en": In(1), "sw_w_data": In(32), "sw_w_be": In(8),
            "irq": Out(vpids), "dropped_incr": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        # the write pointers are a memory (block RAM) with one write port, shared by software and the
        # advance: 32 pointers as flip-flops behind a 32:1 multiplexer bounded the unit's Fmax
        m.submodules.wps = wps = Memory(shape=32, depth=self.vpids, init=[], attrs={"ram_style": "block"})
        wr = wps.write_port(granularity=8)
        # transparent: the read port always shows the head notification's pointer as of this cycle,
        # a write included, as the flip-flops did
        rd = wps.read_port(transparent_for=(wr,))
        sw_rd = wps.read_port()
        note = self.notes.payload
        vpid = note.vpid[:len(self.vpid)]
        wp = rd.data
        wp1 = Signal(32)
        wp1_q = Signal(32)                  # registered in LOOKUP: the full test and the header
        hdr_addr = Signal(52)               # address start from flip-flops
        full = Signal()
        m.d.comb += [self.vpid.eq(vpid), rd.addr.eq(vpid),
                     wp1.eq(Mux(wp + 1 >= self.size, 0, wp + 1)),
                     full.eq((self.size < 2) | (wp1_q == self.rp) | (note.vpid >= self.vpids))]
        m.d.comb += [sw_rd.addr.eq(self.sw_r_addr), sw_rd.en.eq(self.sw_r_en), self.sw_r_data.eq(sw_rd.data)]

        beat = self.tx.payload
        h = beat.word.header
        entry = note.entry.as_value()
        m.d.comb += [beat.vc.eq(HtaxVC.POSTED), h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED),
                     h.src.eq(self.htax_port), h.dst.eq(self.host_port),
                     h.body.mem.addr.eq(hdr_addr), h.body.mem.length.eq(2),
                     h.body.mem.first_be.eq(0xFF), h.body.mem.last_be.eq(0xFF)]
        # software writes take the write port whenever they come
        m.d.comb += [wr.addr.eq(self.sw_w_addr), wr.data.eq(self.sw_w_data),
                     wr.en.eq(Mux(self.sw_w_en, self.sw_w_be[:4], 0))]
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.notes.valid):
                    m.next = "LOOKUP"
            with m.State("LOOKUP"):             # base, rp and wp of note.vpid are valid now
                m.d.sync += [wp1_q.eq(wp1), hdr_addr.eq(Cat(Const(0, 4), self.base) + (wp << 4))]
                m.next = "CHECK"
            with m.State("CHECK"):
                with m.If(full):
                    m.d.comb += [self.notes.ready.eq(1), self.dropped_incr.eq(1)]
                    m.next = "IDLE"
                with m.Else():
                    m.next = "HEADER"
            with m.State("HEADER"):
                m.d.comb += [self.tx.valid.eq(1), beat.first.eq(1)]
                with m.If(self.tx.ready):
                    m.next = "WORD0"
            with m.State("WORD0"):
                m.d.comb += [self.tx.valid.eq(1), beat.word.data.eq(entry[:64])]
                with m.If(self.tx.ready):
                    m.next = "WORD1"
            with m.State("WORD1"):
                m.d.comb += [self.tx.valid.eq(1), beat.word.data.eq(entry[64:]), beat.last.eq(1)]
                with m.If(self.tx.ready):
                    m.next = "ADVANCE"
            with m.State("ADVANCE"):            # the pointer advances when software leaves the port free
                with m.If(~self.sw_w_en):
                    m.d.comb += [wr.addr.eq(vpid), wr.data.eq(wp1), wr.en.eq(0xF)]
                # a software write to the same pointer in this cycle wins; one to another waits us out
                with m.If(~self.sw_w_en | (self.sw_w_addr == vpid)):
                    m.d.comb += [self.notes.ready.eq(1), self.irq.eq(note.irq << vpid)]
                    m.next = "IDLE"
        return m
