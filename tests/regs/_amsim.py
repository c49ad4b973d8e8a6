"""Amaranth-simulator helpers for the register-file unit tests: drive HTAX packets, collect beats."""

from amaranth.sim import Simulator

from sim.htax_packet import HtaxPacket

__all__ = ["HtaxDriver", "run"]


class HtaxDriver:
    """Send packets into ``dut.htax.rx`` and collect packets from ``dut.htax.tx`` (always ready)."""

    def __init__(self, dut):
        self.dut = dut
        self.rx_packets = []        # (cycle of the header beat, HtaxPacket)
        self.cycle = 0
        self.tx_ready = 0b1111
        self._beats = []

    async def tick(self, ctx):
        """One clock cycle: sample tx (always ready), then advance."""
        tx = self.dut.htax.tx
        ctx.set(tx.ready, self.tx_ready)
        if ctx.get(tx.valid) and (self.tx_ready >> ((ctx.get(tx.payload.as_value()) >> 92) & 3)) & 1:
            beat = ctx.get(tx.payload.as_value())
            self._beats.append((self.cycle, beat))
            if (beat >> 95) & 1:        # last
                pkt = HtaxPacket.from_beats([b for _, b in self._beats])
                self.rx_packets.append((self._beats[0][0], pkt))
                self._beats = []
        await ctx.tick()
        self.cycle += 1

    async def send(self, ctx, pkt_or_beats, vc=None):
        """Send a packet (or raw beats on ``vc``); return the cycle its header moved."""
        rx = self.dut.htax.rx
        if isinstance(pkt_or_beats, HtaxPacket):
            beats = pkt_or_beats.beats()
            vc = int(pkt_or_beats.vc.value)
        else:
            beats = pkt_or_beats
        first_cycle = None
        for b in beats:
            ctx.set(rx.valid, 1)
            ctx.set(rx.payload.as_value(), b)
            while not (ctx.get(rx.ready) >> vc) & 1:
                await self.tick(ctx)
            if first_cycle is None:
                first_cycle = self.cycle
            await self.tick(ctx)
        ctx.set(rx.valid, 0)
        return first_cycle

    async def wait_packets(self, ctx, n, timeout=200):
        for _ in range(timeout):
            if len(self.rx_packets) >= n:
                return
            await self.tick(ctx)
        raise AssertionError(f"timeout waiting for {n} packets, got {len(self.rx_packets)}")


def run(dut, bench, *, vcd=None):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
