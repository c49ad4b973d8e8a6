"""The ATU driver on the host model (dissertation ch. 8.1.5, ch. 5.3): register and deregister memory.

:class:`AtuDriver` keeps one node's global address tables (GATs) in host memory, as the kernel does.  A
GAT maps 4 KiB pages or, with ``large`` in its base register (:class:`rtl.atu.layout.GatBase`), 2 MiB
pages; the two kinds take separate GAT indices: 4 KiB-page GATs from 0 up, large-page GATs from
the last GAT index down, and a registration that would make them meet is a ``MemoryError``.  The GAT
base entries go into the on-chip table (``atu.gat_base[]``, ``gat_entries`` GATs) or, with
``first_level`` (default: the configuration's ATU has a GAT cache, ``[atu] gat_cache_entries``), into
the first-level table in host memory (2^14 GATs; the table, 128 KiB, is allocated and ``atu.gat_table``
enabled with the first GAT; a new entry needs no flush: the ATU never caches an entry that is not
configured).

* **register** ``(vpid, size)``: allocate the pages, owned by ``owner``, take NLA space, write one GATE
  per page ({valid, read, write, large, vpid, ppn}, :class:`rtl.atu.layout.Gate`) into the GAT that
  covers it and return a :class:`Region` whose ``nla`` is the byte NLA of its first page.  ``large``
  chooses the page size: ``None`` takes 2 MiB pages when ``size`` is a nonzero multiple of 2 MiB and
  the host memory can allocate that many bytes of 2 MiB-aligned huge pages (``memory.can_alloc(size,
  huge=True)``; the board's :class:`sim.board.BoardMemory` cannot), otherwise 4 KiB pages; ``True``
  insists on 2 MiB pages, ``False`` on 4 KiB pages.

  - 4 KiB pages: whole pages, consecutive NLA pages handed out in order from ``first_page``.  A GAT
    (2^18 GATEs, 2 MB aligned) is allocated and its base register written the first time one of its
    pages is used.  A host memory whose ``gat_gates`` is smaller (the board's) holds only that many
    GATEs at the GAT's start, so NLA pages are handed out only from that prefix of every GAT (the ATU's
    read of a GATE beyond it ends outside the memory: an error response, a fault).
  - 2 MiB pages: one allocation of huge pages, 2 MB-aligned NLA, one GATE per 2 MiB page (``large``
    set, PPN 2 MB aligned).  A large-page GAT has 2^9 GATEs (a 4 KiB table, its base register written
    with ``large`` set) and covers 1 GiB of NLA; a region takes consecutive GATEs of the open
    large-page GAT if it fits there, otherwise a block of new large-page GATs below the lowest one, in
    ascending order, so its NLA stays contiguous when it exceeds 1 GiB.

* **deregister**: clear the GATEs, then run the flush protocol once for the whole region (fig. 5-11
  with a range: ``atu.flush_range`` = pages - 1, then ``atu.flush``: the ATU invalidates the TLB sets
  of every page and 2 MiB page of the range and sends one ATS flush request to every FU; poll
  ``done``), so no FU uses the old translation afterwards; the memory goes back to the host.  NLA
  space is never reused.

With ``jobs`` (default: the configuration's ATU has the bulk-job engine, ``[atu] jobs``) a registration of
at least ``JOB_PAGES`` pages and every deregistration are **bulk jobs** (``docs/atu.md``, "Bulk jobs"):
one descriptor per GAT the region touches (REGISTER: the ATU writes the GATEs; DEREGISTER: it zeroes
them and runs the range flush) in a ring of ``JOB_RING`` descriptors (allocated and enabled with the
first job), one doorbell write, then the CPU polls the completion words in memory; a status other than
OK raises ``RuntimeError``.  So the CPU's stores no longer scale with the pages.  The memory the ATU
reads and writes (GATs, the first-level table, the job ring) belongs to the owner ``TABLES``
(``"atu"``), so a test's ownership hook can allow the ATU's writes there and nowhere else.

Otherwise GATEs are written by the CPU (``host.mem_write64``: no bus traffic); the GAT base and flush
registers through the NIC.  A registration ends with one read of the flush register behind the posted GAT base
writes, so they have landed when it returns.
"""

from dataclasses import dataclass

from rtl.atu.layout import (
    GAT_BASE_SHIFT,
    GAT_TABLE_SHIFT,
    GATE_INDEX_BITS,
    JOB_WORDS,
    LARGE_PAGE_BITS,
    MAX_GAT_INDEX_BITS,
    GatBase,
    JobOp,
    JobStatus,
)
from sim.atu_model import gate_word, job_completion, job_descriptor
from sim.layout import pack
from sim.regs_model import RegModel

__all__ = ["AtuDriver", "Region", "PAGE", "LARGE_PAGE", "GAT_BYTES", "LARGE_GAT_BYTES", "JOB_PAGES", "JOB_RING",
           "TABLES"]

