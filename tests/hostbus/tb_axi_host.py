"""cocotb testbench: the AXI host model (sim/axi_host.py) on the AXI loop-back top (sim/tops/axi_loop.py).

The top wires ``s_axi`` straight to ``m_axi``, so every CPU access of the model lands in the model's own
memory.  Each test checks the model against an independent picture: a Python copy of the memory, the
bursts and beats seen on ``s_axi`` by cocotbext-axi monitors, and the handshake counters of the top.
Parameters from ``sim.runner.tb_params()``: ``stall`` (probability per cycle that a channel stalls),
``jitter`` (extra DMA read cycles); the seed prints and replays (``SEED=``).
"""

import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiBurstType, AxiResp
from cocotbext.axi.axi_channels import AxiARBus, AxiARMonitor, AxiAWBus, AxiAWMonitor, AxiWBus, AxiWMonitor

from rtl.common.htax import HtaxStatus
from rtl.config import load
from sim.axi_host import AxiHostModel, HostTimeout, HtaxResponseError
from sim.runner import tb_params, tb_seed

CFG = load()
LINES = 16


async def setup(dut, **kw):
    p = tb_params()
    seed = tb_seed()
    opts = dict(cfg=CFG, seed=seed, stall_probability=p.get("stall", 0.0), jitter_cycles=p.get("jitter", 0))
    opts.update(kw)
    dut._log.info(f"seed {seed}, options {opts}")
    dut.irq_in.value = 0
    dut.resp_force.value = 0
    host = AxiHostModel(dut, **opts)
    host.start_clock()
    await host.reset()
    await host.start()
    return host, random.Random(seed)


class BusLog:
    """What crosses ``s_axi``: AW and AR bursts and W beats (cocotbext-axi monitors), and the top's
    handshake counters."""

    def __init__(self, dut, port="s_axi"):
        self.dut = dut
        self.aw = AxiAWMonitor(AxiAWBus.from_prefix(dut, port), dut.clk, dut.rst)
        self.w = AxiWMonitor(AxiWBus.from_prefix(dut, port), dut.clk, dut.rst)
        self.ar = AxiARMonitor(AxiARBus.from_prefix(dut, port), dut.clk, dut.rst)
        self.base = self.counters()

    def counters(self):
        return {c: int(getattr(self.dut, c).value) for c in ("aw_bursts", "w_beats", "b_resps", "ar_bursts", "r_beats")}

    async def counted(self):
        """Handshakes since this log was made, up to the last clock edge (read half a cycle later: at an
        edge, where a model's access completes, the counters have not taken that edge yet)."""
        await FallingEdge(self.dut.clk)
        now = self.counters()
        return {c: now[c] - self.base[c] for c in now}

    @staticmethod
    def drain(monitor):
        out = []
        while not monitor.empty():
            out.append(monitor.recv_nowait())
        return out


