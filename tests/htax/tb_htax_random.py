"""cocotb: random all-to-all traffic through the HTAX under random backpressure, with a scoreboard."""

import random

import cocotb

from sim.runner import tb_params, tb_seed
from tests.htax.harness import Harness, random_packet


@cocotb.test()
async def random_traffic(dut):
    """Every packet arrives once, intact, in order per (src, dst, VC); link rules hold on every output."""
    p = tb_params()
    n, packets = p["ports"], p["packets"]
    seed = tb_seed()
    rng = random.Random(seed)
    dut._log.info(f"random_traffic: {n} ports, {packets} packets, seed {seed}")

    def sink_ready(o, c):
        # independent per-VC refusals, with full-ready stretches so the switch also runs at speed
        return rng.getrandbits(4) | (0xF if rng.random() < p.get("ready_full", 0.5) else 0)

    def sink_ready2(o, c, ready):
        # random ready2 promises (the harness then keeps ready[v] up in the cycle after a v beat moved)
        return rng.getrandbits(4) if rng.random() < p.get("ready2", 0.5) else 0

    h = Harness(dut, n, rng, gap=p.get("gap", 0.2), blind=p.get("blind", 0.3), sink_ready=sink_ready,
                sink_ready2=sink_ready2)
    await h.start()
    for _ in range(packets):
        src, dst = rng.randrange(n), rng.randrange(n)
        h.send(src, random_packet(rng, src, dst))
    cycles = await h.run(until=h.drained, limit=200 * packets)
    h.check()
    assert sum(len(d) for d in h.delivered) == packets
    assert dut.dropped_malformed.value.to_unsigned() == 0
    assert dut.dropped_no_target.value.to_unsigned() == 0
    dut._log.info(f"{packets} packets in {cycles} cycles, {sum(h.out_beats)} beats")
