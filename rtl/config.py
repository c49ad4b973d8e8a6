"""The NIC configuration: one TOML file read by every generator, test and benchmark.

``configs/default.toml`` holds every key with its default; another file given with ``CONFIG=`` (or
:func:`load`'s ``path``) overrides single keys and inherits the rest.  Unknown sections or keys in an
override file are an error, so a typo never silently falls back to a default.

Errors a user reads: a bad file or value raises :class:`ConfigError` (a ``ValueError``) whose message
names the file and section; :func:`explain` turns a parameter check's ``ValueError`` raised while a unit
is elaborated (``tlb_entries must be a power of two, not 1000``) into the same form, by finding the
section and file that set the key; :func:`config_errors` makes a command-line tool end with that one
line and exit status 2 (``--debug`` keeps the traceback).
"""

import os
import re
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from amaranth.hdl import UnusedElaboratable

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = ["ROOT", "DEFAULT_PATH", "Config", "ConfigError", "load", "explain", "config_errors"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "configs" / "default.toml"


class ConfigError(ValueError):
    """A configuration that cannot be built; the message names the file and the section."""


class Config(dict):
    """A two-level mapping ``section -> key -> value`` with attribute access to sections.

    ``cfg.system.clock_mhz`` and ``cfg["system"]["clock_mhz"]`` are the same value.  ``origins`` maps
    ``(section, key)`` to the file that set the value (the default file or an override).
    """

    origins = {}

    def origin(self, section, key):
        """The file (relative to the repository where it lies inside) that set ``[section] key``."""
        return _show(self.origins.get((section, key), DEFAULT_PATH))

    def __getattr__(self, name):
        try:
            return _Section(self[name])
        except KeyError:
            raise AttributeError(f"configuration has no section [{name}]") from None

    @property
    def cycle_ns(self):
        return 1000.0 / self["system"]["clock_mhz"]

    def ns_to_cycles(self, ns):
        """Round a time in nanoseconds to whole cycles of the configured clock (at least 1)."""
        return max(1, round(ns / self.cycle_ns))


class _Section(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"configuration section has no key {name!r}") from None


def _show(path):
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _merge(base, override, origin, origins):
    merged = {section: dict(values) for section, values in base.items()}
    for section, values in override.items():
        if section not in merged:
            raise ConfigError(f"{_show(origin)}: unknown section [{section}]")
        if not isinstance(values, dict):
            raise ConfigError(f"{_show(origin)}: [{section}] must be a table, not {values!r}")
        for key, value in values.items():
            if key not in merged[section]:
                raise ConfigError(f"{_show(origin)}: unknown key {key!r} in section [{section}]")
            merged[section][key] = value
            origins[(section, key)] = origin
    return merged


def _read(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{_show(path)}: no such configuration file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{_show(path)}: not valid TOML: {e}") from None


def load(path=None, *, overlays=()):
    """Load the configuration: the defaults, overridden by ``path`` or ``$CONFIG`` if given, then by
    each file of ``overlays`` in turn (the harness's test configurations, :mod:`sim.tops.configs`)."""
    values = _read(DEFAULT_PATH)
    origins = {}
    path = path or os.environ.get("CONFIG")
    files = [path] if path else []
    for file in [*files, *overlays]:
        file = Path(file)
        if not file.is_absolute() and not file.exists():
            file = ROOT / file
        if file.resolve() != DEFAULT_PATH:
            values = _merge(values, _read(file), file, origins)
    cfg = Config({section: _Section(v) for section, v in values.items()})
    cfg.origins = origins
    return cfg


def explain(exc, cfg=None):
    """One line for a configuration error ``exc``: a :class:`ConfigError` as it is; a parameter
    check's message (``<key> must ...``) prefixed with the file and section that set ``<key>``."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, ConfigError) or cfg is None:
        return msg
    m = re.match(r"(?:\[(\w+)\] )?(\w+) must ", msg)
    if m and m.group(1) in cfg:                 # the message names its section: "[htax] ports must ..."
        return f"{cfg.origin(m.group(1), m.group(2))}: {msg}"
    sections = [s for s in cfg if m and m.group(2) in cfg[s]]
    if len(sections) > 1:       # the key exists in several sections: the one whose value is quoted
        value = {s: cfg[s][m.group(2)] for s in sections}
        quoted = [s for s in sections if msg.endswith((f"not {value[s]!r}", f"not {value[s]}"))]
        sections = quoted or sections
    if len(sections) == 1:
        return f"{cfg.origin(sections[0], m.group(2))}: [{sections[0]}] {msg}"
    files = sorted({cfg.origin(*k) for k in cfg.origins}) or [_show(DEFAULT_PATH)]
    return f"{', '.join(files)}: {msg}"


@contextmanager
def config_errors(debug=False):
    """Around a tool's work: a configuration error (``ValueError``, ``TypeError``) ends the program
    with :func:`explain`'s one line on stderr and exit status 2, unless ``debug``.  Yields a dict; put
    the loaded configuration under ``"cfg"`` so that the line can name the file and section."""
    state = {}
    try:
        yield state
    except (ValueError, TypeError) as e:
        if debug:
            raise
        # the components built before the error are never elaborated: no warning about each of them
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        print(f"error: {explain(e, state.get('cfg'))}", file=sys.stderr)
        raise SystemExit(2) from None
