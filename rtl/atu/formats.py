"""Formats inside the ATU: the payloads that travel between its blocks, and the two link kinds.

The widths depend on the ATU's parameters (VPIDs, GAT entries, TLB organisation, reorder-buffer slots,
FU count), so the layouts are built once per ATU by :class:`AtuFormats` and handed to every block; no
block defines a layout another block uses.  The fixed formats (GATE, NLA, GAT base) are in
:mod:`rtl.atu.layout`, the HTAX and ATS formats in :mod:`rtl.common`.
"""

from amaranth.hdl import Cat, Mux
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from rtl.common.ats import FLUSH_ID_BITS, PPN_BITS, VPID_BITS, AtsCause
from rtl.common.htax import PORT_BITS, TAG_BITS

from .layout import GAT_BASE_BITS, GATE_INDEX_BITS, LARGE_PAGE_BITS, MAX_GAT_INDEX_BITS, SMALL_GAT_ALIGN_BITS

__all__ = ["AtuFormats", "TlbGeometry", "OfferSignature", "AsyncReadSignature", "LINE_GATES",
           "READ_ADDR_BITS", "lookahead_more", "gat_configured", "gate_word_addr"]

LINE_GATES = 8                      # GATEs in one 64-byte line: the most a GATE read returns
READ_ADDR_BITS = 52 - 3             # a GATE's word address


def gat_configured(entry):
    """A :class:`GatBase` entry (view) describes a GAT: base not 0, and a 4 KB-page GAT 2 MB aligned."""
    return (entry.addr != 0) & (entry.large | (entry.addr[:SMALL_GAT_ALIGN_BITS] == 0))


def gate_word_addr(large, gate_index, base):
    """The word address of the GATE of NLA page ``gate_index`` in the GAT at ``base`` (bits 51:12):
    {base, index}, the index of a large-page GAT being ``gate_index >> 9``."""
    return Mux(large, Cat(gate_index[LARGE_PAGE_BITS:], base), Cat(gate_index, base[SMALL_GAT_ALIGN_BITS:]))


def lookahead_more(next, large, gate_index, lookahead):
    """The look-ahead GATEs a read for ``gate_index`` fetches after its own: up to ``lookahead`` for a
    request with ``next``, within the GATE's 64-byte line (a large-page GAT's GATE index is the NLA
    page's ``gate_index >> 9``)."""
    line = Mux(large, gate_index[LARGE_PAGE_BITS:LARGE_PAGE_BITS + 3], gate_index[:3])
    rest = (LINE_GATES - 1) - line
    return Mux(next, Mux(rest > lookahead, lookahead, rest), 0)


class TlbGeometry:
    """The organisation of one TLB: the 4 KB-page TLB (``large`` 0) or the large-page TLB (``large`` 1,
    keyed by the NLA page >> 9).

    Attributes
    ----------
    large : int
    ways, sets, set_bits, tag_bits : int
    tlb_entry : StructLayout
        ``valid``, ``read``, ``write``, ``pref`` (a look-ahead filled it and it was not hit since),
        ``vpid``, ``tag``, ``ppn``.
    tlb_row : ArrayLayout
        ``ways`` entries.
    """

    def __init__(self, *, entries, ways, nla_bits, vpid_bits, large):
        self.large = large
        self.shift = LARGE_PAGE_BITS if large else 0
        self.ways = ways
        self.sets = entries // ways
        self.set_bits = exact_log2(self.sets)
        # nla_bits - 9 >= 10 > set_bits (checked by the ATU): every entry keeps a tag
        self.tag_bits = nla_bits - self.shift - self.set_bits
        self.tlb_entry = data.StructLayout({
            "valid": 1, "read": 1, "write": 1, "pref": 1, "vpid": vpid_bits, "tag": self.tag_bits,
            "ppn": PPN_BITS})
        self.tlb_row = data.ArrayLayout(self.tlb_entry, ways)
        self.tlb_key = data.StructLayout({"set": self.set_bits, "tag": self.tag_bits})

    def key(self, page):
        """``page`` (an NLA page view or value) as a :attr:`tlb_key` view."""
        v = page.as_value() if isinstance(page, data.View) else page
        return data.View(self.tlb_key, v[self.shift:])


