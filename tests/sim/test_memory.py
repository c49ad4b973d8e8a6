"""Host memory model: allocation, byte-masked writes, ownership checks."""

import pytest

from sim.memory import HUGE_PAGE, PAGE, HostMemory, MemoryViolation


def test_alloc_alignment_and_owner():
    mem = HostMemory()
    a = mem.alloc(100, owner=3)
    b = mem.alloc(PAGE + 1, owner=4)
    h = mem.alloc(10, owner=5, huge=True)
    assert a % PAGE == 0 and b % PAGE == 0 and h % HUGE_PAGE == 0
    assert b >= a + PAGE and h >= b + 2 * PAGE
    assert mem.owner(a + 99) == 3 and mem.owner(b + PAGE) == 4 and mem.owner(h + HUGE_PAGE - 1) == 5
    assert mem.owner(0) is None


def test_masked_write_and_page_crossing():
    mem = HostMemory()
    a = mem.alloc(2 * PAGE)
    mem.write(a + PAGE - 4, bytes(range(8)))
    assert mem.read(a + PAGE - 4, 8) == bytes(range(8))
    mem.write(a, b"\xff" * 8, mask=[True, False] * 4)
    assert mem.read(a, 8) == b"\xff\x00" * 4


def test_device_access_checks():
    mem = HostMemory()
    a = mem.alloc(PAGE, owner=1)
    assert mem.device_write(a, b"12345678") is True
    assert mem.device_write(0x4000_0000, b"x") is False
    assert mem.device_read(0x4000_0000, 8) is None
    assert len(mem.violations) == 2
    mem.write_hook = lambda addr, size, owner: owner == 2
    assert mem.device_write(a, b"abcdefgh") is False and mem.read(a, 8) == b"12345678"
    assert "refused by ownership hook (owner 1)" in mem.violations[-1]
    assert [w.addr for w in mem.device_writes(owner=1)] == [a, a]
    strict = HostMemory(strict=True)
    with pytest.raises(MemoryViolation, match="unallocated"):
        strict.device_write(0x10, b"x")
