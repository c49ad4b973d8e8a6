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

from rtl.common.htax import HtaxCmd
from rtl.config import load
from rtl.regs.generate import build
from sim.amsim import Clock, HtaxSink, HtaxSource, run_sim
from sim.htax_packet import HtaxPacket, line_write_packet
from sim.regs_model import RegModel

REVISION = (0, False)


def measure(cfg):
    dut = build(cfg, revision=REVISION)
    m = RegModel.from_config(cfg, revision=REVISION)
    src, dst = cfg["regs"]["host_port"], cfg["regs"]["htax_port"]
    tx = dut.htax.tx
    host = HtaxSource(dut.htax.rx)
    unit = HtaxSink(tx)                         # always ready
    clock = Clock(host, unit)
    res = {}

    async def bench(ctx):
        await clock.tick(ctx)
        read = HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=1, addr=m.addr("rf.scratch"), length=1)
        t0, _ = await host.transmit(ctx, read, clock=clock)
        t1 = await clock.until(ctx, lambda: ctx.get(tx.valid), limit=100)
        res["read_latency_cycles"] = t1 - t0
        await clock.until(ctx, lambda: not ctx.get(tx.valid), limit=100)

        line = m.addr("atu.gat_base[0]")
        read8 = HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=2, addr=line, length=8)
        t0, _ = await host.transmit(ctx, read8, clock=clock)
        t1 = await clock.until(ctx, lambda: ctx.get(tx.valid) and ctx.get(tx.payload).last, limit=100)
        res["read8_cycles"] = t1 - t0
        await clock.tick(ctx)

        value = 0x1357
        pkt = line_write_packet(m.addr("velo.mbox_enable"), value.to_bytes(8, "little"), src=src, dst=dst)
        _, t0 = await host.transmit(ctx, pkt, clock=clock)      # the cycle its one data beat moved
        t1 = await clock.until(ctx, lambda: ctx.get(dut.hw.velo.mbox_enable.enable) == value, limit=100)
        res["write_to_effect_cycles"] = t1 - t0

        mask = line_write_packet(m.addr("irq.mask"), (1).to_bytes(8, "little"), src=src, dst=dst)
        await host.transmit(ctx, mask, clock=clock)
        await clock.repeat(ctx, 4)
        ctx.set(dut.hw.irq.status.atu_flush_done_event, 1)
        t0 = clock.now
        await clock.tick(ctx)
        ctx.set(dut.hw.irq.status.atu_flush_done_event, 0)
        t1 = await clock.until(ctx, lambda: ctx.get(tx.valid), limit=100)
        res["msi_latency_cycles"] = t1 - t0

    run_sim(dut, bench)
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