class AtuFormats:
    """Every parameter-dependent layout of one ATU (ch. 5.3, fig. 5-12).

    Parameters
    ----------
    gat_entries, tlb_entries, tlb_ways, reorder_entries, vpids : int
        As for :class:`rtl.atu.Atu` (already checked there).
    fus : int
        Number of FU ports (one pending counter each, plus one for any other source).

    Attributes
    ----------
    page : StructLayout
        The NLA page as the ATU keeps it: ``gate_index`` (18 bits), ``gat_index`` (``gat_bits``).
    small, large : TlbGeometry
        The 4 KB-page TLB and the large-page TLB (one way).
    request : StructLayout
        A translation request in the request queue: ``vpid``, ``nla``, ``write``, ``next`` (the access
        reaches the end of its page), ``src`` (the FU's port), ``tag``, ``bad`` (VPID or GAT index out
        of range, decided on arrival), ``far`` (GAT index beyond the on-chip table: out of range unless
        the first-level table in host memory is on).
    lookup : StructLayout
        A request leaving the TLB lookup: ``miss``; the immediate answer ``ok``, ``cause``, ``ppn``
        (0 unless ``ok``); ``dst``, ``tag``, ``fu`` (pending-counter index), ``epoch``; for a miss the
        GATE check's inputs ``vpid``, ``write``, ``nla``, ``large`` (the GAT maps 2 MB pages), ``next``,
        ``gmiss`` (the GAT's first-level entry is not cached: the read is the entry's) and the read:
        ``addr`` (the word address of the GATE or first-level entry), ``more`` (look-ahead GATEs).
    slot_info : StructLayout
        What the GATE check needs of a waiting slot: ``vpid``, ``write``, ``nla``, ``large``, ``more``
        (look-ahead GATEs its read asked for), ``next``, ``gmiss``, ``epoch``.
    gat_fill : StructLayout
        A GAT cache fill: ``gat`` (GAT index), ``large``, ``addr`` (a first-level entry's fields).
    gate_result : StructLayout
        A checked GATE for slot ``slot``: ``ok``, ``cause``, ``ppn`` (0 unless ``ok``).
    fill : StructLayout
        A TLB fill: ``nla``, ``large`` (which TLB), ``pref`` (a look-ahead GATE) and the GATE's
        ``read``, ``write``, ``vpid``, ``ppn``.
    read : StructLayout
        A GATE read waiting for the output: ``slot`` (= the DMA tag), ``addr`` (word address), ``more``
        (GATEs after the first: the read is ``1 + more`` words).
    response : StructLayout
        A translation response: ``dst``, ``tag``, ``ok``, ``cause``, ``ppn``, ``epoch``.
    flush_request : StructLayout
        An ATS flush request: ``dst``, ``vpid``, ``nla``, ``flush_id``.
    flush_response : StructLayout
        An arriving flush response: ``src``, ``flush_id``.
    """

    def __init__(self, *, gat_entries, tlb_entries, tlb_ways, reorder_entries, vpids, fus, large_tlb_entries=16,
                 gat_cache_entries=0):
        # with a GAT cache (the first-level table in host memory) every GAT index of the NLA page is
        # valid; without, only those of the on-chip table
        self.l1 = gat_cache_entries > 0
        self.chip_bits = exact_log2(gat_entries)
        self.cache_bits = exact_log2(gat_cache_entries) if self.l1 else 0
        self.gat_bits = MAX_GAT_INDEX_BITS if self.l1 else self.chip_bits
        self.nla_bits = GATE_INDEX_BITS + self.gat_bits
        self.vpid_bits = exact_log2(vpids)
        self.small = TlbGeometry(entries=tlb_entries, ways=tlb_ways, nla_bits=self.nla_bits,
                                 vpid_bits=self.vpid_bits, large=0)
        self.large = TlbGeometry(entries=large_tlb_entries, ways=1, nla_bits=self.nla_bits,
                                 vpid_bits=self.vpid_bits, large=1)
        self.slots = reorder_entries
        self.slot_bits = exact_log2(reorder_entries)
        self.fus = fus
        fu = range(fus + 1)

        self.page = data.StructLayout({"gate_index": GATE_INDEX_BITS, "gat_index": self.gat_bits})
        more = range(LINE_GATES)
        self.request = data.StructLayout({
            "vpid": self.vpid_bits, "nla": self.page, "write": 1, "next": 1, "src": PORT_BITS, "tag": TAG_BITS,
            "bad": 1, "far": 1})
        self.lookup = data.StructLayout({
            "miss": 1, "ok": 1, "cause": AtsCause, "ppn": PPN_BITS, "dst": PORT_BITS, "tag": TAG_BITS, "fu": fu,
            "epoch": 1, "vpid": self.vpid_bits, "write": 1, "nla": self.page, "large": 1, "next": 1, "gmiss": 1,
            "addr": READ_ADDR_BITS, "more": more})
        self.slot_info = data.StructLayout({"vpid": self.vpid_bits, "write": 1, "nla": self.page, "large": 1,
                                            "more": more, "next": 1, "gmiss": 1, "epoch": 1})
        self.gat_fill = data.StructLayout({"gat": self.gat_bits, "large": 1, "addr": GAT_BASE_BITS})
        self.gate_result = data.StructLayout({
            "slot": range(reorder_entries), "ok": 1, "cause": AtsCause, "ppn": PPN_BITS})
        self.fill = data.StructLayout({"nla": self.page, "large": 1, "pref": 1, "read": 1, "write": 1,
                                       "vpid": self.vpid_bits, "ppn": PPN_BITS})
        self.read = data.StructLayout({"slot": TAG_BITS, "addr": READ_ADDR_BITS, "more": more})
        self.response = data.StructLayout({
            "dst": PORT_BITS, "tag": TAG_BITS, "ok": 1, "cause": AtsCause, "ppn": PPN_BITS, "epoch": 1})
        self.flush_request = data.StructLayout({
            "dst": PORT_BITS, "vpid": VPID_BITS, "nla": self.page, "flush_id": FLUSH_ID_BITS})
        self.flush_response = data.StructLayout({"src": PORT_BITS, "flush_id": FLUSH_ID_BITS})


