"""The address translation unit (dissertation ch. 5.3-5.6); see ``docs/atu.md``."""

from rtl.common.regview import connect_regs

from .atu import REGISTERS, Atu
from .flush import AtuFlush, FlushControlSignature
from .formats import AsyncReadSignature, AtuFormats, OfferSignature, TlbGeometry
from .gatcache import AtuGatCache, GatCacheReadSignature
from .gate import AtuGateCheck
from .jobs import AtuFlushMux, AtuJobs
from .layout import GatBase, Gate, GatTable, Nla, NlaPage
from .lookup import AtuLookup
from .queue import AtuRequestQueue
from .readq import AtuReadQueue
from .rob import AtuReorderBuffer
from .rx import AtuRxDecoder
from .tlb import AtuTlb, TlbReadSignature
from .tx import AtuTxArbiter

__all__ = ["connect_regs",
           "Atu", "REGISTERS", "AtuRxDecoder", "AtuRequestQueue", "AtuLookup", "AtuTlb", "AtuReorderBuffer",
           "AtuReadQueue", "AtuGateCheck", "AtuGatCache", "GatCacheReadSignature", "AtuFlush", "AtuTxArbiter",
           "AtuJobs", "AtuFlushMux",
           "AtuFormats", "OfferSignature", "AsyncReadSignature", "TlbGeometry", "TlbReadSignature",
           "FlushControlSignature", "Gate", "GatBase", "GatTable", "Nla", "NlaPage", "UNITS", "atu_from_config"]


def atu_from_config(cfg, **overrides):
    """The :class:`Atu` for ``cfg`` (``[atu]`` and ``[system]``), with keyword ``overrides``."""
    a = cfg["atu"]
    kw = dict(gat_entries=a["gat_entries"], tlb_entries=a["tlb_entries"], tlb_ways=a["tlb_ways"],
              large_tlb_entries=a["large_tlb_entries"], lookahead=a["lookahead"],
              gat_cache_entries=a["gat_cache_entries"], jobs=a["jobs"],
              reorder_entries=a["reorder_entries"], request_fifo=a["request_fifo"], vpids=cfg["system"]["vpids"],
              htax_port=a["htax_port"], host_port=a["host_port"], fu_ports=tuple(a["fu_ports"]))
    kw.update(overrides)
    return Atu(**kw)


UNITS = {"atu": atu_from_config}
