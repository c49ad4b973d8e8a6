# amaranth: UnusedElaboratable=no
"""UartBridge: the PC side (UartBridgeHost) against HostMemory and an AXI subordinate model with random
stalls and error responses; one access at a time, a write's answer after its B; malformed frames,
out-of-range words, a silent subordinate and a broken-off frame each get their status, and the bridge
goes on; the whole path once through the UART pins."""

import random

import pytest

from rtl.board import UartBridge
from rtl.board.formats import BridgeOp, BridgeSpace, BridgeStatus
from rtl.common.axi import AxiResp
from rtl.common.htax import HtaxStatus
from sim.host import HtaxResponseError
from sim.uart_bridge import (
    BridgeError,
    BridgeTimeout,
    UartBridgeHost,
    decode_response_header,
    encode_command,
    encode_response,
    response_length,
)

from .bridge_bench import MEM_SIZE, RX_DEPTH, bridge_system, run_bridge, seed

NIC_BASE = 0x8_0000_0000        # some device window address (the model decodes every address)


def test_parameter_messages():
    with pytest.raises(ValueError, match=r"^rx_depth must be a power of two, not 100$"):
        UartBridge(rx_depth=100)
    with pytest.raises(ValueError, match=r"^axi_timeout must be at least 16, not 3$"):
        UartBridge(axi_timeout=3)
    with pytest.raises(ValueError, match=r"^frame_timeout must be at least 16, not 0$"):
        UartBridge(frame_timeout=0)
    with pytest.raises(ValueError, match=r"^mem_size must be a power of two, not 1000$"):
        UartBridge(mem_size=1000)


def _one_at_a_time(nic):
    """Bursts on the subordinate as (start, end) cycles: writes from the first of AW and W to B, reads
    from AR to the last R beat."""
    spans = []
    w_cycles = iter(now for now, _ in nic.wq.items)
    b_cycles = iter(now for now, _ in nic.bsrc.sent)
    for (now, aw), _ in zip(nic.awq.items, nic.writes, strict=False):
        first_w = [next(w_cycles) for _ in range(int(aw.len) + 1)][0]
        spans.append((min(now, first_w), next(b_cycles)))
    r_last = iter(now for now, p in nic.rsrc.sent if p["last"])
    for now, _ in nic.arq.items:
        spans.append((now, next(r_last)))
    spans.sort()
    return all(b[0] > a[1] for a, b in zip(spans, spans[1:], strict=False))


async def _random_ops(rng, host, nic_ref, mem_ref, n):
    for _ in range(n):
        kind = rng.random()
        if kind < 0.25:
            line = NIC_BASE + 64 * rng.randrange(8)
            off = rng.randrange(64)
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 65 - off)))
            await host.write(line + off, data)
            for i, b in enumerate(data):
                nic_ref[line + off + i] = b
        elif kind < 0.5:
            addr = NIC_BASE + 8 * rng.randrange(64)
            nwords = rng.randrange(1, 9 - (addr % 64) // 8)
            status, words = await host.read_raw(addr, nwords)
            assert status == HtaxStatus.OK
            want = [int.from_bytes(bytes(nic_ref.get(addr + 8 * k + i, 0) for i in range(8)), "little")
                    for k in range(nwords)]
            assert words == want, f"read of {nwords} at {addr:#x}"
        elif kind < 0.75:
            addr = rng.randrange(MEM_SIZE - 1)
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, min(100, MEM_SIZE - addr))))
            await host.mem_write(addr, data)
            mem_ref[addr:addr + len(data)] = data
        else:
            addr = rng.randrange(MEM_SIZE - 1)
            n_bytes = rng.randrange(1, min(80, MEM_SIZE - addr))
            assert await host.mem_read(addr, n_bytes) == bytes(mem_ref[addr:addr + n_bytes]), f"{addr:#x}"


