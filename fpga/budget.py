"""``make budget``: the LUT levels in front of every register input of every unit, and the logic cells
and block RAM it packs into, without place and route.

Issue 45, step 4: at the 156.25 MHz core clock (6.4 ns) a register stage on ECP5 -8 gets at most 7 LUT
levels (a placed LUT4 with the routing into it costs most of a nanosecond; clock-to-out and setup take
the rest of the period).  This check runs ``synth_ecp5`` and packs the netlist (``nextpnr-ecp5
--pack-only``, a second: the logic cells and block RAM the unit takes on the LFE5UM5G-85F, the fit
figure) but does not place and route (under a minute for most units, about 15 minutes for the default
NIC on one core); it measures the levels with
:func:`fpga.timing.logic_depth` and lists every register group with an input above the budget,
deepest first, so a regression shows without the hours of a NIC place and route.  The levels are a
proxy: routing decides the clock, and ``make report`` measures it.

For each unit (``fpga.units``, or ``--unit``) from one configuration it writes
``build/budget/<unit>/`` (Verilog, netlist, synthesis log), and ``build/budget/budget.json`` and
``budget.md`` with every unit measured so far: its deepest level, its register input bits above the
budget, and those groups, and its packed logic cells and block RAM.  ``--check`` exits with status 1
when a unit it measured has an input above the budget.

    make budget                       # every unit of configs/default.toml
    make budget UNIT=xbar LEVELS=7    # one unit; LEVELS defaults to 7
"""

import argparse
import json
import sys

from rtl.config import ROOT, config_errors, load
from sim.provenance import provenance
from sim.runner import emit_verilog

from .report import pack_ecp5, synth_ecp5
from .timing import logic_depth
from .units import discover

__all__ = ["BUDGET_LEVELS", "over_budget", "budget", "format_budget"]

BUDGET = ROOT / "build" / "budget"
#: LUT levels per register stage at 156.25 MHz on ECP5 -8 (issue 45)
BUDGET_LEVELS = 7


def over_budget(depth, levels=BUDGET_LEVELS):
    """The register groups of :func:`fpga.timing.logic_depth`'s result with an input deeper than
    ``levels``, deepest first."""
    if levels < 0:
        raise ValueError(f"levels must be at least 0, not {levels}")
    return [g for g in depth["groups"] if g["levels"] > levels]


def budget(name, component, workdir, levels=BUDGET_LEVELS):
    """Synthesize ``component`` as unit ``name`` in ``workdir`` and measure it against ``levels``:
    ``{"unit", "levels_max", "histogram", "inputs", "inputs_over", "groups_over", "lut4", "ff",
    "synth_s", "fit"}`` (``inputs_over``: register input bits deeper than ``levels``; ``fit``: the
    packed netlist's ``{cell: [used, available, percent]}`` on the LFE5UM5G-85F,
    :func:`fpga.report.pack_ecp5`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    emit_verilog(component, name, workdir / f"{name}.v")
    t, cells = synth_ecp5(name, workdir)
    fit = pack_ecp5(name, workdir)
    depth = logic_depth(json.loads((workdir / f"{name}_ecp5.json").read_text()))
    hist = depth["histogram"]
    return {
        "unit": name, "budget_levels": levels, "levels_max": depth["max_levels"],
        "histogram": {str(k): v for k, v in hist.items()},
        "inputs": sum(hist.values()), "inputs_over": sum(n for k, n in hist.items() if k > levels),
        "groups_over": over_budget(depth, levels),
        "lut4": cells.get("LUT4", 0), "ff": cells.get("TRELLIS_FF", 0), "synth_s": round(t, 1),
        "fit": fit,
    }


def format_budget(results, top=20):
    """Markdown: one summary row per unit, then per unit over budget its ``top`` deepest groups."""
    lines = ["# LUT levels against the register-stage budget and packed size (`make budget`, no place and "
             "route)", "",
             "| unit | budget | deepest | register input bits | bits over budget | groups over budget "
             "| LUT4 | FF | logic cells (packed, % of 85F) | DP16KD (%) | commit |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results.values():
        commit = r.get("commit", "?") + (" (dirty)" if r.get("dirty") else "")
        fit = r.get("fit", {})
        cells = "{0} ({2} %)".format(*fit["TRELLIS_COMB"]) if "TRELLIS_COMB" in fit else "-"
        bram = "{0} ({2} %)".format(*fit["DP16KD"]) if "DP16KD" in fit else "0"
        lines.append(f"| {r['unit']} | {r['budget_levels']} | {r['levels_max']} | {r['inputs']} | "
                     f"{r['inputs_over']} | {len(r['groups_over'])} | {r['lut4']} | {r['ff']} | {cells} | {bram} "
                     f"| {commit} |")
    for r in results.values():
        if r["groups_over"]:
            lines += ["", f"## {r['unit']}: register inputs above {r['budget_levels']} LUT levels", "",
                      "| register input | bits | LUT levels (max) | bits at max |", "| --- | --- | --- | --- |"]
            lines += [f"| `{g['register']}` | {g['inputs']} | {g['levels']} | {g['at_max']} |"
                      for g in r["groups_over"][:top]]
            if len(r["groups_over"]) > top:
                lines.append(f"| ... {len(r['groups_over']) - top} more in budget.json | | | |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="configuration TOML (default: $CONFIG or configs/default.toml)")
    ap.add_argument("--unit", action="append", help="only this unit (repeatable)")
    ap.add_argument("--levels", type=int, default=BUDGET_LEVELS, help="LUT levels allowed (default 7)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a unit has an input above the budget")
    ap.add_argument("--debug", action="store_true", help="a configuration error shows its traceback")
    args = ap.parse_args(argv)
    if args.levels < 0:
        ap.error(f"--levels must be at least 0, not {args.levels}")
    with config_errors(args.debug) as state:
        cfg = state["cfg"] = load(args.config)
        units = {name: factory(cfg) for name, factory in discover(args.unit).items()}
    out = BUDGET / "budget.json"
    results = json.loads(out.read_text()) if out.exists() else {}
    failed = []
    for name, component in units.items():
        print(f"{name}: synth_ecp5 ...", flush=True)
        with config_errors(args.debug) as state:
            state["cfg"] = cfg
            r = budget(name, component, BUDGET / name, args.levels)
        prov = provenance(args.config)
        results[name] = {**r, "config": prov.pop("config_file"), **prov}
        print(f"{name}: deepest {r['levels_max']} LUT levels, {r['inputs_over']} of {r['inputs']} register "
              f"input bits in {len(r['groups_over'])} groups above {args.levels}")
        if r["inputs_over"]:
            failed.append(name)
    BUDGET.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    text = format_budget(results)
    (BUDGET / "budget.md").write_text(text)
    print(text)
    if args.check and failed:
        print(f"above the budget of {args.levels} LUT levels: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
