"""Python model of the register file, built from the SystemRDL sources (dissertation ch. 7.2).

The model compiles ``rdl/nic_regs.rdl`` with systemrdl-compiler itself (same parameters as the
gateware, :func:`rtl.regs.generate.rdl_parameters`) and implements the SystemRDL access semantics
independently of the Amaranth exporter and runtime, so tests compare the gateware against the RDL,
not against the generator's own reading of it.  A change to the RDL changes the model on the next
run: there is nothing to regenerate.

Semantics modelled (docs/regs.md): ``sw`` r/w/rw, ``onread = rclr``, ``onwrite`` woclr/woset,
write-only fields reading as zero, ``singlepulse``, counters (wrap or ``incrsaturate``), sticky
interrupt fields with ``enable`` masks, hardware set (``hwset``) and hardware-driven fields.
"""

from dataclasses import dataclass, field

from rtl.regs.generate import RDL, TOP, compile_rdl, rdl_parameters

__all__ = ["RegModel", "FieldInfo", "RegInfo"]


@dataclass
class FieldInfo:
    name: str
    lsb: int
    width: int
    sw: str
    hw: str
    reset: int
    onread: str | None
    onwrite: str | None
    counter: bool
    saturate: bool
    intr: bool
    enable: str | None       # path of the enabling field "irq.mask.link_error"
    hwset: bool
    singlepulse: bool
    role: str | None

    @property
    def max(self):
        return (1 << self.width) - 1

    @property
    def readable(self):
        return "r" in self.sw

    @property
    def writable(self):
        return "w" in self.sw


@dataclass
class RegInfo:
    path: str               # "atu.gat_base[3]" (without the top name)
    addr: int               # byte offset inside the window
    fields: list
    storage: str            # "flops", "ram", "external"
    port: str               # Verilog prefix of its hardware ports ("hw__atu__flush")
    index: int = 0          # element index inside a RAM/external array
    values: dict = field(default_factory=dict)

    def field(self, name):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.path} has no field {name}")

    @property
    def reset(self):
        return sum(f.reset << f.lsb for f in self.fields)


def _access(a):
    return {"rw": "rw", "rw1": "rw", "r": "r", "w": "w", "w1": "w", "na": "na"}[a.name]


