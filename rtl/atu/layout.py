"""ATU data structures in host memory and in the NLA (dissertation ch. 5.3, fig. 5-8).

Fig. 5-8 is missing from the text, so the bit layouts below are this project's choice; ``docs/atu.md``
draws them.  Each is defined once here and imported by the RTL, the reference model and the tests.

* :class:`Gate`: one 64-bit Global Address Table Entry.  The low byte holds the flags (valid, read,
  write, large, reserved) so a zeroed GATE (what software writes on deregistration, ch. 5.3) is
  invalid; bits 23:8 hold the 16-bit VPID, bits 63:24 the 40-bit physical page number of a 52-bit
  address.  ``large`` marks a GATE of a large-page GAT: it maps a 2 MB page (PPN 2 MB aligned).
* :class:`NlaPage`: the page part of an NLA as it travels in the ATS translation request:
  ``{GAT index, GATE index}``, GATE index in the 18 low bits (2^18 GATEs of 8 bytes = one 2 MB GAT).
* :class:`Nla`: a 64-bit network logical address: 12-bit page offset, then :class:`NlaPage`.
* :class:`GatTable`: the ``atu.gat_table`` register: ``enable`` and bits 51:17 of the first-level
  table in host memory (2^14 :class:`GatBase` entries, 128 KB, 128 KB aligned), of which the GAT
  cache holds entries when it is enabled.
* :class:`GatBase`: one GAT base-address table entry as the register file stores it (and a first-level
  table entry in host memory): ``large`` (the GAT's 2^9 GATEs map 2 MB pages) and bits 51:12 of the
  GAT's physical base (2 MB aligned for a 4 KB-page GAT, 4 KB aligned for a large-page GAT; 0 means
  "not configured").
* :class:`JobDescriptor`: one 32-byte bulk job in the job ring in host memory (ch. 5.7's command
  interface): ``op`` (:class:`JobOp`), the GATE flags, ``vpid``, ``count`` pages, the first NLA page,
  the first PPN and the :class:`JobCompletion` word the ATU writes back when the job is done.
* :class:`JobRing`: the ``atu.job_ring`` register: ``enable``, ``size`` (2^size descriptors) and bits
  51:12 of the ring.
"""

from amaranth.lib import data, enum

from rtl.common.ats import NLA_PAGE_BITS, PPN_BITS, VPID_BITS

__all__ = ["Gate", "NlaPage", "Nla", "GatBase", "GatTable", "GATE_INDEX_BITS", "PAGE_BITS", "GAT_BASE_SHIFT",
           "GAT_BASE_BITS", "MAX_GAT_INDEX_BITS", "LARGE_PAGE_BITS", "SMALL_GAT_ALIGN_BITS", "GAT_TABLE_SHIFT",
           "JobOp", "JobStatus", "JobCompletion", "JobDescriptor", "JobRing", "JOB_WORDS", "JOB_INDEX_BITS",
           "JOB_RING_SHIFT"]

PAGE_BITS = 12              # 4 KB pages
GATE_INDEX_BITS = 18        # 2^18 GATEs x 8 bytes = 2 MB per GAT
MAX_GAT_INDEX_BITS = NLA_PAGE_BITS - GATE_INDEX_BITS    # 14: up to 16384 GATs
LARGE_PAGE_BITS = 9         # a large page is 2^9 4 KB pages = 2 MB; a large-page GAT has 2^9 GATEs
GAT_BASE_SHIFT = 12         # the GAT base is kept from bit 12 (a large-page GAT is 4 KB aligned)
GAT_BASE_BITS = 52 - GAT_BASE_SHIFT
SMALL_GAT_ALIGN_BITS = 21 - GAT_BASE_SHIFT  # a 4 KB-page GAT (2 MB of GATEs) is 2 MB aligned
GAT_TABLE_SHIFT = 3 + MAX_GAT_INDEX_BITS    # the first-level table: 2^14 entries of 8 bytes, 128 KB aligned


class Gate(data.Struct):
    valid: 1
    read: 1
    write: 1
    large: 1
    _rsv: 4
    vpid: VPID_BITS
    ppn: PPN_BITS


class NlaPage(data.Struct):
    gate_index: GATE_INDEX_BITS
    gat_index: MAX_GAT_INDEX_BITS


class Nla(data.Struct):
    offset: PAGE_BITS
    page: NlaPage
    _rsv: 64 - PAGE_BITS - NLA_PAGE_BITS


class GatBase(data.Struct):
    large: 1
    _rsv: GAT_BASE_SHIFT - 1
    addr: GAT_BASE_BITS     # physical base >> 12


class GatTable(data.Struct):
    enable: 1
    _rsv: GAT_TABLE_SHIFT - 1
    base: 52 - GAT_TABLE_SHIFT   # physical base >> 17


assert Gate.as_shape().size == 64
assert Nla.as_shape().size == 64
assert GatBase.as_shape().size == 52


JOB_WORDS = 4               # a job descriptor is 4 words (32 bytes, half a line)
JOB_INDEX_BITS = 16         # the doorbell's producer and the ATU's consumer count jobs modulo 2^16
JOB_RING_SHIFT = 12         # the job ring is 4 KB aligned


class JobOp(enum.Enum, shape=3):
    REGISTER = 1            # write ``count`` valid GATEs
    DEREGISTER = 2          # write ``count`` zero GATEs, then one range flush of their pages
    FLUSH = 3               # one range flush of ``count`` pages


class JobStatus(enum.Enum, shape=4):
    OK = 0
    MALFORMED = 1           # unknown op, count 0, a reserved bit set, VPID not below ``vpids``
    RANGE = 2               # GAT index beyond the table, the range leaves its GAT (a flush: the NLA space)
    GAT_NOT_CONFIGURED = 3  # the range's GAT has no table (entry 0, or a 4 KB-page GAT not 2 MB aligned)
    PAGE_SIZE = 4           # ``large`` differs from the GAT's, or first page / PPN not 2 MB aligned
    MEMORY_ERROR = 5        # the descriptor or the first-level entry could not be read


class JobCompletion(data.Struct):
    done: 1
    status: JobStatus
    _rsv0: 11
    index: JOB_INDEX_BITS   # the job's index (its producer count)
    _rsv1: 32


class JobDescriptor(data.Struct):
    op: JobOp
    read: 1
    write: 1
    large: 1                # pages of 2 MB (count, nla_page and ppn in 2 MB steps)
    gat: 1                  # FLUSH: also invalidate the GAT cache entry of the first page's GAT
    _rsv0: 9
    vpid: VPID_BITS
    count: 32               # pages (GATEs), >= 1
    nla_page: NLA_PAGE_BITS
    _rsv1: 64 - NLA_PAGE_BITS
    ppn: PPN_BITS
    _rsv2: 64 - PPN_BITS
    completion: JobCompletion


class JobRing(data.Struct):
    enable: 1
    size: 4                 # 2^size descriptors
    _rsv: JOB_RING_SHIFT - 5
    base: 52 - JOB_RING_SHIFT


assert JobDescriptor.as_shape().size == 64 * JOB_WORDS
assert JobCompletion.as_shape().size == 64
