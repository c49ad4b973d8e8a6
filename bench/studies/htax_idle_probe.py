"""Where `HtaxPipelined`'s outputs lose their cycles under saturated uniform traffic (docs/htax.md, "Why
the pipelined switch stays below 0.9 with 17 slots").

Runs the saturated phase of ``tests/htax/tb_htax_bench.py`` (8 ports, 9-beat posted writes, sinks
always ready with ``ready2``) on a Verilator model built with ``--public-flat-rw`` and classifies every
output's every cycle after the warm-up by the switch's own registers:

* ``busy``: the output takes a beat from its writer (``w_ok``);
* ``booked_header_not_there``: a booking is taken or waiting (``wact`` or ``booked``) but its input has
  not yet put the header into its write register (the input still reads its own packet, or looks up
  and reads the header);
* ``grant_out``: idle, its grant waits for the input's accept;
* ``requests``: idle, inputs request it (the grant is made in this cycle);
* ``no_bookable_input``: idle, and no input that holds a packet for it can book (all have a booking
  or are more than ``_IN_AHEAD`` beats from their packet's end), or none holds one.

Among the busy cycles it also counts those in which the output is open for its next booking.
Prints the fractions (of output-cycles) as JSON.

    python bench/studies/htax_idle_probe.py [--seed S] [--warmup 1000] [--window 6000] [KEY=VALUE ...]

``KEY=VALUE`` overrides a parameter of the switch (``shared_slots=16``, ``out_depth=32``).
"""

import argparse
import collections
import json
import random
import sys
from pathlib import Path

import cocotb

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rtl.common.htax import HtaxCmd  # noqa: E402
from sim.runner import tb_params, tb_seed  # noqa: E402


@cocotb.test()
async def probe(dut):
    from tests.htax.harness import Harness, random_packet

    p = tb_params()
    n = p["ports"]
    rng = random.Random(tb_seed())
    h = Harness(dut, n, rng, sink_ready2=lambda o, c, r: 0xF)
    await h.start(clock=True)

    def get(name):
        return int(getattr(dut, name).value)

    counts = collections.Counter()
    for t in range(p["warmup"] + p["window"]):
        for src in range(n):
            while len(h.queues[src][0]) < 3:
                h.send(src, random_packet(rng, src, rng.randrange(n), cmd=HtaxCmd.WRITE, length=8))
        await h.run(1)
        if t < p["warmup"]:
            continue
        can_book = [get(f"i{i}_can_book") for i in range(n)]
        for o in range(n):
            has = [get(f"i{i}_vc0_o{o}_has") for i in range(n)]
            requested = any(c and q for c, q in zip(can_book, has, strict=True))
            if get(f"o{o}_w_ok"):
                counts["busy"] += 1
                if get(f"o{o}_open"):
                    counts["busy_open"] += 1
            elif get(f"o{o}_wact") or get(f"o{o}_booked"):
                counts["booked_header_not_there"] += 1
            elif get(f"o{o}_grant_q"):
                counts["grant_out"] += 1
            elif requested:
                counts["requests"] += 1
            else:
                counts["no_bookable_input"] += 1
    total = p["window"] * n
    print("IDLE_PROBE " + json.dumps({k: round(v / total, 4) for k, v in sorted(counts.items())}))


def main(argv=None):
    import sim.runner as runner
    from rtl.config import load
    from rtl.htax import from_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--window", type=int, default=6000)
    ap.add_argument("params", nargs="*", metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    extra = {k: int(v) for k, v in (a.split("=", 1) for a in args.params)}
    switch = from_config(load(), pipelined=True, ports=8, **extra)
    # the probe reads internal registers: the model is built with them public (its own build key)
    runner.VERILATOR_ARGS = [*runner.VERILATOR_ARGS, "--public-flat-rw"]
    name = "htax_idle_probe" + "".join(f"_{k}{v}" for k, v in extra.items())
    path, _ = runner.run_cocotb(switch, name=name, test_module="bench.studies.htax_idle_probe", seed=args.seed,
                                params={"ports": 8, "warmup": args.warmup, "window": args.window})
    log = Path(path).parent / "sim.log"
    print(next(line for line in log.read_text().splitlines() if "IDLE_PROBE" in line).split("IDLE_PROBE ")[1])


if __name__ == "__main__":
    main()
