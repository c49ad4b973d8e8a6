"""fpga.perfdoc: docs/performance.md from bench and report JSON, on small hand-made inputs."""

import json

import pytest

from fpga import metrics as registry
from fpga.metrics import Metric, at_least, at_most
from fpga.perfdoc import format_value, goal_met, lookup, main, render, stale_keys
from rtl.config import ROOT
from sim.provenance import config_file, git_commit, provenance

SOURCES = {"bench/toy": "python bench/toy.py", "reports/toy": "make report UNIT=toy",
           "bench/gone": "python bench/gone.py"}


def write(build, source, doc):
    path = build / f"{source}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


@pytest.fixture
def build(tmp_path):
    write(tmp_path, "bench/toy", {
        "latency_cycles": 3, "throughput": 0.85, "ports": 8,
        "config": {"ports": 8, "commit": "abc1234", "dirty": True, "config_file": "configs/mine.toml",
                   "date": "2026-11-25"}})
    write(tmp_path, "reports/toy", {
        "ecp5_fmax_mhz": 205.8, "ecp5_fmax_by_seed": {"1": 205.8, "2": 192.3}, "ecp5_seeds": [1, 2],
        "config": "configs/default.toml", "commit": "def5678", "dirty": False, "date": "2026-11-24"})
    return tmp_path


def rows(text):
    return [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith(("| metric", "| ---"))]


def one(metric, build):
    text = render([metric], SOURCES, {}, build=build)
    return rows(text)[0], text


def test_goal_met_and_missed(build):
    row, _ = one(Metric("Toy", "bench/toy", "latency_cycles", "latency", "cycles", at_most(3), "9"), build)
    assert row == "| latency | 3 cycles | <= 3 | yes | 9 | `python bench/toy.py` |"
    row, _ = one(Metric("Toy", "bench/toy", "throughput", "throughput", "", at_least(0.9)), build)
    assert row == "| throughput | 0.85 | >= 0.9 | **no** |  | `python bench/toy.py` |"


def test_no_goal_leaves_met_empty(build):
    row, _ = one(Metric("Toy", "bench/toy", "ports", "ports"), build)
    assert row == "| ports | 8 |  |  |  | `python bench/toy.py` |"


def test_goal_from_the_document(build):
    goal = at_least(lambda doc: 0.9 / doc["config"]["ports"], "0.9 / ports")
    row, _ = one(Metric("Toy", "bench/toy", "throughput", "share", "", goal), build)
    assert row == "| share | 0.85 | >= 0.1125 (0.9 / ports) | yes |  | `python bench/toy.py` |"


def test_missing_file_and_key_are_not_measured(build):
    row, text = one(Metric("Gone", "bench/gone", "x", "x", "cycles", at_most(2), "20"), build)
    assert row == "| x | not measured | <= 2 | - | 20 | `python bench/gone.py` |"
    assert "| `build/bench/gone.json` | `python bench/gone.py` | not measured |  |  |" in text
    goal = at_least(lambda doc: doc["missing"], "from the run")
    row, _ = one(Metric("Toy", "bench/toy", "nope", "nope", "", goal), build)
    assert row == "| nope | not measured | >= from the run | - |  | `python bench/toy.py` |"


def test_nested_values(build):
    by_seed = Metric("Toy", "reports/toy", "ecp5_fmax_by_seed", "Fmax per seed", "MHz", at_least(200))
    row, _ = one(by_seed, build)
    assert row == "| Fmax per seed | 1: 205.8, 2: 192.3 MHz | >= 200 | **no** |  | `make report UNIT=toy` |"
    row, _ = one(Metric("Toy", "reports/toy", "ecp5_fmax_by_seed.1", "seed 1", "MHz", at_least(200)), build)
    assert row == "| seed 1 | 205.8 MHz | >= 200 | yes |  | `make report UNIT=toy` |"
    row, _ = one(Metric("Toy", "reports/toy", "ecp5_seeds", "seeds"), build)
    assert row == "| seeds | 1 / 2 |  |  |  | `make report UNIT=toy` |"
    row, _ = one(Metric("Toy", "reports/toy", "ecp5_seeds.1", "second seed"), build)
    assert row == "| second seed | 2 |  |  |  | `make report UNIT=toy` |"


