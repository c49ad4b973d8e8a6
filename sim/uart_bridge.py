"""The PC side of the UART bridge (:class:`rtl.board.UartBridge`): frame encoding and decoding, and
:class:`UartBridgeHost`, the host CPU's software-facing operations over a byte transport.

The frames are packed and unpacked through the gateware's own structs (:mod:`rtl.board.formats`,
through :mod:`sim.layout`), so the two sides cannot disagree on a field.  The protocol, one command
frame answered by one response frame, in order (byte counts for ``n`` words):

================  =========================================================  ==================
frame             bytes                                                      length
================  =========================================================  ==================
command           ``BridgeCommand`` (op, tag, ctl = words - 1 and space,      10 + 9n + 1 (WRITE)
                  word address, 56 bits), then for a WRITE ``n`` x            10 + 1 (READ, NOP)
                  (8 data bytes, 1 strobe byte), then CRC-8
response          ``BridgeResponse`` (op, tag, status, ctl), then for a       4 + 8n + 1 (READ OK)
                  READ with status OK ``n`` x 8 data bytes, then CRC-8        4 + 1 (otherwise)
================  =========================================================  ==================

:class:`UartBridgeHost` works on any :class:`BridgeTransport` (``async send(bytes)``,
``async recv(n)``): a pyserial port on the real board, a cocotb UART or an Amaranth-simulator stream
in simulation.  It keeps the bytes of the commands in flight (sent, not answered) at or below the
bridge's receive FIFO (``rx_depth``), so writes are posted as far as that allows and never overrun
the FIFO.
"""

from collections import deque
from dataclasses import dataclass

from rtl.board.formats import (
    CRC_POLY,
    MAX_WORDS,
    BridgeCommand,
    BridgeOp,
    BridgeResponse,
    BridgeSpace,
    BridgeStatus,
    BridgeWord,
)
from rtl.common.htax import HtaxStatus

from .host import DeviceReads, HostTimeout, MemWords
from .layout import pack, unpack

__all__ = ["crc8", "encode_command", "encode_response", "decode_response_header", "response_length",
           "command_length", "Response", "BridgeTransport", "BridgeError", "BridgeTimeout",
           "BridgeProtocolError", "UartBridgeHost", "COMMAND_BYTES", "RESPONSE_BYTES", "WRITE_WORD_BYTES"]

COMMAND_BYTES = BridgeCommand.as_shape().size // 8          # 10
RESPONSE_BYTES = BridgeResponse.as_shape().size // 8        # 4
WRITE_WORD_BYTES = BridgeWord.as_shape().size // 8          # 9
LINE = 64

_HTAX = {BridgeStatus.OK: HtaxStatus.OK, BridgeStatus.SLVERR: HtaxStatus.TARGET_ERROR,
         BridgeStatus.DECERR: HtaxStatus.NO_TARGET, BridgeStatus.EXOKAY: HtaxStatus.MALFORMED}


def _crc_table():
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c << 1 ^ (CRC_POLY if c & 0x80 else 0)) & 0xFF
        table.append(c)
    return table


_CRC = _crc_table()


def crc8(data, crc=0):
    """CRC-8/SMBUS (polynomial 0x07, initial 0) of ``data`` continued from ``crc``."""
    for b in data:
        crc = _CRC[crc ^ b]
    return crc


def _value(x):
    return int(getattr(x, "value", x))


def command_length(op, nwords):
    """Bytes of a command frame."""
    return COMMAND_BYTES + (WRITE_WORD_BYTES * nwords if _value(op) == BridgeOp.WRITE.value else 0) + 1


def response_length(op, status, nwords):
    """Bytes of a response frame."""
    data = _value(op) == BridgeOp.READ.value and _value(status) == BridgeStatus.OK.value
    return RESPONSE_BYTES + (8 * nwords if data else 0) + 1


def encode_command(op, *, tag, space=BridgeSpace.NIC, addr=0, nwords=1, words=()):
    """A command frame.  ``addr`` is a byte address (a multiple of 8); ``words`` are the WRITE's
    ``(data, strobes)`` pairs (``nwords`` is then their number).  ``op`` and ``space`` may be plain
    integers (a test's malformed frame); the fields are checked only for fitting."""
    if addr % 8:
        raise ValueError(f"address {addr:#x} is not 8-byte aligned")
    words = list(words)
    if _value(op) == BridgeOp.WRITE.value:
        nwords = len(words)
    if not 1 <= nwords <= MAX_WORDS:
        raise ValueError(f"a command moves 1 to {MAX_WORDS} words, not {nwords}")
    hdr = pack(BridgeCommand, {"op": _value(op), "tag": tag, "ctl.words_m1": nwords - 1,
                               "ctl.space": _value(space), "addr": addr >> 3})
    frame = hdr.to_bytes(COMMAND_BYTES, "little")
    for data, strb in words:
        frame += pack(BridgeWord, {"data": data, "strb": strb}).to_bytes(WRITE_WORD_BYTES, "little")
    return frame + bytes([crc8(frame)])


