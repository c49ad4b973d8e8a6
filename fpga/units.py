"""Discover the NIC's units: every ``rtl/<package>/__init__.py`` that defines ``UNITS``.

``UNITS`` maps a unit name to a factory ``factory(cfg) -> wiring.Component`` that elaborates the unit
from the configuration (:mod:`rtl.config`).  ``make verilog``, ``make lint`` and ``make report`` walk
this registry, so a new unit appears in every flow by adding ``UNITS`` to its package.
"""

import importlib

from rtl.config import ROOT

__all__ = ["discover"]


def discover(only=None):
    """``{name: factory}`` for every unit (or the names in ``only``), in package order."""
    units = {}
    for pkg in sorted((ROOT / "rtl").iterdir()):
        if not (pkg / "__init__.py").exists():
            continue
        mod = importlib.import_module(f"rtl.{pkg.name}")
        for name, factory in getattr(mod, "UNITS", {}).items():
            if name in units:
                raise ValueError(f"unit name {name!r} is defined twice (rtl.{pkg.name})")
            units[name] = factory
    if only:
        missing = sorted(set(only) - set(units))
        if missing:
            raise SystemExit(f"unknown unit(s) {', '.join(missing)}; known: {', '.join(units)}")
        units = {n: f for n, f in units.items() if n in only}
    return units