@pytest.mark.parametrize("stall", [0.0, 0.4])
def test_random_operations_against_models(stall):
    s = seed()
    rng = random.Random(s)
    parts = bridge_system(rng, stall=stall)
    parts.nic.write_delay = 25 if stall else 0
    nic_ref, mem_ref = {}, bytearray(MEM_SIZE)

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        await _random_ops(rng, host, nic_ref, mem_ref, 80)
        await host.flush()
        assert host.errors == [], f"seed {s}"
        # the subordinate holds exactly what was stored, the memory what was written
        for addr in {a - a % 8 for a in nic_ref}:
            want = int.from_bytes(bytes(nic_ref.get(addr + i, 0) for i in range(8)), "little")
            assert parts.nic.words.get(addr >> 3, 0) == want, f"seed {s}: {addr:#x}"
        assert await host.mem_read(0, MEM_SIZE) == bytes(mem_ref), f"seed {s}"
        assert _one_at_a_time(parts.nic), f"seed {s}: bursts overlap"
        assert [p["resp"] for _, p in parts.nic.bsrc.sent] == [AxiResp.OKAY] * len(parts.nic.writes)

    run_bridge(parts, bench)


def test_a_store_is_answered_after_its_b():
    parts = bridge_system(random.Random(7))
    parts.nic.write_delay = 150             # the store lands, and B leaves, 150 cycles after its data

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        for k in range(4):
            await host.write64(NIC_BASE, k + 1)
            await host.write(NIC_BASE + 8, bytes([k] * 56))
            assert await host.read64(NIC_BASE) == k + 1        # the read went out after the B
            assert await host.read(NIC_BASE + 8, 56) == bytes([k] * 56)
        assert _one_at_a_time(parts.nic)

    run_bridge(parts, bench)


def test_axi_error_responses_reach_the_host():
    parts = bridge_system(random.Random(1))
    parts.nic.errors = {(NIC_BASE >> 3) + 1: AxiResp.SLVERR, (NIC_BASE >> 3) + 9: AxiResp.DECERR,
                        (NIC_BASE >> 3) + 17: AxiResp.EXOKAY}

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        assert await host.read_raw(NIC_BASE, 4) == (HtaxStatus.TARGET_ERROR, [0] * 4)
        assert await host.read_raw(NIC_BASE + 64, 2) == (HtaxStatus.NO_TARGET, [0] * 2)
        assert (await host.read_raw(NIC_BASE + 128, 2))[0] == HtaxStatus.MALFORMED
        with pytest.raises(HtaxResponseError):
            await host.read64(NIC_BASE + 8)
        await host.write(NIC_BASE + 8, b"\x01" * 16)            # words 1 and 2: refused, nothing written
        await host.write64(NIC_BASE + 16, 0x1234)               # word 2 alone: written
        assert await host.read64(NIC_BASE + 16) == 0x1234
        assert host.errors == [f"read of 2 words at {NIC_BASE + 128:#x} answered EXOKAY (not exclusive)",
                               f"store of 16 bytes at {NIC_BASE + 8:#x} answered SLVERR"]
        assert (NIC_BASE >> 3) + 1 not in parts.nic.words

    run_bridge(parts, bench)


async def _answer(transport):
    """The next response frame, decoded: ``(op, tag, status, space, nwords, frame)``."""
    raw = await transport.recv(4)
    fields = decode_response_header(raw)
    rest = await transport.recv(response_length(fields[0], fields[2], fields[4]) - 4)
    return (*fields, raw + rest)


