"""Which blocks of `HtaxPipelined` are late at a clock target (docs/htax.md, "Where the 200 MHz goal
stands").

Reads the ECP5 netlist of ``htax_pipelined`` (``synth_ecp5`` JSON) and one or more routes of it
(``nextpnr-ecp5 --report R --detailed-timing-report``, e.g. the ``make report`` files or one route per
placer seed), takes the register inputs that arrive after the period (:func:`fpga.timing.late_inputs`)
and sums them by block of the switch, one column per route::

    python bench/studies/htax_late_blocks.py NETLIST.json ROUTE_S1.json [ROUTE_S2.json ...] [--period 5]

Prints a Markdown table: per block the late register inputs of each route, the latest arrival over
all routes and the mean summed lateness.  A register group that no block's pattern names is reported
in the ``other`` row and listed on standard error, so a renamed register does not vanish from the
table.
"""

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fpga.timing import late_inputs  # noqa: E402

# Register groups (fpga.timing.register_group: numbers as '#') by block, first match wins.  '$#' are
# flip-flops yosys left unnamed; in this design they are the inputs' decoded header fields.
BLOCKS = [
    ("input writer and slot accounting",
     r"^(i#_(free_low|st_|occ|older|vc#_o#_(count|has)|cnt|shared|in_pkt|wvc|wcount|wexp|wmore|wdrop|err|rel)"
     r"|port#__tx__|dropped_|\$#)"),
    ("head lookup", r"^i#_(heads|nx_|head)"),
    ("read engine, skid and write registers",
     r"^i#_(e_|ek|enb|erem|eslot|ecls|edst|evc|act|cur|near|rd_|data|s_|w_|release|can_book)"),
    ("matching (grant, accept, booking)",
     r"^(i#_(granted|aptr|accepted|q_dec|bk|book)|o#_(gptr|booked|vc_ptr|grant|book|i#_vc))"),
    ("crossbar into the output", r"^(o#_(ow|w_|whdr|wnear|wact|wsel)|wport__data)"),
    ("output buffers, space and link engine",
     r"^(o#_(cur_vc|link|last_vc|vc#_|in_pkt|beat|valid|space|refund|pick|free)|port#__rx__)"),
]
OTHER = "other"


def block_of(register):
    """The block of a register group name (``OTHER`` if no pattern matches)."""
    for name, pattern in BLOCKS:
        if re.search(pattern, register):
            return name
    return OTHER


def by_block(late):
    """``{block: (late inputs, latest ns, summed lateness ns)}`` of one :func:`late_inputs` result, and
    the register groups that fell into ``OTHER``."""
    out = {name: [0, 0.0, 0.0] for name, _ in BLOCKS + [(OTHER, None)]}
    unmatched = []
    for g in late["groups"]:
        b = block_of(g["register"])
        if b == OTHER:
            unmatched.append(g["register"])
        row = out[b]
        row[0] += g["late"]
        row[1] = max(row[1], g["worst_ns"])
        row[2] += g["excess_ns"]
    return {k: tuple(v) for k, v in out.items()}, unmatched


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("netlist")
    ap.add_argument("routes", nargs="+")
    ap.add_argument("--period", type=float, default=5.0)
    args = ap.parse_args(argv)
    netlist = json.loads(Path(args.netlist).read_text())
    columns = []
    for route in args.routes:
        late = late_inputs(json.loads(Path(route).read_text()), args.period, netlist)
        rows, unmatched = by_block(late)
        for r in unmatched:
            print(f"{route}: {r} in no block", file=sys.stderr)
        print(f"{route}: {late['late']} of {late['inputs']} register inputs later than {args.period} ns, "
              f"summed {late['excess_ns']} ns, latest {late['worst_ns']} ns", file=sys.stderr)
        columns.append(rows)
    print("| block | late register inputs per route | latest arrival (ns) | summed lateness, mean (ns) |")
    print("| --- | --- | --- | --- |")
    for name in [b for b, _ in BLOCKS] + [OTHER]:
        cells = [c[name] for c in columns]
        if name == OTHER and not any(n for n, _, _ in cells):
            continue
        print(f"| {name} | {' / '.join(str(n) for n, _, _ in cells)} | {max(w for _, w, _ in cells):.2f} | "
              f"{sum(s for _, _, s in cells) / len(cells):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