def test_helpers():
    doc = {"a": {"b": [1, {"c": 2}]}}
    assert lookup(doc, "a.b.1.c") == 2
    assert lookup(doc, "a.b.2") is None and lookup(doc, "a.x") is None
    assert format_value(0.30000000000000004) == "0.3"
    assert format_value(1.0, "phits/cycle") == "1.0 phits/cycle"
    assert format_value(18520, "cycles/s") == "18520 cycles/s"
    assert format_value(2.5e6) == "2500000"
    assert format_value({"a": 1, "b": 0.5}, "cycles") == "a: 1, b: 0.5 cycles"
    assert format_value({"link0": {"lut4": 10, "ff": 4}, "top": [1, 2]}) == "link0: 10 / 4, top: 1 / 2"
    assert goal_met(at_most(5), [4, 5], {}) is True
    assert goal_met(at_most(5), {"1": 4, "2": 6}, {}) is False
    assert goal_met(at_most(5), "text", {}) is None
    assert goal_met(None, 3, {}) is None


def test_sections_notes_and_sources(build):
    metrics = [Metric("First", "bench/toy", "ports", "ports"), Metric("Second", "reports/toy", "ecp5_fmax_mhz",
                                                                       "Fmax", "MHz")]
    note = "A note " + "that is long enough to wrap " * 3 + "`make report UNIT=toy` and `x y`."
    text = render(metrics, SOURCES, {"Second": note}, build=build)
    assert "A note that is long enough to wrap that is long enough to wrap that is long enough to wrap\n" in text
    assert "`make report UNIT=toy` and `x y`." in text
    assert text.index("## First") < text.index("## Second") < text.index("A note") < text.index("## Sources")
    assert ("| `build/bench/toy.json` | `python bench/toy.py` | abc1234 (dirty) | configs/mine.toml | "
            "2026-11-25 |") in text
    assert ("| `build/reports/toy.json` | `make report UNIT=toy` | def5678 | configs/default.toml | "
            "2026-11-24 |") in text
    assert "bench/gone" not in text


def test_unknown_source_is_refused(build):
    with pytest.raises(ValueError, match=r"^metrics name sources without a command: bench/nowhere$"):
        render([Metric("X", "bench/nowhere", "k", "k")], SOURCES, {}, build=build)


def test_registry_renders_under_250_lines(tmp_path):
    text = render(build=tmp_path)
    assert len(text.splitlines()) < 250
    assert sum("not measured" in r for r in rows(text)) == len(registry.METRICS) + len(
        {m.source for m in registry.METRICS})
    assert set(registry.NOTES) <= {m.section for m in registry.METRICS}
    keys = [(m.source, m.key) for m in registry.METRICS]
    assert len(keys) == len(set(keys))


def test_main_writes_the_page(build, tmp_path, capsys):
    out = tmp_path / "performance.md"
    assert main(["--build", str(build), "--out", str(out)]) == 0
    assert out.read_text().startswith("# Performance\n")
    assert f"wrote {out}" in capsys.readouterr().out


def test_stale_keys_are_named(build):
    metrics = [Metric("T", "bench/toy", "ports", "ports"), Metric("T", "bench/toy", "renamed", "r"),
               Metric("T", "bench/gone", "x", "x")]
    assert stale_keys(metrics, build) == [("bench/toy", "renamed")]


def test_provenance(monkeypatch):
    commit, dirty = git_commit()
    assert commit != "unknown" and isinstance(dirty, bool)
    assert config_file(ROOT / "configs" / "default.toml") == "configs/default.toml"
    monkeypatch.setenv("CONFIG", "/elsewhere/mine.toml")
    assert provenance()["config_file"] == "/elsewhere/mine.toml"
    assert set(provenance()) == {"commit", "dirty", "config_file", "date"}
