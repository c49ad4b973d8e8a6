# amaranth: UnusedElaboratable=no
"""BlockRamFIFO: SyncFIFOBuffered's behaviour, with its storage marked for block RAM."""

import random

from amaranth.back import rtlil
from amaranth.sim import Simulator

from rtl.common.blockfifo import BlockRamFIFO


def _rtlil(fifo):
    return rtlil.convert(fifo, ports=[fifo.w_data, fifo.w_en, fifo.w_rdy, fifo.r_data, fifo.r_en, fifo.r_rdy])


def test_storage_is_marked_for_block_ram():
    text = _rtlil(BlockRamFIFO(width=8, depth=8))
    assert 'attribute \\ram_style "block"' in text and "attribute \\no_rw_check 1" in text
    assert "ram_style" not in _rtlil(BlockRamFIFO(width=8, depth=1))     # one register, no memory


def test_order_under_random_push_and_pop():
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = BlockRamFIFO(width=8, depth=5)
    sent, got = [], []

    async def bench(ctx):
        value = 0
        for _ in range(400):
            w = rng.random() < 0.6
            r = rng.random() < 0.6
            ctx.set(dut.w_en, w)
            ctx.set(dut.w_data, value & 0xFF)
            ctx.set(dut.r_en, r)
            w_rdy, r_rdy, r_data = ctx.get(dut.w_rdy), ctx.get(dut.r_rdy), ctx.get(dut.r_data)
            assert ctx.get(dut.level) <= 5
            await ctx.tick()
            if w and w_rdy:
                sent.append(value & 0xFF)
                value += 1
            if r and r_rdy:
                got.append(r_data)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == sent[:len(got)] and len(got) > 100, f"seed {seed}"
