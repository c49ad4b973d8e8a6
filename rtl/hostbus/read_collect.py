"""The bridge's DMA read data: AXI4 R beats are gathered per ID (``docs/hostbus.md``)."""

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import data, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiResp, axi_rdata
from rtl.common.htax import MAX_DATA_WORDS

__all__ = ["ReadCollect", "done_layout"]


def done_layout(id_bits):
    """A read whose last R beat has arrived: its ID, the beats that arrived (saturating at 15), an error
    among them."""
    return data.StructLayout({"id": id_bits, "beats": 4, "error": 1})


class ReadCollect(wiring.Component):
    """Writes every R beat into the data memory at ``(RID, beat)`` and, at ``RLAST``, queues the read as
    done.  AXI4 lets a subordinate interleave the beats of different IDs; each ID has its own counter,
    so interleaving costs nothing.  ``RREADY`` is always high: every ID in flight owns its 8 words of
    memory, and the done queue holds every ID.  An R beat for an ID not in flight is dropped and flagged
    (``r_error``), a response other than OKAY marks the read as failed, beats past the 8th are not
    stored (the response path compares the count with the request).

    Parameters
    ----------
    ids : int
    id_bits : int

    Members
    -------
    r : In(stream.Signature(axi_rdata(id_bits)))
    data : In(memory.WritePort.Signature(addr_width=id_bits + 3, shape=64))
    done : Out(stream.Signature(done_layout(id_bits)))
    busy : In(ids)
        IDs in flight.
    r_error : Out(1)
        An R beat arrives now for an ID that is not in flight.
    """

    def __init__(self, *, ids, id_bits):
        self._ids, self._id_bits = ids, id_bits
        super().__init__({
            "r": In(stream.Signature(axi_rdata(id_bits))),
            "data": In(memory.WritePort.Signature(addr_width=id_bits + 3, shape=64)),
            "done": Out(stream.Signature(done_layout(id_bits))),
            "busy": In(ids),
            "r_error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        r = self.r.payload
        count = Array(Signal(4, name=f"count{k}") for k in range(self._ids))
        error = Array(Signal(name=f"error{k}") for k in range(self._ids))
        layout = done_layout(self._id_bits)
        m.submodules.queue = queue = fifo.SyncFIFO(width=layout.size, depth=self._ids)

        ok = Signal()
        m.d.comb += [self.r.ready.eq(1),    # always ready: see the class docstring
                     ok.eq(self.r.valid & self.busy.bit_select(r.id, 1)),
                     self.r_error.eq(self.r.valid & ~self.busy.bit_select(r.id, 1))]
        n = count[r.id]
        bad = error[r.id] | (r.resp != AxiResp.OKAY)
        m.d.comb += [self.data.en.eq(ok & (n < MAX_DATA_WORDS)), self.data.addr.eq((r.id << 3) | n[:3]),
                     self.data.data.eq(r.data)]
        done = layout(queue.w_data)
        m.d.comb += [done.id.eq(r.id), done.beats.eq(Mux(n == 15, 15, n + 1)), done.error.eq(bad),
                     queue.w_en.eq(ok & r.last)]
        with m.If(ok):
            with m.If(r.last):
                m.d.sync += [n.eq(0), error[r.id].eq(0)]
            with m.Else():
                m.d.sync += [n.eq(Mux(n == 15, 15, n + 1)), error[r.id].eq(bad)]
        m.d.comb += [self.done.valid.eq(queue.r_rdy), self.done.payload.eq(queue.r_data),
                     queue.r_en.eq(self.done.ready)]
        return m
