"""Formats of the board blocks: the UART bridge protocol, the host memory's word port, and the
board host's memory map.

The memory map (``docs/board.md``): ``HOST_MEMORY`` bytes of block RAM at ``HOST_MEMORY_BASE``, just
below the 2 MB boundary ``GAT_BASE`` with ``GAT_PREFIX`` bytes above it: the ATU's GATs are 2 MB
aligned and 2 MB long, so the board's one GAT starts at ``GAT_BASE`` and only its first GATEs are
memory; a GATE read beyond them leaves the memory (``DECERR``: an ATU fault, never a wrong
translation).

The UART bridge protocol (``rtl.board.UartBridge``; the PC side is ``sim/uart_bridge.py``).  Every
field is sent least significant byte first: byte ``k`` of a struct is its bits ``8k .. 8k + 7``.

A **command frame** (PC to board) is a :class:`BridgeCommand` (10 bytes), then for a WRITE
``words_m1 + 1`` :class:`BridgeWord` (9 bytes each: the 64-bit word, then its byte strobes), then one
CRC-8 byte.  A **response frame** (board to PC) is a :class:`BridgeResponse` (4 bytes), then for a
READ whose status is OK ``words_m1 + 1`` 64-bit words (8 bytes each), then one CRC-8 byte.  The CRC
is CRC-8 with polynomial x^8 + x^2 + x + 1 (0x07), initial value 0, no reflection, no final XOR
(CRC-8/SMBUS), over every byte of the frame before it; a frame with its CRC byte appended therefore
has the CRC 0.  Every command frame is answered by exactly one response frame, in command order.
"""

from amaranth.hdl import Cat, unsigned
from amaranth.lib import data, enum

__all__ = ["BridgeOp", "BridgeSpace", "BridgeStatus", "BridgeControl", "BridgeCommand", "BridgeResponse",
           "BridgeWord", "BridgeRequest", "MAX_WORDS", "CRC_POLY", "crc8_next", "mem_request", "mem_write",
           "burst_request", "MEM_DATA", "HOST_MEMORY", "GAT_BASE", "GAT_PREFIX", "HOST_MEMORY_BASE"]

MAX_WORDS = 8           # words of one command: a 64-byte store is one command
CRC_POLY = 0x07
MEM_DATA = unsigned(64)  # the word port's response
HOST_MEMORY = 64 * 1024         # bytes of block RAM host memory on a board
GAT_BASE = 2 * 1024 * 1024      # the board's GAT (2 MB aligned, as the ATU needs)
GAT_PREFIX = 4096               # its first 512 GATEs (NLA pages 0..511) are host memory
HOST_MEMORY_BASE = GAT_BASE + GAT_PREFIX - HOST_MEMORY  # 0x1F_1000: 15 pages below the GAT, its prefix above


class BridgeOp(enum.Enum, shape=8):
    """The first byte of a command frame (any other value is answered ``BAD_CMD`` at once)."""
    NOP = 0x4E          # 'N': no access, answered OK (resynchronisation, link test)
    READ = 0x52         # 'R'
    WRITE = 0x57        # 'W'


class BridgeSpace(enum.Enum, shape=5):
    """The address space of a command."""
    NIC = 0             # the NIC's device window, through the bridge's AXI4 manager port
    MEM = 1             # the board's host memory, through its word port


class BridgeStatus(enum.Enum, shape=8):
    """The outcome of a command.  The values 0..3 are the AXI response of the NIC window's access
    (the first one other than OKAY among its beats)."""
    OK = 0
    EXOKAY = 1          # an AXI EXOKAY to a plain access: a protocol error of the subordinate
    SLVERR = 2
    DECERR = 3
    TIMEOUT = 4         # the AXI access did not complete within ``axi_timeout`` cycles
    RANGE = 5           # the words lie (partly) outside the space
    BAD_CMD = 6         # an unknown command byte (answered at once; the next byte starts a frame)
    BAD_SPACE = 7       # a space that is not one of BridgeSpace (the frame was read whole)
    BAD_CRC = 8         # the frame's CRC is wrong: nothing was done
    BAD_FRAME = 9       # the frame stopped for ``frame_timeout`` cycles: nothing was done


class BridgeControl(data.Struct):
    """Byte 2 of a command: the number of words and the space."""
    words_m1: 3         # words - 1: every value is a valid length, so a frame's length is always known
    space: BridgeSpace


class BridgeCommand(data.Struct):
    """The header of a command frame (10 bytes)."""
    op: BridgeOp
    tag: 8              # echoed in the response
    ctl: BridgeControl
    addr: 56            # word address: the byte address divided by 8


class BridgeResponse(data.Struct):
    """The header of a response frame (4 bytes): the command's op, tag and control byte, and the
    status.  The answer to an unknown command byte carries that byte as ``op`` and zeros elsewhere."""
    op: BridgeOp
    tag: 8
    status: BridgeStatus
    ctl: BridgeControl


class BridgeWord(data.Struct):
    """One word of a WRITE (9 bytes on the wire) and one entry of the bridge's word buffer."""
    data: 64
    strb: 8             # byte enables: bit i writes byte i of ``data``


class BridgeRequest(data.Struct):
    """A parsed command frame, from the deframer to the executor: the header and the deframer's
    verdict (OK, BAD_CMD, BAD_CRC or BAD_FRAME)."""
    cmd: BridgeCommand
    status: BridgeStatus


def _crc8_of_bit(i):
    """The CRC-8 register after shifting the byte ``1 << i`` into a zero register (the CRC is linear)."""
    c = 1 << i
    for _ in range(8):
        c = (c << 1 ^ (CRC_POLY if c & 0x80 else 0)) & 0xFF
    return c


def crc8_next(crc, byte):
    """The CRC-8 (polynomial :data:`CRC_POLY`) of ``crc`` after one more ``byte`` (8-bit values), as an
    XOR network (one byte per cycle): bit ``j`` is the XOR of the bits ``i`` of ``crc ^ byte`` whose
    own CRC has bit ``j`` set."""
    v = crc ^ byte
    columns = [_crc8_of_bit(i) for i in range(8)]
    bits = []
    for j in range(8):
        taps = [v[i] for i in range(8) if columns[i] >> j & 1]
        x = taps[0]
        for t in taps[1:]:
            x = x ^ t
        bits.append(x)
    return Cat(*bits)


def mem_request(word_bits):
    """The host memory's word port request: a word address of ``word_bits`` bits; a write (``write``
    1) stores the bytes ``strb`` selects, a read returns the word (:data:`MEM_DATA`)."""
    return data.StructLayout({"write": 1, "addr": word_bits, "data": 64, "strb": 8})


def mem_write(word_bits):
    """One word write into the host memory's block RAM (from its AXI write engine)."""
    return data.StructLayout({"addr": word_bits, "data": 64, "strb": 8})


def burst_request(word_bits):
    """A burst for the bridge's AXI4 manager: ``words_m1 + 1`` words from word address ``addr``."""
    return data.StructLayout({"write": 1, "addr": word_bits, "words_m1": 3})
