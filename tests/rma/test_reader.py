"""The RMA read engine alone (Amaranth simulator): random line-segment reads, answered by a testbench
host in random order after random delays (some with an error status), words taken with random
backpressure; they must leave in request order, error reads as flagged zero words, and never more
than ``slots`` reads may be outstanding."""

import os
import random

from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from rtl.rma.reader import RmaReader
from sim.amsim import run_sim, stream_put
from sim.htax_packet import HtaxPacket

SLOTS, TAG_BASE = 4, 16


def word(addr):
    return (addr * 0x9E37_79B9_7F4A_7C15) & (1 << 64) - 1


def test_reader_order_and_errors():
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    reads = []
    for _ in range(150):
        qw = rng.randrange(1 << 20)
        reads.append((qw, rng.randint(1, 8 - qw % 8), rng.random() < 0.1))
    bad = {qw for qw, _, err in reads if err}
    expect = []
    for qw, n, err in reads:
        expect += [(0 if err else word(qw + i), int(i == n - 1), int(err)) for i in range(n)]
    dut = RmaReader(slots=SLOTS, tag_base=TAG_BASE, htax_port=3, host_port=0)
    got = []

    async def producer(ctx):
        for qw, n, _ in reads:
            await stream_put(ctx, dut.reads, {"addr_qw": qw, "words": n}, rng=rng, idle=0.3)

    async def host(ctx):
        pending, cur, tag, outstanding = [], [], None, set()
        while len(got) < len(expect):
            if not cur and pending and rng.random() < 0.5:      # any answered read, in any order
                tag, cur = pending.pop(rng.randrange(len(pending)))
            ctx.set(dut.tx.ready, rng.random() < 0.7)
            ctx.set(dut.rsp.valid, bool(cur))
            if cur:
                ctx.set(dut.rsp.payload.as_value(), cur[0])
            _, _, tv, tr, tb = await ctx.tick().sample(dut.tx.valid, dut.tx.ready, dut.tx.payload)
            if cur:
                cur.pop(0)          # the engine is always ready for responses
                if not cur:
                    outstanding.discard(tag)
            if tv and tr:
                p = HtaxPacket.from_header_beat(tb.as_value().value)
                assert (p.cmd, p.vc, p.dst, p.src) == (HtaxCmd.READ, HtaxVC.NONPOSTED, 0, 3)
                assert TAG_BASE <= p.tag < TAG_BASE + SLOTS and p.tag not in outstanding
                outstanding.add(p.tag)
                qw = p.addr >> 3
                if qw in bad:
                    rsp = HtaxPacket(HtaxCmd.RESPONSE, dst=3, tag=p.tag, addr=p.addr, status=HtaxStatus.TARGET_ERROR)
                else:
                    rsp = HtaxPacket(HtaxCmd.RESPONSE, dst=3, tag=p.tag, addr=p.addr, length=p.length,
                                     data=[word(qw + i) for i in range(p.length)])
                pending.append((p.tag, rsp.beats()))

    async def consumer(ctx):
        while len(got) < len(expect):
            ctx.set(dut.data.ready, rng.random() < 0.6)
            _, _, v, r, p = await ctx.tick().sample(dut.data.valid, dut.data.ready, dut.data.payload)
            if v and r:
                got.append((int(p.data), int(p.last), int(p.error)))

    run_sim(dut, producer, host, consumer)
    assert got == expect
