"""A buffered synchronous FIFO kept in block RAM."""

from amaranth.lib.fifo import SyncFIFOBuffered

__all__ = ["BlockRamFIFO"]


class BlockRamFIFO(SyncFIFOBuffered):
    """:class:`amaranth.lib.fifo.SyncFIFOBuffered` (same ports and timing) whose storage memory carries
    ``ram_style = "block"``: yosys maps a small memory to LUT RAM on its own, where on an ECP5 every
    16 x 4 bits cost some nine logic cells; a DP16KD holds up to 512 x 36 bits for none.  For FIFOs of
    more than a few LUT RAM blocks, in a design whose logic cells are scarcer than its block RAM."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        if self.depth > 1:
            # no_rw_check: the FIFO never reads the entry it writes (a write needs a free entry, a read
            # a full one), so synth_ecp5 need not emulate read-during-write
            m.submodules.storage.attrs.update({"ram_style": "block", "no_rw_check": 1})
        return m
