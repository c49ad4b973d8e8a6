"""Fast packing of ``amaranth.lib.data`` layouts in Python models.

Offsets and widths come from the very ``data.Struct``/``data.Union`` definitions the RTL uses
(walked once per layout), so the Python side can never drift from the gateware; packing is plain
integer shifting, cheap enough to run per beat in a cocotb testbench.
"""

import importlib
import re
from functools import cache

from amaranth.hdl import Shape
from amaranth.lib import data

__all__ = ["fields", "pack", "unpack", "LAYOUT_TABLE", "layout_rows"]


@cache
def fields(layout):
    """``{"a.b.c": (offset, width)}`` for every leaf field of ``layout``."""
    if isinstance(layout, type) and issubclass(layout, data.View) is False and hasattr(layout, "as_shape"):
        layout = layout.as_shape()
    if not isinstance(layout, data.Layout):
        layout = data.Layout.cast(layout)
    out = {}

    def walk(lay, prefix, base):
        for name, field in lay:
            shape = field.shape
            path = f"{prefix}{name}"
            inner = None
            if isinstance(shape, data.Layout):
                inner = shape
            elif hasattr(shape, "as_shape"):
                cast = shape.as_shape()
                if isinstance(cast, data.Layout):
                    inner = cast
            if inner is not None:
                walk(inner, path + ".", base + field.offset)
            else:
                out[path] = (base + field.offset, Shape.cast(shape).width)

    walk(layout, "", 0)
    return out


def pack(layout, values):
    """Pack ``{"a.b": int}`` into an integer; unknown field names and overflowing values raise."""
    f = fields(layout)
    word = 0
    for name, value in values.items():
        try:
            off, width = f[name]
        except KeyError:
            raise KeyError(f"{layout} has no field {name!r}") from None
        value = int(getattr(value, "value", value))
        if value < 0 or value >> width:
            raise ValueError(f"value {value:#x} does not fit field {name!r} of {width} bits")
        word |= value << off
    return word


def unpack(layout, word, names):
    """``{name: int}`` for the given field names of ``word``."""
    f = fields(layout)
    return {n: (word >> f[n][0]) & ((1 << f[n][1]) - 1) for n in names}


#: a bit-layout table in docs/*.md: ``<!-- layout: module.Struct [skip=prefix] -->`` .. ``<!-- end layout -->``
LAYOUT_TABLE = re.compile(r"<!-- layout: (\S+)(?: skip=(\S+))? -->\n(.*?)<!-- end layout -->", re.S)


def layout_rows(path, skip=None):
    """The rows ``| msb:lsb | `field` | width |`` a docs layout table of the struct at dotted ``path``
    must have (fields whose name starts with ``skip`` left out), from the struct itself."""
    mod, name = path.rsplit(".", 1)
    layout = getattr(importlib.import_module(mod), name)
    rows = []
    for n, (o, w) in sorted(fields(layout).items(), key=lambda x: x[1][0]):
        if skip and n.startswith(skip):
            continue
        rows.append(f"| {o + w - 1}:{o} | `{n}` | {w} |")
    return rows
