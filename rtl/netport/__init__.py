"""The network port (dissertation ch. 7.3, 7.4); see ``docs/network.md``."""

from rtl.common.net import NetClass, NetUnit

from .arbiter import PacketArbiter
from .ejector import Ejector, EjectorEvents
from .injector import Injector, InjectorEvents
from .lookup import LookupSignature, RouteLookup
from .netport import NetworkPort

__all__ = ["NetworkPort", "PacketArbiter", "Injector", "InjectorEvents", "Ejector", "EjectorEvents",
           "RouteLookup", "LookupSignature", "NIC_SOURCES", "NIC_SINKS", "UNITS"]

#: the NIC's unit streams into the network port: VELO requester, RMA requester (requests), RMA
#: responder (responses)
NIC_SOURCES = (NetClass.REQUEST, NetClass.REQUEST, NetClass.RESPONSE)
#: and out of it: VELO completer, RMA responder, RMA completer
NIC_SINKS = (NetUnit.VELO, NetUnit.RMA_RESPONDER, NetUnit.RMA_COMPLETER)


def from_config(cfg, **overrides):
    """The NIC's network port: its units' streams, a route table entry per node of ``[system] nodes``."""
    kw = dict(sources=NIC_SOURCES, sinks=NIC_SINKS, entries=cfg["system"]["nodes"])
    kw.update(overrides)
    return NetworkPort(**kw)


UNITS = {"netport": from_config}
