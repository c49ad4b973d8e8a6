"""``make formal``: run the SymbiYosys proofs that ``formal/<unit>.py`` files define.

Each such file defines ``proofs(cfg)``, yielding :class:`sim.formal.Proof` objects, which
:func:`sim.formal.run_proof` runs.  Designs are elaborated with
the platform ``"formal"``, so blocks add the invariants they state for proofs.  A proof's ``top`` is an
Amaranth elaboratable that instantiates the unit, drives its inputs from ``AnySeq``/``AnyConst`` with
``Assume`` and states ``Assert`` properties; it uses the ``sync`` domain, and the harness holds reset
high in the first cycle.  Proofs run with ``smtbmc yices`` (k-induction for ``mode="prove"``).
"""

import argparse
import importlib.util
import sys

from rtl.config import ROOT, load
from sim.formal import Proof, run_proof

__all__ = ["Proof", "run_proof", "main"]


def _modules(only=None):
    """``(unit, module or the exception that importing it raised)`` for each ``formal/<unit>.py``."""
    for path in sorted((ROOT / "formal").glob("*.py")):
        if path.name.startswith("_") or (only and path.stem not in only):
            continue
        spec = importlib.util.spec_from_file_location(f"formal_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:      # one broken proof file must not hide the others' results
            yield path.stem, e
            continue
        yield path.stem, mod


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config")
    ap.add_argument("--unit", action="append", help="only formal/<unit>.py (repeatable)")
    ap.add_argument("--proof", action="append", help="only proofs with this name (repeatable)")
    args = ap.parse_args(argv)
    cfg = load(args.config)
    failed = []
    count = 0
    for unit, mod in _modules(args.unit):
        if isinstance(mod, Exception):
            print(f"{unit}: FAIL (formal/{unit}.py does not load: {mod!r})")
            failed.append(unit)
            continue
        for proof in mod.proofs(cfg):
            if args.proof and proof.name not in args.proof:
                continue
            count += 1
            ok, dt, tail = run_proof(proof, ROOT / "build" / "formal" / unit / proof.name)
            print(f"{unit}/{proof.name}: {'PASS' if ok else 'FAIL'} ({proof.mode}, depth {proof.depth}, "
                  f"{dt:.1f} s)")
            if not ok:
                print(tail)
                failed.append(f"{unit}/{proof.name}")
    print(f"{count - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not count else 0


if __name__ == "__main__":
    sys.exit(main())
