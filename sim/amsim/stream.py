"""Stream helpers for Amaranth-simulator testbenches (``amaranth.lib.stream`` interfaces
and :class:`rtl.atu.formats.OfferSignature`): one producer and one consumer per stream, with random
stalls drawn from a seeded generator."""

from amaranth.sim import Simulator

__all__ = ["stream_put", "stream_get", "run_sim"]


async def stream_put(ctx, stream, payload, *, rng=None, idle=0.0):
    """Offer ``payload`` on ``stream`` until it is taken; before it, idle cycles with probability
    ``idle`` each (drawn from ``rng``)."""
    while rng is not None and rng.random() < idle:
        await ctx.tick()
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, payload)
    await ctx.tick().until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, rng=None, idle=0.0):
    """Take one item from ``stream`` (``ready`` low for random cycles first) and return its payload."""
    while rng is not None and rng.random() < idle:
        await ctx.tick()
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick().sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return payload


def run_sim(dut, *testbenches, monitors=()):
    """Run ``testbenches`` (async functions of ``ctx``) on ``dut`` with a 100 MHz ``sync`` clock until
    they return; ``monitors`` run beside them in the background (they may loop forever)."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for tb in testbenches:
        sim.add_testbench(tb)
    for tb in monitors:
        sim.add_testbench(tb, background=True)
    sim.run()
