"""AtuTlb: fills, round-robin victims, invalidation of every way, invalidation over a fill, the large-page
TLB's keys and fills, touches (lowest priority)."""

from rtl.atu import AtuFormats, AtuTlb
from rtl.atu.layout import GATE_INDEX_BITS
from sim.amsim import run_sim


def _tlb(ways, large=False):
    f = AtuFormats(gat_entries=4, tlb_entries=16, tlb_ways=ways, reorder_entries=4, vpids=4, fus=1,
                   large_tlb_entries=4)
    return f, AtuTlb(formats=f, geometry=f.large if large else f.small)


def _page(f, set_, tag):
    """An NLA page (as an int) with 4 KB-page TLB set ``set_`` and tag ``tag``."""
    return set_ | (tag << f.small.set_bits)


async def _read(ctx, dut, page):
    ctx.set(dut.read.en, 1)
    ctx.set(dut.read.page.as_value(), page)
    await ctx.tick()
    ctx.set(dut.read.en, 0)
    return [ctx.get(dut.read.ways[w]) for w in range(len(dut.read.ways))]


async def _fill(ctx, dut, page, *, vpid, ppn, invalidate=None, large=0, pref=0):
    ctx.set(dut.fill.valid, 1)
    ctx.set(dut.fill.payload, {"read": 1, "write": 0, "vpid": vpid, "ppn": ppn, "large": large, "pref": pref})
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


def test_large_tlb_keys_and_fills():
    """The large-page TLB takes only large fills, keyed by the NLA page >> 9: every 4 KB page of the
    2 MB page reads the entry; a small fill leaves it alone."""
    f, dut = _tlb(1, large=True)

    async def tb(ctx):
        base = (2 << 9) | (5 << 11)            # large set 2, tag 5 (4 entries: 2 set bits)
        await _fill(ctx, dut, base | 0x17, vpid=3, ppn=0x400, large=1, pref=1)
        for low in (0, 0x17, 0x1FF):
            (w,) = await _read(ctx, dut, base | low)
            assert (w.valid, w.tag, w.vpid, w.ppn, w.pref) == (1, 5, 3, 0x400, 1)
        await _fill(ctx, dut, (2 << 9) | (6 << 11), vpid=3, ppn=0x600, large=0)    # a 4 KB fill: ignored
        (w,) = await _read(ctx, dut, base)
        assert (w.valid, w.tag) == (1, 5)
        assert (await _read(ctx, dut, 3 << 9))[0].valid == 0                      # another set

    run_sim(dut, tb)


def test_touch_clears_pref_below_fill():
    """A touch writes the entry back with pref clear, unless a fill or an invalidation takes the write
    port in that cycle (then ``touched`` stays low)."""
    f, dut = _tlb(2)

    async def touch(ctx, page, way, entry, *, fill=None):
        ctx.set(dut.touch.valid, 1)
        ctx.set(dut.touch.payload.page.as_value(), page)
        ctx.set(dut.touch.payload.way, way)
        ctx.set(dut.touch.payload.entry, entry)
        if fill is not None:
            ctx.set(dut.fill.valid, 1)
            ctx.set(dut.fill.payload, {"read": 1, "write": 1, "vpid": 0, "ppn": 0x9, "large": 0, "pref": 0})
            ctx.set(dut.fill.payload.nla.as_value(), fill)
        touched = ctx.get(dut.touched)
        await ctx.tick()
        ctx.set(dut.touch.valid, 0)
        ctx.set(dut.fill.valid, 0)
        return touched

    async def tb(ctx):
        p = _page(f, 4, 3)
        await _fill(ctx, dut, p, vpid=1, ppn=0x21, pref=1)          # way 0
        await _fill(ctx, dut, _page(f, 4, 8), vpid=1, ppn=0x22, pref=1)    # way 1
        ways = await _read(ctx, dut, p)
        entry = {"valid": 1, "read": 1, "write": 0, "pref": 1, "vpid": 1, "tag": 3, "ppn": 0x21}
        assert await touch(ctx, p, 0, entry, fill=_page(f, 9, 1)) == 0          # the fill wins
        assert [w.pref for w in await _read(ctx, dut, p)] == [1, 1]
        assert await touch(ctx, p, 0, entry) == 1
        ways = await _read(ctx, dut, p)
        assert [(w.valid, w.pref, w.ppn) for w in ways] == [(1, 0, 0x21), (1, 1, 0x22)]

    run_sim(dut, tb)
