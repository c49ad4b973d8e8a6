"""Receive buffer of one virtual channel: the credit pool of the link's flow control (ch. 7.3).

Beats of an arriving flit are written speculatively and become visible to the network side only when
the flit's CRC and sequence number check out (``commit``); a bad or duplicate flit is discarded
(``rollback``).  ``freed`` counts every beat that left the memory, modulo ``2**credit_bits``: the
transmitter's cumulative credit counter, so a lost credit update is repaired by the next one.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature

from .framing import BeatBuffer, PacketRestorer
from .params import require_params

__all__ = ["RxBuffer"]


class RxBuffer(wiring.Component):
    """Speculative-write FIFO of 64-bit beats with packet restoration on its output.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    w_en, w_data : ``In(1)``, ``In(64)``
        Append a beat (ignored when ``room`` is low).
    room : ``Out(1)``
        A beat can be appended.
    commit, rollback : ``In(1)``
        Make the appended beats visible / discard them.  Never together with ``w_en``.
    o : ``Out(NetStreamSignature())``
    freed : ``Out(credit_bits)``
        Beats read from the memory since reset, modulo ``2**credit_bits``.
    """

    def __init__(self, params):
        self.params = require_params(params)
        c = params.credit_bits
        super().__init__({
            "w_en": In(1), "w_data": In(64), "room": Out(1), "commit": In(1), "rollback": In(1),
            "o": Out(NetStreamSignature()), "freed": Out(c)})

    def elaborate(self, platform):
        m = Module()
        p = self.params
        depth = p.rx_buffer_beats
        abits = depth.bit_length() - 1
        m.submodules.mem = mem = Memory(shape=64, depth=depth, init=[])
        wp = mem.write_port()
        rp = mem.read_port(transparent_for=())
        m.submodules.restore = restore = PacketRestorer()
        m.submodules.out = out = BeatBuffer()       # registers the block RAM output (timing)
        wiring.connect(m, out.o, restore.i)
        wiring.connect(m, wiring.flipped(self.o), restore.o)

        spec = Signal(p.credit_bits)
        committed = Signal(p.credit_bits)
        rd = Signal(p.credit_bits)
        out_valid = Signal()
        m.d.comb += self.room.eq((spec - rd)[:p.credit_bits] < depth)
        m.d.comb += [wp.addr.eq(spec[:abits]), wp.data.eq(self.w_data),
                     wp.en.eq(self.w_en & self.room)]
        with m.If(self.w_en & self.room):
            m.d.sync += spec.eq(spec + 1)
        with m.If(self.commit):
            m.d.sync += committed.eq(spec)
        with m.If(self.rollback):
            m.d.sync += spec.eq(committed)

        # Prefetching read: the read port's data register is the output stage; it holds while the
        # consumer stalls because the port is only enabled when a new beat is fetched.
        fetch = (rd != committed) & (~out_valid | out.i.ready)
        m.d.comb += [rp.addr.eq(rd[:abits]), rp.en.eq(fetch),
                     out.i.valid.eq(out_valid), out.i.payload.eq(rp.data)]
        with m.If(fetch):
            m.d.sync += [rd.eq(rd + 1), out_valid.eq(1)]
        with m.Elif(out.i.ready):
            m.d.sync += out_valid.eq(0)
        m.d.comb += self.freed.eq(rd)
        return m
