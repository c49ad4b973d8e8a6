"""Cycle-level throughput model of an HTAX without matching (docs/htax.md, "The way to 200 MHz").

Not the switch in rtl/htax: a study of the organisation proposed there, where every output has its
own read port into every input's buffer, so outputs pick packets independently (no input-output
matching).  Model: ``ports`` inputs, each always has a 9-beat packet (header + 8 data words) with a
uniformly random destination waiting to enter; an input accepts a header when one of its ``slots``
packet slots is free and then one beat per cycle; an output takes the oldest packet of the next input
(round-robin) that has one for it whose header is stored, reads one beat per cycle but never ahead
of the writer (cut-through), waits ``gap`` idle cycles after each packet before the next starts, and
its slot becomes free ``release`` cycles after the last beat is read.  Sinks are always ready.
Prints delivered beats per cycle per output.

    python bench/studies/htax_read_copies.py [--ports 8] [--slots 13] [--gaps 0 1 2] [--seed S]
"""

import argparse
import random


def saturated(*, ports, slots, gap, release=2, beats=9, cycles=30000, seed=1):
    rng = random.Random(seed)
    held = [[] for _ in range(ports)]       # per input: packets in slots, oldest first
    used = [0] * ports                      # slots in use per input (freed `release` cycles late)
    writing = [None] * ports
    current = [None] * ports                # per output: (input, packet)
    pointer = [0] * ports
    idle_until = [0] * ports
    frees = []
    delivered = 0
    for t in range(cycles):
        for i in [i for when, i in frees if when <= t]:
            used[i] -= 1
        frees = [(when, i) for when, i in frees if when > t]
        for o in range(ports):
            if current[o] is None and idle_until[o] <= t:
                for k in range(ports):
                    i = (pointer[o] + k) % ports
                    waiting = [p for p in held[i] if p["dst"] == o and not p["taken"]]
                    if waiting and waiting[0]["written"] > 0:
                        waiting[0]["taken"] = True
                        current[o] = (i, waiting[0])
                        pointer[o] = (i + 1) % ports
                        break
            if current[o] is not None:
                i, p = current[o]
                if p["read"] < p["written"]:
                    p["read"] += 1
                    delivered += 1
                    if p["read"] == beats:
                        held[i].remove(p)
                        frees.append((t + release, i))
                        current[o] = None
                        idle_until[o] = t + 1 + gap
        for i in range(ports):
            if writing[i] is None:
                if used[i] < slots:
                    p = {"dst": rng.randrange(ports), "written": 1, "read": 0, "taken": False}
                    held[i].append(p)
                    used[i] += 1
                    writing[i] = p
            else:
                writing[i]["written"] += 1
                if writing[i]["written"] == beats:
                    writing[i] = None
    return delivered / cycles / ports


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--slots", type=int, nargs="+", default=[4, 8, 13])
    ap.add_argument("--gaps", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"seed {args.seed}")
    for slots in args.slots:
        for gap in args.gaps:
            r = saturated(ports=args.ports, slots=slots, gap=gap, seed=args.seed)
            print(f"{args.ports} ports, {slots} slots, gap {gap}: {r:.3f} beats/cycle/output")


if __name__ == "__main__":
    main()
