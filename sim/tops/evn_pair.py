"""Two ECP5-5G board designs (:class:`boards.ecp5_5g_evn.EvnCore`... in ``sim``: the same core
built here) joined lane by lane through DCU models, each with its UART on ports: the simulation of
two boards and their cables (``docs/board.md``).  Not part of the product.

Clocks: ``sync`` is board a's core, ``core_b`` board b's, ``line_a``/``line_b`` their SerDes word
clocks.  The two boards are one design (:class:`ProbedCore`) converted once and instantiated twice
(:class:`sim.shared.SharedModule`, listed in ``modules`` for :func:`sim.runner.run_cocotb`).
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, Signature

from ..shared import SharedModule
from .dcu_model import DcuModel

__all__ = ["EvnPair", "ProbedCore"]


class ProbedCore(wiring.Component):
    """A board's core (``lanes``, ``uart_rx``, ``uart_tx``, ``leds``) with two probes of its NIC.

    Members
    -------
    (the core's)
    store : Out(1)
        A CPU store enters the NIC (the AW handshake on its ``s_axi``); 0 without a NIC.
    dma_write : Out(1)
        The NIC writes host memory (the AW handshake on its ``m_axi``); 0 without a NIC.
    """

    def __init__(self, core):
        self.core = core
        super().__init__(Signature({**core.signature.members, "store": Out(1), "dma_write": Out(1)}))

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self.core
        outers = [(member.flow, v) for path, member, v in self.signature.flatten(self)
                  if path[0] in core.signature.members]
        for (flow, outer), (_, _, inner) in zip(outers, core.signature.flatten(core), strict=True):
            m.d.comb += inner.eq(outer) if flow == In else outer.eq(inner)
        if core.nic is not None:        # read-only taps of the NIC's AXI ports
            nic = core.nic
            m.d.comb += [self.store.eq(nic.s_axi_awvalid & nic.s_axi_awready),
                         self.dma_write.eq(nic.m_axi_awvalid & nic.m_axi_awready)]
        return m


class EvnPair(wiring.Component):
    """Parameters
    ----------
    core : wiring.Component
        One board's core (a component with ``lanes``, ``uart_rx``, ``uart_tx``, ``leds`` and ``nic``):
        :class:`boards.ecp5_5g_evn.EvnCore` with simulation parameters.  Both boards are this design.

    Members
    -------
    a_uart_rx, b_uart_rx : In(1)
    a_uart_tx, b_uart_tx : Out(1)
    a_leds, b_leds : Out(8)
    a_error_rate, b_error_rate : In(32)
        Wrong bytes at board ``a``'s / ``b``'s receivers (per word, times 2**32), every lane.
    a_cut, b_cut : In(2)
        Per lane: the cable into board ``a`` / ``b`` is cut.
    a_store, b_store : Out(1)
        NIC variant: a CPU store enters board ``a``'s / ``b``'s NIC (the AW handshake on its ``s_axi``).
    a_dma_write, b_dma_write : Out(1)
        NIC variant: the NIC writes host memory (the AW handshake on its ``m_axi``).  With the stores,
        the probes of a latency between two board tops without the UART.
    """

    def __init__(self, core):
        shared = SharedModule(ProbedCore(core), "evn_core")
        self.modules = (shared,)
        self.a, self.b = shared.instance("sync"), shared.instance("core_b")
        self.lanes = len(self.a.lanes)
        members = {}
        for x in "ab":
            members.update({f"{x}_uart_rx": In(1, init=1), f"{x}_uart_tx": Out(1), f"{x}_leds": Out(8),
                            f"{x}_error_rate": In(32), f"{x}_cut": In(self.lanes), f"{x}_store": Out(1),
                            f"{x}_dma_write": Out(1)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        # core_b, line_a and line_b stay undefined here: the top's clock and reset ports
        m.submodules.a = self.a
        m.submodules.b = self.b
        cores = {"a": self.a, "b": self.b}
        dcus = {}
        for x, y in (("a", "b"), ("b", "a")):
            for i in range(self.lanes):
                dcus[x, i] = DcuModel(tx_domain=f"line_{x}", rx_domain=f"line_{y}", seed=0x51 + 16 * i + (x == "b"))
                m.submodules[f"dcu_{x}{i}"] = dcus[x, i]
        for x, y in (("a", "b"), ("b", "a")):
            core = cores[x]
            m.d.comb += [core.uart_rx.eq(getattr(self, f"{x}_uart_rx")),
                         getattr(self, f"{x}_uart_tx").eq(core.uart_tx), getattr(self, f"{x}_leds").eq(core.leds)]
            m.d.comb += [getattr(self, f"{x}_store").eq(core.store), getattr(self, f"{x}_dma_write").eq(core.dma_write)]
            for i in range(self.lanes):
                dcu = dcus[x, i]
                wiring.connect(m, dcu.lane, core.lanes[i])
                m.d.comb += [dcu.line_rx.eq(dcus[y, i].line_tx), dcu.error_rate.eq(getattr(self, f"{x}_error_rate")),
                             dcu.cut.eq(getattr(self, f"{x}_cut")[i])]
        return m
