# amaranth: UnusedElaboratable=no
"""docs/atu.md states the design: its port table lists every port of ``atu.v`` with direction and width,
and its bit-layout tables match the structs."""

import re

from amaranth.hdl import Value

from rtl.atu import Atu
from rtl.config import ROOT
from sim.layout import LAYOUT_TABLE as TABLE
from sim.layout import layout_rows as expected_rows

DOC = ROOT / "docs" / "atu.md"


def _port_table(text):
    """``{port: (direction, width text)}`` from the table under "## Interface"."""
    section = text.split("## Interface", 1)[1].split("\n## ", 1)[0]
    ports = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 4 or cells[1] not in ("in", "out"):
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            ports[name] = (cells[1], cells[2])
    return ports


def test_port_table_matches_atu_v():
    atu = Atu()
    symbols = {"n": atu.nla_bits, "g": atu.formats.gat_bits}
    doc = _port_table(DOC.read_text())
    ports = {"clk": ("in", 1), "rst": ("in", 1)}
    for path, member, value in atu.signature.flatten(atu):
        ports["__".join(path)] = ("in" if member.flow.name == "In" else "out", len(Value.cast(value)))
    assert set(doc) == set(ports)
    for name, (direction, width) in ports.items():
        d, w = doc[name]
        assert (d, int(symbols.get(w.strip("`"), w))) == (direction, width), name


def test_layout_tables_match_structs():
    tables = TABLE.findall(DOC.read_text())
    assert len(tables) == 6
    for path, skip, body in tables:
        rows = [ln for ln in body.splitlines() if ln.startswith("| ") and not ln.startswith(("| bits", "| ---"))]
        assert rows == expected_rows(path, skip), f"docs/atu.md table for {path} is out of date"
