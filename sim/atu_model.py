"""Reference model of the ATU semantics (dissertation ch. 5.3; ``docs/atu.md``).

The model answers a translation request from the GAT base table and the GATEs in host memory, with
the cause priority the RTL implements:

1. VPID not below ``vpids`` or NLA page beyond ``gat_entries`` GATs -> ``NLA_RANGE``;
2. GAT base entry zero, or a 4 KB-page GAT whose base is not 2 MB aligned -> ``GAT_NOT_CONFIGURED``;
3. the GATE read fails (unallocated memory) -> ``MEMORY_ERROR``;
4. GATE not valid -> ``INVALID_GATE``; 5. GATE VPID differs -> ``VPID_MISMATCH``;
6. the GATE's ``large`` flag differs from its GAT's, or a large page's PPN is not 2 MB aligned ->
   ``PAGE_SIZE``;
7. read/write not permitted -> ``PERMISSION``; otherwise OK with the GATE's page number (a large page:
   its PPN plus the 4 KB page's index inside the 2 MB page).

A GAT base entry (:class:`rtl.atu.layout.GatBase`) holds the base and the ``large`` flag in bit 0: a
4 KB-page GAT has 2^18 GATEs (GATE index = the NLA page's low 18 bits), a large-page GAT 2^9 (GATE
index = those bits >> 9).  With ``gat_table`` enabled (:class:`rtl.atu.layout.GatTable`: bit 0 and the
base) the GAT base entries come from the first-level table in memory (2^14 entries), so every GAT
index is in range, and a failed read of the entry is a ``MEMORY_ERROR``.

Bulk jobs (:meth:`AtuModel.job`): a :class:`rtl.atu.layout.JobDescriptor` gives the GATE stores the
ATU makes, the range flush it runs and the status in its completion word, checked in this order:
unreadable descriptor -> ``MEMORY_ERROR``; unknown op, count 0, a reserved bit set or VPID not below
``vpids`` -> ``MALFORMED``; ``large`` with a first NLA page (or, to register, a PPN) not 2 MB aligned
-> ``PAGE_SIZE``; a register or deregister job whose GAT index is beyond the table or whose pages leave
their GAT, a register job whose physical pages pass the 40-bit PPN, a flush beyond the NLA space ->
``RANGE``; then (register, deregister) the GAT entry: its
read fails -> ``MEMORY_ERROR``, not configured -> ``GAT_NOT_CONFIGURED``, ``large`` differs ->
``PAGE_SIZE``.  A failed job stores nothing and flushes nothing.

A TLB only caches GATEs, so as long as software changes a GATE only through the flush protocol the
answer equals the model's at the time of the request.  Packing helpers use the same structs as the RTL.
"""

from dataclasses import dataclass

from rtl.atu.layout import (
    GAT_BASE_SHIFT,
    GAT_TABLE_SHIFT,
    GATE_INDEX_BITS,
    JOB_WORDS,
    LARGE_PAGE_BITS,
    MAX_GAT_INDEX_BITS,
    SMALL_GAT_ALIGN_BITS,
    Gate,
    JobCompletion,
    JobDescriptor,
    JobOp,
    JobStatus,
)
from rtl.common.ats import AtsCause, AtsCmd, AtsMessage
from sim.layout import pack, unpack

__all__ = ["AtuModel", "Translation", "JobResult", "job_descriptor", "job_completion", "gate_word", "gate_fields",
           "translation_request", "flush_response", "decode_ats"]


@dataclass(frozen=True)
class Translation:
    ok: int
    cause: AtsCause
    ppn: int


def gate_word(*, ppn, vpid, read=1, write=1, valid=1, large=0):
    """A 64-bit GATE (:class:`rtl.atu.layout.Gate`)."""
    return pack(Gate, {"valid": valid, "read": read, "write": write, "large": large, "vpid": vpid, "ppn": ppn})


def job_descriptor(*, op, count, nla_page, vpid=0, ppn=0, read=1, write=1, large=0, gat=0, raw=None):
    """The 4 words of a :class:`rtl.atu.layout.JobDescriptor` (completion word 0); ``raw``: {field:
    value} packed on top (reserved fields included, for malformed descriptors)."""
    fields = {"op": JobOp(op).value, "count": count, "nla_page": nla_page, "vpid": vpid, "ppn": ppn, "read": int(read),
              "write": int(write), "large": int(large), "gat": int(gat), **(raw or {})}
    value = pack(JobDescriptor, fields)
    return [value >> (64 * k) & ((1 << 64) - 1) for k in range(JOB_WORDS)]