def encode_response(op, *, tag, status, space=BridgeSpace.NIC, nwords=1, words=()):
    """A response frame, as the bridge sends it (for tests and for recognising a NOP's answer)."""
    hdr = pack(BridgeResponse, {"op": _value(op), "tag": tag, "status": _value(status),
                                "ctl.words_m1": nwords - 1, "ctl.space": _value(space)})
    frame = hdr.to_bytes(RESPONSE_BYTES, "little")
    for w in words:
        frame += w.to_bytes(8, "little")
    return frame + bytes([crc8(frame)])


@dataclass(frozen=True)
class Response:
    op: int             # BridgeOp value (or the unknown byte of a BAD_CMD answer)
    tag: int
    status: BridgeStatus
    space: int
    nwords: int
    words: tuple        # the READ's words (empty unless READ and OK)


def decode_response_header(raw):
    """``(op, tag, status, space, nwords)`` of a 4-byte response header; a status the protocol does
    not define raises :class:`BridgeProtocolError`."""
    f = unpack(BridgeResponse, int.from_bytes(raw, "little"), ["op", "tag", "status", "ctl.space", "ctl.words_m1"])
    try:
        status = BridgeStatus(f["status"])
    except ValueError:
        raise BridgeProtocolError(f"response header {bytes(raw).hex()} has no valid status") from None
    return f["op"], f["tag"], status, f["ctl.space"], f["ctl.words_m1"] + 1


class BridgeTransport:
    """The byte pipe to the bridge.  :meth:`send` queues bytes (it may return before they are on the
    wire); :meth:`recv` returns exactly ``n`` bytes, or raises :class:`BridgeTimeout` when the
    transport's own time limit passes first (a pyserial port's read timeout, a simulation's cycle
    limit)."""

    async def send(self, data):
        raise NotImplementedError

    async def recv(self, n):
        raise NotImplementedError


class BridgeError(Exception):
    """A command answered with a status that is not an AXI response (RANGE, BAD_*)."""

    def __init__(self, status, what):
        super().__init__(f"{what} answered {BridgeStatus(status).name}")
        self.status = BridgeStatus(status)


