"""The input buffer of an HTAX port (rtl/htax/buffer.py) on its own, in the Amaranth simulator: the slot
accounting against the slots in every cycle, for both timings."""

import random

import pytest

from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from rtl.htax import Timing
from rtl.htax.buffer import HtaxInputBuffer
from rtl.htax.layouts import ERR_CLASS, NUM_CLASSES, reservations
from sim.amsim import Clock, HtaxSource, run_sim
from sim.htax_packet import HtaxPacket


@pytest.mark.parametrize("timing,shared", [(Timing.DIRECT, 0), (Timing.DIRECT, 3), (Timing.REGISTERED, 0),
                                           (Timing.REGISTERED, 2)])
def test_accounting_matches_slots(timing, shared):
    """One-beat packets at full rate on every VC (a quarter of the reads to a port that does not
    exist, whose error responses take the ERR class) into input 0 of a 2-port switch, and a read side
    that releases the head of a random queue now and then: in every cycle the per-class counts and the
    shared count match the slots, a header taken in finds a free slot, the request flags say which
    queues have packets, and (``Timing.DIRECT``, whose ``ready`` is a function of this cycle's counts)
    a VC with a free reserved slot is ready.  Everything taken in is released in the end."""
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    dut = HtaxInputBuffer(port=0, ports=2, slots_per_vc=1, shared_slots=shared, timing=timing)
    res = reservations(1)
    nslots = sum(res) + shared

    def one_beat():
        kind = rng.randrange(4)
        dst = rng.randrange(2)
        tag = rng.randrange(32)
        if kind == 0:
            pkt = HtaxPacket(HtaxCmd.ATS, src=0, dst=dst, tag=tag, ats=rng.getrandbits(64))
        elif kind == 1:
            pkt = HtaxPacket(HtaxCmd.RESPONSE, src=0, dst=dst, tag=tag, length=0, status=HtaxStatus.OK)
        else:
            pkt = HtaxPacket(HtaxCmd.READ, src=0, dst=dst if rng.random() < 0.75 else 3, tag=tag,
                             addr=rng.getrandbits(46) << 6, length=1, first_be=1)
        return pkt

    # a packet offered in every cycle until the drain
    src = HtaxSource(dut.link, next_packet=lambda ctx, now: None if now >= 2000 else one_beat())

    async def bench(ctx):
        clock = Clock(src)
        admitted = released = 0
        for cycle in range(2500):
            draining = cycle >= 2000
            clock.drive(ctx)            # the source's beat is on the link before the checks read it
            occ = ctx.get(dut.slots.occ)
            recs = [ctx.get(dut.slots.record[k]) for k in range(nslots)]
            cls = [ERR_CLASS if r["err"] else r["vc"] for r in recs]
            # the read side: now and then the head of a random queue leaves
            heads = [k for k in range(nslots) if (ctx.get(dut.slots.eligible) >> k) & 1]
            rel = rng.choice(heads) if heads and rng.random() < (0.9 if draining else 0.3) else None
            ctx.set(dut.release.valid, rel is not None)
            ctx.set(dut.release.slots, 0 if rel is None else 1 << rel)
            ctx.set(dut.release.cls, 0 if rel is None else cls[rel])
            ctx.set(dut.dequeue.valid, rel is not None)
            if rel is not None:
                ctx.set(dut.dequeue.payload, {"vc": recs[rel]["vc"], "dst": recs[rel]["dst"]})
                released += 1
            counts = [sum(1 for k in range(nslots) if (occ >> k) & 1 and cls[k] == c) for c in range(NUM_CLASSES)]
            got = [ctx.get(dut.held[c]) for c in range(NUM_CLASSES)]
            where = f"seed {seed} cycle {cycle}"
            assert got == counts, f"{where}: held {got}, slots {counts}"
            assert ctx.get(dut.shared) == sum(max(0, c - r) for c, r in zip(counts, res, strict=True)) <= shared, where
            for v in range(4):
                for o in range(2):
                    queued = sum(1 for k in range(nslots)
                                 if (occ >> k) & 1 and recs[k]["vc"] == v and recs[k]["dst"] == o)
                    assert ctx.get(dut.queues.count[v][o]) == queued, where
                    assert ctx.get(dut.queues.has[v]) >> o & 1 == (queued != 0), where
            if ctx.get(dut.admitted):
                admitted += 1
                assert not (occ >> ctx.get(dut.slots.free)) & 1, f"{where}: slot taken twice"
            ready = ctx.get(dut.link.ready)
            if timing is Timing.DIRECT:
                for v in range(4):
                    own = counts[v] < res[v] and (v != HtaxVC.NONPOSTED.value or counts[ERR_CLASS] == 0)
                    assert not own or (ready >> v) & 1, f"{where}: VC {v} not ready, held {counts}"
            await clock.tick(ctx)
        assert ctx.get(dut.slots.occ) == 0 and admitted == released > 400, (seed, admitted, released)

    run_sim(dut, bench)
