"""AtuFlush: one flush request per FU, completion on the last response and on the old epoch's drain,
starts while busy ignored, stray responses dropped (Amaranth simulator)."""

from rtl.atu import AtuFlush, AtuFormats
from sim.amsim import run_sim

PAGE = 0x4_1234


def _flush(fu_ports=(3, 4, 5)):
    f = AtuFormats(gat_entries=512, tlb_entries=1024, tlb_ways=1, reorder_entries=32, vpids=32,
                   fus=len(fu_ports))
    return AtuFlush(formats=f, fu_ports=fu_ports)


async def _respond(ctx, dut, src, flush_id):
    """A flush response moves in this cycle; returns ``done`` of this cycle."""
    ctx.set(dut.responses.valid, 1)
    ctx.set(dut.responses.payload, {"src": src, "flush_id": flush_id})
    done = ctx.get(dut.control.done)
    await ctx.tick()
    ctx.set(dut.responses.valid, 0)
    return done


def test_requests_and_completion():
    dut = _flush()

    async def tb(ctx):
        ctx.set(dut.requests.ready, 1)
        ctx.set(dut.control.nla.as_value(), PAGE)
        ctx.set(dut.control.vpid, 7)
        ctx.set(dut.control.tlb, 1)
        ctx.set(dut.control.ats, 1)
        ctx.set(dut.control.start, 1)
        assert ctx.get(dut.starting) and ctx.get(dut.invalidate.valid)
        assert ctx.get(dut.invalidate.payload.as_value()) == PAGE
        assert ctx.get(dut.epoch) == 0
        sent = []
        for _ in range(4):
            if ctx.get(dut.requests.valid):
                sent.append(ctx.get(dut.requests.payload))
            await ctx.tick()
            ctx.set(dut.control.start, 0)
            ctx.set(dut.control.nla.as_value(), 0)          # the request fields were copied at the start
        assert [(r.dst, r.vpid, r.nla.as_bits(), r.flush_id) for r in sent] == [
            (3, 7, PAGE, 1), (4, 7, PAGE, 1), (5, 7, PAGE, 1)]
        assert ctx.get(dut.epoch) == 1
        ctx.set(dut.control.start, 1)                       # ignored while a flush runs
        assert not ctx.get(dut.starting) and not ctx.get(dut.invalidate.valid)
        await ctx.tick()
        ctx.set(dut.control.start, 0)
        assert not await _respond(ctx, dut, 3, 1)
        assert not await _respond(ctx, dut, 5, 2)   # wrong flush ID: dropped
        assert ctx.get(dut.dropped)
        assert not await _respond(ctx, dut, 4, 1)
        assert not ctx.get(dut.dropped)
        assert not await _respond(ctx, dut, 4, 1)   # a second response from the same FU: dropped
        assert ctx.get(dut.dropped)
        assert await _respond(ctx, dut, 5, 1)       # done in the cycle the last response arrives
        assert not ctx.get(dut.control.done)

    run_sim(dut, tb)


def test_done_waits_for_the_old_epoch():
    """A TLB-only flush completes only when every translation that read the TLB before it has been
    answered; translations of the new epoch do not hold it."""
    dut = _flush()

    async def tb(ctx):
        ctx.set(dut.lookups, 1)                     # two translations of epoch 0
        await ctx.tick()
        await ctx.tick()
        ctx.set(dut.lookups, 0)
        ctx.set(dut.control.tlb, 1)
        ctx.set(dut.control.start, 1)
        assert not ctx.get(dut.requests.valid)      # ats = 0: no flush requests
        await ctx.tick()
        ctx.set(dut.control.start, 0)
        ctx.set(dut.lookups, 1)                     # one of epoch 1
        await ctx.tick()
        ctx.set(dut.lookups, 0)
        for epoch in (0, 1, 0):
            assert not ctx.get(dut.control.done)
            ctx.set(dut.answered.valid, 1)
            ctx.set(dut.answered.payload, epoch)
            await ctx.tick()
            ctx.set(dut.answered.valid, 0)
        assert ctx.get(dut.control.done)
        await ctx.tick()
        assert not ctx.get(dut.control.done)

    run_sim(dut, tb)


