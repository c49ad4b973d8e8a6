"""The UART bridge's test system: :class:`~rtl.board.UartBridge` with :class:`~rtl.board.HostMemory` on
its word port, an :class:`~tests.board.models.AxiSubordinate` as the NIC's device window on its
``m_axi``, and the PC side (:class:`sim.uart_bridge.UartBridgeHost`) on a transport that feeds the
bridge's byte streams directly or, with ``divisor``, the pins of a board UART pair."""

import os
import random
from types import SimpleNamespace

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from rtl.board import HostMemory, UartBridge, UartRx, UartTx
from rtl.common.axi import AxiSignature
from sim.amsim import Clock, StreamSink, StreamSource
from sim.amsim.board import AxiSubordinate, UartPin
from sim.uart_bridge import BridgeTimeout, BridgeTransport

MEM_SIZE = 1024
RX_DEPTH = 128


def seed():
    s = int(os.environ.get("SEED", random.randrange(1 << 32)))
    print(f"seed {s}")
    return s


class SimTransport(BridgeTransport):
    """Bytes to the bridge through ``put`` (a model's queue), bytes from it read from ``received`` (a
    model's list); :meth:`recv` steps ``clock`` until they are there, :class:`BridgeTimeout` after
    ``limit`` cycles."""

    def __init__(self, ctx, clock, put, received, *, limit=20_000):
        self.ctx, self.clock, self.put, self.received, self.limit = ctx, clock, put, received, limit
        self.pos = 0

    async def send(self, data):
        for b in data:
            self.put(b)

    async def recv(self, n):
        for _ in range(self.limit):
            got = self.received()
            if len(got) - self.pos >= n:
                out = bytes(got[self.pos:self.pos + n])
                self.pos += n
                return out
            await self.clock.tick(self.ctx)
        raise BridgeTimeout(f"{len(self.received()) - self.pos} of {n} bytes within {self.limit} cycles")

    async def wait(self, cycles):
        await self.clock.repeat(self.ctx, cycles)


def bridge_system(rng, *, divisor=None, stall=0.0, axi_timeout=300, frame_timeout=400):
    """The DUT (a Module) and its parts: ``bridge``, ``memory``, ``nic`` (the subordinate model) and the
    byte models (``source``/``sink`` on the streams, or ``pin`` on the UART)."""
    m = Module()
    m.submodules.bridge = bridge = UartBridge(mem_size=MEM_SIZE, rx_depth=RX_DEPTH, axi_timeout=axi_timeout,
                                              frame_timeout=frame_timeout)
    m.submodules.memory = memory = HostMemory(size=MEM_SIZE)
    wiring.connect(m, bridge.mem_req, memory.word_req)
    wiring.connect(m, memory.word_rsp, bridge.mem_rsp)
    nic = AxiSubordinate(bridge, "m_axi", AxiSignature(id_bits=4, addr_bits=52), rng=rng, stall=stall)
    parts = SimpleNamespace(dut=m, bridge=bridge, memory=memory, nic=nic, models=[nic])
    if divisor is None:
        parts.source = StreamSource(bridge.i, rng=rng, idle=stall)
        parts.sink = StreamSink(bridge.o, rng=rng, stall=stall)
        parts.models += [parts.source, parts.sink]
        parts.put = parts.source.put
        parts.received = lambda: [int(p) for _, p in parts.sink.items]
    else:
        m.submodules.rx = rx = UartRx(divisor=divisor)
        m.submodules.tx = tx = UartTx(divisor=divisor)
        wiring.connect(m, rx.o, bridge.i)
        wiring.connect(m, bridge.o, tx.i)
        parts.rx, parts.tx = rx, tx
        parts.pin = UartPin(divisor=divisor, rx=rx.rx, tx=tx.tx)
        parts.models.append(parts.pin)
        parts.put = parts.pin.put
        parts.received = lambda: parts.pin.received
    return parts


def run_bridge(parts, bench, *, limit=400_000, recv_limit=20_000):
    """Run ``bench(ctx, transport, clock)`` on the system."""
    async def tb(ctx):
        clock = Clock(*parts.models, limit=limit)
        transport = SimTransport(ctx, clock, parts.put, parts.received, limit=recv_limit)
        await bench(ctx, transport, clock)

    sim = Simulator(parts.dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
