"""AtuTlb: fills, round-robin victims, invalidation of every way, invalidation over a fill."""

from rtl.atu import AtuFormats, AtuTlb
from rtl.atu.layout import GATE_INDEX_BITS
from sim.amsim import run_sim


def _tlb(ways):
    f = AtuFormats(gat_entries=4, tlb_entries=16, tlb_ways=ways, reorder_entries=4, vpids=4, fus=1)
    return f, AtuTlb(formats=f)


def _page(f, set_, tag):
    """An NLA page (as an int) with TLB set ``set_`` and tag ``tag``."""
    return set_ | (tag << f.set_bits)


async def _read(ctx, dut, page):
    ctx.set(dut.read.en, 1)
    ctx.set(dut.read.page.as_value(), page)
    await ctx.tick()
    ctx.set(dut.read.en, 0)
    return [ctx.get(dut.read.ways[w]) for w in range(len(dut.read.ways))]


async def _fill(ctx, dut, page, *, vpid, ppn, invalidate=None):
    ctx.set(dut.fill.valid, 1)
    ctx.set(dut.fill.payload, {"read": 1, "write": 0, "vpid": vpid, "ppn": ppn})
    ctx.set(dut.fill.payload.nla.as_value(), page)
    if invalidate is not None:
        ctx.set(dut.invalidate.valid, 1)
        ctx.set(dut.invalidate.payload.as_value(), invalidate)
    await ctx.tick()
    ctx.set(dut.fill.valid, 0)
    ctx.set(dut.invalidate.valid, 0)


def test_two_ways_round_robin_and_invalidate():
    f, dut = _tlb(2)

    async def tb(ctx):
        pages = [_page(f, 3, t) for t in (5, 6, 7)]
        for k, p in enumerate(pages):
            await _fill(ctx, dut, p, vpid=k, ppn=0x100 + k)
        ways = await _read(ctx, dut, pages[0])
        # the third fill replaced way 0 (victims 0, 1, 0)
        assert [(w.valid, w.tag, w.vpid, w.ppn) for w in ways] == [(1, 7, 2, 0x102), (1, 6, 1, 0x101)]
        assert (await _read(ctx, dut, _page(f, 2, 6)))[1].valid == 0        # another set stays empty
        ctx.set(dut.invalidate.valid, 1)
        ctx.set(dut.invalidate.payload.as_value(), _page(f, 3, 1))                      # any tag: the whole set
        await ctx.tick()
        ctx.set(dut.invalidate.valid, 0)
        assert [w.valid for w in await _read(ctx, dut, pages[0])] == [0, 0]

    run_sim(dut, tb)


def test_invalidation_wins_over_fill():
    f, dut = _tlb(1)

    async def tb(ctx):
        p = _page(f, 5, 9) | (1 << GATE_INDEX_BITS)
        await _fill(ctx, dut, p, vpid=1, ppn=0x55)
        assert (await _read(ctx, dut, p))[0].valid == 1
        await _fill(ctx, dut, _page(f, 5, 2), vpid=1, ppn=0x66, invalidate=p)
        assert (await _read(ctx, dut, p))[0].valid == 0
        # a fill of another set in the same cycle as an invalidation is lost, too
        await _fill(ctx, dut, _page(f, 6, 2), vpid=1, ppn=0x77, invalidate=p)
        assert (await _read(ctx, dut, _page(f, 6, 2)))[0].valid == 0

    run_sim(dut, tb)
