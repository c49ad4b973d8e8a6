"""The tables in docs/ that describe the RTL match it: bit layouts against the structs, enum tables
against the enums, and Verilog port tables against the module `make verilog` emits."""

import gc
import importlib
import inspect
import re
import warnings

import pytest
from amaranth.back import verilog
from amaranth.hdl import Value
from amaranth.lib import enum
from amaranth.lib.wiring import In

from fpga.units import discover
from rtl.config import ROOT, load
from sim.layout import LAYOUT_TABLE as TABLE
from sim.layout import layout_rows as expected_rows

ENUM_TABLE = re.compile(r"<!-- enum: (\S+) -->\n(.*?)<!-- end enum -->", re.S)
PORT_TABLE = re.compile(r"<!-- ports: (\S+) -->\n(.*?)<!-- end ports -->", re.S)
DOCS = sorted((ROOT / "docs").glob("*.md"))
#: modules whose enums describe something on a port or on the wire
ENUM_MODULES = ["rtl.common.htax", "rtl.common.ats", "rtl.common.net", "rtl.common.phit", "rtl.link.params",
                "rtl.rma.formats"]


def table_rows(body):
    """The cells of a Markdown table's body rows (header and rule skipped)."""
    lines = [ln for ln in body.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def find(pattern):
    return [(doc.name, *m) for doc in DOCS for m in pattern.findall(doc.read_text())]


def test_architecture_tables_match_structs():
    text = (ROOT / "docs" / "architecture.md").read_text()
    tables = TABLE.findall(text)
    assert len(tables) >= 7
    for path, skip, body in tables:
        rows = [ln for ln in body.splitlines() if ln.startswith("| ") and not ln.startswith(("| bits", "| ---"))]
        assert rows == expected_rows(path, skip), f"docs/architecture.md table for {path} is out of date"


def _resolve(path):
    mod, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(mod), name)


def test_enum_tables_match_enums():
    tables = find(ENUM_TABLE)
    assert tables
    for doc, path, body in tables:
        rows = [(int(r[0]), r[1]) for r in table_rows(body)]
        assert rows == [(m.value, f"`{m.name}`") for m in _resolve(path)], f"docs/{doc}: enum table {path}"


def test_every_port_enum_has_a_table():
    listed = {path for doc, path, _ in find(ENUM_TABLE) if doc == "architecture.md"}
    defined = {f"{name}.{cls.__name__}" for name in ENUM_MODULES
               for cls in vars(importlib.import_module(name)).values()
               if inspect.isclass(cls) and issubclass(cls, enum.Enum) and cls.__module__ == name}
    assert len(defined) >= 9
    assert defined <= listed, f"enums without a table in docs/architecture.md: {sorted(defined - listed)}"


def emitted_ports(unit):
    """``{port: (direction, width)}`` of the top module that ``make verilog`` writes for ``unit``."""
    text = verilog.convert(discover([unit])[unit](load()), name=unit, emit_src=False)
    top = text[text.index(f"module {unit}("):]
    top = top[:top.index("endmodule")]
    ports = {}
    for direction, msb, lsb, name in re.findall(r"^\s*(input|output) (?:\[(\d+):(\d+)\] )?(\w+);", top, re.M):
        ports[name] = (direction, int(msb) - int(lsb) + 1 if msb else 1)
    return ports


def signature_ports(unit):
    """The same ports from the unit's signature, as Amaranth's Verilog back end names them (members
    joined with ``__``) plus the ``sync`` domain's ``clk`` and ``rst``: no conversion, so the 378k-line
    NIC costs nothing.  ``test_signature_ports_are_the_emitted_ports`` shows the two agree."""
    ports = {"clk": ("input", 1), "rst": ("input", 1)}
    with warnings.catch_warnings():             # the component is never elaborated, on purpose
        warnings.filterwarnings("ignore", message=".* created but never used")
        component = discover([unit])[unit](load())
        for path, member, value in component.signature.flatten(component):
            ports["__".join(map(str, path))] = ("input" if member.flow == In else "output", len(Value.cast(value)))
        del component
        gc.collect()
    return ports


@pytest.mark.parametrize("unit", ["link", "velo"])
def test_signature_ports_are_the_emitted_ports(unit):
    assert signature_ports(unit) == emitted_ports(unit)


@pytest.mark.parametrize("doc,unit,body", find(PORT_TABLE), ids=[f"{d}:{u}" for d, u, _ in find(PORT_TABLE)])
def test_port_tables_match_emitted_verilog(doc, unit, body):
    documented = {r[0].strip("`"): (r[1], int(r[2])) for r in table_rows(body)}
    assert documented == signature_ports(unit), f"docs/{doc}: port table of {unit}.v"


def test_port_tables_exist():
    assert {unit for _, unit, _ in find(PORT_TABLE)} >= {"link"}
