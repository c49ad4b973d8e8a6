"""Every code example in docs/ is checked, so an example cannot drift from the code it shows.

A fenced block in ``docs/*.md`` is checked according to a marker on the line before it:

``<!-- example: include <path> -->``
    The block is the file ``<path>`` (under ``docs/examples/`` or elsewhere in the repository), byte
    for byte; the file is what a test runs (the two-``link.v`` example of ``docs/integration.md``
    runs under cocotb on the ``link.v`` that ``make verilog`` writes).
``<!-- example: excerpt <path> -->``
    The block is an excerpt of ``<path>``: its lines, stripped of indentation, occur in that file in
    the same order (a line ``...`` stands for lines left out).  For code that another test runs
    whole (``sim/demo.py`` runs in ``tests/nic/test_nic.py::test_demo``).
``<!-- example: run -->``
    A self-contained Python block, executed here as it stands.

Blocks tagged ``python`` or ``verilog`` must carry one of these markers
(:func:`test_every_code_block_is_checked`).  Not run, and so allowed without a marker: ``sh`` blocks
(command lines: they need a shell, the network or minutes of build, and what they start is tested
where it is defined: ``make verilog`` by the units' tests, ``make demo`` by ``test_demo``) and
untagged blocks (block diagrams and the expected output of a command, which are not code).
"""

import gc
import importlib.util
import os
import random
import re
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET

import pytest
from amaranth.lib.wiring import In

from rtl.common.net import NetBeatKind, NetHeader, NetUnit
from rtl.config import ROOT, load
from rtl.link import UNITS as LINK_UNITS
from sim.layout import pack
from sim.toolchain import verilator_env

DOCS = sorted((ROOT / "docs").glob("*.md"))
MARKER = re.compile(r"<!-- example: (include|excerpt|run)(?: (\S+))? -->")
CODE_LANGS = {"python", "py", "verilog", "systemverilog"}
LINK_PAIR = ROOT / "docs" / "examples" / "link_pair"


def code_blocks(doc):
    """``(line, language, marker or None, text)`` of every fenced block of ``doc``."""
    lines = doc.read_text().splitlines(keepends=True)
    blocks, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        lang, start = lines[i][3:].strip(), i
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.fullmatch(prev.strip())
        blocks.append((start + 1, lang, marker and (marker[1], marker[2]), "".join(lines[start + 1:end])))
        i = end + 1
    return blocks


def blocks_of(kind):
    out = [(doc.name, line, m[1], text) for doc in DOCS for line, _, m, text in code_blocks(doc)
           if m and m[0] == kind]
    return pytest.mark.parametrize("doc,line,path,text", out, ids=[f"{d}:{n}" for d, n, _, _ in out])


def test_every_code_block_is_checked():
    unchecked, bad = [], []
    for doc in DOCS:
        for line, lang, marker, _ in code_blocks(doc):
            if marker is None:
                if lang in CODE_LANGS:
                    unchecked.append(f"docs/{doc.name}:{line} ({lang})")
            elif (marker[0] == "run") != (marker[1] is None) or (marker[1] and not (ROOT / marker[1]).is_file()):
                bad.append(f"docs/{doc.name}:{line} {marker}")
    assert not unchecked, f"code blocks without an example marker: {unchecked}"
    assert not bad, f"markers without their file (or a 'run' marker with one): {bad}"


def test_the_markers_are_used():
    kinds = {m[0] for doc in DOCS for _, _, m, _ in code_blocks(doc) if m}
    assert kinds == {"include", "excerpt", "run"}


@blocks_of("include")
def test_included_block_is_the_file(doc, line, path, text):
    assert text == (ROOT / path).read_text(), f"docs/{doc}:{line} differs from {path}"


@blocks_of("excerpt")
def test_excerpt_is_in_the_file(doc, line, path, text):
    source = [ln.strip() for ln in (ROOT / path).read_text().splitlines()]
    pos = 0
    for ln in text.splitlines():
        ln = ln.strip()
        if not ln or ln == "...":
            continue
        try:
            pos = source.index(ln, pos) + 1
        except ValueError:
            pytest.fail(f"docs/{doc}:{line}: {ln!r} is not in {path} (after line {pos})")


