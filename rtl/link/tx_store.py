"""Replay buffer of the link port's transmit side: the beats and per-flit metadata (ch. 7.3)."""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .params import require_params

__all__ = ["LinkTxStore"]


class LinkTxStore(wiring.Component):
    """The replay buffer of :class:`~rtl.link.tx_framer.LinkTxFramer` (``docs/link.md``, "Replay
    buffer"): ``replay_flits`` slots of ``2^beat_idx_bits`` beats, and per slot the flit's metadata
    (:attr:`LinkParams.replay_meta`: VC and beat count), so a replay regenerates the flit.

    A slot is the flit's sequence number mod ``replay_flits``.  Both reads are synchronous and not
    transparent: data one cycle after the address, a write in the same cycle not seen.  Writes take
    effect at the clock edge after ``*_en``.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    w_slot, w_beat, w_data, w_en : In
        Beat write: ``w_data`` to beat ``w_beat`` of slot ``w_slot`` when ``w_en``.
    r_slot, r_beat : In ; r_data : Out(64)
        Beat read: ``r_data`` is the beat at (``r_slot``, ``r_beat``) of the previous cycle.
    mw_slot : In ; mw_meta : In(replay_meta) ; mw_en : In(1)
        Metadata write.
    mr_slot : In ; mr_meta : Out(replay_meta)
        Metadata read, one cycle after ``mr_slot``.
    """

    def __init__(self, params):
        self.params = p = require_params(params)
        slot = p.slot_bits
        super().__init__({
            "w_slot": In(slot), "w_beat": In(p.beat_idx_bits), "w_data": In(64), "w_en": In(1),
            "r_slot": In(slot), "r_beat": In(p.beat_idx_bits), "r_data": Out(64),
            "mw_slot": In(slot), "mw_meta": In(p.replay_meta), "mw_en": In(1),
            "mr_slot": In(slot), "mr_meta": Out(p.replay_meta),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        m.submodules.beats = beats = Memory(shape=64, depth=p.replay_flits << p.beat_idx_bits, init=[])
        m.submodules.meta = meta = Memory(shape=p.replay_meta, depth=p.replay_flits, init=[],
                                          attrs={"ram_style": "block"})
        bw, br = beats.write_port(), beats.read_port(transparent_for=())
        mw, mr = meta.write_port(), meta.read_port(transparent_for=())
        m.d.comb += [bw.addr.eq(Cat(self.w_beat, self.w_slot)), bw.data.eq(self.w_data), bw.en.eq(self.w_en),
                     br.addr.eq(Cat(self.r_beat, self.r_slot)), self.r_data.eq(br.data),
                     mw.addr.eq(self.mw_slot), mw.data.eq(self.mw_meta), mw.en.eq(self.mw_en),
                     mr.addr.eq(self.mr_slot), self.mr_meta.eq(mr.data)]
        return m
