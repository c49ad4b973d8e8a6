"""The responder's lock engine (:class:`RmaLock`)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxVC
from rtl.common.params import check_port

from .fcaa import RmaFcaa
from .formats import QW_BITS, RMA_VPID_BITS, RmaError, RmaLockOperands, RmaLockResult
from .reader import RmaRead, RmaReadData
from .txarb import HtaxPacketSignature

__all__ = ["RmaLock", "RmaLockStart"]

#: a lock operation: the target VPID, the lock number (``RmaNetDescriptor.dst_qw``) and the operands
RmaLockStart = data.StructLayout({"vpid": RMA_VPID_BITS, "lock": QW_BITS, "ops": RmaLockOperands})


class RmaLock(wiring.Component):
    """The responder's lock engine: one FCAA operation on a lock word (dissertation ch. 7.5.4, fig. 7-11).

    The lock word lies at ``lock_base + 4096 * vpid + 4 * lock`` in the physically contiguous lock region
    (fig. 7-11: the lock region needs no translation, also for a VPID without physical-address mode).  It
    is read through the responder's read engine, compared (signed) by :class:`~rtl.rma.fcaa.RmaFcaa` and,
    if ``value <= compare``, written back with ``value + add`` as a posted write with the word's byte
    enables.  A lock number of 1024 or more, or a word beyond ``lock_size``: ``LOCK_RANGE``, nothing is
    read.  A read that fails: ``DMA_ERROR``, nothing is written.

    The write-back leaves on ``tx`` before ``start`` is taken; that it reaches the host before the next
    read of the word is :class:`~rtl.rma.fence.RmaFence`'s rule (``docs/rma.md``, "Ordering").

    Parameters
    ----------
    htax_port, host_port : int
        The unit's HTAX port and host memory's.

    Members
    -------
    start : In(stream.Signature(RmaLockStart))
        One operation; taken (``ready``) when it is done, so ``error`` and ``result`` belong to it in the
        cycle it is taken.
    error : Out(RmaError) ; result : Out(RmaLockResult)
    reads : Out(stream.Signature(RmaRead)) ; data : In(stream.Signature(RmaReadData))
    tx : Out(HtaxPacketSignature())
        The write-back.
    lock_base : In(49) ; lock_size : In(32)
    """

    def __init__(self, *, htax_port, host_port):
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        super().__init__({
            "start": In(stream.Signature(RmaLockStart)), "error": Out(RmaError), "result": Out(RmaLockResult),
            "reads": Out(stream.Signature(RmaRead)), "data": In(stream.Signature(RmaReadData)),
            "tx": Out(HtaxPacketSignature()), "lock_base": In(49), "lock_size": In(32),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.start.payload
        lock_off = Cat(Const(0, 2), p.lock[:10], p.vpid)        # 4096 * vpid + 4 * lock
        in_range = (p.lock[10:] == 0) & (lock_off + 4 <= self.lock_size)
        addr = Signal(52)
        m.d.comb += addr.eq(Cat(Const(0, 3), self.lock_base) + lock_off)

        m.submodules.fcaa = fcaa = RmaFcaa()
        word = Signal(64)
        m.d.comb += [fcaa.word.eq(word), fcaa.high.eq(addr[2]), fcaa.ops.eq(p.ops),
                     self.result.value.eq(fcaa.new), self.result.success.eq(fcaa.success)]
        m.d.comb += [self.reads.payload.addr_qw.eq(addr[3:]), self.reads.payload.words.eq(1)]
        wb = self.tx.payload
        h = wb.word.header
        m.d.comb += [wb.vc.eq(HtaxVC.POSTED), h.cmd.eq(HtaxCmd.WRITE), h.vc.eq(HtaxVC.POSTED),
                     h.src.eq(self.htax_port), h.dst.eq(self.host_port), h.body.mem.addr.eq(addr & ~7),
                     h.body.mem.length.eq(1), h.body.mem.first_be.eq(Mux(addr[2], 0xF0, 0x0F))]
        error = Signal(RmaError)
        m.d.comb += self.error.eq(error)

        with m.FSM():
            with m.State("IDLE"):
                m.d.sync += error.eq(RmaError.NONE)
                with m.If(self.start.valid):
                    with m.If(~in_range):
                        m.d.sync += error.eq(RmaError.LOCK_RANGE)
                        m.next = "DONE"
                    with m.Else():
                        m.next = "READ"
            with m.State("READ"):
                m.d.comb += self.reads.valid.eq(1)
                with m.If(self.reads.ready):
                    m.next = "WORD"
            with m.State("WORD"):
                m.d.comb += self.data.ready.eq(1)
                with m.If(self.data.valid):
                    m.d.sync += word.eq(self.data.payload.data)
                    m.next = "WRITE"
                    with m.If(self.data.payload.error):
                        m.d.sync += error.eq(RmaError.DMA_ERROR)
                        m.next = "DONE"
            with m.State("WRITE"):
                with m.If(~fcaa.success):
                    m.next = "DONE"
                with m.Else():
                    m.d.comb += [self.tx.valid.eq(1), wb.first.eq(1)]
                    with m.If(self.tx.ready):
                        m.next = "WRITE_DATA"
            with m.State("WRITE_DATA"):
                m.d.comb += [self.tx.valid.eq(1), wb.last.eq(1), wb.word.data.eq(Cat(fcaa.new, fcaa.new))]
                with m.If(self.tx.ready):
                    m.next = "DONE"
            with m.State("DONE"):
                m.d.comb += self.start.ready.eq(1)
                m.next = "IDLE"
        return m