def test_malformed_commands_are_answered_and_the_bridge_recovers():
    parts = bridge_system(random.Random(2))

    async def bench(ctx, transport, clock):
        good = encode_command(BridgeOp.WRITE, tag=7, space=BridgeSpace.MEM, addr=64, words=[(0x55, 0xFF)])
        # unknown command bytes: one BAD_CMD each, echoing the byte
        await transport.send(bytes([0x00, 0xFF, 0x41]))
        for byte in (0x00, 0xFF, 0x41):
            op, tag, status, *_, frame = await _answer(transport)
            assert (op, tag, status) == (byte, 0, BridgeStatus.BAD_CMD)
            assert frame == encode_response(byte, tag=0, status=BridgeStatus.BAD_CMD, space=0)
        # a wrong CRC: nothing written
        await transport.send(good[:-1] + bytes([good[-1] ^ 0x10]))
        assert (await _answer(transport))[:3] == (BridgeOp.WRITE.value, 7, BridgeStatus.BAD_CRC)
        # an unknown space: the whole frame is read (the next command is understood)
        await transport.send(encode_command(BridgeOp.WRITE, tag=8, space=5, addr=64, words=[(0x66, 0xFF)] * 3))
        await transport.send(encode_command(BridgeOp.READ, tag=9, space=BridgeSpace.MEM, addr=64))
        assert (await _answer(transport))[:3] == (BridgeOp.WRITE.value, 8, BridgeStatus.BAD_SPACE)
        *_, frame = await _answer(transport)
        assert frame == encode_response(BridgeOp.READ, tag=9, status=BridgeStatus.OK, space=BridgeSpace.MEM,
                                        words=[0])
        # out of range: past host memory, across its end, above the NIC's 52 address bits
        for tag, space, addr, n in [(10, BridgeSpace.MEM, MEM_SIZE, 1), (11, BridgeSpace.MEM, MEM_SIZE - 16, 3),
                                    (12, BridgeSpace.NIC, 1 << 52, 1), (13, BridgeSpace.NIC, (1 << 52) - 8, 2)]:
            await transport.send(encode_command(BridgeOp.READ, tag=tag, space=space, addr=addr, nwords=n))
            assert (await _answer(transport))[1:3] == (tag, BridgeStatus.RANGE)
        assert parts.nic.writes == [] and parts.nic.reads == []
        # and the bridge still works
        await transport.send(good)
        assert (await _answer(transport))[:3] == (BridgeOp.WRITE.value, 7, BridgeStatus.OK)
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        assert await host.mem_read64(64) == 0x55

    run_bridge(parts, bench)


def test_a_broken_off_frame_is_answered_after_the_frame_timeout():
    parts = bridge_system(random.Random(3), frame_timeout=400)

    async def bench(ctx, transport, clock):
        frame = encode_command(BridgeOp.WRITE, tag=0x21, space=BridgeSpace.MEM, addr=0, words=[(-1 % 2**64, 0xFF)])
        await transport.send(frame[:14])                 # header and part of the word
        await transport.wait(300)
        assert parts.received() == []                    # not yet: bytes may still come
        op, tag, status, *_ = await _answer(transport)
        assert (op, tag, status) == (BridgeOp.WRITE.value, 0x21, BridgeStatus.BAD_FRAME)
        await transport.send(encode_command(BridgeOp.READ, tag=3, space=BridgeSpace.MEM, addr=0)[:3])
        assert (await _answer(transport))[:3] == (BridgeOp.READ.value, 3, BridgeStatus.BAD_FRAME)
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        assert await host.mem_read64(0) == 0                # nothing was written
        await host.nop()

    run_bridge(parts, bench)


def test_the_host_resynchronises_after_garbage():
    s = seed()
    rng = random.Random(s)
    parts = bridge_system(rng, frame_timeout=200)

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        await host.mem_write64(8, 0xABCD)
        # random bytes (no 'W': garbage must not complete a write by chance), then a write frame cut
        # short, as after lost bytes on the line
        garbage = bytes(rng.choice([b for b in range(256) if b != BridgeOp.WRITE.value]) for _ in range(20))
        frame = encode_command(BridgeOp.WRITE, tag=1, space=BridgeSpace.MEM, addr=8, words=[(0, 0xFF)] * 8)
        await transport.send(garbage + frame[:30])
        await host.resync()
        assert await host.mem_read64(8) == 0xABCD, f"seed {s}"     # the cut frame wrote nothing
        await host.mem_write64(16, 0x77)
        assert await host.mem_read64(16) == 0x77, f"seed {s}"

    run_bridge(parts, bench, recv_limit=3000)


