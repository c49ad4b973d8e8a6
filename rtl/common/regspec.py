"""The register-map description (dissertation ch. 7.2): what the register file and the units agree on.

:mod:`rtl.common.regmap` reads the SystemRDL model into these classes (one :class:`Field` per RDL field,
one :class:`Reg` per register or register array, one :class:`Block` per regfile);
:class:`rtl.regs.regfile.RegisterFile` turns the description into gateware, and :func:`port_members`
gives the hardware ports of any part of it, the register file's ``hw`` member and a unit's register
view (:class:`rtl.common.regview.RegisterView`) alike.  The classes validate their arguments so a bad
description fails at construction with a precise message, not as wrong hardware.

Every register is 64 bits wide and 8-byte aligned: one HTAX data word (docs/regs.md).
"""

from dataclasses import dataclass, field

from amaranth.hdl import unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

__all__ = ["Field", "Reg", "Block", "REG_BITS", "SW_ACCESS", "HW_ACCESS", "STORAGE", "RF_ROLES", "port_members",
           "port_member"]

REG_BITS = 64
SW_ACCESS = ("rw", "r", "w", "na")
HW_ACCESS = ("rw", "r", "w", "na")
STORAGE = ("flops", "ram", "external")
RF_ROLES = ("dropped", "unmapped", "error", "msi_address", "msi_data")


def _ident(name, what):
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise ValueError(f"{what} name must be a Python identifier not starting with '_', not {name!r}")


@dataclass(frozen=True)
class Field:
    """One field of a register.

    Parameters
    ----------
    name : str
    lsb, width : int
        Bit position inside the 64-bit register.
    sw : str
        Software access: ``rw``, ``r``, ``w`` (write-only, reads as zero) or ``na``.
    hw : str
        Hardware access of the unit: ``r`` (the unit reads the value), ``w`` (the unit drives it every
        cycle), ``rw`` (``r`` plus a write enable ``we``) or ``na``.
    reset : int
    onread : str or None
        ``"rclr"``: a software read returns the value and clears it.
    onwrite : str or None
        ``"woclr"`` / ``"woset"``: written ones clear / set bits; otherwise written bits replace.
    counter, saturate : bool
        Up-counter incremented by a one-cycle strobe; wraps unless ``saturate``.
    intr : bool
        Sticky interrupt bits set by a per-bit event input; ``enable`` names the mask field.
    enable : tuple or None
        ``(block path..., register, field)`` of the field whose bits enable this one's.
    hwset, hwclr, we, singlepulse, swmod : bool
        SystemRDL properties of the same names.
    precedence : str
        ``"sw"`` or ``"hw"``: who wins when both write in one cycle.  Counter increments and interrupt
        events are never lost: they apply after a software write or clear in the same cycle.
    role : str or None
        ``rf_role``: the register file drives or uses this field itself (:data:`RF_ROLES`).
    """
    name: str
    lsb: int
    width: int
    sw: str = "rw"
    hw: str = "na"
    reset: int = 0
    onread: str | None = None
    onwrite: str | None = None
    counter: bool = False
    saturate: bool = False
    intr: bool = False
    enable: tuple | None = None
    hwset: bool = False
    hwclr: bool = False
    we: bool = False
    singlepulse: bool = False
    swmod: bool = False
    precedence: str = "sw"
    role: str | None = None
    desc: str = ""

    def __post_init__(self):
        _ident(self.name, "field")
        if not (0 <= self.lsb and 1 <= self.width and self.lsb + self.width <= REG_BITS):
            raise ValueError(f"field {self.name} bits {self.lsb}+{self.width} do not fit a {REG_BITS}-bit "
                             f"register")
        if self.sw not in SW_ACCESS:
            raise ValueError(f"field {self.name} sw access must be one of {', '.join(SW_ACCESS)}, "
                             f"not {self.sw!r}")
        if self.hw not in HW_ACCESS:
            raise ValueError(f"field {self.name} hw access must be one of {', '.join(HW_ACCESS)}, "
                             f"not {self.hw!r}")
        if not 0 <= self.reset < 1 << self.width:
            raise ValueError(f"field {self.name} reset {self.reset:#x} does not fit {self.width} bits")
        if self.onread not in (None, "rclr"):
            raise ValueError(f"field {self.name} onread must be None or 'rclr', not {self.onread!r}")
        if self.onwrite not in (None, "woclr", "woset"):
            raise ValueError(f"field {self.name} onwrite must be None, 'woclr' or 'woset', "
                             f"not {self.onwrite!r}")
        if self.onread and "r" not in self.sw:
            raise ValueError(f"field {self.name} is rclr but not software readable")
        if self.onwrite and "w" not in self.sw:
            raise ValueError(f"field {self.name} is {self.onwrite} but not software writable")
        if self.precedence not in ("sw", "hw"):
            raise ValueError(f"field {self.name} precedence must be 'sw' or 'hw', not {self.precedence!r}")
        if self.role is not None and self.role not in RF_ROLES:
            raise ValueError(f"field {self.name} rf_role must be one of {', '.join(RF_ROLES)}, "
                             f"not {self.role!r}")
        if self.intr and self.counter:
            raise ValueError(f"field {self.name} cannot be both a counter and an interrupt")
        if self.singlepulse and "w" not in self.sw:
            raise ValueError(f"field {self.name} is singlepulse but not software writable")

    @property
    def mask(self):
        return ((1 << self.width) - 1) << self.lsb

    @property
    def hw_driven(self):
        """The unit drives the field every cycle (``hw=w``/``rw`` without ``we``, set/clr, counter)."""
        return ("w" in self.hw and not (self.we or self.hwset or self.hwclr or self.counter or self.intr))