class OfferSignature(wiring.Signature):
    """A stream whose producer may take an item back: ``valid``, ``payload``, ``ready``.

    Like :class:`amaranth.lib.stream.Signature` (an item moves when ``valid & ready``; ``ready`` does not
    depend on ``valid``) except that ``valid`` may fall, and ``payload`` change, without a transfer:
    the producer has another place for an item the consumer does not take in the cycle it is offered
    (the request FIFO, the reorder buffer) and offers it again from there later.  A consumer takes or
    leaves the item in the cycle it sees it and never relies on it staying.  The ATU uses it where a
    request or result may skip a queue (the request-FIFO bypass, the reorder-buffer bypass), which is
    what keeps a TLB hit at 3 cycles.

    Members
    -------
    payload : Out(shape)
    valid : Out(1)
    ready : In(1)
    """

    def __init__(self, shape):
        self._shape = shape
        super().__init__({"payload": Out(shape), "valid": Out(1), "ready": In(1)})

    @property
    def shape(self):
        return self._shape

    def __eq__(self, other):
        return type(other) is OfferSignature and other.shape == self.shape

    def __hash__(self):
        return hash((OfferSignature, repr(self._shape)))

    def __repr__(self):
        return f"OfferSignature({self._shape!r})"


class AsyncReadSignature(wiring.Signature):
    """An asynchronous (combinational) read port as its user sees it: ``addr`` out, ``data`` in.

    Members
    -------
    addr : Out(range(depth))
    data : In(shape)
    """

    def __init__(self, *, depth, shape):
        self._depth, self._shape = depth, shape
        super().__init__({"addr": Out(range(depth)), "data": In(shape)})

    def __eq__(self, other):
        return (type(other) is AsyncReadSignature and other._depth == self._depth
                and other._shape == self._shape)

    def __hash__(self):
        return hash((AsyncReadSignature, self._depth, repr(self._shape)))

    def __repr__(self):
        return f"AsyncReadSignature(depth={self._depth}, shape={self._shape!r})"
