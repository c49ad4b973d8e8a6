"""Cycle-level throughput model of a pipelined HTAX with rounds every few cycles and an internal speedup.

A study for the next step of ``HtaxPipelined`` (docs/htax.md, "Internal speedup (study)"), not the
switch in rtl/htax.  It differs from ``htax_pipelined_islip.py`` in three ways that made that model
optimistic against the RTL: an output and an input take part in an iSLIP round only every ``period``
cycles (``HtaxPipelined``'s output that has a grant out waits for the accept before it grants again:
``period`` 2), the crossbar moves ``speedup`` beats per cycle from an input's buffer into an output's
buffer, and every output's link drains its buffer (``depth`` beats; a booking reserves a whole packet
of it) at one beat per cycle into a sink that is always ready.

Model: ``ports`` inputs with virtual output queues and ``slots`` packet slots each, always fed with
9-beat packets to uniformly random outputs at one beat per cycle (a packet can be matched once all its
beats are stored); every ``period`` cycles one iSLIP iteration (outputs grant round-robin, inputs accept
round-robin, pointers move on acceptance) matches inputs and outputs that were *eligible* ``delay``
cycles earlier and are still unbooked: an input whose current transfer ends within ``in_ahead`` cycles,
an output whose incoming transfer ends within ``out_ahead`` cycles and whose buffer has room for one
more packet besides the beats still to come.  A match books the next packet on both sides; the
transfer starts when the input and the output's crossbar port are both free.  Prints delivered beats
per cycle per output, averaged over the seeds.

Calibration against the RTL (8 ports, 13 slots usable by the posted VC, saturated, 30000 cycles):
``HtaxPipelined`` measures 0.894 where the model gives about 0.86 (``--delay 1 --period 2 --in-ahead 3
--out-ahead 5``); its registered-grant variant of the twenty-second session measured 0.786, the model
about 0.79 (``--delay 2 --period 3``).  So the model is within 0.03 and, unlike the earlier one,
pessimistic.

    python bench/studies/htax_speedup.py [--ports 8] [--slots 13] [--cycles 20000] [--seeds 1 2 3]
        [--config DELAY,PERIOD,IN_AHEAD,OUT_AHEAD,SPEEDUP,DEPTH ...]
"""

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from htax_pipelined_islip import delayed_round, sources_step, start_transfers  # noqa: E402

BEATS = 9

# (delay, period, in_ahead, out_ahead, speedup, depth): today's HtaxPipelined, the registered grant of
# the twenty-second session, and the same two matchings with speedup 2 and one more registered step
DEFAULT_CONFIGS = [
    (1, 2, 3, 5, 1, 16),
    (2, 3, 3, 5, 1, 16),
    (1, 2, 1, 3, 2, 16),
    (2, 3, 1, 3, 2, 16),
    (2, 3, 2, 4, 2, 27),
    (3, 4, 2, 4, 2, 16),
    (3, 4, 2, 4, 2, 27),
]


def saturated(*, ports, slots, delay, period, in_ahead, out_ahead, speedup, depth, cycles, seed):
    if depth < BEATS:
        raise ValueError(f"depth must be at least {BEATS} beats (one packet), not {depth}")
    n = ports
    rng = random.Random(seed)
    voq = [[0] * n for _ in range(n)]      # stored packets per (input, output), not yet booked
    used = [0] * n                         # slots in use per input (released after the transfer)
    writing, writing_dst = [0] * n, [0] * n
    in_left = [0] * n                      # beats of the current transfer still to move, per input
    x_left = [0] * n                       # ... and per output (its crossbar port)
    src_of = [None] * n                    # output -> the input of its current transfer
    obuf = [0] * n                         # beats in an output's buffer
    in_book, out_book = [None] * n, [None] * n
    gptr, aptr = [0] * n, [0] * n
    history = []
    delivered = 0

    def cycles_left(beats):
        return -(-beats // speedup)

    for t in range(cycles):
        delayed_round(history, (
            [cycles_left(in_left[i]) <= in_ahead and in_book[i] is None for i in range(n)],
            [cycles_left(x_left[o]) <= out_ahead and out_book[o] is None
             and obuf[o] + x_left[o] + BEATS <= depth for o in range(n)],
            [row[:] for row in voq]), delay, t % period == 0, n, voq, in_book, out_book, gptr, aptr)
        # transfers start when both sides are free (the buffer room was reserved by the booking)
        for i, o in start_transfers(n, in_book, out_book, in_left, x_left, BEATS):
            src_of[o] = i
        # the crossbar moves up to `speedup` beats per transfer; the links drain one beat each
        for o in range(n):
            if obuf[o]:
                obuf[o] -= 1
                delivered += 1
            i = src_of[o]
            if i is not None and x_left[o]:
                step = min(speedup, x_left[o])
                x_left[o] -= step
                in_left[i] -= step
                obuf[o] += step
                if not in_left[i]:
                    used[i] -= 1
                    src_of[o] = None
        sources_step(n, rng, slots, BEATS, writing, writing_dst, used, voq)
    return delivered / cycles / n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--slots", type=int, default=13)
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--config", nargs="+", metavar="D,P,IN,OUT,SPEEDUP,DEPTH",
                    help="delay, period, in_ahead, out_ahead, speedup, depth (default: a table of seven)")
    args = ap.parse_args(argv)
    configs = [tuple(int(v) for v in c.split(",")) for c in args.config] if args.config else DEFAULT_CONFIGS
    print(f"{args.ports} ports, {args.slots} slots, {args.cycles} cycles, seeds {args.seeds}")
    print("delay period in_ahead out_ahead speedup depth  throughput")
    for cfg in configs:
        delay, period, in_ahead, out_ahead, speedup, depth = cfg
        runs = [saturated(ports=args.ports, slots=args.slots, delay=delay, period=period, in_ahead=in_ahead,
                          out_ahead=out_ahead, speedup=speedup, depth=depth, cycles=args.cycles, seed=s)
                for s in args.seeds]
        print(f"{delay:5} {period:6} {in_ahead:8} {out_ahead:9} {speedup:7} {depth:5}  "
              f"{sum(runs) / len(runs):.3f} ({' '.join(f'{r:.3f}' for r in runs)})")


if __name__ == "__main__":
    main()
