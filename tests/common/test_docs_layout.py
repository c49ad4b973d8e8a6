"""The bit-layout tables in docs/architecture.md match the structs the RTL uses."""

import importlib
import re

from rtl.config import ROOT
from sim.layout import fields

TABLE = re.compile(r"<!-- layout: (\S+)(?: skip=(\S+))? -->\n(.*?)<!-- end layout -->", re.S)


def expected_rows(path, skip):
    mod, name = path.rsplit(".", 1)
    layout = getattr(importlib.import_module(mod), name)
    rows = []
    for n, (o, w) in sorted(fields(layout).items(), key=lambda x: x[1][0]):
        if skip and n.startswith(skip):
            continue
        rows.append(f"| {o + w - 1}:{o} | `{n}` | {w} |")
    return rows


def test_architecture_tables_match_structs():
    text = (ROOT / "docs" / "architecture.md").read_text()
    tables = TABLE.findall(text)
    assert len(tables) >= 7
    for path, skip, body in tables:
        rows = [ln for ln in body.splitlines() if ln.startswith("| ") and not ln.startswith(("| bits", "| ---"))]
        assert rows == expected_rows(path, skip), f"docs/architecture.md table for {path} is out of date"
