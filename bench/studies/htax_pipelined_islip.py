"""Cycle-level throughput model of a pipelined packet-mode iSLIP HTAX (docs/htax.md, "The way to 200 MHz").

Not the switch in rtl/htax: a study of keeping one buffer and one read engine per input (today's data
path) but registering the matching over several cycles.  Model: ``ports`` inputs with virtual output
queues and ``slots`` packet slots each, always fed with 9-beat packets to uniformly random outputs
(a packet can be matched once all its beats are stored); one packet leaves an input and enters an
output at a time, one beat per cycle; sinks always ready.  Every cycle one iSLIP iteration (outputs
grant round-robin, inputs accept round-robin, pointers move on acceptance) matches inputs and outputs
that were *eligible* ``delay`` cycles earlier (and have not been matched since): eligible means the
current packet has at most ``lookahead`` beats left and no next packet is booked.  A match books the
next packet on both sides; it starts when both the input and the output are free.  ``delay = 0,
lookahead = 0`` is close to today's switch (one round in the cycle before the last beat).  Prints
delivered beats per cycle per output.

    python bench/studies/htax_pipelined_islip.py [--ports 8] [--slots 13] [--delays 0 1 2 3]
                                                 [--lookaheads 0 1 2 3 5] [--seed S]
"""

import argparse
import random


def islip_round(n, in_ok, out_ok, queued, voq, in_book, out_book, gptr, aptr):
    """One iSLIP iteration on eligibility flags and queue snapshots (``in_ok``, ``out_ok``, ``queued``)
    taken some cycles earlier: every eligible output without a booking grants the first eligible input
    at or after its pointer that has no booking and a packet for it (then and now); every granted
    input accepts the first granting output at or after its pointer; an accept books the packet on
    both sides (``in_book``, ``out_book``), takes it out of ``voq`` and moves both pointers past it."""
    grants = {}
    for o in range(n):
        if not (out_ok[o] and out_book[o] is None):
            continue
        for k in range(n):
            i = (gptr[o] + k) % n
            if in_ok[i] and in_book[i] is None and queued[i][o] and voq[i][o]:
                grants.setdefault(i, []).append(o)
                break
    for i, outs in grants.items():
        o = next((aptr[i] + k) % n for k in range(n) if (aptr[i] + k) % n in outs)
        aptr[i], gptr[o] = (o + 1) % n, (i + 1) % n
        voq[i][o] -= 1
        in_book[i], out_book[o] = o, i


def delayed_round(history, snapshot, delay, now, n, voq, in_book, out_book, gptr, aptr):
    """Keep ``snapshot`` (eligibility flags and queues of this cycle) in ``history``, which holds the
    last ``delay`` + 1 of them, and, when ``now`` and ``delay`` cycles have passed, run
    :func:`islip_round` on the snapshot taken ``delay`` cycles ago (the matching's registered steps)."""
    history.append(snapshot)
    del history[:-1 - delay]
    if now and len(history) > delay:
        islip_round(n, *history[0], voq, in_book, out_book, gptr, aptr)


def start_transfers(n, in_book, out_book, in_left, out_left, beats):
    """Start every booked transfer whose input and output are both free (no beats ``*_left``): clear
    the booking on both sides and give both ``beats`` beats to move.  Returns the (input, output)
    pairs started."""
    started = []
    for i in range(n):
        o = in_book[i]
        if o is not None and in_left[i] == 0 and out_left[o] == 0:
            in_book[i] = out_book[o] = None
            in_left[i] = out_left[o] = beats
            started.append((i, o))
    return started


def sources_step(n, rng, slots, beats, writing, writing_dst, used, voq):
    """One cycle of the saturating sources: every input starts a packet of ``beats`` beats to a random
    output when it has a free slot (``used`` < ``slots``), stores one beat per cycle and queues the
    packet in ``voq`` once all its beats are stored."""
    for i in range(n):
        if not writing[i] and used[i] < slots:
            used[i] += 1
            writing[i], writing_dst[i] = beats, rng.randrange(n)
        if writing[i]:
            writing[i] -= 1
            if not writing[i]:
                voq[i][writing_dst[i]] += 1


def saturated(*, ports, slots, delay, lookahead, beats=9, cycles=20000, seed=1):
    n = ports
    rng = random.Random(seed)
    voq = [[0] * n for _ in range(n)]      # stored packets per (input, output), not yet matched
    used = [0] * n                         # slots in use per input
    writing = [0] * n                      # beats of the incoming packet still to store
    writing_dst = [0] * n
    in_left, out_left = [0] * n, [0] * n   # beats left of the packet an input / output is moving
    in_book, out_book = [None] * n, [None] * n
    moving_to = [None] * n
    gptr, aptr = [0] * n, [0] * n
    history = []
    delivered = 0
    for _ in range(cycles):
        delayed_round(history, ([in_left[i] <= lookahead and in_book[i] is None for i in range(n)],
                                [out_left[o] <= lookahead and out_book[o] is None for o in range(n)],
                                [row[:] for row in voq]),
                      delay, True, n, voq, in_book, out_book, gptr, aptr)
        for i, o in start_transfers(n, in_book, out_book, in_left, out_left, beats):
            moving_to[i] = o
        for i in range(n):
            if in_left[i]:
                in_left[i] -= 1
                out_left[moving_to[i]] -= 1
                delivered += 1
                if not in_left[i]:
                    used[i] -= 1
        sources_step(n, rng, slots, beats, writing, writing_dst, used, voq)
    return delivered / cycles / n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--slots", type=int, default=13)
    ap.add_argument("--delays", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--lookaheads", type=int, nargs="+", default=[0, 1, 2, 3, 5])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"seed {args.seed}, {args.ports} ports, {args.slots} slots; rows: delay, columns: lookahead "
          f"{args.lookaheads}")
    for delay in args.delays:
        row = [saturated(ports=args.ports, slots=args.slots, delay=delay, lookahead=f, seed=args.seed)
               for f in args.lookaheads]
        print(f"delay {delay}: " + "  ".join(f"{r:.3f}" for r in row))


if __name__ == "__main__":
    main()