def test_a_silent_subordinate_times_out_and_the_burst_is_finished_later():
    parts = bridge_system(random.Random(4), axi_timeout=300)
    nic = parts.nic

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        nic.hold_addr = True                             # AWREADY, WREADY and ARREADY stay low
        await host.write(NIC_BASE, bytes(range(32)))     # four words
        await host.mem_write64(0, 0x99)                  # host memory still works meanwhile
        assert await host.mem_read64(0) == 0x99
        assert host.errors == [f"store of 32 bytes at {NIC_BASE:#x} answered TIMEOUT"]
        with pytest.raises(BridgeTimeout):               # the manager is still busy with the store
            await host.read64(NIC_BASE)
        nic.hold_addr = False
        await transport.wait(50)
        # the store completed as AXI requires, its beats after the first with no byte enabled
        assert nic.writes == [(NIC_BASE >> 3, [(0x0706050403020100, 0xFF), (0, 0), (0, 0), (0, 0)])]
        assert nic.reads == []                           # the read timed out before its AR went out
        assert await host.read64(NIC_BASE) == 0x0706050403020100
        await host.write64(NIC_BASE + 8, 5)
        assert await host.read64(NIC_BASE + 8) == 5

    run_bridge(parts, bench)


def test_a_missing_response_times_out_and_a_late_r_is_dropped():
    parts = bridge_system(random.Random(5), axi_timeout=300)
    nic = parts.nic

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        nic.words[NIC_BASE >> 3] = 0x1111
        nic.hold_resp = True                             # takes AW, W and AR, answers nothing
        with pytest.raises(BridgeTimeout):
            await host.read_raw(NIC_BASE, 8)
        await host.mem_write(0, bytes(range(64)))        # uses the word buffer the late R must not touch
        nic.hold_resp = False                            # now the eight stale R beats come
        assert await host.mem_read(0, 64) == bytes(range(64))
        assert await host.read64(NIC_BASE) == 0x1111
        assert len(nic.reads) == 2
        nic.hold_resp = True
        await host.write64(NIC_BASE + 8, 0x2222)        # its beat went out, its B does not come
        await host.flush()
        assert host.errors == [f"store of 8 bytes at {NIC_BASE + 8:#x} answered TIMEOUT"]
        nic.hold_resp = False
        assert await host.read64(NIC_BASE + 8) == 0x2222

    run_bridge(parts, bench)


def test_end_to_end_through_the_uart_pins():
    s = seed()
    rng = random.Random(s)
    parts = bridge_system(rng, divisor=4, frame_timeout=1000)
    nic_ref, mem_ref = {}, bytearray(MEM_SIZE)

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        for k in range(3):                               # posted 64-byte stores: the window keeps the FIFO
            data = bytes(rng.getrandbits(8) for _ in range(64))
            await host.write(NIC_BASE + 64 * k, data)
            for i, b in enumerate(data):
                nic_ref[NIC_BASE + 64 * k + i] = b
        await _random_ops(rng, host, nic_ref, mem_ref, 6)
        await host.flush()
        assert host.errors == [], f"seed {s}"
        assert (ctx.get(parts.rx.overruns), ctx.get(parts.rx.frame_errors), parts.pin.frame_errors) == (0, 0, 0)
        got = await host.read(NIC_BASE + 64, 64)
        assert got == bytes(nic_ref[NIC_BASE + 64 + i] for i in range(64)), f"seed {s}"

    run_bridge(parts, bench, limit=2_000_000, recv_limit=40_000)


def test_bridge_errors_raise_from_reads():
    parts = bridge_system(random.Random(6))

    async def bench(ctx, transport, clock):
        host = UartBridgeHost(transport, rx_depth=RX_DEPTH, mem_size=MEM_SIZE)
        with pytest.raises(BridgeError, match="RANGE"):
            await host.read64(1 << 53)

    run_bridge(parts, bench)
