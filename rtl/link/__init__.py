"""The network layer's link port (dissertation ch. 7.3): see ``docs/link.md``."""

from .framing import PacketRestorer, PacketShaper
from .link_port import COUNTERS, LinkPort
from .link_rx import LinkRx
from .link_tx import LinkTx
from .params import FlitType, LinkParams, PhitCtl
from .rx_buffer import RxBuffer

__all__ = ["LinkPort", "LinkTx", "LinkRx", "RxBuffer", "PacketShaper", "PacketRestorer", "LinkParams",
           "PhitCtl", "FlitType", "COUNTERS", "UNITS"]


def _link(cfg):
    return LinkPort(**cfg["link"])


UNITS = {"link": _link}
