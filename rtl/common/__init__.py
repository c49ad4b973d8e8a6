"""Formats shared by every unit, defined once: HTAX packet and link, ATS message, network stream,
device address map, the HTAX port plan, and the register map with each unit's view of it.  Units
import these; they never redefine them."""

from .addrmap import AddressMap
from .ats import AtsCause, AtsCmd, AtsMessage
from .htax import (
    HtaxBeat,
    HtaxCmd,
    HtaxHeader,
    HtaxLinkSignature,
    HtaxPortSignature,
    HtaxStatus,
    HtaxVC,
    malformed,
    malformed_reason,
)
from .net import NetBeat, NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from .portplan import HtaxPortPlan
from .regmap import register_map
from .regview import RegisterView, connect_regs

__all__ = [
    "AddressMap", "AtsCause", "AtsCmd", "AtsMessage",
    "HtaxBeat", "HtaxCmd", "HtaxHeader", "HtaxLinkSignature", "HtaxPortSignature", "HtaxStatus", "HtaxVC",
    "malformed", "malformed_reason",
    "NetBeat", "NetBeatKind", "NetHeader", "NetStreamSignature", "NetUnit",
    "HtaxPortPlan", "register_map", "RegisterView", "connect_regs",
]
