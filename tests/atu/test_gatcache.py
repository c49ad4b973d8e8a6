"""AtuGatCache: a fill hits for its GAT only, another GAT of the same row misses, an invalidation wins
over a fill (Amaranth simulator)."""

from rtl.atu import AtuFormats, AtuGatCache
from sim.amsim import run_sim

F = AtuFormats(gat_entries=16, tlb_entries=16, tlb_ways=1, reorder_entries=4, vpids=4, fus=1, gat_cache_entries=4)


async def _read(ctx, dut, gat):
    ctx.set(dut.read.en, 1)
    ctx.set(dut.read.gat, gat)
    await ctx.tick()
    ctx.set(dut.read.en, 0)
    return ctx.get(dut.read.hit), ctx.get(dut.read.large), ctx.get(dut.read.addr)


async def _write(ctx, dut, *, fill=None, invalidate=None):
    if fill is not None:
        ctx.set(dut.fill.valid, 1)
        ctx.set(dut.fill.payload, {"gat": fill[0], "large": fill[1], "addr": fill[2]})
    if invalidate is not None:
        ctx.set(dut.invalidate.valid, 1)
        ctx.set(dut.invalidate.payload, invalidate)
    await ctx.tick()
    ctx.set(dut.fill.valid, 0)
    ctx.set(dut.invalidate.valid, 0)


def test_fill_hit_conflict_invalidate():
    dut = AtuGatCache(formats=F)

    async def tb(ctx):
        assert (await _read(ctx, dut, 700))[0] == 0                 # starts empty
        await _write(ctx, dut, fill=(700, 1, 0x1234))               # row 700 % 4 = 0
        assert await _read(ctx, dut, 700) == (1, 1, 0x1234)
        assert (await _read(ctx, dut, 704))[0] == 0                 # same row, another GAT
        await _write(ctx, dut, fill=(704, 0, 0x200), invalidate=5)  # the invalidation of row 1 wins
        assert (await _read(ctx, dut, 704))[0] == 0
        assert await _read(ctx, dut, 700) == (1, 1, 0x1234)
        await _write(ctx, dut, invalidate=700)
        assert (await _read(ctx, dut, 700))[0] == 0

    run_sim(dut, tb)