@blocks_of("run")
def test_runnable_block_runs(doc, line, path, text):
    exec(compile(text, f"docs/{doc}:{line}", "exec"), {"__name__": f"docs.{doc}"})


def _load(path):
    spec = importlib.util.spec_from_file_location(f"doc_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_link_pair_formats_are_the_rtl_structs():
    """The example packs headers by hand (a user of ``link.v`` has no Amaranth): its layout and
    constants must be those of ``rtl/common/net.py``."""
    ex = _load(LINK_PAIR / "test_pair.py")
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    widths = {"dst_node": 15, "unit": 3, "command_words": 2, "payload_words": 4, "src_node": 15, "hops": 6,
              "specific": 19}
    assert sum(widths.values()) == 64
    for _ in range(200):
        f = {name: rng.randrange(1 << w) for name, w in widths.items()}
        assert ex.header(**f) == pack(NetHeader, f), (seed, f)
    assert (ex.HEADER, ex.COMMAND, ex.PAYLOAD) == tuple(NetBeatKind[k].value for k in ("HEADER", "COMMAND", "PAYLOAD"))
    assert len(NetBeatKind) == 3
    assert ex.RMA_COMPLETER == NetUnit.RMA_COMPLETER.value


def test_link_pair_drives_every_input():
    """Verilator leaves an unconnected input at 0 without a word (``-Wno-PINMISSING``), so the
    simulation cannot show an undriven one: every ``link`` instance of ``pair.v`` connects every
    input port of ``link.v``."""
    with warnings.catch_warnings():             # never elaborated: only its signature is read
        warnings.filterwarnings("ignore", message=".* created but never used")
        link = LINK_UNITS["link"](load())
        inputs = {"clk", "rst"} | {"__".join(map(str, path)) for path, member, _ in link.signature.flatten(link)
                                   if member.flow == In}
        del link
        gc.collect()
    text = (LINK_PAIR / "pair.v").read_text()
    instances = re.findall(r"^\s*link (\w+)\((.*?)\);", text, re.M | re.S)
    assert [name for name, _ in instances] == ["a", "b"]
    for name, body in instances:
        missing = inputs - set(re.findall(r"\.(\w+)\(", body))
        assert not missing, f"pair.v leaves inputs of link {name} undriven: {sorted(missing)}"


def _write_if_changed(path, text):
    """Keep the file's time stamp when its text is the same, so cocotb's runner reuses the model."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


@pytest.mark.cocotb
def test_link_pair_example_runs():
    """``docs/integration.md``'s example as a user runs it: ``make verilog``'s ``link.v`` of the
    default configuration, the example's three files, ``python run.py`` in the environment the page
    gives (no ``PYTEST_*`` variables: under pytest, cocotb's runner names its results file after the
    pytest test).  The model is kept in ``build/doc_examples/link_pair/sim_build`` between runs."""
    work = ROOT / "build" / "doc_examples" / "link_pair"
    (work / "verilog").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | verilator_env()
    subprocess.run([sys.executable, "-m", "fpga.verilog", "--config", "configs/default.toml", "--unit", "link",
                    "--out", str(work / "verilog")],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    _write_if_changed(work / "link.v", (work / "verilog" / "link.v").read_text())
    for name in ("pair.v", "test_pair.py", "run.py"):
        _write_if_changed(work / name, (LINK_PAIR / name).read_text())
    results = work / "sim_build" / "results.xml"
    results.unlink(missing_ok=True)
    env["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"       # the environment of docs/integration.md
    run = subprocess.run([sys.executable, "run.py"], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    cases = ET.parse(results).getroot().iter("testcase")
    outcome = [(c.get("name"), [e.tag for e in c if e.tag in ("failure", "error", "skipped")]) for c in cases]
    assert outcome == [("packets_arrive", [])]
