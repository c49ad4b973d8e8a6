"""No testbench or bench reads or builds an HTAX beat at hand-written bit positions: they go through
:class:`rtl.common.htax.HtaxBeat` (``sim.amsim``, ``sim.htax_packet.beat_field``/``beat_replace``,
``sim.layout.pack``).  The scan parses every Python file under ``tests/`` and ``bench/`` and flags

* a shift (``>>``, ``<<``) by a literal that is the position of an HtaxBeat field above the data word
  (``vc`` 92, ``first`` 94, ``last`` 95, the header's ``length``/``first_be``/``last_be``, ...);
* a bit index or slice starting at such a position (``payload[92:94]``, ``beat[95]``);
* a shift by a header field's position followed by a mask of that field's width
  (``(beat >> 7) & 0xF``, the ``src``).

The positions come from the layout itself, so a new field is covered without editing this test."""

import ast
from pathlib import Path

import pytest

from rtl.common.htax import DATA_BITS, HtaxBeat
from sim.layout import fields

ROOT = Path(__file__).resolve().parents[2]
_NAMED = {name: f for name, f in fields(HtaxBeat).items() if not any(p.startswith("_") for p in name.split("."))}
#: positions no data word reaches: a literal shift by one of these is an HTAX beat offset
HIGH = {off: name for name, (off, width) in _NAMED.items() if off >= DATA_BITS}
#: (position, mask) of every header field but the first: "(beat >> off) & mask" reads that field
PAIRS = {(off, (1 << width) - 1): name for name, (off, width) in _NAMED.items()
         if name.startswith("word.header.") and off > 0 and name != "word.header.body.ats.raw"}


def _int(node):
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def literal_offsets(source, filename="<string>"):
    """``[(line, text, field)]`` of every hand-written HTAX beat offset in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.RShift, ast.LShift)):
            off = _int(node.right)
            if off in HIGH:
                found.append((node.lineno, ast.unparse(node), HIGH[off]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            for shifted, mask in ((node.left, node.right), (node.right, node.left)):
                if isinstance(shifted, ast.BinOp) and isinstance(shifted.op, ast.RShift):
                    key = (_int(shifted.right), _int(mask))
                    if key in PAIRS:
                        found.append((node.lineno, ast.unparse(node), PAIRS[key]))
        elif isinstance(node, ast.Subscript):
            idx = node.slice.lower if isinstance(node.slice, ast.Slice) else node.slice
            off = _int(idx) if idx is not None else None
            if off in HIGH:
                found.append((node.lineno, ast.unparse(node), HIGH[off]))
    return found


def test_offsets_come_from_the_layout():
    assert HIGH[92] == "vc" and HIGH[94] == "first" and HIGH[95] == "last"
    assert PAIRS[(7, 0xF)] == "word.header.src" and PAIRS[(3, 3)] == "word.header.vc"


@pytest.mark.parametrize("line", [
    "vc = (beat >> 92) & 3",
    "last = beat >> 95 & 1",
    "beat = data | (vc << 92) | (1 << 94)",
    "lane = (ready >> ((cur[0] >> 92) & 3)) & 1",
    "src = (hdr >> 7) & 0xF",
    "n = 0xF & (hdr >> 72)",
    "v = ctx.get(link.payload.as_value()[92:94])",
    "first = beat[94]",
])
def test_scan_flags_a_literal_offset(line):
    """The broken variants the scan exists for: each line alone is flagged."""
    assert literal_offsets(line), line


@pytest.mark.parametrize("line", [
    "word = desc >> 64",
    "page = (addr >> 12) & 0xFFF",
    "w = (addr >> 3) & 7",
    "x = beat_field(beat, 'vc')",
    "hi = value[64:128]",
])
def test_scan_leaves_other_shifts(line):
    assert not literal_offsets(line), line


def test_no_literal_htax_offsets_in_tests_and_bench():
    hits = []
    for d in ("tests", "bench"):
        for path in sorted((ROOT / d).rglob("*.py")):
            if path.resolve() == Path(__file__).resolve():
                continue
            for line, text, name in literal_offsets(path.read_text(), str(path)):
                hits.append(f"{path.relative_to(ROOT)}:{line}: {text} (HtaxBeat {name})")
    assert not hits, "literal HTAX beat offsets; read them through HtaxBeat:\n" + "\n".join(hits)