class BridgeTimeout(BridgeError, HostTimeout):
    """The NIC window access timed out in the bridge (status TIMEOUT), or the transport saw no answer."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.status = BridgeStatus.TIMEOUT


class BridgeProtocolError(Exception):
    """A response that is not the one expected next (wrong op or tag, bad CRC): the link is out of
    step; :meth:`UartBridgeHost.resync` recovers it."""


@dataclass
class _Pending:
    op: BridgeOp
    tag: int
    space: BridgeSpace
    nwords: int
    length: int         # bytes of the command frame
    what: str


class UartBridgeHost(DeviceReads, MemWords):
    """The host CPU's operations on a board behind the UART bridge.

    The device window (space NIC), with :class:`sim.axi_host.AxiHostModel`'s semantics: :meth:`write`
    (a store of 1..64 bytes inside one 64-byte line, one command with byte strobes, posted: it returns
    once sent, and an answer other than OK is recorded in :attr:`errors`), :meth:`write64`,
    :meth:`read_raw` (``(HtaxStatus, words)``; AXI SLVERR and DECERR become TARGET_ERROR and NO_TARGET),
    :meth:`read`, :meth:`read64` (raise :class:`sim.host.HtaxResponseError` for a status that is not
    OK).  The bridge performs commands in order and answers a write after its B, so a read after a
    store sees it, as on AXI.

    Host memory (space MEM, the board's block RAM at 0 .. ``mem_size`` - 1): :meth:`mem_write` (any
    bytes, split into commands of up to 8 words with strobes, posted), :meth:`mem_read`,
    :meth:`mem_write64`, :meth:`mem_read64`.

    A bridge status that is no AXI response raises :class:`BridgeError` from a read (RANGE, BAD_*) or
    :class:`BridgeTimeout` (TIMEOUT, a :class:`sim.host.HostTimeout`); for a posted write it goes to
    :attr:`errors`.  A response that does not match the command it answers raises
    :class:`BridgeProtocolError`; :meth:`resync` then brings the link back into step.

    Parameters
    ----------
    transport : BridgeTransport
    rx_depth : int
        The bridge's receive FIFO in bytes (``UartBridge``'s ``rx_depth``): the most command bytes in
        flight.
    mem_size : int
        Bytes of the board's host memory.
    """

    def __init__(self, transport, *, rx_depth=512, mem_size=64 * 1024):
        if rx_depth < command_length(BridgeOp.WRITE, MAX_WORDS):
            raise ValueError(f"rx_depth must be at least {command_length(BridgeOp.WRITE, MAX_WORDS)}, "
                             f"not {rx_depth}")
        self.transport = transport
        self.rx_depth = rx_depth
        self.mem_size = mem_size
        self.errors = []
        self._pending = deque()
        self._in_flight = 0
        self._tag = 0
        self.stats = {"commands": 0, "bytes_out": 0, "bytes_in": 0}

    # ------------------------------------------------------------------------------------------
    # frames
    def _next_tag(self):
        self._tag = (self._tag + 1) & 0xFF
        return self._tag

    async def _send(self, op, space, addr, nwords, words, what):
        tag = self._next_tag()
        words = list(words)
        if op == BridgeOp.WRITE:
            nwords = len(words)
        frame = encode_command(op, tag=tag, space=space, addr=addr, nwords=nwords, words=words)
        while self._pending and self._in_flight + len(frame) > self.rx_depth:
            await self._collect()
        self._pending.append(_Pending(op, tag, space, nwords, len(frame), what))
        self._in_flight += len(frame)
        self.stats["commands"] += 1
        self.stats["bytes_out"] += len(frame)
        await self.transport.send(frame)
        return self._pending[-1]

    async def _recv(self, n):
        data = bytes(await self.transport.recv(n))
        if len(data) != n:
            raise BridgeTimeout(f"{len(data)} of {n} response bytes within the transport's time limit")
        self.stats["bytes_in"] += n
        return data

    async def _collect(self):
        """Receive the next response; return ``(pending command, Response)``.  A posted write's status
        other than OK goes to :attr:`errors`."""
        p = self._pending[0]
        raw = await self._recv(RESPONSE_BYTES)
        op, tag, status, space, nwords = decode_response_header(raw)
        if (op, tag, space, nwords) != (p.op.value, p.tag, p.space.value, p.nwords):
            raise BridgeProtocolError(f"expected the answer to {p.what} (tag {p.tag}), got op {op:#04x} "
                                      f"tag {tag} status {status.name}")
        rest = await self._recv(response_length(op, status, nwords) - RESPONSE_BYTES)
        if crc8(raw + rest) != 0:
            raise BridgeProtocolError(f"the answer to {p.what} has a bad CRC")
        self._pending.popleft()
        self._in_flight -= p.length
        words = tuple(int.from_bytes(rest[i:i + 8], "little") for i in range(0, len(rest) - 1, 8))
        rsp = Response(op, tag, status, space, nwords, words)
        if p.op == BridgeOp.WRITE and status != BridgeStatus.OK:
            self.errors.append(f"{p.what} answered {status.name}")
        return p, rsp

    async def _request(self, op, space, addr, nwords, what):
        """Send a command and return its response (the answers before it collected first)."""
        mine = await self._send(op, space, addr, nwords, (), what)
        while True:
            p, rsp = await self._collect()
            if p is mine:
                return rsp

    async def flush(self):
        """Wait for the answer to every command sent."""
        while self._pending:
            await self._collect()

    async def nop(self):
        """A NOP: returns once the bridge has answered it (and every command before it)."""
        rsp = await self._request(BridgeOp.NOP, BridgeSpace.NIC, 0, 1, "NOP")
        if rsp.status != BridgeStatus.OK:
            raise BridgeError(rsp.status, "NOP")

    async def resync(self, attempts=8, scan_limit=4096):
        """Bring the link back into step after a :class:`BridgeProtocolError` or a timeout: forget the
        commands in flight, send a NOP and skip received bytes until its exact answer arrives; try again
        (a NOP may be swallowed by a frame the bridge was still reading, which ends with BAD_CRC or
        after its frame timeout) up to ``attempts`` times."""
        self._pending.clear()
        self._in_flight = 0
        for _ in range(attempts):
            tag = self._next_tag()
            await self.transport.send(encode_command(BridgeOp.NOP, tag=tag))
            expect = encode_response(BridgeOp.NOP, tag=tag, status=BridgeStatus.OK)
            window = b""
            try:
                for _ in range(scan_limit):
                    window = (window + await self._recv(1))[-len(expect):]
                    if window == expect:
                        return
            except BridgeTimeout:
                continue
        raise BridgeTimeout(f"no answer to {attempts} NOPs")

    # ------------------------------------------------------------------------------------------
    # device window (AxiHostModel's CPU operations)
    async def write(self, addr, data):
        """A CPU store of 1..64 bytes inside one 64-byte line: one command, posted."""
        data = bytes(data)
        if not 1 <= len(data) <= LINE or addr // LINE != (addr + len(data) - 1) // LINE:
            raise ValueError(f"a store of {len(data)} bytes at {addr:#x} does not fit one 64-byte line")
        await self._send(BridgeOp.WRITE, BridgeSpace.NIC, addr - addr % 8, None, _words(addr, data),
                         f"store of {len(data)} bytes at {addr:#x}")

    async def write64(self, addr, value):
        if addr % 8:
            raise ValueError(f"register address {addr:#x} is not 8-byte aligned")
        await self.write(addr, (value & (1 << 64) - 1).to_bytes(8, "little"))

    async def read_raw(self, addr, nwords=1):
        """Read of ``nwords`` 64-bit words inside one line, after every earlier command; returns
        ``(HtaxStatus, words)`` (zeros for a status that is not OK)."""
        if addr % 8 or not 1 <= nwords <= MAX_WORDS or (addr % LINE) // 8 + nwords > MAX_WORDS:
            raise ValueError(f"read of {nwords} words at {addr:#x} must be 8-byte aligned inside one line")
        what = f"read of {nwords} words at {addr:#x}"
        rsp = await self._request(BridgeOp.READ, BridgeSpace.NIC, addr, nwords, what)
        if rsp.status == BridgeStatus.EXOKAY:
            self.errors.append(f"{what} answered EXOKAY (not exclusive)")
        if rsp.status == BridgeStatus.TIMEOUT:
            raise BridgeTimeout(f"{what} answered TIMEOUT")
        if rsp.status not in _HTAX:
            raise BridgeError(rsp.status, what)
        return _HTAX[rsp.status], list(rsp.words) or [0] * nwords

    # ------------------------------------------------------------------------------------------
    # host memory
    def _check_mem(self, addr, nbytes):
        if addr < 0 or nbytes < 0 or addr + nbytes > self.mem_size:
            raise ValueError(f"{nbytes} bytes at {addr:#x} are not inside host memory (0 .. {self.mem_size:#x})")

    async def mem_write(self, addr, data):
        """Write ``data`` into host memory: commands of up to 8 words, posted."""
        data = bytes(data)
        self._check_mem(addr, len(data))
        pos = 0
        while pos < len(data):
            a = addr + pos
            chunk = min(len(data) - pos, MAX_WORDS * 8 - a % 8)
            await self._send(BridgeOp.WRITE, BridgeSpace.MEM, a - a % 8, None, _words(a, data[pos:pos + chunk]),
                             f"host memory write of {chunk} bytes at {a:#x}")
            pos += chunk

    async def mem_read(self, addr, nbytes):
        """``nbytes`` of host memory from ``addr``."""
        self._check_mem(addr, nbytes)
        out = b""
        lo, hi = addr - addr % 8, -(-(addr + nbytes) // 8) * 8
        for a in range(lo, hi, MAX_WORDS * 8):
            n = min(MAX_WORDS, (hi - a) // 8)
            what = f"host memory read of {n} words at {a:#x}"
            rsp = await self._request(BridgeOp.READ, BridgeSpace.MEM, a, n, what)
            if rsp.status != BridgeStatus.OK:
                raise BridgeError(rsp.status, what)
            out += b"".join(w.to_bytes(8, "little") for w in rsp.words)
        return out[addr - lo:addr - lo + nbytes]


def _words(addr, data):
    """``[(word, strobes)]`` of the 64-bit words that ``data`` at byte address ``addr`` touches."""
    lo = addr - addr % 8
    hi = -(-(addr + len(data)) // 8) * 8
    buf = bytearray(hi - lo)
    buf[addr - lo:addr - lo + len(data)] = data
    out = []
    for a in range(lo, hi, 8):
        strb = sum(1 << i for i in range(8) if addr <= a + i < addr + len(data))
        out.append((int.from_bytes(buf[a - lo:a - lo + 8], "little"), strb))
    return out
