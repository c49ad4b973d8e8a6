"""Where a unit misses its clock target: logic depth and late register inputs, per register group.

``make report`` runs this on every unit's ECP5 netlist and place-and-route report; the command line
prints the same tables for any netlist (``docs/performance.md``, "Reading the timing tables")::

    python -m fpga.timing build/reports/htax_pipelined/htax_pipelined_ecp5.json \\
        --pnr build/reports/htax_pipelined/htax_pipelined_pnr_s1.json --period 5

and ``--trace GROUP`` prints the deepest path into a register group instead, net by net with its LUT
level (the nets' names say which blocks it crosses)::

    python -m fpga.timing build/budget/nic/nic_ecp5.json --trace 'net.xbar.in#.decision.DI'

Both views group the *sequential inputs* (a flip-flop's ``DI``/``M``/``CE``/``LSR``, a block RAM's
address, data and enable inputs, a LUT RAM's write inputs) by register: the cell name without
yosys's ``_TRELLIS_FF_Q...`` suffix, with every number replaced by ``#``, plus the port (digits to
``#`` too), so ``i4_granted_TRELLIS_FF_Q_3`` port ``DI`` counts in ``i#_granted.DI``.

* :func:`logic_depth` (from the ``synth_ecp5`` JSON netlist): the LUT levels in front of each
  sequential input.  A ``LUT4``, a ``CCU2C``'s logic inputs (``A``-``D``) and a LUT RAM read
  (``TRELLIS_DPR16X4`` ``RAD`` -> ``DO``) count one level; the wide-function multiplexers (``PFUMX``,
  ``L6MUX21``) and a carry chain (``CIN`` -> ``COUT``/``S``) count none (they sit in the slice beside
  the LUTs).  Flip-flops and block RAMs (``DP16KD``, synchronous read) start paths at level 0; so does
  any other cell type, whose inputs are not reported.
* :func:`late_inputs` (from ``nextpnr-ecp5 --report --detailed-timing-report``): the sequential
  inputs whose latest arrival exceeds the clock period, their number and their summed lateness (ns
  beyond the period).  Fmax names one path; these two numbers say how much of the design is late.
"""

import argparse
import collections
import json
import re
import sys

__all__ = ["logic_depth", "trace_deepest", "late_inputs", "register_group", "sequential_inputs", "format_tables"]

# input ports that end a path, by cell type (None: every input but the clocks)
_SEQUENTIAL = {
    "TRELLIS_FF": {"DI", "M", "CE", "LSR"},
    "DP16KD": None,
    "TRELLIS_DPR16X4": {"DI", "WAD", "WRE"},
}
_CLOCKS = {"CLK", "CLKA", "CLKB", "WCK"}
# combinational cells: {output port: [(input port, levels)]}; ports named as in yosys's ECP5 cells
_COMB = {
    "LUT4": lambda out: [(p, 1) for p in "ABCD"],
    "PFUMX": lambda out: [("ALUT", 0), ("BLUT", 0), ("C0", 0)],
    "L6MUX21": lambda out: [("D0", 0), ("D1", 0), ("SD", 0)],
    "CCU2C": lambda out: [(p + k, 1) for k in "01" for p in "ABCD"] + [("CIN", 0)],
    "TRELLIS_DPR16X4": lambda out: [("RAD", 1)] if out == "DO" else [],
}


def register_group(cell, port):
    """The group name of a sequential input: ``i4_granted_TRELLIS_FF_Q_3``, ``DI`` -> ``i#_granted.DI``."""
    name = re.sub(r"_TRELLIS_FF_Q.*", "", cell.lstrip("\\"))
    return re.sub(r"\d+", "#", name) + "." + re.sub(r"\d+", "#", port)


def _top(netlist):
    # yosys writes the attribute as a binary string ("000...01") or a number
    tops = [m for m in netlist["modules"].values() if str(m.get("attributes", {}).get("top", 0)).strip("0")]
    if len(tops) != 1:
        raise ValueError(f"netlist has {len(tops)} top modules (expected one; run yosys with -top)")
    return tops[0]


def _base_port(port):
    """``ADA13`` -> ``ADA``, ``DI0`` -> ``DI``, ``WAD3`` -> ``WAD``."""
    return re.sub(r"\d+$", "", port)