@dataclass(frozen=True)
class Reg:
    """A 64-bit register, or an array of ``count`` registers ``stride`` bytes apart.

    ``storage`` is ``"flops"`` (flip-flops; arrays are unrolled), ``"ram"`` (block RAM with a
    synchronous read port for the unit) or ``"external"`` (the unit holds the storage and serves a
    synchronous read/write port).
    """
    name: str
    offset: int
    fields: tuple
    count: int = 1
    stride: int = 8
    storage: str = "flops"
    layout: object = None       # the generated data.Struct of the register, for the unit's ports
    desc: str = ""
    array: bool = False         # an RDL array (even of one element): ports are indexed

    def __post_init__(self):
        _ident(self.name, "register")
        if self.storage not in STORAGE:
            raise ValueError(f"register {self.name} storage must be one of {', '.join(STORAGE)}, "
                             f"not {self.storage!r}")
        if self.offset % 8:
            raise ValueError(f"register {self.name} offset must be 8-byte aligned, not {self.offset:#x}")
        if self.count < 1:
            raise ValueError(f"register {self.name} count must be at least 1, not {self.count}")
        if self.stride < 8 or self.stride & (self.stride - 1):
            raise ValueError(f"register {self.name} stride must be a power of two of at least 8, "
                             f"not {self.stride}")
        used = 0
        for f in self.fields:
            if used & f.mask:
                raise ValueError(f"register {self.name} field {f.name} overlaps another field")
            used |= f.mask
        if self.storage != "flops":
            for f in self.fields:
                bad = (f.onread or f.onwrite or f.counter or f.intr or f.hwset or f.hwclr or f.singlepulse
                       or f.swmod or f.role)
                if bad:
                    raise ValueError(f"{self.storage} register {self.name} field {f.name} must be plain "
                                     f"rw/r/w storage (no side effects, counters or interrupts)")
            if self.storage == "ram" and any("w" in f.hw for f in self.fields):
                raise ValueError(f"ram register {self.name} cannot be written by hardware; make it "
                                 f"external")

    @property
    def reset(self):
        return sum(f.reset << f.lsb for f in self.fields)

    @property
    def span(self):
        return self.count * self.stride


@dataclass(frozen=True)
class Block:
    """A regfile: registers and nested blocks at offsets relative to the block; ``count`` copies."""
    name: str
    offset: int
    children: tuple = field(default_factory=tuple)
    count: int = 1
    stride: int = 0
    desc: str = ""
    array: bool = False

    def __post_init__(self):
        _ident(self.name, "block")
        names = [c.name for c in self.children]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"block {self.name} has duplicate member {sorted(dup)[0]!r}")
        if self.count > 1 and self.stride <= 0:
            raise ValueError(f"block {self.name} array needs a positive stride, not {self.stride}")


def _flop_members(reg):
    members = {}
    for f in reg.fields:
        if f.role:
            continue
        if "r" in f.hw:
            members[f.name] = Out(f.width)
        if f.hw_driven or f.we:
            members[f.name + "_next"] = In(f.width)
        if f.we:
            members[f.name + "_we"] = In(1)
        if f.hwset:
            members[f.name + "_set"] = In(1)
        if f.hwclr:
            members[f.name + "_clr"] = In(1)
        if f.counter:
            members[f.name + "_incr"] = In(1)
        if f.intr:
            members[f.name + "_event"] = In(f.width)
        if f.swmod:
            members[f.name + "_swmod"] = Out(1)
    return members


def _reg_shape(reg):
    return reg.layout if reg.layout is not None else unsigned(REG_BITS)


def port_members(node):
    """The hardware-port members of a :class:`Reg` or :class:`Block` (a dict; empty: no port), in the
    register file's orientation (``Out``: the register file drives it).

    Member names (docs/regs.md): ``<field>`` (value out), ``<field>_next``/``<field>_we`` (hardware
    write), ``<field>_set``/``_clr``, ``<field>_incr``, ``<field>_event``, ``<field>_swmod``; a RAM
    array has ``addr``/``data``, an external one ``r_*``/``w_*``; a block nests its children's.
    """
    if isinstance(node, Reg):
        if node.storage == "flops":
            return _flop_members(node)
        abits = max(1, ceil_log2(node.count))
        if node.storage == "ram":
            return {"addr": In(abits), "data": Out(_reg_shape(node))}
        return {"r_addr": Out(abits), "r_en": Out(1), "r_data": In(_reg_shape(node)),
                "w_addr": Out(abits), "w_en": Out(1), "w_data": Out(_reg_shape(node)), "w_be": Out(8)}
    members = {}
    for child in node.children:
        member = port_member(child)
        if member is not None:
            members[child.name] = member
    return members


def port_member(node, members=None):
    """The member a :class:`Block` or :class:`Reg` is in its parent's signature: ``members`` (default
    :func:`port_members` of ``node``) as a signature, an array of them for an RDL array of blocks or
    flip-flop registers; ``None`` when ``node`` has no hardware port."""
    members = port_members(node) if members is None else members
    if not members:
        return None
    member = Out(wiring.Signature(members))
    if node.array and (isinstance(node, Block) or node.storage == "flops"):
        member = member.array(node.count)
    return member
