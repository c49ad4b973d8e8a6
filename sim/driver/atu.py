"""The ATU driver on the host model (dissertation ch. 8.1.5, ch. 5.3): register and deregister memory.

:class:`AtuDriver` keeps one node's global address tables (GATs) in host memory, as the kernel does:

* **register** ``(vpid, size)``: allocate whole 4 KiB pages owned by ``owner``, take consecutive NLA
  pages, write one GATE per page ({valid, read, write, vpid, ppn}, :class:`rtl.atu.layout.Gate`) into
  the GAT that covers it (a GAT is allocated, 2 MB aligned, and its base register written the first
  time one of its pages is used) and return a :class:`Region` whose ``nla`` is the byte NLA of its
  first page.  A GAT has 2^18 GATEs; a host memory whose ``gat_gates`` is smaller (the board's,
  :class:`sim.board.BoardMemory`) holds only that many at the GAT's start, so NLA pages are handed out
  only from that prefix of every GAT (the ATU's read of a GATE beyond it ends outside the memory: an
  error response, a fault).
* **deregister**: clear the GATEs, then run the flush protocol for every page (fig. 5-11: TLB
  invalidation and an ATS flush request to every FU, then poll ``done``), so no FU uses the old
  translation afterwards; the pages go back to the host memory.

GATEs are written by the CPU (``host.mem_write64``: no bus traffic); the GAT base and flush registers
through the NIC.
"""

from dataclasses import dataclass

from rtl.atu.layout import GATE_INDEX_BITS
from sim.atu_model import gate_word
from sim.regs_model import RegModel

__all__ = ["AtuDriver", "Region", "PAGE", "GAT_BYTES"]

PAGE = 4096
GAT_BYTES = 8 << GATE_INDEX_BITS        # 2 MB: 2**18 GATEs


@dataclass
class Region:
    vpid: int
    nla: int            # byte NLA of the first page
    phys: int           # host physical address of the first page
    size: int           # bytes (whole pages)
    read: bool = True
    write: bool = True

    def __contains__(self, nla):
        return self.nla <= nla < self.nla + self.size


class AtuDriver:
    """One node's ATU as the kernel sees it: ``host`` (:class:`sim.host.HostModel`) and ``cfg``."""

    def __init__(self, host, cfg, *, regs=None, first_page=1):
        self.host, self.cfg = host, cfg
        self.regs = regs or RegModel.from_config(cfg)
        self.gat_entries = cfg["atu"]["gat_entries"]
        self.gat_gates = host.memory.gat_gates   # GATEs at the start of every GAT that memory holds
        self.gats = {}                  # GAT index -> base address
        self.next_page = first_page     # NLA pages are handed out in order, never reused
        self.regions = []

    async def _gate_address(self, nla_page):
        index = nla_page >> GATE_INDEX_BITS
        if index >= self.gat_entries:
            raise MemoryError(f"NLA page {nla_page:#x} is beyond the {self.gat_entries} GATs")
        if nla_page & ((1 << GATE_INDEX_BITS) - 1) >= self.gat_gates:
            raise MemoryError(f"NLA page {nla_page:#x} is beyond the {self.gat_gates} GATEs of a GAT this "
                              f"host memory holds")
        if index not in self.gats:
            base = self.host.memory.alloc(8 * self.gat_gates, huge=True)
            await self.host.write64(self.regs.addr(f"atu.gat_base[{index}]"), base)
            self.gats[index] = base
        return self.gats[index] + 8 * (nla_page & ((1 << GATE_INDEX_BITS) - 1))

    async def register(self, vpid, size, *, read=True, write=True, owner=None):
        """Pin ``size`` bytes (rounded up to pages) for ``vpid``: a :class:`Region`."""
        pages = max(1, -(-size // PAGE))
        phys = self.host.memory.alloc(pages * PAGE, owner=owner if owner is not None else f"vpid{vpid}")
        first = self.next_page
        self.next_page += pages
        for k in range(pages):
            g = await self._gate_address(first + k)
            await self.host.mem_write64(g, gate_word(ppn=(phys >> 12) + k, vpid=vpid, read=int(read),
                                                  write=int(write)))
        # a read behind the posted GAT base writes: they have landed when it returns
        await self.host.read64(self.regs.addr("atu.flush"))
        region = Region(vpid, first * PAGE, phys, pages * PAGE, read, write)
        self.regions.append(region)
        return region

    def gate(self, nla):
        """Host address of the GATE of byte NLA ``nla`` (which must be in a registered GAT)."""
        page = nla >> 12
        return self.gats[page >> GATE_INDEX_BITS] + 8 * (page & ((1 << GATE_INDEX_BITS) - 1))

    async def flush(self, nla_page, vpid, *, tlb=True, ats=True, timeout_cycles=20000):
        """The flush protocol for one NLA page; returns once the ATU reports ``done``."""
        addr = self.regs.addr("atu.flush")
        await self.host.write64(addr, nla_page | int(tlb) << 32 | int(ats) << 33 | vpid << 34 | 1 << 62)
        start = self.host.now()
        while True:
            if await self.host.read64(addr) >> 63:
                await self.host.write64(addr, 1 << 63)          # done is cleared by writing one
                return
            if self.host.now() - start > timeout_cycles:
                raise TimeoutError(f"ATU flush of NLA page {nla_page:#x} not done in {timeout_cycles} cycles")
            await self.host.cycles(8)

    async def deregister(self, region):
        """Invalidate the region's GATEs, flush every page, and free the pages."""
        for k in range(region.size // PAGE):
            await self.host.mem_write64(self.gate(region.nla + k * PAGE), 0)
        for k in range(region.size // PAGE):
            await self.flush((region.nla >> 12) + k, region.vpid)
        self.host.memory.free(region.phys, region.size)
        self.regions.remove(region)
