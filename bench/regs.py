"""Register-file latency (issue 4): ``build/bench/regfile.json``.

Measured in the Amaranth simulator at the register file's HTAX port (no switch, no host):

* ``read_latency_cycles``: from the cycle the READ header moves into the port to the cycle the
  RESPONSE header is first offered (``tx.valid``); goal <= 3.
* ``write_to_effect_cycles``: from the cycle the WRITE's data beat moves to the cycle the new value is
  on the unit's ``hw`` output.
* ``read8_cycles``: header in to the last data beat out of an 8-word line read (RAM array).
* ``msi_latency_cycles``: from an interrupt event strobe to the MSI write header offered.
"""

from _common import write_bench
from amaranth.sim import Simulator

from rtl.common.htax import HtaxCmd
from rtl.config import load
from rtl.regs.generate import build
from sim.htax_packet import HtaxPacket, line_write_packet
from sim.regs_model import RegModel

REVISION = (0, False)


def measure(cfg):
    dut = build(cfg, revision=REVISION)
    m = RegModel.from_config(cfg, revision=REVISION)
    src, dst = cfg["regs"]["host_port"], cfg["regs"]["htax_port"]
    rx, tx = dut.htax.rx, dut.htax.tx
    res = {}

    async def send(ctx, beats, vc):
        """Offer the beats; return the cycle (edge count) at which the first one moves."""
        first = None
        for b in beats:
            ctx.set(rx.valid, 1)
            ctx.set(rx.payload.as_value(), b)
            while not (ctx.get(rx.ready) >> vc) & 1:
                await ctx.tick()
                res["cycle"] += 1
            first = res["cycle"] if first is None else first
            await ctx.tick()
            res["cycle"] += 1
        ctx.set(rx.valid, 0)
        return first

    async def until(ctx, cond, limit=100):
        for _ in range(limit):
            if cond():
                return res["cycle"]
            await ctx.tick()
            res["cycle"] += 1
        raise RuntimeError("timeout")

    async def bench(ctx):
        res["cycle"] = 0
        ctx.set(tx.ready, 0xF)
        await ctx.tick()
        res["cycle"] += 1
        read = HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=1, addr=m.addr("rf.scratch"), length=1)
        t0 = await send(ctx, read.beats(), 1)
        t1 = await until(ctx, lambda: ctx.get(tx.valid))
        res["read_latency_cycles"] = t1 - t0
        await until(ctx, lambda: not ctx.get(tx.valid))

        line = m.addr("atu.gat_base[0]")
        read8 = HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=2, addr=line, length=8)
        t0 = await send(ctx, read8.beats(), 1)
        t1 = await until(ctx, lambda: ctx.get(tx.valid) and (ctx.get(tx.payload.as_value()) >> 95) & 1)
        res["read8_cycles"] = t1 - t0
        await ctx.tick()
        res["cycle"] += 1

        value = 0x1357
        pkt = line_write_packet(m.addr("velo.mbox_enable"), value.to_bytes(8, "little"), src=src, dst=dst)
        beats = pkt.beats()
        await send(ctx, beats[:1], 0)
        t0 = await send(ctx, beats[1:], 0)
        t1 = await until(ctx, lambda: ctx.get(dut.hw.velo.mbox_enable.enable) == value)
        res["write_to_effect_cycles"] = t1 - t0

        mask = line_write_packet(m.addr("irq.mask"), (1).to_bytes(8, "little"), src=src, dst=dst)
        await send(ctx, mask.beats(), 0)
        for _ in range(4):
            await ctx.tick()
            res["cycle"] += 1
        ctx.set(dut.hw.irq.status.atu_flush_done_event, 1)
        t0 = res["cycle"]
        await ctx.tick()
        res["cycle"] += 1
        ctx.set(dut.hw.irq.status.atu_flush_done_event, 0)
        t1 = await until(ctx, lambda: ctx.get(tx.valid))
        res["msi_latency_cycles"] = t1 - t0

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    res.pop("cycle")
    return res


def main():
    cfg = load()
    metrics = measure(cfg)
    write_bench("regfile", metrics, {
        "vpids": cfg["system"]["vpids"], "nodes": cfg["system"]["nodes"],
        "gat_entries": cfg["atu"]["gat_entries"], "link_ports": cfg["regs"]["link_ports"],
        "method": "Amaranth simulator at the register file's HTAX port, tx always ready",
        "read_latency_goal": 3,
    })


if __name__ == "__main__":
    main()