def sequential_inputs(netlist):
    """``{(cell, port): [bits]}`` of every sequential input of the top module (see module docstring)."""
    result = {}
    for name, cell in _top(netlist)["cells"].items():
        kind = cell["type"]
        if kind not in _SEQUENTIAL:
            continue
        ports = _SEQUENTIAL[kind]
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) != "input" or port in _CLOCKS:
                continue
            if ports is None or _base_port(port) in ports:
                result[(name, port)] = bits
    return result


def _levels(netlist):
    """``(level, fanin, driver)``: the LUT level of every net bit in front of a sequential input, the
    fan-in function (bit -> ``[(bit, cost)]``) and ``{bit: (cell, port)}`` of the bits' drivers."""
    cells = _top(netlist)["cells"]
    driver = {}
    for name, cell in cells.items():
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "output":
                for b in bits:
                    if isinstance(b, int):
                        driver[b] = (name, port)

    def fanin(bit):
        if not isinstance(bit, int) or bit not in driver:
            return []
        name, port = driver[bit]
        cell = cells[name]
        comb = _COMB.get(cell["type"])
        if comb is None or (cell["type"] == "TRELLIS_DPR16X4" and port != "DO"):
            return []                                     # a path starts here
        conns = cell["connections"]
        return [(b, cost) for p, cost in comb(port) for b in conns.get(p, []) if isinstance(b, int)]

    level = {}
    for bits in sequential_inputs(netlist).values():
        for start in bits:
            stack, on_path = [start], set()
            while stack:
                b = stack[-1]
                if b in level:
                    stack.pop()
                    on_path.discard(b)
                    continue
                deps = fanin(b)
                todo = [d for d, _ in deps if d not in level]
                if todo:
                    if b in on_path:
                        raise ValueError(f"combinational loop through {driver[b][0]}")
                    on_path.add(b)
                    stack.extend(todo)
                    continue
                level[b] = max((level[d] + cost for d, cost in deps), default=0)
                stack.pop()
                on_path.discard(b)
    return level, fanin, driver


def logic_depth(netlist):
    """LUT levels in front of every sequential input of a ``synth_ecp5`` JSON netlist (a dict).

    Returns ``{"histogram": {levels: inputs}, "max_levels": int, "groups": [{"register", "inputs",
    "levels", "at_max"}, ...]}``, the groups deepest first (then largest).  ``inputs`` counts bits,
    ``at_max`` how many of them are at the group's deepest level.  Raises ``ValueError`` on a
    combinational loop.
    """
    level, _, _ = _levels(netlist)
    groups = collections.defaultdict(list)
    hist = collections.Counter()
    for (cell, port), bits in sequential_inputs(netlist).items():
        for b in bits:
            if not isinstance(b, int):
                continue                                  # tied to a constant
            v = level.get(b, 0)
            hist[v] += 1
            groups[register_group(cell, port)].append(v)
    rows = [{"register": k, "inputs": len(v), "levels": max(v), "at_max": v.count(max(v))}
            for k, v in groups.items()]
    rows.sort(key=lambda r: (-r["levels"], -r["inputs"], r["register"]))
    return {"histogram": dict(sorted(hist.items())), "max_levels": max(hist, default=0), "groups": rows}


def _bit_names(netlist):
    """``{bit: name}``: the shortest user-visible net name of each bit (``name[i]`` for a vector)."""
    names = {}
    for name, net in _top(netlist).get("netnames", {}).items():
        if net.get("hide_name"):
            continue
        bits = net["bits"]
        for i, b in enumerate(bits):
            label = name if len(bits) == 1 else f"{name}[{i}]"
            if isinstance(b, int) and (b not in names or len(label) < len(names[b])):
                names[b] = label
    return names


def trace_deepest(netlist, group):
    """The deepest path into the register group ``group`` (as :func:`logic_depth` names it), from its
    start to the register input: ``[(level, net name or driver cell), ...]``.  Raises ``KeyError`` if
    no sequential input is in that group."""
    level, fanin, driver = _levels(netlist)
    ends = [b for (cell, port), bits in sequential_inputs(netlist).items()
            if register_group(cell, port) == group for b in bits if isinstance(b, int)]
    if not ends:
        raise KeyError(f"no register input in group {group!r}")
    names = _bit_names(netlist)
    b = max(ends, key=lambda e: level.get(e, 0))
    path = []
    while True:
        cell, port = driver.get(b, ("?", "?"))
        path.append((level.get(b, 0), names.get(b) or f"{cell}.{port}"))
        deps = [(d, cost) for d, cost in fanin(b) if level.get(d, 0) + cost == level.get(b, 0)]
        if not deps:
            return path[::-1]
        b = deps[0][0]


