"""The register file's RAM and external register arrays (ch. 7.2, "arrays of registers as RAM blocks")."""

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .slots import FetchSignature, WriteSignature

__all__ = ["RegArrays"]


class RegArrays(wiring.Component):
    """Every RAM and external array of the register file (docs/regs.md, "RAM and external arrays").

    A RAM array is a :class:`~amaranth.lib.memory.Memory` initialised to the reset value at
    configuration time, with a write port for software, a read port for software reads and a
    synchronous read port for the unit (the array's ``hw`` member ``addr``/``data``).  An external
    array's storage is in the unit, which serves ``r_addr``/``r_en`` -> ``r_data`` one cycle later and
    takes ``w_addr``/``w_en``/``w_data``/``w_be``.  Software writes replace only the software-writable
    fields (a RAM keeps the reset value in the others); reads return only the software-readable ones.
    The read data of a word goes straight into a register as the word enters stage B (the block RAM's
    output register); the selection happens after it.  The ``hw`` members are the register file's
    (each :class:`~rtl.regs.slots.ArraySlot` carries its ``port``).

    Parameters
    ----------
    arrays : list of :class:`~rtl.regs.slots.ArraySlot`
    flops : int
        The register file's flip-flop registers (``write.fsel``'s width).
    wbits : int
        Word-address bits of the window.

    Members
    -------
    write : In(WriteSignature(...))
    fetch : In(FetchSignature(...))
    read_data : Out(64)
        The word in stage B if it is an array element, else 0.
    """

    def __init__(self, *, arrays, flops, wbits):
        self._arrays = arrays
        super().__init__({
            "write": In(WriteSignature(flops=flops, arrays=len(arrays), wbits=wbits)),
            "fetch": In(FetchSignature(flops=flops, wbits=wbits)),
            "read_data": Out(64),
        })

    def elaborate(self, platform):
        m = Module()
        wr, fetch = self.write, self.fetch
        a_hit = Signal(len(self._arrays))       # the word in stage A is an element of array i
        read_data = Const(0, 64)
        for i, arr in enumerate(self._arrays):
            reg = arr.reg
            hit_f = arr.hit(fetch.addr)
            wr_en = wr.asel[i]
            sw_wmask = Const(sum(f.mask for f in reg.fields if "w" in f.sw), 64)
            rd_mask = Const(sum(f.mask for f in reg.fields if "r" in f.sw), 64)
            m.d.sync += a_hit[i].eq(Mux(fetch.fill, hit_f, a_hit[i]))
            if reg.storage == "ram":
                mem_ = Memory(shape=unsigned(64), depth=reg.count, init=[reg.reset] * reg.count,
                              attrs={"ram_style": "block"})
                m.submodules[arr.name + "_ram"] = mem_
                wp = mem_.write_port(granularity=8)
                rp = mem_.read_port(domain="sync")
                hp = mem_.read_port(domain="sync")
                m.d.comb += [
                    wp.addr.eq(arr.index(wr.addr)),
                    wp.data.eq((wr.data & sw_wmask) | Const(reg.reset, 64) & ~sw_wmask),
                    wp.en.eq(Mux(wr_en, wr.be, 0)),
                    rp.addr.eq(arr.index(fetch.addr)),
                    rp.en.eq(fetch.fill),
                ]
                if arr.port is not None:
                    m.d.comb += [hp.addr.eq(arr.port.addr), arr.port.data.eq(hp.data)]
                data = rp.data
            else:
                p = arr.port
                m.d.comb += [
                    p.r_addr.eq(arr.index(fetch.addr)), p.r_en.eq(fetch.fill & hit_f),
                    p.w_addr.eq(arr.index(wr.addr)), p.w_en.eq(wr_en),
                    p.w_data.eq(wr.data & sw_wmask), p.w_be.eq(wr.be),
                ]
                data = p.r_data.as_value()
            rdq = Signal(64, name=arr.name + "_rdq")
            hitq = Signal(name=arr.name + "_hitq")
            with m.If(fetch.load):
                m.d.sync += [rdq.eq(data), hitq.eq(a_hit[i])]
            read_data = read_data | Mux(hitq, rdq & rd_mask, 0)
        m.d.comb += self.read_data.eq(read_data)
        return m
