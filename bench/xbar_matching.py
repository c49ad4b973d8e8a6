"""The throughput bound of the crossbar's allocation, without its timing: a cycle model of
``crossbar_saturation_uniform`` (``tests/xbar/tb_xbar_bench.py``) in which allocation costs nothing.

Same traffic as the bench: 6 link ports with 4 VCs and 2 network ports with 2, every VC of every input
always holding a packet of 8 beats for a uniformly random output; an input reads one packet at a time,
an output takes one at a time.  In every cycle the free inputs and free outputs are matched, and a
matched packet moves from that cycle on, gapless.  Three matchings:

* ``separable``: what the crossbar does, without its pipeline: every free input requests the output of
  one of its heads whose output is free (a random one), every requested output grants one requester;
* ``greedy``: the free inputs, in random order, each take a free output one of its heads names;
* ``maximum``: a maximum matching of free inputs to free outputs in every cycle.

``python bench/xbar_matching.py [cycles] [seed]`` prints beats per cycle per output for each, with all
VCs and with one VC per input, and writes them to ``build/bench/xbar_matching.json``.
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_bench  # noqa: E402

LINKS, NETS, BEATS = 6, 2, 8


def _maximum(cands):
    """A maximum matching ``{output: (input, vc)}`` of ``cands`` (``{input: [(vc, output)]}``)."""
    owner = {}

    def augment(p, seen):
        for v, o in cands[p]:
            if o not in seen:
                seen.add(o)
                if o not in owner or augment(owner[o][0], seen):
                    owner[o] = (p, v)
                    return True
        return False
    for p in cands:
        augment(p, set())
    return owner


def _separable(cands, rng):
    asks = {}
    for p, c in cands.items():
        if c:
            v, o = rng.choice(c)
            asks.setdefault(o, []).append((p, v))
    return {o: rng.choice(ps) for o, ps in asks.items()}


def _greedy(cands, rng):
    taken = {}
    for p in rng.sample(sorted(cands), len(cands)):
        c = [(v, o) for v, o in cands[p] if o not in taken]
        if c:
            v, o = rng.choice(c)
            taken[o] = (p, v)
    return taken


def saturation(matching, *, one_vc=False, cycles=20000, seed=1):
    """Beats per cycle per output of ``matching`` (``"separable"``, ``"greedy"`` or ``"maximum"``)."""
    rng = random.Random(seed)
    ports = LINKS + NETS
    vcs = [1 if one_vc else 4 if p < LINKS else 2 for p in range(ports)]
    heads = [[rng.randrange(ports) for _ in range(vcs[p])] for p in range(ports)]
    in_free, out_free = [0] * ports, [0] * ports     # the cycle from which each is free
    beats = 0
    for now in range(cycles):
        cands = {p: [(v, o) for v, o in enumerate(heads[p]) if out_free[o] <= now]
                 for p in range(ports) if in_free[p] <= now}
        for p in cands:
            rng.shuffle(cands[p])
        match = (_maximum(cands) if matching == "maximum" else
                 _separable(cands, rng) if matching == "separable" else _greedy(cands, rng))
        for o, (p, v) in match.items():
            in_free[p] = out_free[o] = now + BEATS
            beats += min(BEATS, cycles - now)
            heads[p][v] = rng.randrange(ports)
    return beats / cycles / ports


def main():
    args = [int(a) for a in sys.argv[1:]]
    cycles, seed = (args + [20000, 1][len(args):])[:2]
    metrics = {}
    for matching in ("separable", "greedy", "maximum"):
        for one_vc, key in ((False, f"{matching}_saturation"), (True, f"{matching}_saturation_one_vc")):
            metrics[key] = round(saturation(matching, one_vc=one_vc, cycles=cycles, seed=seed), 4)
        print(f"{matching:10s} all VCs {metrics[f'{matching}_saturation']:.3f}  "
              f"one VC {metrics[f'{matching}_saturation_one_vc']:.3f}")
    write_bench("xbar_matching", metrics, {"link_ports": LINKS, "net_ports": NETS, "packet_beats": BEATS,
                                           "cycles": cycles, "seed": seed})


if __name__ == "__main__":
    main()