def job_completion(word):
    """``{"done", "status" (JobStatus), "index"}`` of a completion word."""
    f = unpack(JobCompletion, word, ["done", "status", "index"])
    f["status"] = JobStatus(f["status"])
    return f


@dataclass(frozen=True)
class JobResult:
    """What a job does: ``status``; ``stores`` [(address, GATE word)] in order; ``flush`` (first NLA
    page, pages, VPID, ``gat``) or ``None``; ``completion`` (the word written back)."""
    status: JobStatus
    stores: tuple
    flush: tuple
    completion: int


def gate_fields(word):
    return unpack(Gate, word, ["valid", "read", "write", "large", "vpid", "ppn"])


def translation_request(*, vpid, nla_page, write, next=0):
    return pack(AtsMessage, {"translation_request.cmd": AtsCmd.TRANSLATION_REQUEST.value,
                             "translation_request.vpid": vpid, "translation_request.nla_page": nla_page,
                             "translation_request.write": write, "translation_request.next": next})


def flush_response(request_word):
    """The flush response that echoes a flush request."""
    return (request_word & ~3) | AtsCmd.FLUSH_RESPONSE.value


def decode_ats(word):
    """``(AtsCmd, fields)`` of a 64-bit ATS message."""
    cmd = AtsCmd(word & 3)
    if cmd == AtsCmd.TRANSLATION_RESPONSE:
        f = unpack(AtsMessage, word, ["translation_response.ok", "translation_response.cause",
                                      "translation_response.ppn"])
        return cmd, Translation(f["translation_response.ok"], AtsCause(f["translation_response.cause"]),
                                f["translation_response.ppn"])
    if cmd == AtsCmd.FLUSH_REQUEST:
        return cmd, unpack(AtsMessage, word, ["flush_request.vpid", "flush_request.nla_page",
                                              "flush_request.flush_id"])
    return cmd, unpack(AtsMessage, word, ["raw"])


