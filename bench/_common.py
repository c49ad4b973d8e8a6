"""Helpers for ``bench/<unit>.py`` scripts: where results go and how they are written."""

import json
import platform

from rtl.config import ROOT
from sim.provenance import provenance

__all__ = ["BENCH_DIR", "DOCS_DIR", "write_bench"]

BENCH_DIR = ROOT / "build" / "bench"
DOCS_DIR = ROOT / "docs"


#: the five counts of table 9-1, in its column order
SUB = ("dma_reads", "atu_translations", "net_trips", "dma_writes", "pio_writes")
#: table 9-1: (DMA reads, ATU translations, network trips, DMA writes, PIO writes) and the measured
#: latency in ns per operation.  The table's two immediate-put rows are swapped against its text
#: ("with a completer notification, 200 ns additional latency ... from the additional DMA write"):
#: they are given here as the text describes them.
TABLE_9_1 = {
    "velo": ((0, 0, 1, 1, 1), 1300),
    "notification_put": ((0, 0, 1, 1, 1), 1400),
    "immediate_put": ((0, 1, 1, 1, 1), 1470),
    "immediate_put_notif": ((0, 1, 1, 2, 1), 1670),
    "put": ((1, 2, 1, 1, 1), 1990),
    "put_notif": ((1, 2, 1, 2, 1), 2100),
    "get": ((1, 2, 2, 2, 1), 2820),
    "lock": ((1, 0, 2, 2, 1), 2700),
}


def write_bench(unit, metrics, config, notes=None):
    """Write ``build/bench/<unit>.json``: ``metrics`` (name -> number, or name -> {name -> number}, one
    table row in ``docs/performance.md``) plus ``config``.

    ``config`` also records the host, the date, the commit and whether the tree was dirty
    (:func:`sim.provenance.provenance`), and the configuration file (``$CONFIG``).  ``notes``
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
