"""The notifier's write pointers (Amaranth simulator): the register file's read and write port and
their meeting with a notification's advance."""

from rtl.rma.notifier import RmaNotifier
from sim.amsim import run_sim

SIZE = 8
BASE = 0x1230               # bits 51:4 of the queue base


def make():
    return RmaNotifier(vpids=4, htax_port=2, host_port=0)


async def setup(ctx, dut):
    ctx.set(dut.base, BASE)
    ctx.set(dut.size, SIZE)
    ctx.set(dut.rp, SIZE - 1)


async def sw_write(ctx, dut, addr, value, be=0xFF):
    ctx.set(dut.sw_w_addr, addr)
    ctx.set(dut.sw_w_data, value)
    ctx.set(dut.sw_w_be, be)
    ctx.set(dut.sw_w_en, 1)
    await ctx.tick()
    ctx.set(dut.sw_w_en, 0)


async def sw_read(ctx, dut, addr):
    ctx.set(dut.sw_r_addr, addr)
    ctx.set(dut.sw_r_en, 1)
    await ctx.tick()
    ctx.set(dut.sw_r_en, 0)
    value = ctx.get(dut.sw_r_data)
    ctx.set(dut.sw_r_addr, (addr + 1) % 4)
    await ctx.tick()
    assert ctx.get(dut.sw_r_data) == value          # held while sw_r_en is low
    return value


async def send_note(ctx, dut, vpid, *, on_advance=None):
    """Offer a notification to ``vpid``, take its three beats; ``on_advance`` runs in the cycle after
    the last beat (the advance cycle).  Returns the header's address."""
    ctx.set(dut.notes.payload.vpid, vpid)
    ctx.set(dut.notes.valid, 1)
    ctx.set(dut.tx.ready, 1)
    addr = None
    while True:
        _, _, valid, first, last, a = await ctx.tick().sample(
            dut.tx.valid, dut.tx.payload.first, dut.tx.payload.last, dut.tx.payload.word.header.body.mem.addr)
        if valid and first:
            addr = a
        if valid and last:
            break
    ctx.set(dut.tx.ready, 0)
    if on_advance is not None:
        await on_advance()
    while not ctx.get(dut.notes.ready):
        await ctx.tick()
        ctx.set(dut.sw_w_en, 0)
    await ctx.tick()
    ctx.set(dut.sw_w_en, 0)
    ctx.set(dut.notes.valid, 0)
    return addr


def test_sw_port_and_advance():
    dut = make()

    async def tb(ctx):
        await setup(ctx, dut)
        await sw_write(ctx, dut, 1, 3)
        assert await sw_read(ctx, dut, 1) == 3
        # byte enables: only byte 1 changes
        await sw_write(ctx, dut, 1, 0xAABBCCDD, be=0b0010)
        assert await sw_read(ctx, dut, 1) == 0xCC03
        await sw_write(ctx, dut, 1, 3)
        # a notification goes to base + 16 * wp and advances wp
        assert await send_note(ctx, dut, 1) == (BASE << 4) + 16 * 3
        assert await sw_read(ctx, dut, 1) == 4
        # modulo size
        await sw_write(ctx, dut, 2, SIZE - 1)
        ctx.set(dut.rp, 3)
        assert await send_note(ctx, dut, 2) == (BASE << 4) + 16 * (SIZE - 1)
        assert await sw_read(ctx, dut, 2) == 0
        ctx.set(dut.rp, SIZE - 1)

        # a software write to the same pointer in the advance cycle wins
        async def same():
            ctx.set(dut.sw_w_addr, 1)
            ctx.set(dut.sw_w_data, 6)
            ctx.set(dut.sw_w_be, 0xFF)
            ctx.set(dut.sw_w_en, 1)
        await send_note(ctx, dut, 1, on_advance=same)
        assert await sw_read(ctx, dut, 1) == 6

        # one to another pointer delays the advance, both land
        await sw_write(ctx, dut, 1, 2)
        async def other():
            ctx.set(dut.sw_w_addr, 3)
            ctx.set(dut.sw_w_data, 5)
            ctx.set(dut.sw_w_be, 0xFF)
            ctx.set(dut.sw_w_en, 1)
            assert not ctx.get(dut.notes.ready)
            await ctx.tick()
            ctx.set(dut.sw_w_en, 0)
        await send_note(ctx, dut, 1, on_advance=other)
        assert await sw_read(ctx, dut, 1) == 3
        assert await sw_read(ctx, dut, 3) == 5

    run_sim(dut, tb)


def test_full_queue_drops():
    dut = make()

    async def tb(ctx):
        await setup(ctx, dut)
        await sw_write(ctx, dut, 0, 2)
        ctx.set(dut.rp, 3)                      # wp + 1 == rp: full
        ctx.set(dut.notes.payload.vpid, 0)
        ctx.set(dut.notes.valid, 1)
        dropped = 0
        for _ in range(4):
            _, _, d, r, v = await ctx.tick().sample(dut.dropped_incr, dut.notes.ready, dut.tx.valid)
            assert not v
            if r:
                dropped += d
                break
        ctx.set(dut.notes.valid, 0)
        assert dropped == 1
        assert await sw_read(ctx, dut, 0) == 2

    run_sim(dut, tb)
