"""cocotb: HTAX performance measurements for ``bench/htax.py`` (results go to the JSON file ``out``).

Definitions (cycles of the switch clock):

* latency: from the cycle a header moves into a source port to the cycle it moves out of the
  destination port (sinks always ready); with ``offered`` load the clock starts when the packet is
  generated, so source queueing is included.
* throughput: beats (header and data beats) delivered per cycle per output.
* single-beat rate: one-beat packets (ATS) from input 0 alone, delivered per cycle, all to output 1
  (``single_beat_one_input_per_cycle``) or to every output in turn, its own included
  (``single_beat_one_input_all_outputs_per_cycle``); no other traffic, so the outputs are free.

Sinks are always ready and promise room for two beats (``ready2``), as a unit with a receive FIFO
does; ``throughput_per_port_saturated_no_ready2`` repeats the saturated run with sinks that make no
promise (the switch then leaves a cycle between two packets of one VC to one output).
"""

import json
import random

import cocotb

from rtl.common.htax import HtaxCmd
from sim.runner import tb_params, tb_seed
from tests.htax.harness import Harness, hdr_src, random_packet


@cocotb.test()
async def measure(dut):
    p = tb_params()
    n = p["ports"]
    seed = tb_seed()
    rng = random.Random(seed)
    res = {"ports": n, "seed": seed}
    first = True

    async def fresh(promise=True):
        nonlocal first
        h = Harness(dut, n, rng, sink_ready2=(lambda o, c, r: 0xF) if promise else None)
        await h.start(clock=first)
        first = False
        return h

    # zero-load latency: one packet at a time
    h = await fresh()
    lat = []
    for _ in range(4 * n):
        src, dst = rng.randrange(n), rng.randrange(n)
        tag = h.send(src, random_packet(rng, src, dst, cmd=HtaxCmd.WRITE, length=8))
        await h.run(until=h.drained, limit=200)
        (hc, _, _, _), = [d for d in h.delivered[dst] if d[2] == tag]
        lat.append(hc - h.hdr_in[tag])
        await h.run(5)
    h.check()
    res["zero_load_latency_cycles"] = max(lat)
    res["zero_load_latency_min"] = min(lat)

    # saturated uniform random traffic, 8-data-beat writes
    warm, window = p.get("warmup", 400), p.get("window", 3000)

    # single-beat packets from one input, outputs free (the source keeps 4 packets queued)
    for key, dst_of in (("single_beat_one_input_per_cycle", lambda k: 1 % n),
                        ("single_beat_one_input_all_outputs_per_cycle", lambda k: k % n)):
        h = await fresh()
        sent = 0

        def top_up_single(h=h, dst_of=dst_of):
            nonlocal sent
            while h.queued(0) < 4:
                h.send(0, random_packet(rng, 0, dst_of(sent), cmd=HtaxCmd.ATS))
                sent += 1

        for _ in range(warm):
            top_up_single()
            await h.run(1)
        b0 = sum(h.out_beats)
        for _ in range(window):
            top_up_single()
            await h.run(1)
        res[key] = (sum(h.out_beats) - b0) / window
        await h.run(until=h.drained, limit=20000)
        h.check()

    def top_up(h, dst_of):
        for src in range(n):
            while h.queued(src, 0) < 3:
                h.send(src, random_packet(rng, src, dst_of(src), cmd=HtaxCmd.WRITE, length=8))

    for promise, key in ((True, "throughput_per_port_saturated"),
                         (False, "throughput_per_port_saturated_no_ready2")):
        h = await fresh(promise)
        for _ in range(warm):
            top_up(h, lambda s: rng.randrange(n))
            await h.run(1)
        b0 = sum(h.out_beats)
        for _ in range(window):
            top_up(h, lambda s: rng.randrange(n))
            await h.run(1)
        res[key] = (sum(h.out_beats) - b0) / window / n
        h.check()
        await h.run(until=h.drained, limit=20000)
        h.check()

    # fairness: every input saturates output 0
    h = await fresh()
    for _ in range(warm):
        top_up(h, lambda s: 0)
        await h.run(1)
    k0, b0 = len(h.delivered[0]), h.out_beats[0]
    for _ in range(window):
        top_up(h, lambda s: 0)
        await h.run(1)
    got = [0] * n
    for d in h.delivered[0][k0:]:
        got[hdr_src(d[1][0])] += 1
    res["fairness_shares"] = [g / sum(got) for g in got]
    res["fairness_min_share"] = min(got) / sum(got)
    # (beats that moved in the window, as the saturated phases count them: a packet straddling the
    # window's start or end counts only its beats inside)
    res["contended_output_beats_per_cycle"] = (h.out_beats[0] - b0) / window
    await h.run(until=h.drained, limit=20000)
    h.check()

    # latency versus offered load (Bernoulli packet arrivals, uniform destinations)
    # (its own warm-up and window: twelve loads of the saturated phases' long window would dominate)
    curve = []
    sweep_warm, sweep_window = p.get("sweep_warmup", warm), p.get("sweep_window", window)
    for load in p.get("loads", []):
        h = await fresh()
        gen = {}
        measured = []
        total = sweep_warm + sweep_window
        for c in range(total):
            for src in range(n):
                if rng.random() < load / 9:
                    tag = h.send(src, random_packet(rng, src, rng.randrange(n), cmd=HtaxCmd.WRITE, length=8))
                    if c >= sweep_warm:
                        gen[tag] = h.cycle
                        measured.append(tag)
            await h.run(1)
        await h.run(until=h.drained, limit=200000)
        h.check()
        out = {d[2]: d[0] for ds in h.delivered for d in ds}
        lats = sorted(out[t] - gen[t] for t in measured)
        curve.append({"offered": load, "mean_latency": sum(lats) / len(lats),
                      "p99_latency": lats[int(0.99 * (len(lats) - 1))], "packets": len(lats)})
    res["latency_vs_load"] = curve
    with open(p["out"], "w") as f:
        json.dump(res, f, indent=1)
