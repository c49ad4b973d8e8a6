# amaranth: UnusedElaboratable=no
"""The PC side of the UART bridge (sim/uart_bridge.py) without a simulator: the wire format, the CRC
against the gateware's, the flow-control window, and the errors of responses that do not fit."""

import asyncio
import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from rtl.board.formats import BridgeOp, BridgeSpace, BridgeStatus, crc8_next
from rtl.common.htax import HtaxStatus
from sim.host import HostTimeout
from sim.uart_bridge import (
    BridgeError,
    BridgeProtocolError,
    BridgeTimeout,
    BridgeTransport,
    UartBridgeHost,
    command_length,
    crc8,
    decode_response_header,
    encode_command,
    encode_response,
)


def test_crc_check_value_and_gateware_agree():
    assert crc8(b"123456789") == 0xF4                   # CRC-8/SMBUS check value
    frame = encode_command(BridgeOp.NOP, tag=1)
    assert crc8(frame) == 0                             # a frame with its CRC appended
    m = Module()
    crc, byte, out = Signal(8), Signal(8), Signal(8)
    m.d.comb += out.eq(crc8_next(crc, byte))
    rng = random.Random(1)
    pairs = [(rng.randrange(256), rng.randrange(256)) for _ in range(300)] + [(0, 0), (255, 255)]

    async def bench(ctx):
        for c, b in pairs:
            ctx.set(crc, c)
            ctx.set(byte, b)
            assert ctx.get(out) == crc8(bytes([b]), c), (c, b)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_wire_format():
    frame = encode_command(BridgeOp.READ, tag=5, space=BridgeSpace.MEM, addr=0x1238, nwords=2)
    assert frame[:-1] == bytes([0x52, 0x05, 0x01 | 0x01 << 3, 0x47, 0x02, 0, 0, 0, 0, 0])
    frame = encode_command(BridgeOp.WRITE, tag=6, addr=0x10, words=[(0x0807060504030201, 0x0F)])
    assert frame[:-1] == bytes([0x57, 0x06, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x0F])
    assert [command_length(BridgeOp.WRITE, n) for n in (1, 8)] == [20, 83]
    assert len(encode_command(BridgeOp.NOP, tag=0)) == command_length(BridgeOp.READ, 8) == 11
    rsp = encode_response(BridgeOp.READ, tag=9, status=BridgeStatus.OK, space=BridgeSpace.MEM, words=[0x1122])
    assert rsp[:-1] == bytes([0x52, 0x09, 0x00, 0x08, 0x22, 0x11, 0, 0, 0, 0, 0, 0]) and crc8(rsp) == 0
    assert decode_response_header(rsp[:4]) == (0x52, 9, BridgeStatus.OK, 1, 1)
    with pytest.raises(BridgeProtocolError):
        decode_response_header(bytes([0x52, 9, 0x77, 0]))
    with pytest.raises(ValueError, match=r"^address 0x3 is not 8-byte aligned$"):
        encode_command(BridgeOp.READ, tag=0, addr=3)
    with pytest.raises(ValueError, match=r"^a command moves 1 to 8 words, not 9$"):
        encode_command(BridgeOp.READ, tag=0, nwords=9)
    with pytest.raises(ValueError, match=r"^a command moves 1 to 8 words, not 0$"):
        encode_command(BridgeOp.WRITE, tag=0, words=[])


