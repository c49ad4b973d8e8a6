"""The NIC's register map, read from its SystemRDL source (dissertation ch. 7.2: one RDL, many outputs).

``rdl/nic_regs.rdl`` is the single source of truth for every register.  :func:`compile_rdl` compiles
and elaborates it with systemrdl-compiler; :func:`read_regmap` turns the elaborated model into the
:mod:`rtl.common.regspec` description (:class:`~rtl.common.regspec.Block`,
:class:`~rtl.common.regspec.Reg`, :class:`~rtl.common.regspec.Field`), which the register file's
exporter (:mod:`rtl.regs.exporter`) writes out and the units' register views
(:class:`rtl.common.regview.RegisterView`) take their ports from; :func:`register_map` does both, once
per set of parameters.

Supported subset (anything else raises :class:`RegmapError` naming the node): 64-bit registers; fields
with ``sw`` rw/r/w/na, ``onread = rclr``, ``onwrite`` woclr/woset, ``hw`` r/w/rw/na, ``we``,
``hwset``/``hwclr`` (booleans), ``singlepulse``, ``swmod``, ``precedence``, ``counter`` with
``incrsaturate`` (boolean), ``intr`` (level, non-sticky-field default) with ``enable``;
one-dimensional arrays; the user properties ``ram`` (reg) and ``rf_role`` (field).
"""

import functools
import keyword
from pathlib import Path

from amaranth.lib import data

from .regspec import Block, Field, Reg

__all__ = ["RDL", "TOP", "RegmapError", "compile_rdl", "read_regmap", "register_map"]

RDL = Path(__file__).resolve().parents[2] / "rdl" / "nic_regs.rdl"
TOP = "nic_regs"


class RegmapError(Exception):
    """The RDL uses something the register file does not support."""


def compile_rdl(parameters, rdl=RDL, top=TOP):
    """Compile and elaborate ``rdl`` with the top-level ``parameters``; return the systemrdl
    ``RootNode``.  A parameter left out keeps the RDL's default."""
    from systemrdl import RDLCompiler

    rdlc = RDLCompiler()
    rdlc.compile_file(str(rdl))
    return rdlc.elaborate(top, parameters=dict(parameters))


@functools.cache
def _register_map(items, rdl):
    return read_regmap(compile_rdl(dict(items), rdl).top)


def register_map(rdl=RDL, **parameters):
    """The :class:`~rtl.common.regspec.Block` of ``rdl`` elaborated with ``parameters`` (the RDL's
    top-level parameters, e.g. ``VPIDS=8``); compiled once per set of parameters."""
    return _register_map(tuple(sorted(parameters.items())), Path(rdl))


def read_regmap(top):
    """The :class:`~rtl.common.regspec.Block` an elaborated addrmap node ``top`` describes.

    Each register's ``layout`` is a :class:`~amaranth.lib.data.StructLayout` of its fields at their
    bit positions, with ``rsvd<lsb>`` padding (a field named after a Python keyword gets a trailing
    ``_``).
    """
    from systemrdl.node import AddrmapNode

    if not isinstance(top, AddrmapNode):
        raise RegmapError(f"top node must be an addrmap, not {type(top).__name__}")
    return _Reader(top).block(top, 0)


def _text(s):
    return " ".join((s or "").split())


