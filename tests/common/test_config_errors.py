"""A bad configuration ends ``make verilog``, ``make report`` and ``make demo`` with one line that names
the file and section, and exit status 2; ``--debug`` shows the traceback instead (``rtl/config.py``
:func:`~rtl.config.config_errors`)."""

import os
import subprocess
import sys

import pytest

from rtl.config import ROOT, ConfigError, explain, load

CASES = {
    "bogus": ("[bogus]\nx = 1\n", "{f}: unknown section [bogus]", "atu"),
    "key": ("[atu]\nflavour = 1\n", "{f}: unknown key 'flavour' in section [atu]", "atu"),
    "tlb": ("[atu]\ntlb_entries = 1000\n", "{f}: [atu] tlb_entries must be a power of two, not 1000", "atu"),
    "plan": ("[htax]\nports = 4\n",
             "{f}: [htax] ports must be more than the highest HTAX port the NIC uses ([0, 1, 2, 3, 4]), not 4",
             "nic"),
    "toml": ("[atu\n", "{f}: not valid TOML: ", "atu"),
    "ways": ("[atu]\ntlb_ways = 3\n", "{f}: [atu] tlb_ways must be ", "atu"),
}
#: the demo's NIC takes its port plan and table sizes from configs/test_nic.toml, over the user's file
DEMO_SKIPS = {"plan", "tlb"}
TOOLS = {
    "verilog": lambda f, unit, out: ["-m", "fpga.verilog", "--config", f, "--unit", unit, "--out", out],
    "report": lambda f, unit, out: ["-m", "fpga.report", "--config", f, "--unit", unit],
    "demo": lambda f, unit, out: ["-m", "sim.demo"],
}


def _run(tool, path, unit, tmp_path, *extra):
    env = dict(os.environ, CONFIG=str(path), PYTHONWARNINGS="default")
    return subprocess.run([sys.executable, *TOOLS[tool](str(path), unit, str(tmp_path / "out")), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_one_line_and_status_2(tmp_path, tool, case):
    text, expected, unit = CASES[case]
    if tool == "demo" and case in DEMO_SKIPS:
        return
    path = tmp_path / "bad.toml"
    path.write_text(text)
    r = _run(tool, path, unit, tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + expected.format(f=path)), r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_debug_keeps_the_traceback(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(CASES["tlb"][0])
    r = _run("verilog", path, "atu", tmp_path, "--debug")
    assert r.returncode != 2 and "Traceback" in r.stderr
    assert r.stderr.strip().splitlines()[-1] == "ValueError: tlb_entries must be a power of two, not 1000"


def test_origin_of_a_key(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[atu]\ntlb_entries = 64\n")
    cfg = load(path)
    assert cfg.origin("atu", "tlb_entries") == str(path)
    assert cfg.origin("atu", "gat_entries") == "configs/default.toml"
    assert explain(ValueError("gat_entries must be a power of two, not 3"), cfg) == \
        "configs/default.toml: [atu] gat_entries must be a power of two, not 3"
    assert explain(ConfigError("x.toml: unknown section [y]"), cfg) == "x.toml: unknown section [y]"
    # a message that names no key: the files the configuration came from
    assert explain(ValueError("the route table is full"), cfg) == f"{path}: the route table is full"
