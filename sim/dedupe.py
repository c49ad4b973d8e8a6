"""Merge the identical modules of an emitted Verilog file, for simulation.

Amaranth emits one Verilog module per *instance* (``top.node3.link0.tx``), so an N-node fabric hands
Verilator N copies of every module, and Verilator compiles each copy into its own C++ class.  This pass
finds modules that differ only in their name and in the numbers of the names that carry global ids
(``\\port$N$M`` ports, ``\\$auto$...$N`` registers), keeps one of each, and points every instance at
it.  A 6-node ring's file shrinks about four times, and its model builds that much faster.  The
simulated behaviour is unchanged: only byte-identical (up to renaming) modules are merged, and
per-node differences (a constant node id, an LFSR seed) keep their modules apart.
"""

import re

__all__ = ["dedupe_modules"]

_MODULE = re.compile(r"^module (\\\S+ |\w+)\s*\(.*?^endmodule\n", re.M | re.S)
_INSTANCE = re.compile(r"^  (\\\S+ |\w+) +(\\\S+ |\w+) *\((.*?)^  \);\n", re.M | re.S)
_AUTO = re.compile(r"(\\\$auto\$\S*?\$)(\d+) ")
_GLOBAL = re.compile(r"(\.?)\\port\$(\d+)\$(\d+) ")


def _renumber_auto(body):
    seen = {}
    return _AUTO.sub(lambda m: f"{m.group(1)}{seen.setdefault(m.group(2), len(seen))} ", body)


def _own_names(body):
    """The module's ``\\port$N$M`` names (its ports and wires, not its instances' port names), in order
    of first appearance."""
    names = {}
    for m in _GLOBAL.finditer(body):
        if not m.group(1):
            names.setdefault(m.group(2, 3), len(names))
    return names


def _renumber_ports(body, own, maps):
    def local(m):
        return f"\\port$g{own[m.group(2, 3)]}$0 "

    def instance(m):
        child = maps.get(m.group(1).strip(), {})
        conns = _GLOBAL.sub(lambda g: f".\\port$g{child[g.group(2, 3)]}$0 " if g.group(1) else local(g),
                            m.group(3))
        return f"  {m.group(1)} {m.group(2)} ({conns}  );\n"
    body = _INSTANCE.sub(instance, body)
    return _GLOBAL.sub(lambda g: g.group(0) if g.group(0).startswith("\\port$g") else g.group(1) + local(g), body)


def dedupe_modules(text, top):
    """``text`` (one Verilog file from ``amaranth.back.verilog``) with identical modules merged; the
    module ``top`` keeps its name."""
    mods = {m.group(1).strip(): _renumber_auto(m.group(0)) for m in _MODULE.finditer(text)}
    if not mods:
        return text
    head = text[:text.index("module ")]
    maps = {name: _own_names(body) for name, body in mods.items()}
    mods = {name: _renumber_ports(body, maps[name], maps) for name, body in mods.items()}
    while True:         # leaves first: merging children makes their parents identical
        groups = {}
        for name, body in mods.items():
            groups.setdefault(body.replace(name, "\0", 1), []).append(name)
        rename = {}
        for names in groups.values():
            keep = top if top in names else names[0]
            rename.update({name: keep for name in names if name != keep})
        if not rename:
            return head + "".join(mods.values())
        for name in rename:
            del mods[name]

        def point(m, rename=rename):
            new = rename.get(m.group(1).strip())
            if new is None:
                return m.group(0)
            return f"  {new}{' ' if new.startswith(chr(92)) else ''} {m.group(2)} ({m.group(3)}  );\n"
        mods = {name: _INSTANCE.sub(point, body) for name, body in mods.items()}