def store_beats(addr, data):
    """The W beats a store must make: ``(wstrb, stored bytes of wdata)`` per 64-bit word it touches."""
    beats = []
    for word in range(addr // 8, (addr + len(data) - 1) // 8 + 1):
        strb = value = 0
        for lane in range(8):
            a = 8 * word + lane
            if addr <= a < addr + len(data):
                strb |= 1 << lane
                value |= data[a - addr] << 8 * lane
        beats.append((strb, value))
    return beats


def masked(wdata, strb):
    return wdata & sum(0xFF << 8 * lane for lane in range(8) if strb >> lane & 1)


async def check_stores(log, stores):
    """Each store is one INCR burst of 8-byte beats, AWID 0, at the store's address, one beat per word,
    WSTRB exactly the stored bytes, WLAST on the last beat; in issue order."""
    aws, ws = BusLog.drain(log.aw), BusLog.drain(log.w)
    assert len(aws) == len(stores), (len(aws), len(stores))
    expect_w = []
    for aw, (addr, data) in zip(aws, stores, strict=True):
        beats = store_beats(addr, data)
        got = (int(aw.awid), int(aw.awaddr), int(aw.awlen), int(aw.awsize), int(aw.awburst))
        assert got == (0, addr, len(beats) - 1, 3, AxiBurstType.INCR), (got, addr, len(data))
        expect_w += [(strb, value, i == len(beats) - 1) for i, (strb, value) in enumerate(beats)]
    got_w = [(int(w.wstrb), masked(int(w.wdata), int(w.wstrb)), bool(int(w.wlast))) for w in ws]
    assert got_w == expect_w
    counted = await log.counted()
    assert (counted["aw_bursts"], counted["w_beats"], counted["b_resps"]) == (len(stores), len(expect_w), len(stores))


@cocotb.test()
async def stores_read_back(dut):
    """Random stores of 1..64 bytes, read back through read, read64, read_raw and host.memory."""
    host, rng = await setup(dut)
    log = BusLog(dut)
    buf = host.memory.alloc(64 * LINES)
    model = bytearray(64 * LINES)
    stores, reads = [], []

    async def check_read(addr, nbytes):
        kind = rng.choice(["read", "read64", "read_raw"])
        start = addr - addr % 8
        if kind == "read64":
            got = (await host.read64(start)).to_bytes(8, "little")
            reads.append(1)
        elif kind == "read":
            nbytes = addr + nbytes - start
            got = await host.read(start, nbytes)
            reads.append(-(-nbytes // 8))
        else:
            line = start - start % 64
            status, words = await host.read_raw(start, (line + 64 - start) // 8)
            assert status == HtaxStatus.OK, status
            got = b"".join(w.to_bytes(8, "little") for w in words)
            reads.append(len(words))
        assert got == bytes(model[start - buf: start - buf + len(got)]), (kind, hex(addr))

    for _ in range(300):
        line, off = rng.randrange(LINES), rng.randrange(64)
        n = rng.randrange(1, 65 - off)
        data = bytes(rng.randrange(256) for _ in range(n))
        addr = buf + 64 * line + off
        await host.write(addr, data)
        stores.append((addr, data))
        model[addr - buf: addr - buf + n] = data
        if rng.random() < 0.3:
            await check_read(addr, n)           # right behind the store: must see it
    # program order of stores to one word, and of a load behind them
    word = buf + 8 * rng.randrange(8 * LINES)
    for v in range(24):
        await host.write64(word, v * 0x0101_0101_0101_0101)
        stores.append((word, (v * 0x0101_0101_0101_0101).to_bytes(8, "little")))
    model[word - buf: word - buf + 8] = (23 * 0x0101_0101_0101_0101).to_bytes(8, "little")
    assert await host.read64(word) == 23 * 0x0101_0101_0101_0101
    reads.append(1)

    # concurrent reads (rotating ARIDs), each answered with its own line
    lines = [rng.randrange(LINES) for _ in range(24)]
    tasks = [cocotb.start_soon(host.read_raw(buf + 64 * line, 8)) for line in lines]
    for line, task in zip(lines, tasks, strict=True):
        status, words = await task
        assert status == HtaxStatus.OK
        assert b"".join(w.to_bytes(8, "little") for w in words) == bytes(model[64 * line: 64 * line + 64]), line
        reads.append(8)

    await host.idle()
    assert host.queued() == 0
    assert host.memory.read(buf, 64 * LINES) == bytes(model)
    assert host.errors == []
    assert host.memory.violations == []
    await check_stores(log, stores)
    ars = BusLog.drain(log.ar)
    assert [int(ar.arlen) + 1 for ar in ars] == reads
    assert all((int(ar.arsize), int(ar.arburst)) == (3, AxiBurstType.INCR) for ar in ars)
    counted = await log.counted()
    assert (counted["ar_bursts"], counted["r_beats"]) == (len(reads), sum(reads))
    st = host.stats
    assert (st["cpu_writes"], st["dma_writes"], st["cpu_reads"], st["dma_reads"]) == \
        (len(stores), len(stores), len(reads), len(reads)), st
    assert st["beats_out"] == st["beats_in"] == counted["w_beats"] + counted["r_beats"], (st, counted)
    dut._log.info(f"{len(stores)} stores, {len(reads)} reads in {host.now()} cycles; stats {st}")


@cocotb.test()
async def line_store_is_one_burst(dut):
    """A 64-byte store is one burst of 8 full beats; 1- and 9-byte stores make 1 and 2 beats."""
    host, rng = await setup(dut)
    buf = host.memory.alloc(4096)
    cases = [(buf + 64, bytes(range(64))), (buf + 130, b"\x5a"), (buf + 197, bytes(range(9)))]
    for addr, data in cases:
        log = BusLog(dut)
        await host.write(addr, data)
        assert host.queued() == 1               # until its B response
        await host.idle()
        await check_stores(log, [(addr, data)])
        assert host.memory.read(addr, len(data)) == data
    log = BusLog(dut)
    await host.write(buf + 256, bytes(64))
    await host.idle()
    counted = await log.counted()
    assert (counted["aw_bursts"], counted["w_beats"]) == (1, 8)
    assert [int(w.wstrb) for w in BusLog.drain(log.w)] == [0xFF] * 8
    assert host.errors == []


@cocotb.test()
async def unallocated_memory(dut):
    """A read of unallocated memory is answered SLVERR with all its beats (TARGET_ERROR) and recorded;
    a write there is a memory violation, answered OKAY."""
    host, _ = await setup(dut)
    log = BusLog(dut)
    addr = 0x2000                                   # below the allocator's base: never allocated
    status, words = await host.read_raw(addr, 4)
    assert (status, words) == (HtaxStatus.TARGET_ERROR, [0] * 4)
    assert len(host.errors) == 1 and "unallocated" in host.errors[0] and "0x2000" in host.errors[0], host.errors
    with pytest.raises(HtaxResponseError) as err:
        await host.read64(addr + 64)
    assert err.value.status == HtaxStatus.TARGET_ERROR
    assert len(host.errors) == 2
    assert (await log.counted())["r_beats"] == 5
    assert len(host.memory.violations) == 2
    await host.write64(addr, 1)
    await host.idle()
    assert len(host.memory.violations) == 3 and "write" in host.memory.violations[-1]
    assert len(host.errors) == 2                     # the B response was OKAY
    host.errors.clear()


@cocotb.test()
async def cpu_error_responses(dut):
    """BRESP/RRESP other than OKAY reach the CPU: SLVERR -> TARGET_ERROR, DECERR -> NO_TARGET, EXOKAY ->
    MALFORMED and an error; a store answered with an error is recorded."""
    host, _ = await setup(dut)
    buf = host.memory.alloc(4096)
    for force, status in [(2, HtaxStatus.TARGET_ERROR), (3, HtaxStatus.NO_TARGET), (1, HtaxStatus.MALFORMED)]:
        dut.resp_force.value = force
        got, words = await host.read_raw(buf, 2)
        assert got == status and len(words) == 2, (force, got)
        with pytest.raises(HtaxResponseError) as err:
            await host.read(buf, 3)
        assert err.value.status == status
        await host.write(buf + 3, b"ab")
        await host.idle()
        name = AxiResp(force).name
        assert any(f"store of 2 bytes at {buf + 3:#x} answered {name}" in e for e in host.errors), host.errors
        dut.resp_force.value = 0
        assert (await host.read(buf, 5))[3:] == b"ab"           # the memory itself answered OKAY
        host.errors.clear()
    assert host.memory.violations == []


@cocotb.test()
async def bad_burst(dut):
    """A burst host memory does not take (FIXED) is answered SLVERR and recorded; memory is unchanged."""
    host, _ = await setup(dut)
    buf = host.memory.alloc(4096)
    # the model's own AXI manager is the only driver of s_axi: use it for a burst the CPU never makes
    rsp = await host._cpu.write(buf, bytes(range(1, 17)), awid=0, burst=AxiBurstType.FIXED)
    assert rsp.resp == AxiResp.SLVERR
    assert len(host.errors) == 1 and "burst type FIXED" in host.errors[0], host.errors
    assert host.memory.read(buf, 16) == bytes(16)
    host.errors.clear()


@cocotb.test()
async def msi_and_irq_line(dut):
    """A store into the MSI page is an interrupt, not a memory write; each rising edge of irq is one."""
    host, _ = await setup(dut)
    await host.write64(host.msi_address + 8, 0x1234_5678_9ABC_DEF0)
    await host.wait_interrupt(count=1, timeout_cycles=5000)
    assert host.interrupts == [(host.msi_address + 8, 0x1234_5678_9ABC_DEF0)]
    assert host.memory.violations == [] and host.memory.device_writes() == []
    for k, hold in enumerate((1, 5)):
        start = host.now()
        dut.irq_in.value = 1                # irq follows one cycle later, for `hold` cycles
        await host.cycles(hold)
        dut.irq_in.value = 0
        await host.cycles(3)
        assert len(host.interrupts) == 2 + k, host.interrupts
        assert host.interrupts[-1] == (None, start + 1), (host.interrupts, start)
    await host.wait_interrupt(count=3, timeout_cycles=10)
    assert len(host.interrupts) == 3 and host.stats["irq_edges"] == 2
    assert host.interrupts[1][1] < host.interrupts[2][1]
    with pytest.raises(HostTimeout, match=r"^3 of 4 interrupts within 20 cycles$"):
        await host.wait_interrupt(count=4, timeout_cycles=20)
    assert host.errors == []


@cocotb.test()
async def dma_read_latency(dut):
    """RVALID rises latency_cycles after the AR handshake on m_axi (no stalls); jitter adds 0..J."""
    host, _ = await setup(dut, stall_probability=0.0, jitter_cycles=0)
    assert host.latency_cycles == CFG.ns_to_cycles(CFG["host"]["dma_read_latency_ns"]) == 44
    buf = host.memory.alloc(4096)
    ar_mon = AxiARMonitor(AxiARBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst)
    for latency, jitter in [(44, 0), (3, 0), (1, 0), (10, 12)]:
        host.latency_cycles, host.jitter_cycles = latency, jitter
        seen = []
        for i in range(12):
            async def rvalid_rise():
                await RisingEdge(dut.m_axi_rvalid)
                return host.now()
            rise = cocotb.start_soon(rvalid_rise())
            read = cocotb.start_soon(host.read64(buf + 8 * i))
            await ar_mon.recv()
            handshake = host.now()
            seen.append(await rise - handshake)
            assert await read == 0
        if jitter:
            assert all(latency <= x <= latency + jitter for x in seen), seen
            assert len(set(seen)) > 1, seen
        else:
            assert seen == [latency] * 12, (seen, latency)
    assert host.errors == []
    host.stop()                             # clock stopped, every valid and ready low
    await Timer(20, "ns")
    assert [int(getattr(dut, f"{p}_{s}").value) for p in ("s_axi", "m_axi") for s in ("awvalid", "wvalid", "bready",
            "arvalid", "rready", "awready", "wready", "bvalid", "arready", "rvalid")] == [0] * 20


@cocotb.test()
async def argument_errors(dut):
    """Stores and reads the CPU cannot make, and models that cannot be built, raise ValueError."""
    host, _ = await setup(dut)
    buf = host.memory.alloc(4096)
    for data, addr, msg in [(b"", buf, "a store of 0 bytes at 0x100000 does not fit one 64-byte line"),
                            (bytes(65), buf, "a store of 65 bytes at 0x100000 does not fit one 64-byte line"),
                            (bytes(8), buf + 60, "a store of 8 bytes at 0x10003c does not fit one 64-byte line")]:
        with pytest.raises(ValueError, match=f"^{msg}$"):
            await host.write(addr, data)
    with pytest.raises(ValueError, match=r"^register address 0x100004 is not 8-byte aligned$"):
        await host.write64(buf + 4, 0)
    for addr, n in [(buf + 4, 1), (buf, 0), (buf, 9), (buf + 8, 8)]:
        msg = f"^read of {n} words at {addr:#x} must be 8-byte aligned inside one line$"
        with pytest.raises(ValueError, match=msg):
            await host.read_raw(addr, n)
    for kw, msg in [(dict(latency_cycles=0), r"latency_cycles must be at least 1, not 0"),
                    (dict(jitter_cycles=-1), r"jitter_cycles must not be negative, not -1"),
                    (dict(stall_probability=1.0), r"stall_probability must be in \[0, 1\), not 1.0"),
                    (dict(prefix="n9_"), r"the DUT lacks 58 of the AXI ports, the first is n9_s_axi_awid")]:
        with pytest.raises(ValueError, match=f"^{msg}$"):
            AxiHostModel(dut, cfg=CFG, **kw)
    assert host.stats["cpu_writes"] == host.stats["cpu_reads"] == 0


@cocotb.test()
async def read_timeout(dut):
    """A read not answered in read_timeout_cycles raises HostTimeout; the late answer does no harm."""
    host, _ = await setup(dut, read_timeout_cycles=10)
    buf = host.memory.alloc(4096)
    await host.write64(buf, 77)
    with pytest.raises(HostTimeout, match=rf"^no response to the read of {buf:#x} within 10 cycles$"):
        await host.read64(buf)
    await host.idle()
    host.read_timeout_cycles = 1000
    assert await host.read64(buf) == 77
    assert host.errors == []
