"""Discover the NIC's units: every ``rtl/<package>/__init__.py`` that defines ``UNITS``.

``UNITS`` maps a unit name to a factory ``factory(cfg) -> wiring.Component`` that elaborates the unit
from the configuration (:mod:`rtl.config`).  ``make verilog``, ``make lint`` and ``make report`` walk
this registry, so a new unit appears in every flow by adding ``UNITS`` to its package.

Harness units (test equipment under ``sim/tops/`` with a ``UNITS`` of their own, such as the host
model's scratch target) are not part of the NIC: ``make verilog`` leaves them out; ``make report``
takes them too (``harness=True``), so their resources stay measured.
"""

import importlib

from rtl.config import ROOT

__all__ = ["discover", "HARNESS_MODULES"]

#: harness modules that define ``UNITS``
HARNESS_MODULES = ["sim.tops.scratch"]


def discover(only=None, *, harness=False):
    """``{name: factory}`` for every unit (or the names in ``only``), in package order; with
    ``harness``, the harness units after them."""
    units = {}
    modules = [f"rtl.{pkg.name}" for pkg in sorted((ROOT / "rtl").iterdir()) if (pkg / "__init__.py").exists()]
    for modname in modules + (HARNESS_MODULES if harness else []):
        mod = importlib.import_module(modname)
        for name, factory in getattr(mod, "UNITS", {}).items():
            if name in units:
                raise ValueError(f"unit name {name!r} is defined twice ({modname})")
            units[name] = factory
    if only:
        missing = sorted(set(only) - set(units))
        if missing:
            raise SystemExit(f"unknown unit(s) {', '.join(missing)}; known: {', '.join(units)}")
        units = {n: f for n, f in units.items() if n in only}
    return units
