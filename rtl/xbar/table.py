"""The crossbar's route table (:class:`RouteTable`; dissertation ch. 7.4, the routing look-up table).

One :class:`~rtl.common.net.RouteEntry` per destination node, written by software through the register
file (``net.route`` is external: its storage is here) and read by every input port and VC at once.
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.net import RouteEntry
from rtl.common.params import check_int, check_pow2

__all__ = ["RouteTable"]


class RouteTable(wiring.Component):
    """A route table of ``nodes`` entries with ``reads`` combinational read ports (LUT RAM: one copy
    per port on an FPGA) and the register file's synchronous read and write ports.

    The table starts as ``init`` (default empty: no entry ``valid``, every packet is dropped as
    ``NO_ROUTE`` until software writes its routes); a reset does not change it.  A software write
    takes effect in the next cycle.

    Parameters
    ----------
    nodes : int
        Entries (power of two, 1..32768).
    reads : int
        Combinational read ports.
    init : sequence of int
        The packed entries the table starts with (simulation tops; the NIC's driver writes them).

    Members
    -------
    addr : In(range(nodes)).array(reads) ; data : Out(RouteEntry).array(reads)
        The read ports: ``data[k]`` is the entry at ``addr[k]`` in the same cycle.
    sw_r_addr, sw_r_en : In ; sw_r_data : Out(RouteEntry)
        The register file's read port (one cycle; ``sw_r_data`` holds while ``sw_r_en`` is low).
    sw_w_addr, sw_w_en, sw_w_data, sw_w_be : In
        The register file's write port (byte 0 of the 64-bit register holds the entry).
    """

    def __init__(self, *, nodes, reads, init=()):
        self.nodes = check_pow2("nodes", nodes, 1, 1 << 15)
        self.reads = check_int("reads", reads, 1, 64)
        self.init = tuple(init)
        if len(self.init) > nodes:
            raise ValueError(f"init has {len(self.init)} entries, the table {nodes}")
        a = range(nodes)
        super().__init__({
            "addr": In(a).array(reads), "data": Out(RouteEntry).array(reads),
            "sw_r_addr": In(a), "sw_r_en": In(1), "sw_r_data": Out(RouteEntry),
            "sw_w_addr": In(a), "sw_w_en": In(1), "sw_w_data": In(RouteEntry), "sw_w_be": In(8),
        })

    def elaborate(self, platform):
        m = Module()
        width = RouteEntry.as_shape().size
        en = Mux(self.sw_w_en, self.sw_w_be[0], 0)
        # one copy per read port, every copy written alike: a memory with one write and one
        # asynchronous read port is what LUT RAM (ECP5 DPR16X4) implements; yosys maps one memory
        # with many read ports to flip-flops and multiplexers instead (ten times the LUTs)
        for k in range(self.reads + 1):
            mem = Memory(shape=width, depth=self.nodes, init=self.init)
            m.submodules[f"copy{k}"] = mem
            wr = mem.write_port()
            m.d.comb += [wr.addr.eq(self.sw_w_addr), wr.data.eq(self.sw_w_data), wr.en.eq(en)]
            if k < self.reads:
                rd = mem.read_port(domain="comb")
                m.d.comb += [rd.addr.eq(self.addr[k]), self.data[k].eq(rd.data)]
            else:
                sw = mem.read_port()
                m.d.comb += [sw.addr.eq(self.sw_r_addr), sw.en.eq(self.sw_r_en), self.sw_r_data.eq(sw.data)]
        return m
