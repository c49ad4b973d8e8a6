"""The UART bridge's AXI4 manager: one burst at a time into the NIC's device window."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import SIZE_8B, AxiBurst, AxiResp, AxiSignature, axi_wdata
from rtl.common.params import check_int

from .formats import MEM_DATA, BridgeWord, burst_request

__all__ = ["AxiBurstManager"]


class AxiBurstManager(wiring.Component):
    """Performs one AXI4 burst per request and reports its response.

    A request (``req``: read or write, word address, ``words_m1 + 1`` words) is taken when the manager
    is idle.  A write raises AW (ID 0, INCR, 8-byte beats) and, independently of AW as AXI requires,
    sends the words of ``wdata`` as W beats through a register stage; it waits for B.  A read raises
    AR and hands the R beats' data to ``rdata``.  ``done`` then carries the burst's response: the B
    response, or the first R response that is not OKAY; a read whose ``RLAST`` is not on its last beat
    ends at ``RLAST`` or at its last beat, whichever comes first, with ``SLVERR``.  Every request uses
    ID 0, so writes reach the subordinate in order, and the next request starts only after this one's
    B (or last R): a write has completed before the bridge acknowledges it.

    ``abort`` (a strobe, from the bridge's timeout) gives the burst up without breaking AXI: the
    manager still finishes it, as the subordinate allows, but sends its remaining W beats with no byte
    enabled and zero data (the beat already offered stays as it is), drops its R data, and emits no
    ``done``.  ``busy`` is high from the request to the end of the burst; B and R beats that arrive
    while idle are taken and ignored.

    Parameters
    ----------
    id_bits, addr_bits : int
        The AXI ID and address widths (``NicAxi``'s ``s_axi``: 4 and 52).

    Members
    -------
    req : In(stream.Signature(burst_request(addr_bits - 3)))
    wdata : In(stream.Signature(BridgeWord))
        The words of a write, in order.
    rdata : Out(stream.Signature(64))
        The words of a read, in order.
    done : Out(stream.Signature(AxiResp))
    abort : In(1)
    busy : Out(1)
    axi : Out(AxiSignature(id_bits=id_bits, addr_bits=addr_bits))
    """

    def __init__(self, *, id_bits=4, addr_bits=52):
        self.id_bits = check_int("id_bits", id_bits, 1, 16)
        self.addr_bits = check_int("addr_bits", addr_bits, 12, 64)
        super().__init__({
            "req": In(stream.Signature(burst_request(addr_bits - 3))),
            "wdata": In(stream.Signature(BridgeWord)),
            "rdata": Out(stream.Signature(MEM_DATA)),
            "done": Out(stream.Signature(AxiResp)),
            "abort": In(1),
            "busy": Out(1),
            "axi": Out(AxiSignature(id_bits=id_bits, addr_bits=addr_bits)),
        })

    def elaborate(self, platform):
        m = Module()
        axi = self.axi
        addr = Signal(self.addr_bits - 3)
        length = Signal(3)
        aw_open = Signal()              # AW offered, not taken yet
        loaded = Signal(4)              # W beats loaded into the W stage
        w_stage = Signal(axi_wdata())
        w_valid = Signal()
        beat = Signal(3)
        resp = Signal(AxiResp)
        aborted = Signal()
        with m.If(self.abort & self.busy):
            m.d.sync += aborted.eq(1)

        for ax in (axi.aw, axi.ar):
            m.d.comb += [ax.payload.id.eq(0), ax.payload.addr.eq(addr << 3), ax.payload.len.eq(length),
                         ax.payload.size.eq(SIZE_8B), ax.payload.burst.eq(AxiBurst.INCR)]
        m.d.comb += [axi.aw.valid.eq(aw_open), axi.w.valid.eq(w_valid), axi.w.payload.eq(w_stage),
                     self.rdata.payload.eq(axi.r.payload.data), self.done.payload.eq(resp)]
        with m.If(axi.aw.ready):
            m.d.sync += aw_open.eq(0)

        # the W stage: loaded from wdata, after an abort with a beat that enables no byte
        with m.If(w_valid & axi.w.ready):
            m.d.sync += w_valid.eq(0)
        more = loaded <= length
        load = (~w_valid | axi.w.ready) & more

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [self.req.ready.eq(1), axi.b.ready.eq(1), axi.r.ready.eq(1)]
                m.d.sync += [aborted.eq(0), resp.eq(AxiResp.OKAY), loaded.eq(0), beat.eq(0)]
                with m.If(self.req.valid):
                    r = self.req.payload
                    m.d.sync += [addr.eq(r.addr), length.eq(r.words_m1), aw_open.eq(r.write)]
                    with m.If(r.write):
                        m.next = "WRITE"
                    with m.Else():
                        m.next = "READ_ADDR"
            with m.State("WRITE"):
                m.d.comb += self.busy.eq(1)
                with m.If(load):
                    m.d.comb += self.wdata.ready.eq(~aborted)
                    with m.If(aborted):
                        m.d.sync += [w_stage.data.eq(0), w_stage.strb.eq(0)]
                    with m.Else():
                        m.d.sync += [w_stage.data.eq(self.wdata.payload.data),
                                     w_stage.strb.eq(self.wdata.payload.strb)]
                    with m.If(aborted | self.wdata.valid):
                        m.d.sync += [w_stage.last.eq(loaded == length), w_valid.eq(1), loaded.eq(loaded + 1)]
                m.d.comb += axi.b.ready.eq(~aw_open & ~more & ~w_valid)
                with m.If(axi.b.valid & axi.b.ready):
                    m.d.sync += resp.eq(axi.b.payload.resp)
                    m.next = "DONE"
            with m.State("READ_ADDR"):
                m.d.comb += [self.busy.eq(1), axi.ar.valid.eq(1)]
                with m.If(axi.ar.ready):
                    m.next = "READ"
            with m.State("READ"):
                m.d.comb += [self.busy.eq(1), axi.r.ready.eq(self.rdata.ready | aborted),
                             self.rdata.valid.eq(axi.r.valid & ~aborted)]
                with m.If(axi.r.valid & axi.r.ready):
                    m.d.sync += beat.eq(beat + 1)
                    final = beat == length
                    with m.If(resp == AxiResp.OKAY):         # the first response that is not OKAY
                        with m.If(axi.r.payload.last != final):
                            m.d.sync += resp.eq(AxiResp.SLVERR)
                        with m.Else():
                            m.d.sync += resp.eq(axi.r.payload.resp)
                    with m.If(axi.r.payload.last | final):
                        m.next = "DONE"
            with m.State("DONE"):
                m.d.comb += [self.busy.eq(1), self.done.valid.eq(~aborted)]
                with m.If(self.done.ready | aborted):
                    m.next = "IDLE"
        return m
