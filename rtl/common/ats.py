"""The EXTOLL ATS message: 64 bits on the HTAX ATS virtual channel (dissertation ch. 5.3, fig. 5-10).

Four transactions share one 64-bit word whose two low bits select the variant: translation request
(FU -> ATU), translation response (ATU -> FU), flush request (ATU -> FU) and flush response
(FU -> ATU).  The bit layout below is this project's choice, since fig. 5-10 is missing from the text;
``docs/architecture.md`` draws it.  Deviations from the prototype: the VPID field is 16 bits wide
(the prototype implemented 5), the NLA page field 32 bits (the prototype implemented 32 of the
physical page number; we carry the full 40-bit physical page number of a 52-bit address space).
An ATS message travels as a single HTAX header beat (see :mod:`rtl.common.htax`), so the ATU can accept
one per cycle.
"""

from amaranth.lib import data, enum

__all__ = [
    "AtsCmd", "AtsCause",
    "AtsTranslationRequest", "AtsTranslationResponse", "AtsFlush", "AtsFlushRequest", "AtsFlushResponse",
    "AtsMessage",
    "VPID_BITS", "NLA_PAGE_BITS", "PPN_BITS", "FLUSH_ID_BITS",
]

VPID_BITS = 16        # stored width; the configured number of VPIDs is compared (ch. 5.2.8)
NLA_PAGE_BITS = 32    # {GAT index, GATE index}: up to 2**14 GATs of 2**18 GATEs
PPN_BITS = 40         # physical page number of a 52-bit physical address
FLUSH_ID_BITS = 4     # matches flush responses to flush requests


class AtsCmd(enum.Enum, shape=2):
    TRANSLATION_REQUEST = 0b00
    TRANSLATION_RESPONSE = 0b01
    FLUSH_REQUEST = 0b10
    FLUSH_RESPONSE = 0b11


class AtsCause(enum.Enum, shape=3):
    """Why a translation response has ``ok == 0``."""
    NONE = 0                # ok == 1
    INVALID_GATE = 1        # GATE valid bit clear
    VPID_MISMATCH = 2       # GATE belongs to another VPID
    PERMISSION = 3          # read or write not permitted by the GATE
    GAT_NOT_CONFIGURED = 4  # GAT base-address table entry not set up
    NLA_RANGE = 5           # GAT index beyond the GAT base-address table, or VPID beyond configuration
    MEMORY_ERROR = 6        # the GATE read from host memory returned an error response
    PAGE_SIZE = 7           # the GATE's ``large`` flag differs from its GAT's, or a large page is not 2 MB aligned


class AtsTranslationRequest(data.Struct):
    cmd: AtsCmd
    write: 1                # 0: read access, 1: write access
    next: 1                 # the access continues into the next page (the ATU may look ahead)
    vpid: VPID_BITS
    nla_page: NLA_PAGE_BITS
    _rsv1: 12


class AtsTranslationResponse(data.Struct):
    cmd: AtsCmd
    ok: 1
    cause: AtsCause
    _rsv0: 2
    ppn: PPN_BITS
    _rsv1: 16


class AtsFlush(data.Struct):
    """Flush request (ATU -> FU); the FU's flush response echoes it with ``cmd`` FLUSH_RESPONSE."""
    cmd: AtsCmd
    _rsv0: 2
    vpid: VPID_BITS
    nla_page: NLA_PAGE_BITS
    flush_id: FLUSH_ID_BITS
    _rsv1: 8


AtsFlushRequest = AtsFlushResponse = AtsFlush


class AtsMessage(data.Union):
    """One 64-bit ATS message; ``cmd`` (bits 1:0) says which view is valid."""
    cmd: AtsCmd
    translation_request: AtsTranslationRequest
    translation_response: AtsTranslationResponse
    flush_request: AtsFlushRequest
    flush_response: AtsFlushResponse
    raw: 64


assert AtsMessage.as_shape().size == 64
