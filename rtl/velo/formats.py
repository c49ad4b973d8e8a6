"""VELO formats: requester address, VELO network header fields, receive-slot status word
(dissertation ch. 7.4, figs. 7-4 and 7-5; ch. 6.4.4 for split stores).

Every layout is defined here once; the RTL, the Python model (:mod:`sim.velo_model`) and the driver
(:mod:`sim.driver.velo`) use these structs, and ``docs/architecture.md`` documents them as struct tables
that ``tests/common/test_docs_layout.py`` checks.

* :class:`VeloLineOffset` -- bits 11:0 of an address in the ``velo`` window.  Bits 5:3 are the word
  offset of the store inside the 64-byte line: 0 for a whole store, the split point for the second part
  of a split store (fig. 6-5).  The bits above (:func:`velo_address_layout`) carry source VPID,
  destination VPID and destination node (fig. 7-4); their widths follow the configuration.
* :class:`VeloNetFields` -- the 19 ``specific`` bits of the network header (:class:`rtl.common.net.
  NetHeader`).  The fragment's length is the header's ``payload_words``.
* :class:`VeloStatus` -- the 8-byte status word in front of every receive slot; never zero because
  ``msg_words`` is at least 1.
"""

from amaranth.lib import data

from rtl.common.net import NODE_BITS

__all__ = ["VeloLineOffset", "VeloNetFields", "VeloStatus", "velo_address_layout", "VELO_VPID_BITS",
           "SLOT_BYTES", "SLOT_WORDS", "MAX_MSG_WORDS"]

#: VPID fields in the network header and status word: 5 bits, the prototype's 32 VPIDs (fig. 8-3)
VELO_VPID_BITS = 5
SLOT_BYTES = 64
SLOT_WORDS = 8          # one status word + up to seven payload words
MAX_MSG_WORDS = 8       # a message is 8..64 bytes


class VeloLineOffset(data.Struct):
    """Bits 11:0 of a VELO requester address (fig. 7-4)."""
    byte: 3             # always 0 (8-byte granular stores)
    word: 3             # word offset of this store inside the message (split stores)
    words_m1: 3         # message length in 8-byte words, minus one
    mtt: 2              # message type tag
    _rsv: 1             # ignored


def velo_address_layout(*, vpid_bits, node_bits):
    """The offset inside the ``velo`` window: :class:`VeloLineOffset`, then source VPID, destination
    VPID and destination node (fig. 7-4), ``12 + 2 * vpid_bits + node_bits`` bits."""
    return data.StructLayout({
        "line": VeloLineOffset,
        "src_vpid": vpid_bits,
        "dst_vpid": vpid_bits,
        "dst_node": node_bits,
    })


class VeloNetFields(data.Struct):
    """``NetHeader.specific`` of a VELO packet (19 bits)."""
    dst_vpid: VELO_VPID_BITS
    src_vpid: VELO_VPID_BITS
    words_m1: 3         # length of the whole message in words, minus one
    mtt: 2
    offset: 3           # word offset of this fragment inside the message
    _rsv: 1


class VeloStatus(data.Struct):
    """The status word of one receive slot (fig. 7-5); payload words ``offset .. offset + words - 1``
    of the message follow it in the slot."""
    src_node: NODE_BITS
    src_vpid: VELO_VPID_BITS
    msg_words: 4        # message length in words, 1..8: never 0, so the status word is never 0
    offset: 3           # word offset of this slot's payload inside the message
    words: 4            # payload words in this slot, 1..7
    mtt: 2
    split: 1            # the sender's store arrived split: this packet held only part of the message
    second: 1           # second slot of an unsplit 64-byte message (fig. 7-5)
    _rsv: 29


assert VeloNetFields.as_shape().size == 19
assert VeloStatus.as_shape().size == 64
