"""Write ``docs/performance.md`` from ``build/bench/*.json`` and ``build/reports/*.json``.

``python -m fpga.perfdoc`` (run at the end of ``make bench`` and ``make report``) renders every metric
of the registry :mod:`fpga.metrics`: its current value, the goal and whether it is met, the
dissertation's figure and the command that measures it.  A metric whose file or key is missing is
"not measured".  A footer lists each source file with the commit, dirty flag, configuration file and
date it was measured with (:mod:`sim.provenance`).  The page holds no history: that is in git.
"""

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path

from rtl.config import ROOT

from . import metrics as registry

__all__ = ["lookup", "format_value", "goal_met", "render", "stale_keys", "main"]

NOT_MEASURED = "not measured"


def lookup(doc, key):
    """The value at ``key`` in ``doc`` (``a.b`` reaches into objects and lists), or ``None``; ``a+b``
    is the list of both values (``None`` if either is missing): several counts in one row."""
    if "+" in key:
        values = [lookup(doc, k) for k in key.split("+")]
        return None if None in values else values
    value = doc
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int) or abs(v) >= 1e6:
        return f"{v:.0f}"
    text = f"{v:.6g}"
    return text if "." in text or "e" in text else f"{text}.0"     # 1.0 stays a rate, not a count


def format_value(value, unit=""):
    """``value`` as table text: a number with its unit, a list as ``a / b``, an object as ``k: v`` (an
    object of objects or lists as ``k: a / b``)."""
    if isinstance(value, dict):
        text = ", ".join(f"{k}: {format_value(list(v.values()) if isinstance(v, dict) else v)}"
                         for k, v in value.items())
    elif isinstance(value, list):
        text = " / ".join(_number(v) for v in value)
    else:
        text = _number(value)
    return f"{text} {unit}".strip()


def _leaves(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _target(goal, doc):
    if callable(goal.target):
        try:
            return goal.target(doc)
        except (KeyError, TypeError, ZeroDivisionError):
            return None
    return goal.target


def goal_met(goal, value, doc):
    """``True``/``False`` whether ``value`` (every element of a list or object) meets ``goal``; ``None``
    without a goal, a value or a target."""
    target = None if goal is None or value is None else _target(goal, doc)
    leaves = _leaves(value) if target is not None else []
    if not leaves or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in leaves):
        return None
    return all(x >= target if goal.op == ">=" else x <= target for x in leaves)


def _goal_text(goal, doc):
    if goal is None:
        return ""
    target = _target(goal, doc) if doc is not None or not callable(goal.target) else None
    if target is None:
        return f"{goal.op} {goal.text}"
    return f"{goal.op} {_number(target)}" + (f" ({goal.text})" if goal.text else "")


def _load(build, source):
    path = Path(build) / f"{source}.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def _provenance(doc):
    """``(commit, configuration file, date)`` of a bench file (in its ``config`` object) or a report."""
    meta = doc.get("config") if isinstance(doc.get("config"), dict) else doc
    commit = meta.get("commit", "unrecorded")
    if meta.get("dirty"):
        commit += " (dirty)"
    config = meta.get("config_file") or (doc["config"] if isinstance(doc.get("config"), str) else "unrecorded")
    return commit, config, meta.get("date", "unrecorded")


def _wrap(text):
    """``text`` in lines of at most 100 characters, never breaking inside a `code span`."""
    held = re.sub(r"`[^`]*`", lambda m: m.group().replace(" ", "\0"), text)
    return textwrap.fill(held, width=100, break_long_words=False, break_on_hyphens=False).replace("\0", " ")


def _cell(text):
    return str(text).replace("|", "\\|")


def render(metrics=None, sources=None, notes=None, build=ROOT / "build"):
    """The Markdown page for ``metrics`` (default: the registry) from the JSON files under ``build``."""
    metrics = registry.METRICS if metrics is None else metrics
    sources = registry.SOURCES if sources is None else sources
    notes = registry.NOTES if notes is None else notes
    unknown = sorted({m.source for m in metrics} - set(sources))
    if unknown:
        raise ValueError(f"metrics name sources without a command: {', '.join(unknown)}")
    docs = {s: _load(build, s) for s in sources}
    out = [
        "# Performance",
        "",
        "<!-- Generated by `python -m fpga.perfdoc` from build/bench/*.json and build/reports/*.json;\n"
        "     do not edit.  Goals and dissertation figures: fpga/metrics.py. -->",
        "",
        _wrap("Every figure the issues set a goal for or ask to record: goal, whether met, the dissertation's "
              "figure, the command.  Cycles from `make bench`; resources and Fmax from `make report` (ECP5 "
              "LFE5UM5G-85F -8, out-of-context P&R at 200 MHz; Xilinx 7-series: synthesis only)."),
    ]
    sections = list(dict.fromkeys(m.section for m in metrics))
    for section in sections:
        out += ["", f"## {section}"]            # a table or a paragraph may follow a heading directly
        if notes.get(section):
            out += [_wrap(notes[section]), ""]
        out += ["| metric | value | goal | met | dissertation | measured by |",
                "| --- | --- | --- | --- | --- | --- |"]
        for m in (m for m in metrics if m.section == section):
            doc = docs[m.source]
            value = None if doc is None else lookup(doc, m.key)
            met = goal_met(m.goal, value, doc)
            shown = NOT_MEASURED if value is None else format_value(value, m.unit)
            verdict = "" if m.goal is None else {True: "yes", False: "**no**", None: "-"}[met]
            row = [m.label, shown, _goal_text(m.goal, doc), verdict, m.dissertation, f"`{sources[m.source]}`"]
            out.append("| " + " | ".join(_cell(x) for x in row) + " |")
    out += ["", "## Sources",
            "Written by `python -m fpga.perfdoc` (the last step of `make bench` and `make report`) from:", "",
            "| file | command | commit | configuration | date |", "| --- | --- | --- | --- | --- |"]
    for source in dict.fromkeys(m.source for m in metrics):
        doc = docs[source]
        prov = (NOT_MEASURED, "", "") if doc is None else _provenance(doc)
        out.append(f"| `build/{source}.json` | `{sources[source]}` | " + " | ".join(map(_cell, prov)) + " |")
    return "\n".join(out) + "\n"


def stale_keys(metrics=None, build=ROOT / "build"):
    """``(source, key)`` of every metric whose source file exists but lacks the key: a renamed metric
    or a file from an older flow, which the page shows as "not measured"."""
    metrics = registry.METRICS if metrics is None else metrics
    docs = {s: _load(build, s) for s in {m.source for m in metrics}}
    return [(m.source, m.key) for m in metrics if docs[m.source] is not None and lookup(docs[m.source], m.key) is None]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", type=Path, default=ROOT / "build", help="directory with bench/ and reports/")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    args = ap.parse_args(argv)
    text = render(build=args.build)
    args.out.write_text(text)
    measured = sum(1 for s in registry.SOURCES if (args.build / f"{s}.json").exists())
    out = args.out.resolve()
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(f"wrote {shown} ({len(text.splitlines())} lines; {measured} of {len(registry.SOURCES)} "
          f"source files present)")
    for source, key in stale_keys(build=args.build):
        print(f"warning: build/{source}.json has no {key!r} (fpga/metrics.py): not measured", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
