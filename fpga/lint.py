"""``make lint`` (HDL half): ``verilator --lint-only -Wall`` on every emitted Verilog file."""

import subprocess
import sys
from pathlib import Path

from rtl.config import ROOT
from sim.toolchain import setup_verilator

# Amaranth's emitted Verilog widens and truncates on purpose and declares every port net it keeps.
WAIVERS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME",
           "-Wno-UNUSEDPARAM", "-Wno-PINCONNECTEMPTY"]


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
