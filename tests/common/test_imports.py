"""Imports run one way (STYLE.md "Layers and owners", issue 43):

* a unit in ``rtl/<unit>/`` imports only ``rtl/common``, ``rtl/config.py`` and its own package;
  ``rtl/common`` imports only itself and ``rtl/config.py``;
* only the composing packages (``rtl/netlayer``, ``rtl/nic``) import units;
* nothing in ``rtl`` imports ``sim``, ``tests``, ``bench``, ``formal`` or ``fpga``;
* ``sim`` imports ``rtl`` and itself;
* ``boards`` (board tops) imports ``rtl``, ``sim`` and itself;
* ``tests``, ``bench``, ``formal`` and ``fpga`` import ``rtl`` and ``sim``, never each other (``bench``
  may import ``boards`` too: it measures board tops); a test
  imports from its own test package only (``tests/rma`` never from ``tests/atu``), and the tests of a
  tool package (``tests/fpga``) import the package they test.  ``bench`` scripts share ``bench/_common.py``
  and ``fpga`` imports itself.

The rules are read from every ``.py`` file's parsed ``import`` statements (relative ones resolved), so
they hold for code added later.  :func:`violations` is also run on a small tree that breaks each rule,
so the check itself is shown to fail.
"""

import ast

import pytest

from rtl.config import ROOT

PROJECT = {"rtl", "sim", "tests", "bench", "formal", "fpga", "boards"}
#: packages of ``rtl`` that compose units
COMPOSING = {"netlayer", "nic"}
TREES = ["rtl", "sim", "tests", "bench", "formal", "fpga", "boards"]


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return parts


def imports_of(path, root):
    """Absolute dotted names that ``path`` imports (``from a.b import c`` counts as ``a.b``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = _module_name(path, root)
    if path.name != "__init__.py":
        pkg = pkg[:-1]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                names.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                names.append(node.module)
    return names


def _allowed(parts, target):
    """Whether module ``parts`` (its path under the root, split) may import dotted ``target``."""
    t = target.split(".")
    top = parts[0]
    if top == "bench" and t[0] == "_common":
        return True
    if t[0] not in PROJECT:
        return True                                 # the standard library and third-party packages
    if top == "rtl":
        if t[0] != "rtl":
            return False
        if len(t) == 1 or t[1] in ("common", "config"):
            return True
        if len(parts) < 2 or parts[1] in ("common", "config.py", "__init__.py"):
            return False
        return t[1] == parts[1] or parts[1] in COMPOSING
    if top == "sim":
        return t[0] in ("rtl", "sim")
    if top == "tests":
        if t[0] in ("rtl", "sim"):
            return True
        if t[0] == "tests":
            return len(parts) > 2 and len(t) > 1 and t[1] == parts[1]
        return len(parts) > 2 and t[0] == parts[1]  # tests/fpga tests the fpga package
    if top == "bench":
        return t[0] in ("rtl", "sim", "boards")
    if top == "formal":
        return t[0] in ("rtl", "sim")
    if top == "fpga":
        return t[0] in ("rtl", "sim", "fpga")
    if top == "boards":
        return t[0] in ("rtl", "sim", "boards")
    return False


def violations(root):
    """``["path: imports name"]`` for every import that breaks the rules, under ``root``."""
    found = []
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")) if (root / tree).is_dir() else []:
            parts = list(path.relative_to(root).parts)
            for name in imports_of(path, root):
                if not _allowed(parts, name):
                    found.append(f"{path.relative_to(root)}: imports {name}")
    return found


def test_imports_run_one_way():
    assert violations(ROOT) == []


BROKEN = {
    "rtl/atu/x.py": ("from sim.host import HostModel", "rtl/atu/x.py: imports sim.host"),
    "rtl/rma/y.py": ("from rtl.atu import Atu", "rtl/rma/y.py: imports rtl.atu"),
    "rtl/common/z.py": ("from rtl.htax import Htax", "rtl/common/z.py: imports rtl.htax"),
    "rtl/velo/w.py": ("from ..netport import arbiter", "rtl/velo/w.py: imports rtl.netport"),
    "sim/v.py": ("import tests.rma", "sim/v.py: imports tests.rma"),
    "sim/x.py": ("from boards.ecp5_5g_evn import CONFIG", "sim/x.py: imports boards.ecp5_5g_evn"),
    "bench/u.py": ("from tests.nic.harness import bring_up", "bench/u.py: imports tests.nic.harness"),
    "tests/rma/t.py": ("from tests.atu.unit_harness import run_unit", "tests/rma/t.py: imports tests.atu.unit_harness"),
    "tests/rma/s.py": ("from fpga.report import main", "tests/rma/s.py: imports fpga.report"),
    "formal/r.py": ("from fpga.formal import Proof", "formal/r.py: imports fpga.formal"),
    "fpga/q.py": ("from bench import system", "fpga/q.py: imports bench"),
}
FINE = {
    "rtl/nic/a.py": "from rtl.atu import Atu\nfrom rtl.common.rr import RoundRobin\nfrom rtl.config import load",
    "rtl/rma/b.py": "from .formats import RmaCmd\nfrom rtl.rma.notifier import RmaNotifier\nimport amaranth",
    "sim/tops/c.py": "from rtl.nic import Nic\nfrom ..host import HostModel",
    "tests/rma/d.py": "from tests.rma.tb_system import Node\nfrom .test_model import AMAP",
    "tests/fpga/e.py": "from fpga.report import main",
    "bench/f.py": "from _common import write_bench\nfrom sim.runner import run_cocotb",
    "bench/g.py": "from boards.ecp5_5g_evn import EvnCore",
}


@pytest.mark.parametrize("path", sorted(BROKEN))
def test_a_broken_import_is_reported(tmp_path, path):
    line, expected = BROKEN[path]
    f = tmp_path / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(line + "\n")
    assert violations(tmp_path) == [expected]


def test_allowed_imports_are_not_reported(tmp_path):
    for path, text in FINE.items():
        f = tmp_path / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text + "\n")
    assert violations(tmp_path) == []
