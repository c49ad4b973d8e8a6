"""Helpers for ``bench/<unit>.py`` scripts: where results go and how they are written."""

import json
import platform

from fpga.provenance import provenance
from rtl.config import ROOT

__all__ = ["BENCH_DIR", "DOCS_DIR", "write_bench"]

BENCH_DIR = ROOT / "build" / "bench"
DOCS_DIR = ROOT / "docs"


def write_bench(unit, metrics, config, notes=None):
    """Write ``build/bench/<unit>.json``: ``metrics`` (name -> number, or name -> {name -> number}, one
    table row in ``docs/performance.md``) plus ``config``.

    ``config`` also records the host, the date, the commit and whether the tree was dirty
    (:func:`fpga.provenance.provenance`), and the configuration file (``$CONFIG``).  ``notes``
    (name -> text), if given, is written as ``notes``: why a figure differs from the dissertation's."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    for k, v in metrics.items():
        if not (number(v) or isinstance(v, dict) and v and all(number(x) for x in v.values())):
            raise TypeError(f"metric {k!r} must be a number or an object of numbers, not {v!r}")
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    out = dict(metrics)
    out["config"] = {**config, "host": platform.node(), **provenance()}
    if notes:
        out["notes"] = {k: str(v) for k, v in notes.items()}
    path = BENCH_DIR / f"{unit}.json"
    # top-level keys sorted; an object metric keeps its order (the order of its row in the docs)
    path.write_text(json.dumps({k: out[k] for k in sorted(out)}, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")
    for k, v in sorted(metrics.items()):
        print(f"  {k} = {v}")
    return path
