"""Which unit sits on which port of the on-chip HTAX switch (dissertation ch. 7.1, fig. 7-1).

A composition (the NIC, a test system) names the switch port of every unit it connects; the rest of the
switch's ports carry nothing.  :class:`HtaxPortPlan` checks such a plan once, before anything is built,
and ties the unused ports off, so no composition writes that loop again.
"""

from amaranth.hdl import Const

from .htax import NUM_VCS
from .params import MAX_HTAX_PORTS, check_int

__all__ = ["HtaxPortPlan"]


class HtaxPortPlan:
    """A checked map from unit names to the ports of one HTAX switch.

    Parameters
    ----------
    ports : int
        The switch's port count (2..16, as the switch accepts).
    units : dict of str to int
        ``{unit: port}``: every port a unit of the composition uses, the host's included.

    Raises
    ------
    TypeError
        A port (or ``ports``) is not an integer, or a unit name is not a string.
    ValueError
        ``ports`` is out of range; a unit's port is not one of the switch's (``velo HTAX port must be
        between 0 and 5, not 6``); two units share a port (``rma and velo HTAX ports must differ, both
        are 3``); ``units`` is empty.

    Examples
    --------
    ::

        plan = HtaxPortPlan(ports=8, units={"host": 0, "regs": 1, "rma": 3})
        wiring.connect(m, rf.htax, switch.ports[plan["regs"]])
        plan.tie_off(m, switch.ports)
    """

    def __init__(self, *, ports, units):
        self.ports = check_int("ports", ports, 2, MAX_HTAX_PORTS)
        units = dict(units)
        if not units:
            raise ValueError("units must name at least one unit, not {}")
        owner = {}
        for name, port in units.items():
            if not isinstance(name, str):
                raise TypeError(f"unit names must be strings, not {name!r}")
            check_int(f"{name} HTAX port", port, 0, ports - 1)
            if port in owner:
                raise ValueError(f"{owner[port]} and {name} HTAX ports must differ, both are {port}")
            owner[port] = name
        self.units = units

    def __getitem__(self, name):
        """The port of unit ``name``."""
        return self.units[name]

    @property
    def used(self):
        """The ports the plan's units use, ascending."""
        return sorted(self.units.values())

    @property
    def unused(self):
        """The switch ports no unit uses, ascending."""
        return [p for p in range(self.ports) if p not in self.units.values()]

    def tie_off(self, m, switch_ports):
        """Tie off every unused port of ``switch_ports`` (the switch's ``ports`` member, one
        ``HtaxPortSignature`` interface per port in a unit's orientation) in module ``m``: it sends
        nothing (``tx.valid`` low) and takes everything (``rx.ready`` and ``rx.ready2`` high on every
        VC), so the switch never waits for it."""
        if len(switch_ports) != self.ports:
            raise ValueError(f"switch_ports must have the plan's {self.ports} ports, not {len(switch_ports)}")
        ones = Const((1 << NUM_VCS) - 1, NUM_VCS)
        for p in self.unused:
            port = switch_ports[p]
            m.d.comb += [port.tx.valid.eq(0), port.rx.ready.eq(ones), port.rx.ready2.eq(ones)]
