"""``make lint`` (HDL half): ``verilator --lint-only -Wall`` on every emitted Verilog file."""

import subprocess
import sys
from pathlib import Path

from rtl.config import ROOT
from sim.toolchain import setup_verilator

# Amaranth's emitted Verilog widens and truncates on purpose, declares every port net it keeps, and
# gives every register its reset value as an initialiser (`reg x = 0;`, which -Wall calls PROCASSINIT),
# and writes `case` statements without a default for Switch/Array indexing: every combinational signal
# is assigned its default before the case, so an uncovered value keeps that default and never infers a
# latch (CASEINCOMPLETE is noise for this generator).
WAIVERS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME",
           "-Wno-UNUSEDPARAM", "-Wno-PINCONNECTEMPTY", "-Wno-PROCASSINIT", "-Wno-CASEINCOMPLETE"]


def main(argv=None):
    verilator = setup_verilator()
    files = sorted((ROOT / "build" / "verilog").glob("*.v"))
    if not files:
        print("no Verilog in build/verilog: run `make verilog` first", file=sys.stderr)
        return 1
    failed = []
    for f in files:
        cmd = [verilator, "--lint-only", "-Wall", *WAIVERS, "--top-module", f.stem, str(f)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        status = "clean" if r.returncode == 0 and "%Warning" not in r.stderr else "FAILED"
        print(f"verilator --lint-only -Wall {Path(f).relative_to(ROOT)}: {status}")
        if status != "clean":
            print(r.stderr, file=sys.stderr)
            failed.append(f.name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