PAGE = 4096
LARGE_PAGE = PAGE << LARGE_PAGE_BITS    # 2 MiB
GAT_PAGES = 1 << GATE_INDEX_BITS        # NLA pages a GAT covers
GAT_BYTES = 8 * GAT_PAGES               # 2 MB: a 4 KiB-page GAT's 2**18 GATEs
LARGE_GATES = GAT_PAGES >> LARGE_PAGE_BITS
LARGE_GAT_BYTES = 8 * LARGE_GATES       # 4 KiB: a large-page GAT's 2**9 GATEs
JOB_PAGES = 64                          # registrations of at least this many GATEs are bulk jobs
TABLES = "atu"                          # the owner of the memory the ATU writes: GATs, first-level table, job ring
JOB_RING = 64                           # descriptors in the job ring (2 KiB)


@dataclass
class Region:
    vpid: int
    nla: int            # byte NLA of the first page
    phys: int           # host physical address of the first page (the pages are consecutive)
    size: int           # bytes (whole pages)
    read: bool = True
    write: bool = True
    large: bool = False     # 2 MiB pages

    @property
    def page_size(self):
        return LARGE_PAGE if self.large else PAGE

    def __contains__(self, nla):
        return self.nla <= nla < self.nla + self.size


class AtuDriver:
    """One node's ATU as the kernel sees it: ``host`` (:class:`sim.host.HostModel`) and ``cfg``."""

    def __init__(self, host, cfg, *, regs=None, first_page=1, first_level=None, jobs=None):
        self.host, self.cfg = host, cfg
        self.regs = regs or RegModel.from_config(cfg)
        # the first-level table in host memory (the ATU has a GAT cache): 2^14 GATs
        self.first_level = cfg["atu"]["gat_cache_entries"] > 0 if first_level is None else first_level
        self.gat_entries = 1 << MAX_GAT_INDEX_BITS if self.first_level else cfg["atu"]["gat_entries"]
        self.table = None               # the first-level table's base, once allocated
        self.gat_gates = host.memory.gat_gates   # GATEs at the start of every GAT that memory holds
        self.gats = {}                  # GAT index -> base address (both kinds)
        self.large_gats = set()         # indices of the large-page GATs
        self.next_page = first_page     # 4 KiB NLA pages are handed out in order, never reused
        self.large_floor = self.gat_entries     # lowest large-page GAT index taken
        self.large_gat, self.large_slot = None, LARGE_GATES    # the open large-page GAT, its next GATE
        self.regions = []
        self._flush_pages = 1           # atu.flush_range as last written (reset: one page)
        self.jobs = cfg["atu"]["jobs"] if jobs is None else jobs
        self.ring = None                # the job ring's base, once allocated
        self.producer = 0               # the next job's index (the doorbell's value)

    # -- GATs ---------------------------------------------------------------------------------------
    async def _gat(self, index, *, large):
        if index not in self.gats:
            if large:
                base = self.host.memory.alloc(LARGE_GAT_BYTES, owner=TABLES)
                self.large_gats.add(index)
            else:
                base = self.host.memory.alloc(8 * self.gat_gates, huge=True, owner=TABLES)
            entry = pack(GatBase, {"addr": base >> GAT_BASE_SHIFT, "large": int(large)})
            if self.first_level:
                await self.host.mem_write64(await self._table() + 8 * index, entry)
            else:
                await self.host.write64(self.regs.addr(f"atu.gat_base[{index}]"), entry)
            self.gats[index] = base
        return self.gats[index]

    async def _table(self):
        """The first-level table (allocated, zeroed and enabled the first time): 2^14 entries."""
        if self.table is None:
            self.table = self.host.memory.alloc(8 << MAX_GAT_INDEX_BITS, align=1 << GAT_TABLE_SHIFT, owner=TABLES)
            await self.host.write64(self.regs.addr("atu.gat_table"), self.table | 1)
        return self.table

    def _check_small(self, first, end):
        """``MemoryError`` unless 4 KiB NLA pages ``first .. end - 1`` can be handed out."""
        for index in range(first >> GATE_INDEX_BITS, ((end - 1) >> GATE_INDEX_BITS) + 1):
            page = max(first, index << GATE_INDEX_BITS)
            if index >= self.gat_entries:
                raise MemoryError(f"NLA page {page:#x} is beyond the {self.gat_entries} GATs")
            if index >= self.large_floor:
                raise MemoryError(f"NLA page {page:#x} is in GAT {index}, a large-page GAT: the 4 KiB-page GATs "
                                  f"(from 0 up) have met the large-page GATs (from {self.gat_entries - 1} down)")
            last = min(end, (index + 1) << GATE_INDEX_BITS) - 1
            if last & (GAT_PAGES - 1) >= self.gat_gates:
                page = max(page, (index << GATE_INDEX_BITS) + self.gat_gates)
                raise MemoryError(f"NLA page {page:#x} is beyond the {self.gat_gates} GATEs of a GAT this host "
                                  f"memory holds")

    # -- registration -------------------------------------------------------------------------------
    async def register(self, vpid, size, *, read=True, write=True, owner=None, large=None):
        """Pin ``size`` bytes for ``vpid``: a :class:`Region` of 4 KiB pages (``size`` rounded up) or,
        ``large``, of 2 MiB pages (``None``: 2 MiB pages if ``size`` is a nonzero multiple of 2 MiB and
        the host memory can allocate them).

        Raises
        ------
        ValueError
            ``large`` is true and ``size`` is not a positive multiple of 2 MiB.
        MemoryError
            ``large`` is true and the host memory cannot allocate ``size`` bytes of 2 MiB pages; the NLA
            space is exhausted (the two kinds of GAT meet, or the GATs a host memory holds are full).
        """
        owner = owner if owner is not None else f"vpid{vpid}"
        memory = self.host.memory
        if large is None:
            large = size > 0 and size % LARGE_PAGE == 0 and memory.can_alloc(size, huge=True)
        elif large:
            if size <= 0 or size % LARGE_PAGE:
                raise ValueError(f"size must be a positive multiple of 2 MiB ({LARGE_PAGE}) for large pages, "
                                 f"not {size}")
            if not memory.can_alloc(size, huge=True):
                raise MemoryError(f"the host memory cannot allocate {size} bytes of 2 MiB pages")
        if large:
            region = await self._register_large(vpid, size, read, write, owner)
        else:
            region = await self._register_small(vpid, size, read, write, owner)
        # a read behind the posted GAT base writes: they have landed when it returns
        await self.host.read64(self.regs.addr("atu.flush"))
        self.regions.append(region)
        return region

    async def _register_small(self, vpid, size, read, write, owner):
        pages = max(1, -(-size // PAGE))
        first = self.next_page
        self._check_small(first, first + pages)
        phys = self.host.memory.alloc(pages * PAGE, owner=owner)
        self.next_page += pages
        if self.jobs and pages >= JOB_PAGES:
            for index in range(first >> GATE_INDEX_BITS, ((first + pages - 1) >> GATE_INDEX_BITS) + 1):
                await self._gat(index, large=False)
            await self._run_jobs(JobOp.REGISTER, vpid, first, pages, large=False, phys=phys, read=read, write=write)
            return Region(vpid, first * PAGE, phys, pages * PAGE, read, write)
        for k in range(pages):
            page = first + k
            base = await self._gat(page >> GATE_INDEX_BITS, large=False)
            await self.host.mem_write64(base + 8 * (page & (GAT_PAGES - 1)),
                                        gate_word(ppn=(phys >> 12) + k, vpid=vpid, read=int(read), write=int(write)))
        return Region(vpid, first * PAGE, phys, pages * PAGE, read, write)

    async def _register_large(self, vpid, size, read, write, owner):
        pages = size // LARGE_PAGE
        if pages <= LARGE_GATES - self.large_slot:
            gat, slot = self.large_gat, self.large_slot
        else:
            gat, slot = self.large_floor - -(-pages // LARGE_GATES), 0
            small = -(-self.next_page >> GATE_INDEX_BITS)      # GATs 0 .. small - 1 hold 4 KiB pages
            if gat < small:
                raise MemoryError(f"{pages} pages of 2 MiB need large-page GATs from {gat} up, but GATs below "
                                  f"{small} map 4 KiB pages: the large-page GATs (from {self.gat_entries - 1} "
                                  f"down) have met the 4 KiB-page GATs (from 0 up)")
            self.large_floor = gat
        end = slot + pages
        self.large_gat = gat + (end - 1) // LARGE_GATES
        self.large_slot = end - (self.large_gat - gat) * LARGE_GATES
        phys = self.host.memory.alloc(size, owner=owner, huge=True)
        nla_page = (gat << GATE_INDEX_BITS) + (slot << LARGE_PAGE_BITS)
        if self.jobs and pages >= JOB_PAGES:
            for index in range((slot + pages - 1) // LARGE_GATES + 1):
                await self._gat(gat + index, large=True)
            await self._run_jobs(JobOp.REGISTER, vpid, nla_page, pages, large=True, phys=phys, read=read,
                                 write=write)
            return Region(vpid, nla_page * PAGE, phys, size, read, write, large=True)
        for k in range(pages):
            index, gate = divmod(slot + k, LARGE_GATES)
            base = await self._gat(gat + index, large=True)
            await self.host.mem_write64(base + 8 * gate,
                                        gate_word(ppn=(phys >> 12) + (k << LARGE_PAGE_BITS), vpid=vpid,
                                                  read=int(read), write=int(write), large=1))
        return Region(vpid, nla_page * PAGE, phys, size, read, write, large=True)

    def gate(self, nla):
        """Host address of the GATE of byte NLA ``nla`` (which must be in a registered GAT)."""
        page = nla >> 12
        index, gate = page >> GATE_INDEX_BITS, page & (GAT_PAGES - 1)
        if index in self.large_gats:
            gate >>= LARGE_PAGE_BITS
        return self.gats[index] + 8 * gate

    async def flush(self, nla_page, vpid, *, pages=1, tlb=True, ats=True, timeout_cycles=20000):
        """The flush protocol for ``pages`` NLA pages from ``nla_page`` (and the 2 MiB NLA pages they are
        in): one range flush (``atu.flush_range``, then ``atu.flush``); returns once the ATU reports
        ``done``."""
        addr = self.regs.addr("atu.flush")
        if pages != self._flush_pages:
            await self.host.write64(self.regs.addr("atu.flush_range"), pages - 1)
            self._flush_pages = pages
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
        """Invalidate the region's GATEs, flush the region's pages with one range flush, and free the
        pages (with ``jobs``: DEREGISTER jobs, one per GAT, each with its range flush)."""
        if self.jobs:
            await self._run_jobs(JobOp.DEREGISTER, region.vpid, region.nla >> 12, region.size // region.page_size,
                                 large=region.large)
            self.host.memory.free(region.phys, region.size)
            self.regions.remove(region)
            return
        for offset in range(0, region.size, region.page_size):
            await self.host.mem_write64(self.gate(region.nla + offset), 0)
        await self.flush(region.nla >> 12, region.vpid, pages=region.size // PAGE)
        self.host.memory.free(region.phys, region.size)
        self.regions.remove(region)

    # -- bulk jobs ----------------------------------------------------------------------------------
    async def _ring(self):
        """The job ring (allocated, zeroed and enabled the first time)."""
        if self.ring is None:
            self.ring = self.host.memory.alloc(32 * JOB_RING, owner=TABLES)
            await self.host.write64(self.regs.addr("atu.job_ring"),
                                    self.ring | (JOB_RING.bit_length() - 1) << 1 | 1)
        return self.ring

    async def _run_jobs(self, op, vpid, nla_page, count, *, large, phys=0, read=True, write=True,
                        timeout_cycles=None):
        """``count`` GATEs (of 2 MiB pages if ``large``) from ``nla_page``: one job per GAT, posted with
        one doorbell write; returns when every completion word says done (``RuntimeError`` for a status
        other than OK, ``TimeoutError`` after ``timeout_cycles``, default from the pages)."""
        step = LARGE_GATES if large else GAT_PAGES          # GATEs per GAT
        shift = LARGE_PAGE_BITS if large else 0
        pieces, k = [], 0                                   # (first NLA page, GATEs, first GATE's offset)
        while k < count:
            page = nla_page + (k << shift)
            n = min(count - k, step - ((page & (GAT_PAGES - 1)) >> shift))
            pieces.append((page, n, k))
            k += n
        if len(pieces) > JOB_RING:
            raise ValueError(f"{len(pieces)} jobs do not fit the ring of {JOB_RING}")
        ring = await self._ring()
        posted = []
        for page, n, k in pieces:
            index, self.producer = self.producer, (self.producer + 1) & 0xFFFF
            addr = ring + 32 * (index % JOB_RING)
            words = job_descriptor(op=op, count=n, nla_page=page, vpid=vpid, ppn=(phys >> 12) + (k << shift),
                                   read=int(read), write=int(write), large=int(large))
            for w in range(JOB_WORDS):
                await self.host.mem_write64(addr + 8 * w, words[w])
            posted.append((index, addr, n))
        await self.host.write64(self.regs.addr("atu.job_doorbell"), self.producer)
        limit = timeout_cycles or 20000 + 16 * count
        start = self.host.now()
        for index, addr, n in posted:
            while True:
                done = job_completion(await self.host.mem_read64(addr + 8 * (JOB_WORDS - 1)))
                if done["done"]:
                    break
                if self.host.now() - start > limit:
                    st = await self.host.read64(self.regs.addr("atu.job_status"))
                    raise TimeoutError(f"ATU job {index} ({op.name}, {n} pages) not done in {limit} cycles "
                                       f"(atu.job_status: consumer {st & 0xFFFF}, busy {st >> 16 & 1})")
                await self.host.cycles(min(256, 8 + n // 32))
            if done["status"] != JobStatus.OK or done["index"] != index:
                raise RuntimeError(f"ATU job {index} ({op.name} of {n} pages from NLA page {nla_page:#x}) "
                                   f"completed with {done['status'].name}, index {done['index']}")
