"""Host memory for the bus functional model: sparse, byte addressable, with a page allocator.

Pages are 4 KiB (``PAGE``) or 2 MiB huge pages (``HUGE_PAGE``).  Every allocation belongs to an owner
(a VPID, or ``KERNEL`` for driver structures).  Device accesses go through :meth:`HostMemory.device_write`
/ :meth:`HostMemory.device_read`, which log them and check ownership: a device write to memory that is
not allocated, or that an ownership hook refuses, is recorded in ``violations`` (and raised if
``strict``), so a test can prove the device never writes where it must not.
"""

from dataclasses import dataclass

__all__ = ["PAGE", "HUGE_PAGE", "KERNEL", "Access", "MemoryViolation", "HostMemory"]

PAGE = 4096
HUGE_PAGE = 2 * 1024 * 1024
KERNEL = -1


class MemoryViolation(Exception):
    pass


@dataclass(frozen=True)
class Access:
    kind: str           # "read" or "write"
    addr: int
    size: int
    source: str         # "cpu" or "device"
    owner: object       # owner of the page at addr (None if unallocated)


class HostMemory:
    """Sparse byte-addressable memory of a ``phys_addr_bits`` physical address space.

    Parameters
    ----------
    phys_addr_bits : int
    base : int
        Lowest address the allocator hands out (the first pages stay unallocated so that a null
        pointer from the device is caught).
    strict : bool
        Raise :class:`MemoryViolation` on an illegal device access instead of only recording it.
    """

    #: GATEs at the start of a GAT (:mod:`sim.driver.atu`) this memory holds: all of them
    gat_gates = 1 << 18

    def __init__(self, *, phys_addr_bits=52, base=0x10_0000, strict=False):
        self.limit = 1 << phys_addr_bits
        self._pages = {}            # page number -> bytearray(PAGE)
        self._owner = {}            # page number -> owner
        self._next = base
        self.strict = strict
        self.log = []
        self.violations = []
        self.log_enabled = True
        self.write_hook = None      # callable(addr, size, owner) -> bool (False: refuse) for device writes

    # -- allocation ----------------------------------------------------------------------------
    def _place(self, size, huge, align=None):
        """Base and rounded size of an allocation: huge pages are 2 MiB aligned and whole; otherwise
        whole 4 KiB pages aligned to ``align`` (a power of two, default 4 KiB)."""
        if huge:
            base = -(-self._next // HUGE_PAGE) * HUGE_PAGE
            return base, -(-size // HUGE_PAGE) * HUGE_PAGE
        align = align or PAGE
        base = -(-self._next // align) * align
        return base, -(-size // PAGE) * PAGE

    def can_alloc(self, size, *, huge=False):
        """:meth:`alloc` of ``size`` bytes (``huge``: of 2 MiB-aligned huge pages) would succeed."""
        base, size = self._place(size, huge)
        return size > 0 and base + size <= self.limit

    def alloc(self, size, *, owner=KERNEL, huge=False, zero=True, align=None):
        """Allocate ``size`` bytes of whole pages (2 MiB-aligned huge pages if ``huge``, else aligned to
        ``align``, default 4 KiB); return the base.

        A page's data is held from its first write on (an unwritten page reads as zero), so a large
        allocation costs only its ownership entries."""
        if size <= 0:
            raise ValueError(f"size must be positive, not {size}")
        base, size = self._place(size, huge, align)
        if base + size > self.limit:
            raise MemoryError("host physical address space exhausted")
        self._next = base + size
        for pn in range(base // PAGE, (base + size) // PAGE):
            self._owner[pn] = owner
            if zero:
                self._pages.pop(pn, None)
        return base

    def free(self, base, size):
        for pn in range(base // PAGE, -(-(base + size) // PAGE)):
            self._owner.pop(pn, None)
            self._pages.pop(pn, None)

    def owner(self, addr):
        return self._owner.get(addr // PAGE)

    def bytes_owned(self, owner):
        """Bytes of the pages that belong to ``owner``."""
        return PAGE * sum(1 for o in self._owner.values() if o == owner)

    def set_owner(self, base, size, owner):
        for pn in range(base // PAGE, -(-(base + size) // PAGE)):
            if pn not in self._owner:
                raise ValueError(f"page {pn * PAGE:#x} is not allocated")
            self._owner[pn] = owner

    # -- raw access (CPU side, no checks) ------------------------------------------------------
    def _page(self, pn):
        page = self._pages.get(pn)
        if page is None:
            page = self._pages[pn] = bytearray(PAGE)
        return page

    def read(self, addr, size):
        out = bytearray()
        while size:
            pn, off = divmod(addr, PAGE)
            n = min(size, PAGE - off)
            page = self._pages.get(pn)
            out += page[off:off + n] if page is not None else bytes(n)
            addr += n
            size -= n
        return bytes(out)

    def write(self, addr, data, mask=None):
        """Write ``data``; with ``mask`` (one bool per byte) only the enabled bytes."""
        data = bytes(data)
        for i in range(len(data)) if mask is not None else ():
            if mask[i]:
                a = addr + i
                self._page(a // PAGE)[a % PAGE] = data[i]
        if mask is not None:
            return
        pos = 0
        while pos < len(data):
            pn, off = divmod(addr + pos, PAGE)
            n = min(len(data) - pos, PAGE - off)
            self._page(pn)[off:off + n] = data[pos:pos + n]
            pos += n

    def read64(self, addr):
        return int.from_bytes(self.read(addr, 8), "little")

    def write64(self, addr, value):
        self.write(addr, value.to_bytes(8, "little"))

    # -- device side (logged, checked) ---------------------------------------------------------
    def _violation(self, msg):
        self.violations.append(msg)
        if self.strict:
            raise MemoryViolation(msg)

    def device_read(self, addr, size):
        """A DMA read: returns the bytes, or ``None`` if any byte lies outside allocated memory."""
        owners = {self.owner(a) for a in range(addr - addr % PAGE, addr + size, PAGE)}
        if self.log_enabled:
            self.log.append(Access("read", addr, size, "device", self.owner(addr)))
        if None in owners:
            self._violation(f"device read of unallocated memory at {addr:#x}+{size}")
            return None
        return self.read(addr, size)

    def device_write(self, addr, data, mask=None):
        """A DMA write: applied only if every touched page is allocated and the hook allows it."""
        size = len(data)
        owner = self.owner(addr)
        if self.log_enabled:
            self.log.append(Access("write", addr, size, "device", owner))
        pages = range(addr - addr % PAGE, addr + size, PAGE)
        if any(self.owner(a) is None for a in pages):
            self._violation(f"device write to unallocated memory at {addr:#x}+{size}")
            return False
        if self.write_hook is not None and not self.write_hook(addr, size, owner):
            self._violation(f"device write at {addr:#x}+{size} refused by ownership hook (owner {owner})")
            return False
        self.write(addr, data, mask)
        return True

    def device_writes(self, owner=None):
        """Logged device writes, optionally only those into pages of ``owner``."""
        return [a for a in self.log if a.kind == "write" and (owner is None or a.owner == owner)]