def test_without_fus():
    """No FU ports: an ATS flush completes as a TLB flush."""
    dut = _flush(())

    async def tb(ctx):
        ctx.set(dut.control.ats, 1)
        ctx.set(dut.control.start, 1)
        assert not ctx.get(dut.requests.valid)
        await ctx.tick()
        ctx.set(dut.control.start, 0)
        assert ctx.get(dut.control.done)

    run_sim(dut, tb)


def _sweep_log(dut, *, nla, extra, cycles):
    """Start a TLB-only flush of ``extra + 1`` pages from ``nla``; per cycle (invalidated 4 KB page or
    None, invalidated 2 MB page or None, starting, done)."""
    log = []

    async def tb(ctx):
        ctx.set(dut.control.nla.as_value(), nla)
        ctx.set(dut.control.extra, extra)
        ctx.set(dut.control.tlb, 1)
        ctx.set(dut.control.start, 1)
        for _ in range(cycles):
            log.append((ctx.get(dut.invalidate.payload.as_value()) if ctx.get(dut.invalidate.valid) else None,
                        ctx.get(dut.linvalidate.payload.as_value()) >> 9 if ctx.get(dut.linvalidate.valid) else None,
                        ctx.get(dut.starting), ctx.get(dut.control.done)))
            await ctx.tick()
            ctx.set(dut.control.start, 0)
            ctx.set(dut.control.nla.as_value(), 0)
            ctx.set(dut.control.extra, 0)

    run_sim(dut, tb)
    return log


def test_range_sweep():
    """A range flush invalidates the sets of every page of the range, one per cycle, and of every 2 MB
    page it touches, in the same cycles; lookups are held throughout; done after the last one."""
    dut = _flush()
    nla = (3 << 18) | 0x1FE                     # two pages before a 2 MB boundary
    log = _sweep_log(dut, nla=nla, extra=5, cycles=9)
    assert [p for p, _, _, _ in log] == [nla + k for k in range(6)] + [None] * 3
    assert [p for _, p, _, _ in log] == [nla >> 9, (nla >> 9) + 1] + [None] * 7
    assert [s for _, _, s, _ in log] == [1] * 6 + [0] * 3
    assert [d for _, _, _, d in log] == [0] * 6 + [1, 0, 0]      # nothing in flight: done after the sweep


def test_range_sweep_caps_at_the_sets():
    """A range larger than a TLB invalidates each of its sets once: 1024 cycles for 1 GiB of 4 KB pages,
    and the 16 large-page sets in the first 16 of them."""
    dut = _flush()
    log = _sweep_log(dut, nla=5 << 18, extra=(1 << 18) - 1, cycles=1030)
    small = [p for p, _, _, _ in log if p is not None]
    large = [p for _, p, _, _ in log if p is not None]
    assert len(small) == 1024 and len({p & 1023 for p in small}) == 1024
    assert large == [(5 << 9) + k for k in range(16)]
    assert [d for _, _, _, d in log].index(1) == 1024


def test_gat_cache_invalidation_uses_the_whole_gat_index():
    """With the first-level table (14-bit GAT index), a flush with ``gat`` invalidates the GAT cache
    entry of its NLA page's whole GAT index (GAT 9000 here, beyond 512)."""
    f = AtuFormats(gat_entries=512, tlb_entries=1024, tlb_ways=1, reorder_entries=32, vpids=32, fus=1,
                   gat_cache_entries=1024)
    dut = AtuFlush(formats=f, fu_ports=(3,))
    seen = []

    async def tb(ctx):
        ctx.set(dut.control.nla.as_value(), (9000 << 18) | 5)
        ctx.set(dut.control.gat, 1)
        ctx.set(dut.control.start, 1)
        seen.append((ctx.get(dut.ginvalidate.valid), ctx.get(dut.ginvalidate.payload)))
        await ctx.tick()

    run_sim(dut, tb)
    assert seen == [(1, 9000)]
