"""sim.board's driver host: BoardMemory's allocator (pages below the GAT, the GAT's prefix, zeroing of
pages handed out again, exact errors) and BoardHost's address translation onto the bridge's memory
space (host physical addresses inside the board's memory only, zeroing before the next access)."""

import asyncio

import pytest

from rtl.board.formats import GAT_BASE, GAT_PREFIX, HOST_MEMORY, HOST_MEMORY_BASE
from rtl.common.htax import HtaxStatus
from sim.atu_model import gate_fields
from sim.board import BoardHost, BoardMemory, board_topology
from sim.driver.atu import AtuDriver
from sim.memory import PAGE
from sim.tops.configs import board_config

PAGES = (GAT_BASE - HOST_MEMORY_BASE) // PAGE       # 15


def test_memory_map():
    assert HOST_MEMORY_BASE == 0x1F_1000 and HOST_MEMORY_BASE + HOST_MEMORY == GAT_BASE + GAT_PREFIX
    m = BoardMemory()
    assert m.gat_gates == 512 and m.free_pages == PAGES == 15


def test_alloc_first_fit_free_and_exhaustion():
    m = BoardMemory(zeroed=True)
    a = m.alloc(3 * PAGE, owner="x")
    b = m.alloc(1, owner="y")
    assert (a, b) == (HOST_MEMORY_BASE, HOST_MEMORY_BASE + 3 * PAGE)
    assert m.owner(a + 2 * PAGE + 5) == "x" and m.owner(b) == "y" and m.to_zero == []
    m.free(a, 3 * PAGE)
    assert m.alloc(2 * PAGE) == a                   # first fit, into the hole
    assert m.to_zero == [(a, PAGE), (a + PAGE, PAGE)]   # used before: zeroed before the next access
    with pytest.raises(MemoryError, match=r"^12 consecutive pages of the board's host memory are not free "
                                          r"\(12 of 15 pages free\)$"):
        m.alloc(12 * PAGE)
    with pytest.raises(ValueError, match=r"^page 0x1f3000 is not allocated$"):
        m.free(a, 3 * PAGE)                         # the third page is free: nothing is freed
    assert m.owner(a) is not None and m.free_pages == 12
    with pytest.raises(ValueError, match=r"^size must be positive, not 0$"):
        m.alloc(0)


def test_unknown_memory_is_zeroed_when_first_allocated():
    m = BoardMemory()
    a = m.alloc(2 * PAGE)
    assert m.to_zero == [(a, PAGE), (a + PAGE, PAGE)]


def test_one_gat_of_the_prefix():
    m = BoardMemory()
    assert m.alloc(8 * 512, huge=True, owner="atu") == GAT_BASE
    assert m.owner(GAT_BASE + 8 * 511) == "atu" and m.owner(GAT_BASE + GAT_PREFIX) is None
    with pytest.raises(MemoryError, match=r"^the board's host memory holds one GAT, already allocated$"):
        m.alloc(8 * 512, huge=True)
    with pytest.raises(ValueError, match=r"^the board's GAT holds 512 GATEs \(4096 bytes\), not 2097152 bytes$"):
        BoardMemory().alloc(2 << 20, huge=True)


class _Bridge:
    """What BoardHost uses of UartBridgeHost, recording the calls in order."""

    def __init__(self):
        self.calls, self.errors, self.mem = [], [], bytearray(HOST_MEMORY)

    async def mem_write(self, offset, data):
        self.calls.append(("mem_write", offset, len(data)))
        self.mem[offset:offset + len(data)] = data

    async def mem_read(self, offset, n):
        self.calls.append(("mem_read", offset, n))
        return bytes(self.mem[offset:offset + n])

    async def write(self, addr, data):
        self.calls.append(("write", addr, len(data)))

    async def write64(self, addr, value):
        self.calls.append(("write", addr, 8))

    async def read_raw(self, addr, nwords=1):
        self.calls.append(("read", addr, nwords))
        return HtaxStatus.OK, [0] * nwords


class _Clock:
    def now(self):
        return 0

    async def cycles(self, n):
        pass


def test_host_translates_and_zeroes_first():
    async def run():
        bridge = _Bridge()
        host = BoardHost(bridge, clock=_Clock(), memory=BoardMemory(zeroed=True))
        a = host.memory.alloc(PAGE)
        await host.mem_write64(a + 8, 0x1122)
        assert await host.mem_read64(a + 8) == 0x1122
        host.memory.free(a, PAGE)
        b = host.memory.alloc(PAGE)
        assert b == a
        await host.write64(0x8000_0000_0000, 1)         # the device window: zero the page first
        assert bridge.calls == [("mem_write", 8, 8), ("mem_read", 8, 8), ("mem_write", 0, PAGE),
                                ("write", 0x8000_0000_0000, 8)]
        assert await host.mem_read64(b + 8) == 0
        for addr, n in ((HOST_MEMORY_BASE - 8, 8), (GAT_BASE + GAT_PREFIX - 4, 8), (0, 8)):
            with pytest.raises(ValueError, match=r"^8 bytes at 0x[0-9a-f]+ are not inside the board's host memory "
                                                 r"\(0x1f1000 \.\. 0x200fff\)$"):
                await host.mem_read(addr, n)
    asyncio.run(run())


def test_the_driver_hands_out_nla_pages_of_the_prefix_only():
    """AtuDriver on the board's memory: GATEs at the 2 MB GAT, NLA pages up to 511, then MemoryError."""
    async def run():
        bridge = _Bridge()
        host = BoardHost(bridge, clock=_Clock(), memory=BoardMemory(zeroed=True))
        atu = AtuDriver(host, board_config(), first_page=509)
        region = await atu.register(1, 3 * PAGE)
        assert region.nla == 509 * PAGE and atu.gats == {0: GAT_BASE}
        assert bridge.calls[-1] == ("read", atu.regs.addr("atu.flush"), 1)
        gates = [gate_fields(int.from_bytes(bridge.mem[GAT_BASE - HOST_MEMORY_BASE + 8 * p:][:8], "little"))
                 for p in (509, 510, 511)]
        assert [(g["valid"], g["vpid"], g["ppn"]) for g in gates] == \
            [(1, 1, (region.phys >> 12) + k) for k in range(3)], gates
        with pytest.raises(MemoryError, match=r"^NLA page 0x200 is beyond the 512 GATEs of a GAT this host "
                                              r"memory holds$"):
            await atu.register(1, PAGE)
    asyncio.run(run())


def test_topology_cables_lane_to_lane():
    t = board_topology()
    assert t.wiring() == {(0, 0): (1, 0), (1, 0): (0, 0), (0, 1): (1, 1), (1, 1): (0, 1)}


def test_the_demo_needs_two_boards():
    from sim.board import main
    with pytest.raises(SystemExit, match=r"^demo needs two --port \(board 0's and board 1's UART\), not 1$"):
        main(["--port", "/dev/null", "demo"])
