"""RMA formats: requester page offset, command descriptor, network descriptor and notification
(dissertation ch. 7.5, figs. 7-6 to 7-10; figs. 7-7 to 7-10 are missing from the text, so the layouts
are this project's).

Every layout is defined here once; the Python model (:mod:`sim.rma_model`) packs and unpacks with these
structs through :mod:`sim.layout`, and ``docs/architecture.md`` documents them as struct tables that
``tests/common/test_docs_layout.py`` checks.

* :class:`RmaPageOffset` -- bits 11:0 of an address in the ``rma`` window: command and the four
  modifier bits (fig. 7-6).  Above them the VPID (``vpid_bits``), above that the interrupt bit, beyond
  the VPID pages so that the OS decides who may ask for interrupts by mapping pages.
* :class:`RmaDescriptor` -- the 128-bit command descriptor, one 16-byte posted write.  ``op`` is
  :class:`RmaPutGetOperands` (put, get), the 64-bit payload (immediate and notification put) or
  :class:`RmaLockOperands` (lock).  Addresses are quadword addresses (byte address bits 43:3): the NLA
  space of the ATU (32-bit page + 12-bit offset), and in physical mode the low 16 TiB of host memory.
* :class:`RmaNetFields` -- the 19 ``specific`` bits of the network header.
* :class:`RmaNetDescriptor` -- the command words of an RMA packet: both for get and lock requests, lock
  responses and notification puts; for the packets that carry an operation's data to a completer (put,
  immediate put, get response), which never use ``arg``, only the first (:data:`DATA_COMMAND_WORDS`)
  in the operation's first packet and in one that reports an error, none in the others.
* :class:`RmaNotification` -- the 128-bit notification, one entry of a VPID's notification queue.
"""

from amaranth.lib import data, enum

from rtl.common.net import NODE_BITS

__all__ = ["RmaCommand", "RmaNotifyClass", "RmaError", "RmaPageOffset", "RmaPutGetOperands", "RmaLockOperands",
           "RmaLockResult", "RmaDescriptor", "RmaNetFields", "RmaNetDescriptor", "RmaNotification",
           "RMA_VPID_BITS", "QW_BITS", "MAX_UNITS", "PAGE_BYTES", "LINE_BYTES", "NET_COMMAND_WORDS",
           "DATA_COMMAND_WORDS"]

#: VPID fields in headers and notifications: 5 bits, the prototype's 32 VPIDs (as VELO)
RMA_VPID_BITS = 5
#: quadword address bits: a 44-bit byte address (NLA: 32-bit page number + 12-bit offset)
QW_BITS = 41
MAX_UNITS = 64          # 1..64 quadwords or cache lines per command
PAGE_BYTES = 4096       # no command crosses a 4 KiB page
LINE_BYTES = 64
NET_COMMAND_WORDS = 2   # an RmaNetDescriptor: get and lock requests, lock responses, notification puts
DATA_COMMAND_WORDS = 1  # its first word only: the first put, immediate put or get response packet (no ``arg``)


class RmaCommand(enum.Enum, shape=3):
    """The command of a descriptor (address bits 6:4) and of a network packet; 5..7 are unknown."""
    PUT = 0
    GET = 1
    LOCK = 2
    IMMEDIATE_PUT = 3
    NOTIFICATION_PUT = 4


class RmaNotifyClass(enum.Enum, shape=2):
    """Which unit wrote a notification; never 0, so the first word of a written entry is never 0."""
    REQUESTER = 1
    COMPLETER = 2
    RESPONDER = 3


class RmaError(enum.Enum, shape=3):
    """Why an operation ended without moving its data (``RmaNotification.error``)."""
    NONE = 0
    PAGE_CROSSING = 1       # local or remote range crosses a 4 KiB page
    MISALIGNED = 2          # local and remote address differ in their offset inside a 64-byte line
    UNKNOWN_COMMAND = 3     # command 5..7
    ATU_FAULT = 4           # the ATU refused the translation of an NLA (or the VPID is beyond vpids)
    DISABLED = 5            # the target VPID's completer is disabled (get: told by the responder)
    LOCK_RANGE = 6          # lock number outside the lock region
    DMA_ERROR = 7           # a DMA read (put or get data, lock word) returned an error status


