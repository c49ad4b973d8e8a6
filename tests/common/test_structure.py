"""The structure rules of STYLE.md that code review alone would let drift (issue 43):

* no function in ``rtl/`` or ``sim/`` (``elaborate`` or a helper) is longer than about 150 lines
  (:data:`MAX_LINES` allows 160, docstring and blank lines included): a block that needs more is
  several blocks joined by ``connect``;
* every ``wiring.Component`` in ``rtl/`` and ``sim/tops/`` has a class docstring with a numpydoc
  ``Members`` section (its ports).

Each check is also run on a small broken example, so it is shown to fail.
"""

import ast
import importlib
import inspect
import pkgutil

from amaranth.lib import wiring

import rtl
import sim.tops
from rtl.config import ROOT

MAX_LINES = 160


def long_functions(paths, limit=MAX_LINES):
    """``["path:line name (n lines)"]`` for every function in the files ``paths`` over ``limit`` lines."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:"
                                 f"{node.lineno} {node.name} ({n} lines)")
    return found


def undocumented(classes):
    """Names of the component classes whose own docstring has no ``Members`` section."""
    return sorted(f"{c.__module__}.{c.__qualname__}" for c in classes
                  if "\nMembers\n-------\n" not in "\n" + inspect.cleandoc(c.__dict__.get("__doc__") or "") + "\n")


def components():
    """Every ``wiring.Component`` subclass defined in ``rtl`` or ``sim.tops``."""
    found = set()
    for pkg in (rtl, sim.tops):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name == "rtl.regs.exporter":        # a PeakRDL plugin: imports peakrdl, no gateware
                continue
            mod = importlib.import_module(info.name)
            found |= {c for c in vars(mod).values() if inspect.isclass(c) and issubclass(c, wiring.Component)
                      and c.__module__ == mod.__name__}
    return found


def test_no_long_functions():
    paths = sorted((ROOT / "rtl").rglob("*.py")) + sorted((ROOT / "sim").rglob("*.py"))
    assert long_functions(paths) == []


def test_every_component_documents_its_members():
    classes = components()
    assert len(classes) > 50
    assert undocumented(classes) == []


def test_the_checks_fail_on_a_broken_example(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    path = tmp_path / "long.py"
    path.write_text(f"def elaborate(self, platform):\n{body}\n")
    assert long_functions([path]) == [f"{path}:1 elaborate ({MAX_LINES + 1} lines)"]

    class Bare(wiring.Component):
        """A component that says nothing about its ports."""

    class Documented(wiring.Component):
        """A component.

        Members
        -------
        o : Out(1)
        """

    assert undocumented({Bare, Documented}) == [f"{__name__}.{Bare.__qualname__}"]