class AtuModel:
    """ATU semantics over a GAT base table and a memory reader.

    Parameters
    ----------
    gat_entries, vpids : int
    read64 : callable(addr) -> int or None
        Reads a GATE (or a first-level entry) from host memory; ``None`` for a memory error.
    first_level : bool
        The ATU has a GAT cache (``gat_cache_entries`` > 0), so ``gat_table`` is honoured.
    """

    def __init__(self, *, gat_entries, vpids, read64, first_level=False):
        self.gat_entries = gat_entries
        self.vpids = vpids
        self.read64 = read64
        self.first_level = first_level          # the ATU has a GAT cache (else gat_table is ignored)
        self.gat_base = [0] * gat_entries       # register value: base | large (bit 0); 0: not configured
        self.gat_table = 0                      # register value: first-level table base | enable (bit 0)

    @property
    def table_on(self):
        """GAT base entries come from the first-level table in memory."""
        return self.first_level and self.gat_table & 1

    def gat_entry(self, gat):
        """The GAT base entry of GAT ``gat`` (``None``: the first-level entry's read fails)."""
        if self.table_on:
            return self.read64((self.gat_table >> GAT_TABLE_SHIFT << GAT_TABLE_SHIFT) + 8 * gat)
        return self.gat_base[gat] if gat < self.gat_entries else 0

    def large(self, nla_page):
        """The NLA page's GAT maps 2 MB pages."""
        return self.gat_entry(nla_page >> GATE_INDEX_BITS) & 1

    def gate_address(self, nla_page):
        entry = self.gat_entry(nla_page >> GATE_INDEX_BITS)
        index = nla_page & ((1 << GATE_INDEX_BITS) - 1)
        if entry & 1:
            index >>= LARGE_PAGE_BITS
        return ((entry >> GAT_BASE_SHIFT & ((1 << 40) - 1)) << GAT_BASE_SHIFT) + 8 * index

    def translate(self, vpid, nla_page, write):
        """The expected :class:`Translation` of one request."""
        gat = nla_page >> GATE_INDEX_BITS
        limit = 1 << MAX_GAT_INDEX_BITS if self.table_on else self.gat_entries
        if vpid >= self.vpids or gat >= limit:
            return Translation(0, AtsCause.NLA_RANGE, 0)
        entry = self.gat_entry(gat)
        if entry is None:
            return Translation(0, AtsCause.MEMORY_ERROR, 0)
        base = entry >> GAT_BASE_SHIFT & ((1 << 40) - 1)
        if base == 0 or not entry & 1 and base % (1 << SMALL_GAT_ALIGN_BITS):
            return Translation(0, AtsCause.GAT_NOT_CONFIGURED, 0)
        return self.check(self.read64(self.gate_address(nla_page)), vpid, write, large=self.large(nla_page),
                          page=nla_page)

    @staticmethod
    def check(gate, vpid, write, *, large=0, page=0):
        """The answer for ``gate`` (``None``: a memory error), read for NLA page ``page`` of a GAT with
        the ``large`` flag."""
        if gate is None:
            return Translation(0, AtsCause.MEMORY_ERROR, 0)
        g = gate_fields(gate)
        if not g["valid"]:
            return Translation(0, AtsCause.INVALID_GATE, 0)
        if g["vpid"] != vpid:
            return Translation(0, AtsCause.VPID_MISMATCH, 0)
        if g["large"] != large or large and g["ppn"] % (1 << LARGE_PAGE_BITS):
            return Translation(0, AtsCause.PAGE_SIZE, 0)
        if not (g["write"] if write else g["read"]):
            return Translation(0, AtsCause.PERMISSION, 0)
        return Translation(1, AtsCause.NONE, g["ppn"] | (page % (1 << LARGE_PAGE_BITS) if large else 0))

    def nla_space_bits(self):
        """Bits of an NLA page the ATU keeps: 18 + GAT index bits (14 with a GAT cache)."""
        gat_bits = MAX_GAT_INDEX_BITS if self.first_level else (self.gat_entries - 1).bit_length()
        return GATE_INDEX_BITS + gat_bits

    def job(self, words, index):
        """The :class:`JobResult` of the descriptor ``words`` (4 ints; ``None``: its read fails) posted
        as job ``index``."""
        status, stores, flush = self._job(words)
        if status != JobStatus.OK:
            stores, flush = (), None
        completion = pack(JobCompletion, {"done": 1, "status": status.value, "index": index % (1 << 16)})
        return JobResult(status, tuple(stores), flush, completion)

    def _job(self, words):
        if words is None:
            return JobStatus.MEMORY_ERROR, (), None
        value = sum(w << (64 * k) for k, w in enumerate(words))
        d = unpack(JobDescriptor, value, ["op", "read", "write", "large", "gat", "_rsv0", "vpid", "count",
                                          "nla_page", "_rsv1", "ppn", "_rsv2"])
        ops = {o.value for o in JobOp}
        if d["op"] not in ops or d["count"] == 0 or d["_rsv0"] or d["_rsv1"] or d["_rsv2"] or d["vpid"] >= self.vpids:
            return JobStatus.MALFORMED, (), None
        op, large, first = JobOp(d["op"]), d["large"], d["nla_page"]
        step = 1 << (LARGE_PAGE_BITS * large)
        align = (1 << LARGE_PAGE_BITS) - 1
        if large and (first & align or op == JobOp.REGISTER and d["ppn"] & align):
            return JobStatus.PAGE_SIZE, (), None
        pages = d["count"] * step
        last = first + pages - 1
        flush = (first, pages, d["vpid"], d["gat"] if op == JobOp.FLUSH else 0)
        if op == JobOp.FLUSH:
            if last >> self.nla_space_bits():
                return JobStatus.RANGE, (), None
            return JobStatus.OK, (), flush
        gat = first >> GATE_INDEX_BITS
        limit = 1 << MAX_GAT_INDEX_BITS if self.table_on else self.gat_entries
        if gat >= limit or last >> GATE_INDEX_BITS != gat or op == JobOp.REGISTER and d["ppn"] + pages > 1 << 40:
            return JobStatus.RANGE, (), None
        entry = self.gat_entry(gat)
        if entry is None:
            return JobStatus.MEMORY_ERROR, (), None
        base = entry >> GAT_BASE_SHIFT & ((1 << 40) - 1)
        if base == 0 or not entry & 1 and base % (1 << SMALL_GAT_ALIGN_BITS):
            return JobStatus.GAT_NOT_CONFIGURED, (), None
        if entry & 1 != large:
            return JobStatus.PAGE_SIZE, (), None
        stores = []
        for k in range(d["count"]):
            word = 0
            if op == JobOp.REGISTER:
                word = gate_word(ppn=d["ppn"] + k * step, vpid=d["vpid"], read=d["read"], write=d["write"],
                                 large=large)
            stores.append((self.gate_address(first + k * step), word))
        return JobStatus.OK, stores, flush if op == JobOp.DEREGISTER else None
