"""cocotb testbench: the host bus functional model against the HTAX scratch target (sim/tops/scratch.py).

Each test checks the DUT's and the model's behaviour against an independent Python picture of the
scratch RAM and of host memory.  Parameters come from ``sim.runner.tb_params()``: ``ready_p`` (host
accepts beats from the DUT with this probability per cycle), ``gap_p`` (idle cycles before beats the
host sends), ``jitter`` (extra random DMA read delay, lets reads overtake each other).
"""

import random

import cocotb

from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from rtl.config import load
from sim.host import HostModel, HtaxResponseError
from sim.htax_bus import HtaxMonitor
from sim.htax_packet import HtaxPacket, beat_replace
from sim.runner import tb_params, tb_seed
from sim.tops.scratch import ID_MAGIC, RAM_OFFSET

CFG = load()
BASE = CFG["system"]["device_base"]
DUT_PORT = 1
REG = {name: BASE + 8 * i for i, name in enumerate(
    ["ID", "SCRATCH", "DMA_HOST", "DMA_LOCAL", "DMA_LEN", "DMA_CTRL", "DMA_STATUS", "MSI_ADDR", "ERRORS"])}
WORDS = CFG["scratch"]["words"]


async def setup(dut, **kw):
    p = tb_params()
    seed = tb_seed()
    dut._log.info(f"seed {seed}, params {p}")
    opts = dict(cfg=CFG, port="htax", host_port=0, route=lambda a: DUT_PORT, seed=seed,
                tx_ready_probability=p.get("ready_p", 1.0), rx_gap_probability=p.get("gap_p", 0.0),
                jitter_cycles=p.get("jitter", 0), reorder=p.get("jitter", 0) > 0)
    opts.update(kw)
    host = HostModel(dut, **opts)
    host.start_clock()
    await host.reset()
    await host.start()
    return host, random.Random(seed)


def link_monitor(dut, host):
    """An independent :class:`HtaxMonitor` on the DUT's tx link: it checks the host's ``ready2`` promise
    (docs/architecture.md) cycle by cycle from the signals as driven (ready2 implies ready; after a
    cycle in which a beat of VC v moved with ready2[v], ready[v] is high) and counts the packets."""
    return HtaxMonitor(dut, "htax__tx", host.clk, dut.rst, period_ns=host.period_ns, callback=lambda r: None,
                       name="promise check").start()


def ram_addr(word):
    return BASE + RAM_OFFSET + 8 * word


async def ram_words(host, first, count):
    out = []
    w = first
    while w < first + count:
        n = min(8 - w % 8, first + count - w)
        status, words = await host.read_raw(ram_addr(w), n)
        assert status == HtaxStatus.OK, status
        out += words
        w += n
    return out


