"""``make verilog``: write ``build/verilog/<unit>.v`` for every unit from one configuration."""

import argparse
import os
import sys

from rtl.config import ROOT, config_errors, load
from sim.runner import emit_verilog

from .units import discover


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", help="configuration TOML (default: $CONFIG or configs/default.toml)")
    ap.add_argument("--unit", action="append", help="only this unit (repeatable)")
    ap.add_argument("--out", default=str(ROOT / "build" / "verilog"))
    ap.add_argument("--debug", action="store_true", help="a configuration error shows its traceback")
    args = ap.parse_args(argv)
    with config_errors(args.debug) as state:
        cfg = state["cfg"] = load(args.config)
        for name, factory in discover(args.unit).items():
            path = f"{args.out}/{name}.v"
            text = emit_verilog(factory(cfg), name, path)
            print(f"wrote {os.path.relpath(path)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
