"""Which sources and configuration a measurement was made with.

``make bench`` (``bench/_common.py``) and ``make report`` (``fpga/report.py``) store these fields in
every JSON file they write, and ``python -m fpga.perfdoc`` prints them under ``docs/performance.md``.
"""

import os
import subprocess
import time
from pathlib import Path

from rtl.config import DEFAULT_PATH, ROOT

__all__ = ["git_commit", "config_file", "provenance"]


def _git(*args):
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        raise OSError(r.stderr.strip())
    return r.stdout


def git_commit():
    """``(short commit, dirty)`` of the working tree; ``("unknown", None)`` outside a git checkout.

    Dirty means a tracked file differs from the commit or an untracked, not ignored file exists,
    outside ``docs/``: the flows write their plots and this page there, and nothing in ``docs/``
    changes a measurement.
    """
    try:
        commit = _git("rev-parse", "--short", "HEAD").strip()
        status = _git("status", "--porcelain", "--", ".", ":(exclude)docs")
    except OSError:
        return "unknown", None
    return commit, bool(status.strip())


def config_file(path=None):
    """The configuration file a flow reads (``path``, else ``$CONFIG``, else the default), relative to
    the repository when it lies inside it."""
    p = Path(path or os.environ.get("CONFIG") or DEFAULT_PATH)
    if not p.is_absolute() and not p.exists():
        p = ROOT / p
    p = p.resolve()
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def provenance(config=None):
    """``{"commit", "dirty", "config_file", "date"}`` for a measurement made now."""
    commit, dirty = git_commit()
    return {"commit": commit, "dirty": dirty, "config_file": config_file(config),
            "date": time.strftime("%Y-%m-%d")}
