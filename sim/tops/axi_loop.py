"""AXI4 loop-back top: the AXI host model's self-test DUT.

Not a unit of the dissertation.  :class:`AxiLoop` has the host-side ports of a DUT whose host bus is
AXI4 (``s_axi_*``, the device window the CPU stores to and reads from; ``m_axi_*``, the DUT's accesses
to host memory; ``irq``) and wires every channel of ``s_axi`` straight through to ``m_axi``, so that
:class:`sim.axi_host.AxiHostModel`'s CPU accesses land in the model's own memory and can be checked
there.  Besides the wires it has counters of the handshakes on the CPU side (bursts and beats per
channel, for tests that count what a store puts on the bus without trusting the model's own view), an
input that replaces the B and R responses towards ``s_axi`` (for the CPU side's error paths) and a
one-register path from ``irq_in`` to ``irq``.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["AxiLoop", "axi_members"]

# (name, width, driven by the manager); "id", "addr", "data", "strb" stand for the port's widths
_AXI = [
    ("awid", "id", True), ("awaddr", "addr", True), ("awlen", 8, True), ("awsize", 3, True),
    ("awburst", 2, True), ("awvalid", 1, True), ("awready", 1, False),
    ("wdata", "data", True), ("wstrb", "strb", True), ("wlast", 1, True), ("wvalid", 1, True),
    ("wready", 1, False),
    ("bid", "id", False), ("bresp", 2, False), ("bvalid", 1, False), ("bready", 1, True),
    ("arid", "id", True), ("araddr", "addr", True), ("arlen", 8, True), ("arsize", 3, True),
    ("arburst", 2, True), ("arvalid", 1, True), ("arready", 1, False),
    ("rid", "id", False), ("rdata", "data", False), ("rresp", 2, False), ("rlast", 1, False),
    ("rvalid", 1, False), ("rready", 1, True),
]

COUNTERS = ["aw_bursts", "w_beats", "b_resps", "ar_bursts", "r_beats"]


def axi_members(prefix, *, manager, id_width, addr_width, data_width):
    """Flat signature members ``<prefix>_<signal>`` of one AXI4 port (no lock/cache/prot/qos/user).

    ``manager``: the ports of the side that issues transactions (``m_axi`` of a DUT) if true, of the
    side that answers them (``s_axi``) if false.
    """
    widths = {"id": id_width, "addr": addr_width, "data": data_width, "strb": data_width // 8}
    return {f"{prefix}_{name}": (Out if from_manager == manager else In)(widths.get(w, w))
            for name, w, from_manager in _AXI}


class AxiLoop(wiring.Component):
    """``s_axi`` wired through to ``m_axi``, ``irq_in`` registered onto ``irq``.

    Parameters
    ----------
    addr_width : int
        Address width of both ports.
    s_id_width, m_id_width : int
        ID widths; ``m_id_width`` must not be smaller (IDs are zero-extended on the way out and
        truncated on the way back).

    Members
    -------
    s_axi_* : AXI4 subordinate port (data 64 bits, strobes 8)
    m_axi_* : AXI4 manager port
    resp_force : In(2)
        When not 0 (OKAY), replaces BRESP and RRESP on ``s_axi``.
    irq_in : In(1)
    irq : Out(1)
        ``irq_in`` one cycle later.
    aw_bursts, w_beats, b_resps, ar_bursts, r_beats : Out(32)
        Handshakes counted on ``s_axi`` since reset.
    """

    def __init__(self, *, addr_width=52, s_id_width=4, m_id_width=5):
        check_int("addr_width", addr_width, 12, 64)
        check_int("s_id_width", s_id_width, 1, 16)
        check_int("m_id_width", m_id_width, s_id_width, 16)
        members = axi_members("s_axi", manager=False, id_width=s_id_width, addr_width=addr_width, data_width=64)
        members |= axi_members("m_axi", manager=True, id_width=m_id_width, addr_width=addr_width, data_width=64)
        members |= {"resp_force": In(2), "irq_in": In(1), "irq": Out(1)} | {c: Out(32) for c in COUNTERS}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for name, _, from_manager in _AXI:
            s, d = getattr(self, f"s_axi_{name}"), getattr(self, f"m_axi_{name}")
            m.d.comb += d.eq(s) if from_manager else s.eq(d)
        for resp in (self.s_axi_bresp, self.s_axi_rresp):
            with m.If(self.resp_force != 0):
                m.d.comb += resp.eq(self.resp_force)
        irq = Signal()
        m.d.sync += irq.eq(self.irq_in)
        m.d.comb += self.irq.eq(irq)
        for counter, ch in zip(COUNTERS, ["aw", "w", "b", "ar", "r"], strict=True):
            count = Signal(32)
            valid, ready = getattr(self, f"s_axi_{ch}valid"), getattr(self, f"s_axi_{ch}ready")
            with m.If(valid & ready):
                m.d.sync += count.eq(count + 1)
            m.d.comb += getattr(self, counter).eq(count)
        return m