def late_inputs(report, period_ns, netlist):
    """The sequential inputs of ``netlist`` whose latest arrival in a nextpnr JSON ``report`` (run with
    ``--detailed-timing-report``) exceeds ``period_ns``.

    Returns ``{"period_ns", "inputs", "late", "excess_ns", "worst_ns", "groups": [{"register", "late",
    "worst_ns", "excess_ns"}, ...]}`` (groups by summed lateness, largest first).  ``inputs`` is the
    number of sequential inputs the report times.  Raises ``ValueError`` when the report has no
    detailed net timings.
    """
    if "detailed_net_timings" not in report:
        raise ValueError("the nextpnr report has no detailed_net_timings (run with --detailed-timing-report)")
    seq = {(c.lstrip("\\"), p) for c, p in sequential_inputs(netlist)}
    timed = late = 0
    excess = worst = 0.0
    groups = collections.defaultdict(list)
    for net in report["detailed_net_timings"]:
        for ep in net["endpoints"]:
            key = (ep["cell"].lstrip("\\"), ep["port"])
            if key not in seq:
                continue
            timed += 1
            arrival = max(ep["delay"])
            worst = max(worst, arrival)
            if arrival > period_ns:
                late += 1
                excess += arrival - period_ns
                groups[register_group(*key)].append(arrival)
    rows = [{"register": k, "late": len(v), "worst_ns": round(max(v), 2),
             "excess_ns": round(sum(a - period_ns for a in v), 2)} for k, v in groups.items()]
    rows.sort(key=lambda r: (-r["excess_ns"], r["register"]))
    return {"period_ns": period_ns, "inputs": timed, "late": late, "excess_ns": round(excess, 2),
            "worst_ns": round(worst, 2), "groups": rows}


def format_tables(depth, late=None, top=20):
    """Markdown tables of :func:`logic_depth` and of :func:`late_inputs` (either may be ``None``),
    ``top`` groups each."""
    parts = []
    if depth is not None:
        rows = [f"| `{r['register']}` | {r['inputs']} | {r['levels']} | {r['at_max']} |"
                for r in depth["groups"][:top]]
        hist = ", ".join(f"{k}: {v}" for k, v in depth["histogram"].items())
        parts.append("\n".join([
            f"LUT levels in front of sequential inputs: {hist}",
            "", "| register input | bits | LUT levels (max) | bits at max |", "| --- | --- | --- | --- |", *rows]))
    if late is not None:
        rows = [f"| `{r['register']}` | {r['late']} | {r['worst_ns']} | {r['excess_ns']} |"
                for r in late["groups"][:top]]
        parts.append("\n".join([
            f"Sequential inputs later than {late['period_ns']:g} ns: {late['late']} of {late['inputs']}, "
            f"summed lateness {late['excess_ns']} ns, latest {late['worst_ns']} ns",
            "", "| register input | late bits | latest ns | summed lateness ns |", "| --- | --- | --- | --- |", *rows]))
    return "\n\n".join(parts) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("netlist", help="synth_ecp5 JSON netlist")
    ap.add_argument("--pnr", help="nextpnr-ecp5 --report JSON written with --detailed-timing-report")
    ap.add_argument("--period", type=float, default=5.0, help="clock period in ns (default 5: 200 MHz)")
    ap.add_argument("--top", type=int, default=20, help="groups per table (default 20)")
    ap.add_argument("--trace", metavar="GROUP", action="append",
                    help="print the deepest path into this register group instead (repeatable)")
    args = ap.parse_args(argv)
    with open(args.netlist) as f:
        netlist = json.load(f)
    for group in args.trace or []:
        print(f"{group}:")
        for lv, name in trace_deepest(netlist, group):
            print(f"  {lv:3d}  {name}")
    if args.trace:
        return 0
    late = None
    if args.pnr:
        with open(args.pnr) as f:
            late = late_inputs(json.load(f), args.period, netlist)
    print(format_tables(logic_depth(netlist), late, args.top), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
