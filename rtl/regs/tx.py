"""The register file's transmit side: read responses and MSI writes into the HTAX (ch. 7.2)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import ADDR_BITS, TAG_BITS, HtaxBeat, HtaxCmd, HtaxLinkSignature, HtaxStatus, HtaxVC

from .slots import ResponseSignature

__all__ = ["RegTx"]


class RegTx(wiring.Component):
    """Sends the read responses and the MSI writes of the register file (docs/regs.md, "Interrupts").

    An MSI (posted WRITE of ``msi_data`` to ``msi_addr``, 4 bytes) is requested when ``pending`` rises,
    and again when a software write to an interrupt status or mask register (``irq_written``) leaves
    bits pending, so an event that arrives while software is clearing another is never lost.  The
    source of the next beat is chosen from flip-flops only: an MSI's data beat, then a response's data
    beat, then an MSI header, then a response header; the beat it builds does not wait for the link.
    The output register has a skid register behind it: a source loads while the skid register is
    empty (a flip-flop), so no load decision, and no fetch behind it, waits for ``tx.ready``.

    Parameters
    ----------
    htax_port, host_port : int
        The ``src`` of every packet sent; the ``dst`` of MSI writes.
    msi : bool
        The register file has MSI address and data fields (else it never sends an MSI).

    Members
    -------
    tx : Out(HtaxLinkSignature())
        The register file's transmit link.
    response : In(ResponseSignature(...))
        The read being answered.
    pending : In(1)
        An enabled interrupt status bit is set.
    irq_written : In(1)
        A software write to an interrupt status or mask register takes effect.
    msi_addr : In(ADDR_BITS)
        The MSI's byte address (4-byte aligned).
    msi_data : In(32)
    """

    def __init__(self, *, htax_port, host_port, msi):
        self._htax_port, self._host_port, self._msi = htax_port, host_port, msi
        super().__init__({
            "tx": Out(HtaxLinkSignature()), "response": In(ResponseSignature(tag_bits=TAG_BITS)),
            "pending": In(1), "irq_written": In(1), "msi_addr": In(ADDR_BITS), "msi_data": In(32),
        })

    def elaborate(self, platform):
        m = Module()
        tx, rsp = self.tx, self.response
        out_valid = Signal()
        out_beat = Signal(HtaxBeat)
        skid_valid = Signal()
        skid_beat = Signal(HtaxBeat)
        can_load = ~skid_valid
        load_msi_hdr = Signal()
        load_msi_data = Signal()

        pending_q = Signal()
        irq_written_q = Signal()
        msi_req = Signal()
        msi_data_next = Signal()
        msi_word = Signal(64)
        m.d.sync += [pending_q.eq(self.pending), irq_written_q.eq(self.irq_written)]
        trigger = self.pending & (~pending_q | irq_written_q)
        with m.If(load_msi_hdr):
            m.d.sync += msi_req.eq(trigger)
        with m.Elif(trigger):
            m.d.sync += msi_req.eq(1)

        rd_in_data = rsp.busy & ~rsp.header
        src_msi_data = msi_data_next
        src_rd_data = ~msi_data_next & rd_in_data & rsp.valid
        src_msi_hdr = ~msi_data_next & ~rd_in_data & msi_req & Const(int(self._msi), 1)
        src_rd_hdr = ~msi_data_next & ~rd_in_data & ~src_msi_hdr & rsp.busy & rsp.header
        m.d.comb += [
            load_msi_data.eq(can_load & src_msi_data),
            rsp.load_data.eq(can_load & src_rd_data),
            load_msi_hdr.eq(can_load & src_msi_hdr),
            rsp.load_header.eq(can_load & src_rd_hdr),
        ]
        load_any = rsp.load_header | rsp.load_data | load_msi_hdr | load_msi_data

        out = Signal(HtaxBeat)
        ohdr = out.word.header
        omem = ohdr.body.mem
        with m.If(src_rd_hdr):
            length = Mux(rsp.status == HtaxStatus.OK, rsp.length, 0)
            m.d.comb += [
                ohdr.cmd.eq(HtaxCmd.RESPONSE), ohdr.vc.eq(HtaxVC.RESPONSE), ohdr.status.eq(rsp.status),
                ohdr.src.eq(self._htax_port), ohdr.dst.eq(rsp.src), ohdr.tag.eq(rsp.tag),
                omem.addr.eq(rsp.addr), omem.length.eq(length), omem.first_be.eq(rsp.be[:8]),
                omem.last_be.eq(rsp.be[8:]),
                out.vc.eq(HtaxVC.RESPONSE), out.first.eq(1), out.last.eq(length == 0),
            ]
        with m.If(src_rd_data):
            m.d.comb += [
                out.word.data.eq(rsp.data), out.vc.eq(HtaxVC.RESPONSE),
                out.first.eq(0), out.last.eq(rsp.beats == 1),
            ]
        if self._msi:
            byte_addr = self.msi_addr
            hi = byte_addr[2]
            with m.If(src_msi_hdr):
                m.d.comb += [
                    ohdr.cmd.eq(HtaxCmd.WRITE), ohdr.vc.eq(HtaxVC.POSTED), ohdr.status.eq(HtaxStatus.OK),
                    ohdr.src.eq(self._htax_port), ohdr.dst.eq(self._host_port), ohdr.tag.eq(0),
                    omem.addr.eq(Cat(Const(0, 3), byte_addr[3:ADDR_BITS])), omem.length.eq(1),
                    omem.first_be.eq(Mux(hi, 0xF0, 0x0F)), omem.last_be.eq(0),
                    out.vc.eq(HtaxVC.POSTED), out.first.eq(1), out.last.eq(0),
                ]
            with m.If(load_msi_hdr):
                m.d.sync += [msi_data_next.eq(1),
                             msi_word.eq(Mux(hi, self.msi_data.as_unsigned() << 32, self.msi_data.as_unsigned()))]
            with m.If(src_msi_data):
                m.d.comb += [out.word.data.eq(msi_word), out.vc.eq(HtaxVC.POSTED), out.first.eq(0),
                             out.last.eq(1)]
            with m.If(load_msi_data):
                m.d.sync += msi_data_next.eq(0)

        # the beat registers load without looking at load_any (a beat loaded with valid low is unused)
        with m.If(~out_valid | tx.transfer()):
            with m.If(skid_valid):
                m.d.sync += [out_beat.eq(skid_beat), out_valid.eq(1), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [out_beat.eq(out), out_valid.eq(load_any)]
        with m.Elif(~skid_valid):
            m.d.sync += [skid_beat.eq(out), skid_valid.eq(load_any)]
        m.d.comb += [tx.valid.eq(out_valid), tx.payload.eq(out_beat)]
        return m
