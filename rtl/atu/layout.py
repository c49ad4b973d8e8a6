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
"""

from amaranth.lib import data

from rtl.common.ats import NLA_PAGE_BITS, PPN_BITS, VPID_BITS

__all__ = ["Gate", "NlaPage", "Nla", "GatBase", "GatTable", "GATE_INDEX_BITS", "PAGE_BITS", "GAT_BASE_SHIFT",
           "GAT_BASE_BITS", "MAX_GAT_INDEX_BITS", "LARGE_PAGE_BITS", "SMALL_GAT_ALIGN_BITS", "GAT_TABLE_SHIFT"]

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
