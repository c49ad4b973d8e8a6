"""The NIC configuration: one TOML file read by every generator, test and benchmark.

``configs/default.toml`` holds every key with its default; another file given with ``CONFIG=`` (or
:func:`load`'s ``path``) overrides single keys and inherits the rest.  Unknown sections or keys in an
override file are an error, so a typo never silently falls back to a default.
"""

import os
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = ["ROOT", "DEFAULT_PATH", "Config", "load"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "configs" / "default.toml"


class Config(dict):
    """A two-level mapping ``section -> key -> value`` with attribute access to sections.

    ``cfg.system.clock_mhz`` and ``cfg["system"]["clock_mhz"]`` are the same value.
    """

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


def _merge(base, override, origin):
    merged = {section: dict(values) for section, values in base.items()}
    for section, values in override.items():
        if section not in merged:
            raise ValueError(f"{origin}: unknown section [{section}]")
        if not isinstance(values, dict):
            raise ValueError(f"{origin}: [{section}] must be a table, not {values!r}")
        for key, value in values.items():
            if key not in merged[section]:
                raise ValueError(f"{origin}: unknown key {key!r} in section [{section}]")
            merged[section][key] = value
    return merged


def load(path=None):
    """Load the configuration: the defaults, overridden by ``path`` or ``$CONFIG`` if given."""
    with open(DEFAULT_PATH, "rb") as f:
        values = tomllib.load(f)
    path = path or os.environ.get("CONFIG")
    if path:
        path = Path(path)
        if not path.is_absolute() and not path.exists():
            path = ROOT / path
        if path.resolve() != DEFAULT_PATH:
            with open(path, "rb") as f:
                values = _merge(values, tomllib.load(f), path)
    return Config({section: _Section(v) for section, v in values.items()})
