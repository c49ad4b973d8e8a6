"""VELO write-pointer look-up table (WPLT, dissertation table 7-1)."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_pow2

__all__ = ["VeloWritePointers"]


class VeloWritePointers(wiring.Component):
    """VELO write-pointer look-up table (WPLT, dissertation table 7-1): one slot pointer per mailbox.

    The register file declares ``velo.wplt`` external, so its storage lives here, next to the completer
    that updates it.  A block RAM of ``vpids`` 32-bit words with two read ports (software, completer; one
    cycle latency) and one write port shared by the completer and software.

    The completer's write is registered and lands one cycle later, which keeps the completer's free-slot
    arithmetic out of the RAM's write-address path.  The completer reads a pointer no earlier than two
    cycles after writing it (a planned packet has at least one payload beat before the next header), so it
    always reads the new value.

    Deviation: a software write in the cycle the completer's write lands is lost.  Software writes a write
    pointer only while the mailbox is disabled (the driver's open sequence), when the completer never
    writes it.

    Parameters
    ----------
    vpids : int
        Mailboxes (power of two, 2..32): the table's depth.

    Members
    -------
    sw_r_addr, sw_r_en : In ; sw_r_data : Out(32)
        The register file's read port (``r_data`` holds while ``r_en`` is low).
    sw_w_addr, sw_w_en, sw_w_data, sw_w_be : In
        The register file's write port (byte enables of the 64-bit register; bits 0..3 cover ``wp``).
    addr : In(range(vpids)) ; data : Out(32)
        The completer's read port.
    w_en : In(1) ; w_addr : In(range(vpids)) ; w_data : In(32)
        The completer's write port.
    """

    def __init__(self, *, vpids):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        a = range(vpids)
        super().__init__({
            "sw_r_addr": In(a), "sw_r_en": In(1), "sw_r_data": Out(32),
            "sw_w_addr": In(a), "sw_w_en": In(1), "sw_w_data": In(32), "sw_w_be": In(8),
            "addr": In(a), "data": Out(32),
            "w_en": In(1), "w_addr": In(a), "w_data": In(32),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=32, depth=self.vpids, init=[], attrs={"ram_style": "block"})
        sw_rd = mem.read_port()
        hw_rd = mem.read_port(transparent_for=())
        wr = mem.write_port(granularity=8)
        m.d.comb += [sw_rd.addr.eq(self.sw_r_addr), sw_rd.en.eq(self.sw_r_en), self.sw_r_data.eq(sw_rd.data),
                     hw_rd.addr.eq(self.addr), self.data.eq(hw_rd.data)]
        w_en, w_addr, w_data = Signal(), Signal(range(self.vpids)), Signal(32)
        m.d.sync += [w_en.eq(self.w_en), w_addr.eq(self.w_addr), w_data.eq(self.w_data)]
        with m.If(w_en):
            m.d.comb += [wr.addr.eq(w_addr), wr.data.eq(w_data), wr.en.eq(0xF)]
        with m.Else():
            m.d.comb += [wr.addr.eq(self.sw_w_addr), wr.data.eq(self.sw_w_data),
                         wr.en.eq(Mux(self.sw_w_en, Cat(self.sw_w_be[:4]), 0))]
        return m
