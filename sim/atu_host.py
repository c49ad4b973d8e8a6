"""A host for :class:`sim.driver.atu.AtuDriver` without a simulator: the ATU is :class:`AtuModel`.

:class:`AtuModelHost` offers what the driver uses of a host (``memory``, ``mem_write64``, ``write64``,
``read64``, ``mem_read64``, ``now``, ``cycles``): the GATEs the CPU stores are kept in ``words``
(absent: zero), the GAT base register writes go into the model's ``gat_base``, a flush is done at once,
a doorbell write runs the posted bulk jobs at once (:meth:`AtuModel.job`: its GATE stores and
completion word into ``words``), and every access is counted, so a test can translate registered pages
as the ATU would and a benchmark can count what a registration costs the CPU (``bench/atu.py``).
"""

from rtl.atu.layout import JOB_RING_SHIFT, JOB_WORDS
from sim.atu_model import AtuModel
from sim.regs_model import RegModel

__all__ = ["AtuModelHost"]


class AtuModelHost:
    """``memory``: the allocator (:class:`sim.memory.HostMemory` or :class:`sim.board.BoardMemory`);
    ``cfg``: the configuration (``[atu] gat_entries``, ``[system] vpids``, the register map).

    Attributes: ``atu`` (the model), ``mem_writes`` (CPU stores to memory: GATEs, descriptors),
    ``gat_writes`` ([(index, value)]), ``flushes`` ([(first NLA page, VPID, pages)]), ``reads`` (register
    reads), ``reg_writes`` (register writes), ``jobs`` ([JobResult]), ``job_stores`` (GATE stores the jobs
    made)."""

    def __init__(self, memory, cfg):
        self.memory = memory
        self.regs = RegModel.from_config(cfg)
        self.words = {}
        self.atu = AtuModel(gat_entries=cfg["atu"]["gat_entries"], vpids=cfg["system"]["vpids"],
                            read64=self._gate, first_level=cfg["atu"]["gat_cache_entries"] > 0)
        self.gat_writes, self.flushes, self.reads = [], [], []
        self.flush_pages = 1
        self.mem_writes = self.reg_writes = self.job_stores = 0
        self.ring, self.consumer, self.jobs = 0, 0, []

    def _gate(self, addr):
        # a GATE read of memory the allocator does not own is a memory error, as the ATU's read of it is
        return self.words.get(addr, 0) if self.memory.owner(addr) is not None else None

    async def mem_write64(self, addr, value):
        assert self.memory.owner(addr) is not None, f"GATE store to unallocated memory at {addr:#x}"
        self.mem_writes += 1
        self.words[addr] = value

    async def mem_read64(self, addr):
        return self.words.get(addr, 0)

    def _run_jobs(self, producer):
        size = self.ring >> 1 & 15
        base = self.ring >> JOB_RING_SHIFT << JOB_RING_SHIFT
        while self.consumer != producer:
            addr = base + 32 * (self.consumer % (1 << size))
            words = [self.words.get(addr + 8 * k, 0) for k in range(JOB_WORDS)]
            r = self.atu.job(words if self.memory.owner(addr) is not None else None, self.consumer)
            for a, w in r.stores:
                self.words[a] = w
            self.job_stores += len(r.stores)
            if r.flush:
                self.flushes.append((r.flush[0], r.flush[2], r.flush[1]))
            self.words[addr + 8 * (JOB_WORDS - 1)] = r.completion
            self.jobs.append(r)
            self.consumer = (self.consumer + 1) & 0xFFFF

    async def write64(self, addr, value):
        path = self.regs.reg(addr).path
        self.reg_writes += 1
        if path == "atu.job_ring":
            self.ring = value
        elif path == "atu.job_doorbell":
            self._run_jobs(value & 0xFFFF)
        elif path.startswith("atu.gat_base["):
            index = int(path[len("atu.gat_base["):-1])
            self.atu.gat_base[index] = value
            self.gat_writes.append((index, value))
        elif path == "atu.gat_table":
            self.atu.gat_table = value
        elif path == "atu.flush_range":
            self.flush_pages = value + 1
        elif path == "atu.flush":
            if value >> 62 & 1:
                self.flushes.append((value & 0xFFFF_FFFF, value >> 34 & 0xFFFF, self.flush_pages))
            else:
                assert value == 1 << 63, f"flush register write {value:#x}"
        else:
            raise AssertionError(f"store to {path}")

    async def read64(self, addr):
        assert self.regs.reg(addr).path == "atu.flush", f"read of {addr:#x}"
        self.reads.append(addr)
        return 1 << 63

    def now(self):
        return 0

    async def cycles(self, n):
        raise AssertionError("the model's flushes are done at once")
