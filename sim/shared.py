"""One design elaborated once and instantiated many times in a simulation top.

Amaranth elaborates every instance of a component anew, and :mod:`sim.dedupe` merges the copies only
after that: a system of N NICs costs N times one NIC's conversion (about 15 s each), though the NICs
are identical.  :class:`SharedModule` converts a component to Verilog once, as a module of its
own name; :meth:`SharedModule.instance` returns a stand-in with the same signature whose elaboration
is an ``Instance`` of that module, so the top connects it exactly as it would the component.
A top lists its shared modules in its ``modules`` attribute; :func:`sim.runner.run_cocotb` appends
their text to the top's.

Only for designs whose copies are identical (no per-instance constants) and whose one clock domain is
``sync``; a simulation in the Amaranth simulator cannot use it (``Instance``).
"""

import re

from amaranth.back import verilog
from amaranth.hdl import ClockSignal, Instance, ResetSignal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from .verilog_fix import trigger_processes

__all__ = ["SharedModule"]

_PORT = re.compile(r"^\s*(?:input|output)\s+(?:\[[^\]]*\]\s*)?(\w+);", re.M)


class SharedModule:
    """``component`` as Verilog module ``name`` (converted here, once).

    Attributes
    ----------
    name : str
    signature : wiring.Signature
        The component's.
    text : str
        The module's Verilog (with its submodules).
    """

    def __init__(self, component, name):
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"a shared module's name is a plain Verilog identifier, not {name!r}")
        self.name = name
        self.signature = component.signature
        self.text = trigger_processes(verilog.convert(component, name=name, emit_src=False))
        header = self.text[self.text.index(f"module {name}("):]
        self._ports = set(_PORT.findall(header[:header.index("endmodule")]))
        members = {_port_name(p) for p, _, _ in self.signature.flatten(self.signature.create())}
        extra = self._ports - members - {"clk", "rst"}
        if extra:
            raise ValueError(f"{name} has ports beyond its signature and sync: {sorted(extra)} "
                             f"(a second clock domain cannot be shared)")
        if members - self._ports:
            raise ValueError(f"{name}'s Verilog lacks the ports of members {sorted(members - self._ports)}")

    def instance(self, domain="sync"):
        """A component with the signature, elaborated as an instance of the module clocked by
        ``domain``."""
        return _Instance(self, domain)


def _port_name(path):
    return "__".join(str(p) for p in path)


class _Instance(wiring.Component):
    def __init__(self, shared, domain):
        self._shared = shared
        self._domain = domain
        super().__init__(shared.signature)

    def elaborate(self, platform):
        ports = {}
        if "clk" in self._shared._ports:
            ports["i_clk"] = ClockSignal(self._domain)
        if "rst" in self._shared._ports:
            ports["i_rst"] = ResetSignal(self._domain)
        for path, member, value in self.signature.flatten(self):
            ports[("o_" if member.flow == Out else "i_") + _port_name(path)] = Value.cast(value)
        return Instance(self._shared.name, **ports)      # no level of its own: nic0 is the instance