@cocotb.test()
async def pio_registers_and_ram(dut):
    """PIO stores of 1..64 bytes with byte enables, register and multi-word reads."""
    host, rng = await setup(dut)
    assert await host.read64(REG["ID"]) == (ID_MAGIC << 48) | WORDS
    await host.write64(REG["SCRATCH"], 0x0123_4567_89AB_CDEF)
    assert await host.read64(REG["SCRATCH"]) == 0x0123_4567_89AB_CDEF
    # byte-masked store into a register keeps the other bytes
    await host.write(REG["SCRATCH"] + 2, b"\xAA\xBB")
    assert await host.read64(REG["SCRATCH"]) == 0x0123_4567_BBAA_CDEF

    model = bytearray(8 * WORDS)
    for w in range(0, WORDS, 8):        # the RAM is not reset: give it a known picture first
        line = bytes(rng.randrange(256) for _ in range(64))
        await host.write(ram_addr(w), line)
        model[8 * w: 8 * w + 64] = line
    for _ in range(300):
        line = rng.randrange(WORDS // 8)
        off = rng.randrange(64)
        n = rng.randrange(1, 65 - off)
        data = bytes(rng.randrange(256) for _ in range(n))
        await host.write(ram_addr(8 * line) + off, data)
        model[64 * line + off: 64 * line + off + n] = data
        if rng.random() < 0.2:
            w = rng.randrange(WORDS)
            k = rng.randrange(1, 9 - w % 8)
            expect = [int.from_bytes(model[8 * i: 8 * i + 8], "little") for i in range(w, w + k)]
            assert await ram_words(host, w, k) == expect
    got = await ram_words(host, 0, WORDS)
    assert got == [int.from_bytes(model[8 * i: 8 * i + 8], "little") for i in range(WORDS)]
    assert host.errors == []
    assert await host.read64(REG["ERRORS"]) == 0


@cocotb.test()
async def split_write_combining(dut):
    """A write-combined 64-byte store that splits into two packets still lands whole (fig. 6-5)."""
    host, rng = await setup(dut, wc_split_probability=1.0)
    for line in range(16):
        data = bytes(rng.randrange(256) for _ in range(64))
        before = host.stats["cpu_writes"]
        await host.write(ram_addr(8 * line), data)
        assert host.stats["cpu_writes"] - before == 2     # really split
        words = await ram_words(host, 8 * line, 8)
        assert b"".join(w.to_bytes(8, "little") for w in words) == data
    assert host.stats["wc_splits"] == 16
    assert host.errors == []


async def run_dma(host, *, to_host, host_addr, local, length, msi=True):
    await host.write64(REG["DMA_HOST"], host_addr)
    await host.write64(REG["DMA_LOCAL"], local)
    await host.write64(REG["DMA_LEN"], length)
    await host.write64(REG["MSI_ADDR"], host.msi_address if msi else 0)
    n = len(host.interrupts)
    await host.write64(REG["DMA_CTRL"], 2 if to_host else 1)
    if msi:
        await host.wait_interrupt(timeout_cycles=200000, count=n + 1)
    status = await host.read64(REG["DMA_STATUS"])
    return status


@cocotb.test()
async def dma_read_reordered_and_write(dut):
    """DMA reads of host memory (out of order when jitter > 0), DMA writes back, MSI completion."""
    host, rng = await setup(dut)
    monitor = link_monitor(dut, host)
    mem = host.memory
    src = mem.alloc(8192, owner=7)
    dst = mem.alloc(8192, owner=7)
    payload = bytes(rng.randrange(256) for _ in range(8192))
    mem.write(src, payload)
    jobs = 0
    for _ in range(6):
        length = rng.randrange(1, WORDS // 2)
        local = rng.randrange(WORDS - length + 1)
        off = 8 * rng.randrange((8192 - 8 * length) // 8 + 1)
        status = await run_dma(host, to_host=False, host_addr=src + off, local=local, length=length)
        jobs += 1
        assert status == jobs, f"status {status:#x}: job failed or not counted"
        assert host.interrupts[-1] == (host.msi_address, jobs)
        expect = [int.from_bytes(payload[off + 8 * i: off + 8 * i + 8], "little") for i in range(length)]
        assert await ram_words(host, local, length) == expect
        # and back out to another buffer
        doff = 8 * rng.randrange((8192 - 8 * length) // 8 + 1)
        status = await run_dma(host, to_host=True, host_addr=dst + doff, local=local, length=length)
        jobs += 1
        assert status == jobs
        assert mem.read(dst + doff, 8 * length) == payload[off: off + 8 * length]
    assert mem.violations == []
    assert all(a.owner == 7 for a in mem.log if a.source == "device")
    if tb_params().get("jitter", 0):
        order = [beat for _, beat in host.sent_log]
        # responses left in an order other than the reads arrived in
        arrivals = [p.tag for _, p in host.arrivals if p.cmd == HtaxCmd.READ]
        sent = [HtaxPacket.from_header_beat(b).tag for b in order
                if HtaxPacket.from_header_beat(b).cmd == HtaxCmd.RESPONSE]
        assert sent != arrivals[: len(sent)], "jitter did not reorder any DMA response"
    assert host.errors == []
    assert monitor.errors == []
    assert monitor.packets == host.stats["dma_reads"] + host.stats["dma_writes"] \
        + host.stats["cpu_reads"], (monitor.packets, host.stats)


@cocotb.test()
async def dma_latency_is_exact(dut):
    """The model answers a DMA read exactly latency_cycles after the READ header moved."""
    host, rng = await setup(dut, jitter_cycles=0, reorder=False)
    mem = host.memory
    src = mem.alloc(4096, owner=1)
    await run_dma(host, to_host=False, host_addr=src, local=0, length=64)
    reads = [(c, p.tag) for c, p in host.arrivals if p.cmd == HtaxCmd.READ]
    rsps = [(c, HtaxPacket.from_header_beat(b).tag) for c, b in host.sent_log
            if HtaxPacket.from_header_beat(b).cmd == HtaxCmd.RESPONSE]
    assert len(reads) == 8 and len(rsps) >= 8
    lat = [rc - c for (c, _), (rc, _) in zip(reads, rsps[:8], strict=True)]
    assert [t for _, t in reads] == [t for _, t in rsps[:8]]
    # with the link free, every response is offered exactly latency_cycles after its read
    assert lat[0] == host.latency_cycles, (lat, host.latency_cycles)
    # ... which is table 3-1's t_dm at the core clock (sim/host_timing.py): 280 ns / 6.4 ns -> 44
    cfg = host.cfg
    assert lat[0] == round(cfg["host"]["dma_read_latency_ns"] * cfg["system"]["clock_mhz"] / 1000), lat
    assert all(x >= host.latency_cycles for x in lat), lat


@cocotb.test()
async def bad_input_has_defined_outcomes(dut):
    """Unmapped addresses, malformed packets, failed DMA jobs: answered, counted, never a hang."""
    host, rng = await setup(dut)
    mem = host.memory
    # read of an unmapped offset -> NO_TARGET
    try:
        await host.read64(BASE + 0x1000)
        raise AssertionError("unmapped read was answered OK")
    except HtaxResponseError as e:
        assert e.status == HtaxStatus.NO_TARGET
    errors = 1
    # write to an unmapped offset and to the read-only ID register -> dropped, counted
    await host.write64(BASE + 0x2000, 1)
    await host.write64(REG["ID"], 1)
    errors += 2
    assert await host.read64(REG["ID"]) == (ID_MAGIC << 48) | WORDS
    # malformed READ (length 0) -> MALFORMED response
    host.send(HtaxPacket(HtaxCmd.READ, src=0, dst=DUT_PORT, tag=31, addr=REG["SCRATCH"], length=0))
    errors += 1
    # malformed WRITE (VC does not match the command) with its data beat: consumed, counted
    bad = HtaxPacket(HtaxCmd.WRITE, src=0, dst=DUT_PORT, addr=ram_addr(0), length=1, first_be=0xFF,
                     last_be=0, data=[0xDEAD], vc=HtaxVC.POSTED)
    beats = bad.beats()
    beats[0] = beat_replace(beats[0], {"word.header.vc": HtaxVC.ATS})
    host.send_beats(beats, HtaxVC.POSTED)
    errors += 1
    await host.write64(ram_addr(0), 0x55)
    assert (await ram_words(host, 0, 1)) == [0x55], "a malformed write changed the RAM"
    # the stray MALFORMED response for tag 31 reaches the model as a response nobody waits for
    await host.cycles(50)
    assert any("unexpected tag 31" in e for e in host.errors)
    assert any(p.cmd == HtaxCmd.RESPONSE and p.status == HtaxStatus.MALFORMED for p in host.received)
    host.errors.clear()
    # DMA whose scratch range exceeds the RAM -> completes with the failure bit
    status = await run_dma(host, to_host=False, host_addr=0, local=WORDS - 4, length=8)
    assert status == (1 << 32) | 1
    # DMA read of unallocated host memory -> TARGET_ERROR response -> job fails, violation logged
    status = await run_dma(host, to_host=False, host_addr=0x10_0000_0000, local=0, length=4)
    assert status == (1 << 32) | 2
    assert mem.violations and "unallocated" in mem.violations[0]
    # DMA write to unallocated host memory -> not applied, violation logged
    n = len(mem.violations)
    status = await run_dma(host, to_host=True, host_addr=0x20_0000_0000, local=0, length=4)
    assert status == 3
    assert len(mem.violations) == n + 1 and mem.read(0x20_0000_0000, 32) == bytes(32)
    # a start while busy is refused and counted
    src = mem.alloc(4096, owner=1)
    await host.write64(REG["DMA_HOST"], src)
    await host.write64(REG["DMA_LOCAL"], 0)
    await host.write64(REG["DMA_LEN"], 256)
    await host.write64(REG["MSI_ADDR"], host.msi_address)
    await host.write64(REG["DMA_CTRL"], 1)
    await host.write64(REG["DMA_CTRL"], 1)
    errors += 1
    await host.wait_interrupt(count=len(host.interrupts) + 1, timeout_cycles=100000)
    await host.cycles(20)
    assert await host.read64(REG["DMA_STATUS"]) == 4
    # a malformed READ (on the POSTED VC) while an 8-word read waits for its response: the transmitter
    # is busy with a DMA job's writes to the host, so the read waits behind the current write packet.
    # The stray READ is counted, not answered, and the waiting read is answered unchanged.
    line = [0x1000 + i for i in range(8)]
    await host.write(ram_addr(8), b"".join(w.to_bytes(8, "little") for w in line))
    writes = host.stats["dma_writes"]
    job = cocotb.start_soon(run_dma(host, to_host=True, host_addr=mem.alloc(4096, owner=2), local=0, length=256))
    while host.stats["dma_writes"] < writes + 2:
        await host.cycles(1)
    offered = len(host.sent_log)
    read = cocotb.start_soon(host.read_raw(ram_addr(8), 8))
    while len(host.sent_log) == offered:            # the READ's header is on the link
        await host.cycles(1)
    stray = HtaxPacket(HtaxCmd.READ, src=0, dst=DUT_PORT, tag=30, addr=REG["SCRATCH"], length=1, first_be=0xFF,
                       vc=HtaxVC.POSTED)
    host.send_beats(stray.beats(), HtaxVC.POSTED)
    errors += 1
    assert await read == (HtaxStatus.OK, line)
    assert await job == 5                           # the fifth DMA job, completed without failure
    await host.cycles(50)
    assert not [p for p in host.received if p.cmd == HtaxCmd.RESPONSE and p.tag == 30], "the stray READ was answered"
    assert await host.read64(REG["ERRORS"]) == errors
    assert host.errors == []