class RmaPageOffset(data.Struct):
    """Bits 11:0 of a requester address in the ``rma`` window (fig. 7-6)."""
    _zero: 4            # a descriptor is one aligned 16-byte store
    command: RmaCommand
    req_notify: 1       # requester notification
    cpl_notify: 1       # completer notification
    rsp_notify: 1       # responder notification
    cache_line: 1       # operand size: units are 64-byte lines (else quadwords); put and get only
    _rsv: 1


class RmaPutGetOperands(data.Struct):
    """``RmaDescriptor.op`` of a put or get."""
    local_qw: QW_BITS   # the local buffer (put: source, get: destination)
    size_m1: 6          # units - 1
    _rsv: 17


class RmaLockOperands(data.Struct):
    """``RmaDescriptor.op`` of a lock, and ``RmaNetDescriptor.arg`` of a lock request (ch. 7.5.4)."""
    compare: 32
    add: 32             # two's complement


class RmaLockResult(data.Struct):
    """``value`` of a lock notification and ``arg`` of a lock response: the word after the operation."""
    value: 32
    success: 1
    _rsv: 31


class RmaDescriptor(data.Struct):
    """The 128-bit command descriptor (figs. 7-7, 7-9)."""
    op: 64              # RmaPutGetOperands, the immediate/notification payload, or RmaLockOperands
    remote_qw: QW_BITS  # put: destination, get: source, immediate put: destination; lock: lock number
    dst_node: NODE_BITS
    _rsv: 3
    dst_vpid: RMA_VPID_BITS


class RmaNetFields(data.Struct):
    """``NetHeader.specific`` of an RMA packet (19 bits)."""
    command: RmaCommand
    req_notify: 1
    cpl_notify: 1
    rsp_notify: 1
    cache_line: 1
    irq: 1              # the descriptor was posted through the interrupt page
    src_vpid: RMA_VPID_BITS
    dst_vpid: RMA_VPID_BITS
    last: 1             # the operation's last packet (put data, get response)


class RmaNetDescriptor(data.Struct):
    """The command words of an RMA packet (fig. 7-8's network descriptor): the first packet of put,
    immediate put or get response data, and one that reports an error, carries the first word only
    (:data:`DATA_COMMAND_WORDS`), the following data packets none (``docs/rma.md``, "Packet trains"),
    every other packet both (:data:`NET_COMMAND_WORDS`)."""
    dst_qw: QW_BITS     # start of the operation at the packet's receiver (lock: lock number)
    size_m1: 6          # units - 1 of the whole operation
    offset_qw: 9        # this packet's payload starts offset_qw quadwords after dst_qw
    error: RmaError     # a response that carries no data: why
    _rsv: 5
    arg: 64             # put/get: the sender side's start (bits 40:0, quadwords); lock: RmaLockOperands
                        # or RmaLockResult; notification put: the payload


class RmaNotification(data.Struct):
    """One 128-bit notification (figs. 7-8, 7-10)."""
    command: RmaCommand
    cls: RmaNotifyClass
    error: RmaError
    cache_line: 1
    size_m1: 6
    peer_vpid: RMA_VPID_BITS
    peer_node: NODE_BITS
    _rsv: 29
    value: 64           # put/get/immediate: this side's start byte address; notification put: the
                        # payload; lock: RmaLockResult


assert RmaPageOffset.as_shape().size == 12
assert RmaDescriptor.as_shape().size == 128
assert RmaNetFields.as_shape().size == 19
assert RmaNetDescriptor.as_shape().size == 64 * NET_COMMAND_WORDS
assert RmaNotification.as_shape().size == 128
assert RmaPutGetOperands.as_shape().size == RmaLockOperands.as_shape().size == RmaLockResult.as_shape().size == 64
