"""Two link.v back to back (pair.v): packets sent on a's VC 0 arrive whole, in order, on b's VC 0."""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

HEADER, COMMAND, PAYLOAD = 0, 1, 2              # NetBeatKind
RMA_COMPLETER = 3                               # NetUnit


def header(*, dst_node, unit, command_words, payload_words, src_node=0, hops=0, specific=0):
    """NetHeader: dst_node 14:0, unit 17:15, command_words 19:18, payload_words 23:20, src_node 38:24,
    hops 44:39, specific 63:45."""
    return (dst_node | unit << 15 | command_words << 18 | payload_words << 20 | src_node << 24 | hops << 39
            | specific << 45)


def packet(command, payload, **fields):
    """A packet: network header, command words, payload words (link ports carry it as it is)."""
    return [header(command_words=len(command), payload_words=len(payload), **fields), *command, *payload]


def kinds(command_words, payload_words):
    return [HEADER] + [COMMAND] * command_words + [PAYLOAD] * payload_words


async def send(dut, packets):
    """Offer each beat after a clock edge; it moves at the next edge if ready is high before it.
    NetBeat: data 63:0, kind 65:64, first 66, last 67; on tx the link port reads data and last only."""
    for words in packets:
        for i, w in enumerate(words):
            dut.a_tx0_valid.value = 1
            dut.a_tx0_payload.value = w | (i == len(words) - 1) << 67
            while True:
                await ReadOnly()
                moved = int(dut.a_tx0_ready.value)
                await RisingEdge(dut.clk)
                if moved:
                    break
    dut.a_tx0_valid.value = 0


async def receive(dut, count, timeout_cycles=2000):
    """The next ``count`` beats b delivers on VC 0, as (data, kind, first, last)."""
    got = []
    for _ in range(timeout_cycles):
        await RisingEdge(dut.clk)
        await ReadOnly()
        if dut.b_rx0_valid.value and dut.b_rx0_ready.value:
            b = int(dut.b_rx0_payload.value)
            got.append((b & (2**64 - 1), b >> 64 & 3, b >> 66 & 1, b >> 67 & 1))
            if len(got) == count:
                return got
    raise AssertionError(f"{len(got)} of {count} beats arrived in {timeout_cycles} cycles")


@cocotb.test()
async def packets_arrive(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.replay_timeout.value, dut.max_replays.value = 512, 4
    dut.a_tx0_valid.value, dut.a_tx0_payload.value, dut.b_rx0_ready.value = 0, 0, 1
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    shapes = [(1, 2), (0, 0), (3, 8), (0, 1)]   # (command words, payload words) of each packet
    packets = [packet([0xC0DE00 + 16 * n + i for i in range(c)], [0xDA7A00 + 16 * n + i for i in range(p)],
                      dst_node=1, unit=RMA_COMPLETER)
               for n, (c, p) in enumerate(shapes)]
    cocotb.start_soon(send(dut, packets))
    got = await receive(dut, sum(map(len, packets)))
    want = [(w, k, int(i == 0), int(i == len(p) - 1))
            for p, (c, n) in zip(packets, shapes, strict=True)
            for i, (w, k) in enumerate(zip(p, kinds(c, n), strict=True))]
    assert got == want
    assert int(dut.b_crc_errors.value) == 0 and int(dut.b_malformed.value) == 0