class _Reader:
    def __init__(self, top):
        self.top = top

    def block(self, node, offset):
        from systemrdl.node import AddrmapNode, FieldNode, RegfileNode, RegNode

        children = []
        for child in node.children(unroll=False):
            if isinstance(child, RegNode):
                children.append(self.reg(child))
            elif isinstance(child, (RegfileNode, AddrmapNode)):
                children.append(self.child_block(child))
            elif not isinstance(child, FieldNode):
                raise RegmapError(f"{child.get_path()}: {type(child).__name__} is not supported")
        return Block(node.inst_name, offset, tuple(children), desc=_text(node.get_property("desc")))

    def dims(self, node):
        if not node.is_array:
            return 1, 0
        dims = node.array_dimensions
        if len(dims) != 1:
            raise RegmapError(f"{node.get_path()}: only one-dimensional arrays are supported, not {dims}")
        return dims[0], node.array_stride

    def child_block(self, node):
        from systemrdl.node import RegNode

        count, stride = self.dims(node)
        regs = list(node.children(unroll=False))
        if (node.is_array and len(regs) == 1 and isinstance(regs[0], RegNode) and not regs[0].is_array
                and regs[0].raw_address_offset == 0
                and (regs[0].external or regs[0].get_property("ram", default=False))):
            # a strided RAM/external array written as a regfile array (C headers need that form for
            # strides above the register size): one array named after the regfile
            reg = self.reg(regs[0])
            return Reg(node.inst_name, node.raw_address_offset, reg.fields, count=count, stride=stride,
                       storage=reg.storage, layout=reg.layout, desc=reg.desc)
        inner = self.block(node, node.raw_address_offset)
        if count > 1 or node.is_array:
            return Block(inner.name, inner.offset, inner.children, count=count, stride=stride, desc=inner.desc,
                         array=True)
        return inner

    def reg(self, node):
        path = node.get_path(array_suffix="", empty_array_suffix="")
        width = node.get_property("regwidth")
        if width != 64:
            raise RegmapError(f"{path}: registers must be 64 bits wide, not {width}")
        count, stride = self.dims(node)
        if not node.is_array:
            stride = 8
        ram = bool(node.get_property("ram", default=False))
        if ram and node.external:
            raise RegmapError(f"{path}: a register cannot be both ram and external")
        storage = "ram" if ram else ("external" if node.external else "flops")
        fields = tuple(self.field(f) for f in node.fields())
        layout, pos = {}, 0
        for f in sorted(node.fields(), key=lambda f: f.lsb):
            if f.lsb > pos:
                layout[f"rsvd{pos}"] = f.lsb - pos
            layout[f.inst_name + ("_" if keyword.iskeyword(f.inst_name) else "")] = f.width
            pos = f.lsb + f.width
        if pos < 64:
            layout[f"rsvd{pos}"] = 64 - pos
        return Reg(node.inst_name, node.raw_address_offset, fields, count=count, stride=stride, storage=storage,
                   layout=data.StructLayout(layout), desc=_text(node.get_property("desc")),
                   array=node.is_array)

    def field(self, f):
        from systemrdl.node import FieldNode
        from systemrdl.rdltypes import AccessType, OnReadType, OnWriteType, PrecedenceType

        access = {AccessType.rw: "rw", AccessType.rw1: "rw", AccessType.r: "r", AccessType.w: "w",
                  AccessType.w1: "w", AccessType.na: "na"}
        path = f.get_path()
        prop = f.get_property
        kw = {}
        sw, hw = access.get(prop("sw")), access.get(prop("hw"))
        if sw is None or hw is None:
            raise RegmapError(f"{path}: access sw={prop('sw')} hw={prop('hw')} is not supported")
        kw["sw"], kw["hw"] = sw, hw
        reset = prop("reset")
        if reset is None:
            reset = 0
        if not isinstance(reset, int):
            raise RegmapError(f"{path}: reset must be a constant, not a reference")
        kw["reset"] = reset
        onread = prop("onread")
        if onread is not None:
            if onread != OnReadType.rclr:
                raise RegmapError(f"{path}: onread={onread.name} is not supported (only rclr)")
            kw["onread"] = "rclr"
        onwrite = prop("onwrite")
        if onwrite is not None:
            if onwrite not in (OnWriteType.woclr, OnWriteType.woset):
                raise RegmapError(f"{path}: onwrite={onwrite.name} is not supported (woclr, woset)")
            kw["onwrite"] = onwrite.name
        if prop("counter"):
            kw["counter"] = True
            sat = prop("incrsaturate")
            if not isinstance(sat, bool):
                raise RegmapError(f"{path}: incrsaturate must be a boolean")
            kw["saturate"] = sat
            if prop("incrwidth") not in (None, 1) or prop("incrvalue") not in (None, 1):
                raise RegmapError(f"{path}: only one-cycle strobes that count by 1 are supported")
            if f.is_down_counter:
                raise RegmapError(f"{path}: down counters are not supported")
        if prop("intr"):
            kw["intr"] = True
            en = prop("enable")
            if prop("mask") is not None:
                raise RegmapError(f"{path}: use enable, not mask, for interrupt masks")
            if en is not None:
                if not isinstance(en, FieldNode):
                    raise RegmapError(f"{path}: enable must reference a field")
                rel = en.get_rel_path(self.top)
                if "[" in rel:
                    raise RegmapError(f"{path}: enable field {rel} inside an array is not supported")
                kw["enable"] = tuple(rel.split("."))
        for b in ("hwset", "hwclr", "we"):
            v = prop(b)
            if not isinstance(v, bool):
                raise RegmapError(f"{path}: {b} must be a boolean, not a reference")
            if v:
                kw[b] = True
        for b in ("singlepulse", "swmod"):
            if prop(b):
                kw[b] = True
        if prop("precedence") == PrecedenceType.hw:
            kw["precedence"] = "hw"
        role = f.get_property("rf_role", default=None)
        if role is not None:
            kw["role"] = role
        desc = _text(prop("desc") or prop("name"))
        if desc:
            kw["desc"] = desc
        return Field(f.inst_name, f.lsb, f.width, **kw)