class FakeBridge(BridgeTransport):
    """Answers every command OK at once (reads with ``value``), asserts that the command bytes in flight
    (sent, answer not read whole) stay within ``rx_depth``, and can be told to spoil its answers."""

    def __init__(self, rx_depth, value=0):
        self.rx_depth, self.value = rx_depth, value
        self.out = bytearray()
        self.open = []          # (command bytes, offset of the answer's end in the byte stream)
        self.sent_rsp = 0
        self.read = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.spoil = None
        self.status = BridgeStatus.OK

    async def send(self, data):
        op, tag, ctl = data[0], data[1], data[2]
        n = (ctl & 7) + 1
        self.in_flight += len(data)
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        assert self.in_flight <= self.rx_depth
        words = [self.value] * n if op == BridgeOp.READ.value and self.status == BridgeStatus.OK else []
        rsp = bytearray(encode_response(op, tag=tag, status=self.status, space=ctl >> 3, nwords=n, words=words))
        if self.spoil == "crc":
            rsp[-1] ^= 1
        elif self.spoil == "tag":
            rsp[1] ^= 1
            rsp[-1] = crc8(bytes(rsp[:-1]))
        self.out += rsp
        self.sent_rsp += len(rsp)
        self.open.append((len(data), self.sent_rsp))

    async def recv(self, n):
        if len(self.out) < n:
            raise BridgeTimeout("no bytes")
        data, self.out = bytes(self.out[:n]), self.out[n:]
        self.read += n
        while self.open and self.open[0][1] <= self.read:
            self.in_flight -= self.open.pop(0)[0]
        return data


class Silent(BridgeTransport):
    """Takes commands, returns no bytes (a pyserial read that timed out)."""

    async def send(self, data):
        pass

    async def recv(self, n):
        return b""


def _run(coro):
    return asyncio.run(coro)


def test_posted_writes_stay_inside_the_receive_fifo():
    bridge = FakeBridge(rx_depth=200)
    host = UartBridgeHost(bridge, rx_depth=200, mem_size=4096)

    async def go():
        for k in range(20):
            await host.write(64 * k, bytes(64))
        assert bridge.max_in_flight > 83            # writes were posted ...
        await host.flush()
        assert host.stats["commands"] == 20 and not host.errors

    _run(go())                                      # ... and never more than rx_depth bytes (FakeBridge asserts)


def test_answers_that_do_not_fit_raise():
    async def go():
        bridge = FakeBridge(rx_depth=512, value=0x42)
        host = UartBridgeHost(bridge)
        assert await host.read_raw(0x1000, 2) == (HtaxStatus.OK, [0x42, 0x42])
        bridge.spoil = "crc"
        with pytest.raises(BridgeProtocolError, match="bad CRC"):
            await host.read64(0x1000)
        host = UartBridgeHost(bridge)
        bridge.spoil = "tag"
        with pytest.raises(BridgeProtocolError, match="expected the answer to read of 1 words at 0x1000"):
            await host.read64(0x1000)
        bridge.spoil = None
        for status, exc in [(BridgeStatus.TIMEOUT, BridgeTimeout), (BridgeStatus.RANGE, BridgeError),
                            (BridgeStatus.BAD_CRC, BridgeError)]:
            host = UartBridgeHost(bridge)
            bridge.out.clear()
            bridge.status = status
            with pytest.raises(exc, match=status.name):
                await host.read64(0x1000)
        assert issubclass(BridgeTimeout, HostTimeout)
        host = UartBridgeHost(bridge)
        bridge.status = BridgeStatus.RANGE
        await host.mem_write64(8, 1)
        await host.flush()
        assert host.errors == ["host memory write of 8 bytes at 0x8 answered RANGE"]
        host = UartBridgeHost(Silent())
        with pytest.raises(BridgeTimeout, match="^0 of 4 response bytes within the transport's time limit$"):
            await host.read64(0)

    _run(go())


def test_arguments_are_checked():
    host = UartBridgeHost(FakeBridge(rx_depth=512), mem_size=1024)

    async def go():
        with pytest.raises(ValueError, match=r"^a store of 8 bytes at 0x3c does not fit one 64-byte line$"):
            await host.write(0x3C, bytes(8))
        with pytest.raises(ValueError, match=r"^read of 2 words at 0x38 must be 8-byte aligned inside one line$"):
            await host.read_raw(0x38, 2)
        with pytest.raises(ValueError, match=r"^16 bytes at 0x3f8 are not inside host memory \(0 \.\. 0x400\)$"):
            await host.mem_read(0x3F8, 16)

    _run(go())
    with pytest.raises(ValueError, match=r"^rx_depth must be at least 83, not 64$"):
        UartBridgeHost(FakeBridge(rx_depth=64), rx_depth=64)
