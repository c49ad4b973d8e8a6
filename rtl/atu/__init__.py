"""The address translation unit (dissertation ch. 5.3-5.6); see ``docs/atu.md``."""

from .atu import Atu, AtuRegsSignature
from .flush import AtuFlush, FlushControlSignature
from .formats import AsyncReadSignature, AtuFormats, OfferSignature
from .gate import AtuGateCheck
from .layout import GatBase, Gate, Nla, NlaPage
from .lookup import AtuLookup
from .queue import AtuRequestQueue
from .readq import AtuReadQueue
from .rob import AtuReorderBuffer
from .rx import AtuRxDecoder
from .tlb import AtuTlb, TlbReadSignature
from .tx import AtuTxArbiter

__all__ = ["connect_regs",
           "Atu", "AtuRegsSignature", "AtuRxDecoder", "AtuRequestQueue", "AtuLookup", "AtuTlb", "AtuReorderBuffer",
           "AtuReadQueue", "AtuGateCheck", "AtuFlush", "AtuTxArbiter", "AtuFormats", "OfferSignature",
           "AsyncReadSignature", "TlbReadSignature", "FlushControlSignature", "Gate", "GatBase", "Nla", "NlaPage",
           "UNITS", "atu_from_config"]


def atu_from_config(cfg, **overrides):
    """The :class:`Atu` for ``cfg`` (``[atu]`` and ``[system]``), with keyword ``overrides``."""
    a = cfg["atu"]
    kw = dict(gat_entries=a["gat_entries"], tlb_entries=a["tlb_entries"], tlb_ways=a["tlb_ways"],
              reorder_entries=a["reorder_entries"], request_fifo=a["request_fifo"], vpids=cfg["system"]["vpids"],
              htax_port=a["htax_port"], host_port=a["host_port"], fu_ports=tuple(a["fu_ports"]))
    kw.update(overrides)
    return Atu(**kw)


def connect_regs(m, atu, rf):
    """Wire ``atu.regs`` to the generated register file ``rf`` (block ``atu``, flush-done interrupt)."""
    hw = rf.hw.atu
    m.d.comb += [
        atu.regs.flush_nla.eq(hw.flush.nla), atu.regs.flush_tlb.eq(hw.flush.tlb),
        atu.regs.flush_ats.eq(hw.flush.ats), atu.regs.flush_start.eq(hw.flush.start),
        atu.regs.flush_vpid.eq(hw.flush.vpid),
        hw.errors.failed_incr.eq(atu.regs.failed_incr), hw.errors.dropped_incr.eq(atu.regs.dropped_incr),
        hw.flush.done_set.eq(atu.regs.flush_done),
        hw.tlb_counters.hits_incr.eq(atu.regs.hits_incr), hw.tlb_counters.misses_incr.eq(atu.regs.misses_incr),
        hw.flush_counters.tlb_flushes_incr.eq(atu.regs.tlb_flushes_incr),
        hw.flush_counters.atu_flushes_incr.eq(atu.regs.atu_flushes_incr),
        hw.gat_base.addr.eq(atu.regs.gat_addr), atu.regs.gat_data.eq(hw.gat_base.data.addr),
    ]


UNITS = {"atu": atu_from_config}