class RegModel:
    """The register file's software-visible state and semantics.

    Parameters
    ----------
    parameters : dict
        Top-level RDL parameters (:func:`rtl.regs.generate.rdl_parameters`).
    base : int
        Host address of the register window (added by :meth:`addr`).
    """

    def __init__(self, parameters, *, base=0, rdl=RDL):
        from systemrdl.node import RegfileNode, RegNode

        self.parameters = dict(parameters)
        self.base = base
        root = compile_rdl(self.parameters, rdl)
        self.regs = {}
        self.by_path = {}
        top = root.top
        for node in top.descendants(unroll=True):
            if not isinstance(node, RegNode):
                continue
            path = node.get_path()[len(TOP) + 1:]
            ram = bool(node.get_property("ram", default=False))
            storage = "ram" if ram else ("external" if node.external else "flops")
            parent = node.parent
            if storage != "flops" and not node.is_array and isinstance(parent, RegfileNode) \
                    and parent.is_array and len(list(parent.registers())) == 1:
                # a strided array written as a regfile array: one port named after the regfile
                port_path = parent.get_path(array_suffix="")[len(TOP) + 1:]
                index = parent.current_idx[0]
            elif storage != "flops":
                port_path = node.get_path(array_suffix="")[len(TOP) + 1:]
                index = node.current_idx[0] if node.is_array else 0
            else:
                port_path = node.get_path(array_suffix="__{index:d}")[len(TOP) + 1:]
                index = 0
            fields = []
            for f in node.fields():
                en = f.get_property("enable") if f.get_property("intr") else None
                fields.append(FieldInfo(
                    name=f.inst_name, lsb=f.lsb, width=f.width, sw=_access(f.get_property("sw")),
                    hw=_access(f.get_property("hw")), reset=f.get_property("reset") or 0,
                    onread=f.get_property("onread").name if f.get_property("onread") else None,
                    onwrite=f.get_property("onwrite").name if f.get_property("onwrite") else None,
                    counter=bool(f.get_property("counter")), saturate=bool(f.get_property("incrsaturate")),
                    intr=bool(f.get_property("intr")),
                    enable=en.get_path()[len(TOP) + 1:] if en is not None else None,
                    hwset=bool(f.get_property("hwset")), singlepulse=bool(f.get_property("singlepulse")),
                    role=f.get_property("rf_role", default=None)))
            info = RegInfo(path=path, addr=node.absolute_address, fields=fields, storage=storage,
                           port="hw__" + port_path.replace(".", "__"), index=index)
            self.regs[info.addr] = info
            self.by_path[path] = info
        self.reset()

    @classmethod
    def from_config(cls, cfg, *, revision=None, base=None):
        from rtl.common.addrmap import AddressMap
        params = rdl_parameters(cfg, revision=revision)
        if base is None:
            base = AddressMap.from_config(cfg)["regs"].base
        return cls(params, base=base)

    # -- lookup ---------------------------------------------------------------------------------
    def addr(self, path):
        """Host address of register ``path``."""
        return self.base + self.by_path[path].addr

    def reg(self, path_or_addr):
        if isinstance(path_or_addr, str):
            return self.by_path[path_or_addr]
        off = path_or_addr - self.base
        return self.regs[off]

    def mapped(self, offset):
        return offset in self.regs

    def registers(self, storage=None):
        return [r for r in self.regs.values() if storage is None or r.storage == storage]

    def port(self, path, fname, suffix=""):
        """Verilog name of a field's hardware port (``suffix`` ``_incr``, ``_event``, ...)."""
        return f"{self.by_path[path].port}__{fname}{suffix}"

    # -- state ----------------------------------------------------------------------------------
    def reset(self):
        for r in self.regs.values():
            r.values = {f.name: f.reset for f in r.fields}

    def peek(self, path_or_addr):
        """The read value without side effects."""
        r = self.reg(path_or_addr)
        return sum(r.values[f.name] << f.lsb for f in r.fields if f.readable)

    def field(self, path, fname):
        return self.by_path[path].values[fname]

    def read(self, path_or_addr):
        """A software read: the value, then ``rclr`` fields clear."""
        r = self.reg(path_or_addr)
        v = self.peek(r.path)
        for f in r.fields:
            if f.onread == "rclr":
                r.values[f.name] = 0
        return v

    def write(self, path_or_addr, data, be=0xFF):
        """A software write of one 64-bit word with byte enables ``be``."""
        r = self.reg(path_or_addr)
        mask = sum(0xFF << (8 * i) for i in range(8) if (be >> i) & 1)
        for f in r.fields:
            if not f.writable:
                continue
            fm = (mask >> f.lsb) & f.max
            if not fm:
                continue
            wd = (data >> f.lsb) & f.max
            old = r.values[f.name]
            if f.onwrite == "woclr":
                new = old & ~(wd & fm)
            elif f.onwrite == "woset":
                new = old | (wd & fm)
            else:
                new = (old & ~fm) | (wd & fm)
            if f.singlepulse:
                new = 0             # a pulse: the stored value is back to 0 one cycle later
            r.values[f.name] = new

    # -- hardware side --------------------------------------------------------------------------
    def incr(self, path, fname, n=1):
        r = self.by_path[path]
        f = r.field(fname)
        assert f.counter, f"{path}.{fname} is not a counter"
        v = r.values[fname] + n
        r.values[fname] = min(v, f.max) if f.saturate else v & f.max

    def event(self, path, fname, bits):
        r = self.by_path[path]
        f = r.field(fname)
        assert f.intr, f"{path}.{fname} is not an interrupt field"
        r.values[fname] |= bits & f.max

    def hw_set(self, path, fname):
        r = self.by_path[path]
        r.values[fname] = r.field(fname).max

    def hw_drive(self, path, fname, value):
        r = self.by_path[path]
        r.values[fname] = value & r.field(fname).max

    def pending(self):
        """Any interrupt status bit whose enable bit is set."""
        for r in self.regs.values():
            for f in r.fields:
                if f.intr:
                    en = f.max
                    if f.enable:
                        rp, fn = f.enable.rsplit(".", 1)
                        en = self.by_path[rp].values[fn]
                    if r.values[f.name] & en:
                        return True
        return False

    def msi(self):
        """``(address, data)`` of the interrupt write, as the host sees it."""
        addr = data = None
        for r in self.regs.values():
            for f in r.fields:
                if f.role == "msi_address":
                    addr = r.values[f.name] << f.lsb
                if f.role == "msi_data":
                    data = r.values[f.name]
        line = addr & ~7
        return line, (data << 32 if addr & 4 else data)
