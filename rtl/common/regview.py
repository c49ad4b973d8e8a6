"""A unit's view of the register file, derived from the RDL (dissertation ch. 7.2).

A unit names the parts of the register map it owns (a block such as ``"rma"``, a register such as
``"net.node"`` or one field such as ``"irq.rma_status.vpid"``); :class:`RegisterView` turns those paths
into a signature with exactly the register file's ``hw`` ports there (:func:`rtl.common.regspec.
port_members`), nested the same way, and :func:`connect_regs` wires a unit's view to a register file
member by member along the same paths.  Adding a counter to the RDL therefore adds its ``<field>_incr``
port to the unit's ``regs`` member with no other edit; the unit drives it with one line.

A unit holds its view as ``regs: Out(RegisterView(...))``: the signature is in the unit's orientation,
the register file's ``hw`` ports flipped (``Out`` members are the unit's strobes, addresses and events,
``In`` members register values), so ``regs.rma.errors.requester_incr`` is an output of the unit and
``regs.net.node.id`` an input.
"""

import itertools
from dataclasses import replace
from pathlib import Path

from amaranth.hdl import Shape, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .regmap import RDL, register_map
from .regspec import Block, port_member, port_members

__all__ = ["RegisterView", "connect_regs"]


def _named(items, name, where):
    for item in items:
        if item.name == name:
            return item
    raise ValueError(f"the register map has no {where}")


def _select(node, parts, where=""):
    """``{name: member or nested dict}`` for the path ``parts`` below ``node``."""
    name, rest = parts[0], parts[1:]
    where = f"{where}.{name}" if where else name
    child = _named(node.children, name, where)
    if not rest:
        member = port_member(child)
        if member is None:
            raise ValueError(f"{where} has no hardware port")
        return {name: member}
    if isinstance(child, Block):
        if child.array:
            raise ValueError(f"{where} is an array: a view takes it whole, not {where}.{'.'.join(rest)}")
        return {name: _select(child, rest, where)}
    if child.storage != "flops" or len(rest) != 1:
        raise ValueError(f"the register map has no {where}.{'.'.join(rest)}: only a flip-flop register's "
                         f"field can be taken alone")
    field = _named(child.fields, rest[0], f"{where}.{rest[0]}")
    members = port_members(replace(child, fields=(field,)))
    if not members:
        raise ValueError(f"{where}.{rest[0]} has no hardware port")
    return {name: port_member(child, members)}


def _merge(into, tree, where=""):
    for name, sub in tree.items():
        path = f"{where}.{name}" if where else name
        if name not in into:
            into[name] = sub
        elif isinstance(into[name], dict) and isinstance(sub, dict):
            _merge(into[name], sub, path)
        elif isinstance(into[name], dict) or isinstance(sub, dict):
            raise ValueError(f"paths overlap at {path}: name the whole part once")
        else:
            members = dict(into[name].signature.members)
            for key, member in sub.signature.members.items():
                if key in members:
                    raise ValueError(f"{path}.{key} is named twice")
                members[key] = member
            into[name] = Out(wiring.Signature(members))


def _unit_side(members):
    """``members`` (the register file's orientation) as the unit sees them: every port flipped, every
    sub-signature rebuilt as an ``Out`` member (an interface of ``In`` sub-signatures cannot hold arrays
    of them in Amaranth 0.5)."""
    out = {}
    for name, member in members.items():
        if member.is_port:
            new = (In if member.flow == Out else Out)(member.shape, init=member.init)
        else:
            new = Out(wiring.Signature(_unit_side(member.signature.members)))
        out[name] = new.array(*member.dimensions) if member.dimensions else new
    return out


def _signature(tree):
    return {name: Out(wiring.Signature(_signature(sub))) if isinstance(sub, dict) else sub
            for name, sub in tree.items()}


class RegisterView(wiring.Signature):
    """The register-file ports of the parts of the register map a unit owns.

    Parameters
    ----------
    paths : sequence of str
        Dotted paths into the register map: a block (``"rma"``), a register (``"net.node"``) or one
        field of a flip-flop register (``"irq.rma_status.vpid"``).  An array (of blocks or registers)
        is taken whole.
    rdl : path, optional
        The SystemRDL source (default ``rdl/nic_regs.rdl``).
    **parameters
        The RDL's top-level parameters the owned parts depend on (``VPIDS=8``); the rest keep the RDL's
        defaults.  The register file must be built with the same values, which :func:`connect_regs`
        checks port by port.

    Members
    -------
    <path> : Out(Signature(...))
        For each path's first component a nested signature down to the named part, whose members are
        the register file's ``hw`` members there (:func:`rtl.common.regspec.port_members`), flipped.

    Raises
    ------
    ValueError
        A path names nothing in the register map, a part without a hardware port, a member of an
        array, or overlaps another path.
    """

    def __init__(self, paths, *, rdl=RDL, **parameters):
        paths = tuple(paths)
        if not paths or not all(isinstance(p, str) and p for p in paths):
            raise ValueError(f"paths must be a non-empty sequence of dotted names, not {paths!r}")
        regmap = register_map(rdl, **parameters)
        tree = {}
        for path in paths:
            _merge(tree, _select(regmap, path.split(".")))
        self.paths, self.parameters, self.rdl = paths, dict(sorted(parameters.items())), Path(rdl)
        super().__init__(_unit_side(_signature(tree)))

    def __eq__(self, other):
        return type(other) is RegisterView and self.members == other.members

    def __hash__(self):
        return hash((RegisterView, self.paths))

    def __repr__(self):
        params = "".join(f", {k}={v!r}" for k, v in self.parameters.items())
        rdl = "" if self.rdl == RDL else f", rdl={str(self.rdl)!r}"
        return f"RegisterView({self.paths!r}{rdl}{params})"


def _at(obj, path):
    for part in path:
        obj = obj[part] if isinstance(part, int) else getattr(obj, part)
    return obj


def _ports(signature, obj, path=()):
    """``(path, flow, value)`` of every port below ``obj`` (``signature``'s interface), arrays unrolled."""
    for name, member in signature.members.items():
        for index in itertools.product(*(range(d) for d in member.dimensions)):
            value = _at(getattr(obj, name), index)
            here = path + (name, *index)
            if member.is_port:
                yield here, member.flow, value
            else:
                yield from _ports(member.signature, value, here)


def connect_regs(m, unit, rf):
    """Wire ``unit.regs`` (an ``Out(RegisterView(...))`` member) to the register file ``rf`` (its ``hw``
    member) in module ``m``: every port of the view to the register file's port at the same path.

    Raises
    ------
    ValueError
        The register file has no port at a path of the view, or one of a different width (unit and
        register file built with different RDL parameters).
    """
    regs = unit.regs
    for path, flow, value in _ports(regs.signature, regs):
        name = ".".join(str(p) for p in path)
        try:
            target = _at(rf.hw, path)
        except (AttributeError, IndexError):
            raise ValueError(f"the register file has no port {name}") from None
        ours, theirs = Shape.cast(Value.cast(value).shape()), Shape.cast(Value.cast(target).shape())
        if ours != theirs:
            raise ValueError(f"{name} is {ours} in the unit and {theirs} in the register file: build both "
                             f"with the same RDL parameters")
        if flow == wiring.Out:
            m.d.comb += target.eq(value)            # the unit drives: a strobe, an address, an event
        else:
            m.d.comb += value.eq(target)            # the register file drives: a register value
