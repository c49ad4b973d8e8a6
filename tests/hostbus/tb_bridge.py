"""cocotb testbench of the host bus bridge (:class:`sim.tops.hostbus.HostbusTop`).

The testbench plays the NIC on the HTAX side (an :class:`~sim.htax_bus.HtaxSource` sends the NIC's
WRITEs and READs, an :class:`~sim.htax_bus.HtaxSink` takes the CPU's packets and the DMA responses),
host memory on ``m_axi`` (cocotbext-axi ``AxiRam`` with random stalls on all five channels) and the CPU
on ``s_axi`` (``AxiMaster``).  A Python byte array is the reference memory.
"""

import json
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer
from cocotbext.axi import AxiBurstType, AxiBus, AxiMaster, AxiRam, AxiResp

import sim.axi_compat  # noqa: F401  (before cocotbext-axi)
from rtl.common.addrmap import AddressMap
from rtl.common.htax import HtaxCmd, HtaxStatus
from rtl.config import load
from sim.axi_host import AxiHostModel
from sim.clock import start_clock
from sim.driver.nic import htax_route
from sim.htax_bus import HtaxSink, HtaxSource, Order
from sim.htax_packet import HtaxPacket, byte_enables
from sim.runner import tb_params, tb_seed

MEM = 1 << 16           # host memory the tests use: 64 KiB at address 0
PERIOD = 6.4
NIC_SRC = 3             # the HTAX port the "NIC" sends from (RMA's)


def _stalls(rng, p):
    while True:
        yield rng.random() < p


class Bench:
    def __init__(self, dut, rng, stall):
        self.dut, self.rng = dut, rng
        self.cfg = load(tb_params().get("config"))
        self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=MEM)
        self.cpu = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
        for ch in (self.ram.write_if.aw_channel, self.ram.write_if.w_channel, self.ram.write_if.b_channel,
                   self.ram.read_if.ar_channel, self.ram.read_if.r_channel):
            ch.set_pause_generator(_stalls(rng, stall))
        self.got = []
        self.src = HtaxSource(dut, "nic__tx", dut.clk, dut.rst, period_ns=PERIOD, order=Order.FIFO, rng=rng)
        self.sink = HtaxSink(dut, "nic__rx", dut.clk, dut.rst, period_ns=PERIOD, rng=rng,
                             ready=None if stall == 0 else 1 - stall, callback=self._on_packet)
        self.route = htax_route(self.cfg)
        self.base = self.cfg["system"]["device_base"]
        self.model = bytearray(MEM)
        self.seq = 0
        self.later = {}             # byte address -> values written after the oldest open read

    def _on_packet(self, record):
        self.got.append(record.packet)

    async def start(self):
        start_clock(self.dut.clk, PERIOD)
        self.dut.rst.value = 1
        for _ in range(4):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.src.start()
        self.sink.start()
        await RisingEdge(self.dut.clk)

    async def cycles(self, n):
        await Timer(round(n * PERIOD * 1000), "ps")

    def dma_write(self, addr, payload):
        first_be, last_be, words = byte_enables(addr % 64, len(payload))
        base = addr & ~7
        buf = bytes(addr - base) + bytes(payload)
        buf += bytes(words * 8 - len(buf))
        self.model[addr:addr + len(payload)] = payload
        for k, v in enumerate(payload):
            self.later.setdefault(addr + k, []).append((self.seq, v))
        self.seq += 1
        self.src.send(HtaxPacket(HtaxCmd.WRITE, src=NIC_SRC, dst=0, addr=base, length=words, first_be=first_be,
                                 last_be=last_be if words > 1 else 0,
                                 data=[int.from_bytes(buf[8 * i:8 * i + 8], "little") for i in range(words)]))

    def dma_read(self, addr, nwords, tag):
        self.src.send(HtaxPacket(HtaxCmd.READ, src=NIC_SRC, dst=0, tag=tag, addr=addr, length=nwords,
                                 first_be=0xFF, last_be=0xFF if nwords > 1 else 0))
        return self.seq, bytes(self.model[addr:addr + 8 * nwords])

    def check_read(self, addr, expect, data):
        """A read sees every write sent before it; HTAX lets a later write pass it (posted passes
        non-posted), so a byte may also hold a value written after the read was sent."""
        seq, before = expect
        got = b"".join(w.to_bytes(8, "little") for w in data)
        assert len(got) == len(before), (hex(addr), len(got), len(before))
        for k, (g, b) in enumerate(zip(got, before, strict=True)):
            later = [v for s, v in self.later.get(addr + k, []) if s >= seq]
            assert g == b or g in later, (f"read of {addr:#x}: byte {k} is {g:#x}, written before the read: "
                                          f"{b:#x}, after it: {later}")

    async def wait_for(self, pred, limit=20000):
        for _ in range(limit // 16):
            if pred():
                return
            await self.cycles(16)
        raise AssertionError("timed out")


@cocotb.test()
async def dma_random(dut):
    """The NIC's writes and reads at random lines, lengths and byte enables: every read returns the
    reference memory as it was after the writes sent before it (a read never passes an earlier write to
    its line), every write lands with exactly its bytes."""
    seed = tb_seed()
    rng = random.Random(seed)
    bench = Bench(dut, rng, tb_params().get("stall", 0.3))
    await bench.start()
    expect = {}
    tags = list(range(32))

    def drain():
        for p in bench.got:
            assert p.cmd == HtaxCmd.RESPONSE and p.dst == NIC_SRC and p.tag in expect, p
            addr, words = expect.pop(p.tag)
            assert p.status == HtaxStatus.OK and p.addr == addr, (p, hex(addr))
            bench.check_read(addr, words, p.data)
            tags.append(p.tag)
        bench.got.clear()

    for _ in range(tb_params().get("ops", 300)):
        line = rng.randrange(16) * 64           # few lines: reads meet the writes before them
        if rng.random() < 0.5:
            off = rng.randrange(64)
            size = rng.randrange(1, 64 - off + 1)
            bench.dma_write(line + off, bytes(rng.randrange(256) for _ in range(size)))
            if rng.random() < 0.5 and tags:         # read it back at once: the read must wait for the B
                tag = tags.pop(rng.randrange(len(tags)))
                expect[tag] = (line + off // 8 * 8, bench.dma_read(line + off // 8 * 8, 1, tag))
        else:
            if not tags:
                await bench.wait_for(lambda: bench.got)
                drain()
            word = rng.randrange(8)
            nwords = rng.randrange(1, 8 - word + 1)
            tag = tags.pop(rng.randrange(len(tags)))
            expect[tag] = (line + 8 * word, bench.dma_read(line + 8 * word, nwords, tag))
        if rng.random() < 0.05:
            await bench.cycles(1 + rng.randrange(50))
        drain()
    await bench.wait_for(lambda: not bench.src.pending() and len(bench.got) == len(expect))
    drain()
    await bench.cycles(200)
    assert bytes(bench.ram.read(0, 1024)) == bytes(bench.model[:1024])
    assert not bench.sink.errors, bench.sink.errors


@cocotb.test()
async def cpu_access(dut):
    """The CPU's stores of 1..64 bytes become exactly one HTAX WRITE each (to the unit whose window holds
    the address, with the stored bytes and their byte enables) and B OKAY; its reads become one READ,
    answered with the RESPONSE's words (or an error response); requests the bridge refuses get DECERR
    (outside the device window) or SLVERR (a burst that is not one packet) and send nothing."""
    rng = random.Random(tb_seed())
    bench = Bench(dut, rng, tb_params().get("stall", 0.3))
    await bench.start()
    amap = AddressMap.from_config(bench.cfg)
    for _ in range(tb_params().get("ops", 60)):
        w = rng.choice(list(amap.windows.values()))
        line = w.base + rng.randrange(min(w.size, 1 << 20) // 64) * 64
        if rng.random() < 0.5:
            off = rng.randrange(64)
            size = rng.randrange(1, 64 - off + 1)
            data = bytes(rng.randrange(256) for _ in range(size))
            rsp = await bench.cpu.write(line + off, data)
            assert rsp.resp == AxiResp.OKAY, rsp
            await bench.wait_for(lambda: bench.got)
            (p,) = bench.got
            bench.got.clear()
            assert (p.cmd, p.dst, p.src) == (HtaxCmd.WRITE, bench.route(line + off), 0), p
            first_be, last_be, words = byte_enables(off, size)
            assert (p.addr, p.length, p.first_be) == ((line + off) & ~7, words, first_be), p
            assert words == 1 or p.last_be == last_be, p
            buf = b"".join(x.to_bytes(8, "little") for x in p.data)
            assert buf[off % 8: off % 8 + size] == data, (buf, data)
        else:
            word = rng.randrange(8)
            nwords = rng.randrange(1, 8 - word + 1)
            addr = line + 8 * word
            status = rng.choice([HtaxStatus.OK] * 3 + [HtaxStatus.NO_TARGET, HtaxStatus.TARGET_ERROR])
            values = [rng.randrange(1 << 64) for _ in range(nwords)]

            async def answer(addr=addr, nwords=nwords, status=status, values=values):
                await bench.wait_for(lambda: bench.got)
                (p,) = bench.got
                bench.got.clear()
                assert (p.cmd, p.dst, p.addr, p.length) == (HtaxCmd.READ, bench.route(addr), addr, nwords), p
                ok = status == HtaxStatus.OK
                bench.src.send(HtaxPacket(HtaxCmd.RESPONSE, src=p.dst, dst=0, tag=p.tag, addr=addr,
                                          length=nwords if ok else 0, status=status, first_be=p.first_be,
                                          last_be=p.last_be if ok else 0, data=values if ok else []))
            task = cocotb.start_soon(answer())
            got = await bench.cpu.read(addr, 8 * nwords)
            await task
            want = {HtaxStatus.OK: AxiResp.OKAY, HtaxStatus.NO_TARGET: AxiResp.DECERR}.get(status, AxiResp.SLVERR)
            assert got.resp == want, (got.resp, status)
            if status == HtaxStatus.OK:
                assert got.data == b"".join(v.to_bytes(8, "little") for v in values)
    # refused: outside the device window, a WRAP burst, a burst across a line; nothing reaches the NIC
    outside = bench.base - 64
    assert (await bench.cpu.write(outside, bytes(8))).resp == AxiResp.DECERR
    assert (await bench.cpu.read(outside, 8)).resp == AxiResp.DECERR
    assert (await bench.cpu.write(bench.base + 0x38, bytes(16))).resp == AxiResp.SLVERR
    assert (await bench.cpu.read(bench.base + 0x38, 16)).resp == AxiResp.SLVERR
    assert (await bench.cpu.read(bench.base, 32, burst=AxiBurstType.WRAP)).resp == AxiResp.SLVERR
    await bench.cycles(50)
    assert not bench.got, bench.got
    assert not bench.sink.errors, bench.sink.errors


async def _first_cycle(host, signals, limit=2000):
    """The cycle in which every signal of ``signals`` is first 1 together (sampled after the edge)."""
    for _ in range(limit):
        await RisingEdge(host.clk)
        await ReadOnly()
        if all(int(s.value) for s in signals):
            return host.now()
    raise AssertionError("timed out")


@cocotb.test()
async def bench(dut):
    """``bench/hostbus.py``: the cycles the bridge adds and the DMA read rate at t_dm.

    Host memory and CPU are :class:`sim.axi_host.AxiHostModel` (44-cycle reads at 156.25 MHz, no stalls);
    the NIC side is an HtaxSource and an always-ready HtaxSink, so every figure is the bridge's own."""
    cfg = load(tb_params().get("config"))
    host = AxiHostModel(dut, cfg=cfg)
    got = []
    sink = HtaxSink(dut, "nic__rx", dut.clk, dut.rst, period_ns=PERIOD, callback=lambda r: got.append(r))
    src = HtaxSource(dut, "nic__tx", dut.clk, dut.rst, period_ns=PERIOD, order=Order.FIFO)
    host.start_clock()
    await host.reset()
    await host.start()
    src.start()
    sink.start()
    res = {}
    base = cfg["system"]["device_base"]

    # CPU store: last W beat (handshake) to the HTAX header at the NIC, for 8 and 64 bytes
    for nbytes in (8, 64):
        w = [dut.s_axi_wvalid, dut.s_axi_wready, dut.s_axi_wlast]
        task = cocotb.start_soon(_first_cycle(host, w))
        await host.write(base + 0x40, bytes(range(nbytes)))
        t_w = await task
        await bench_wait(host, lambda: got)
        res[f"store_{nbytes}b_wlast_to_header_cycles"] = got[0].header_cycle - t_w
        got.clear()
        await host.cycles(20)

    # DMA read: HTAX READ header to ARVALID; RLAST to the RESPONSE header
    region = host.memory.alloc(1 << 16)
    ar = cocotb.start_soon(_first_cycle(host, [dut.m_axi_arvalid]))
    t0 = host.now() + 1
    src.send(HtaxPacket(HtaxCmd.READ, src=NIC_SRC, dst=0, tag=0, addr=region, length=8, first_be=0xFF, last_be=0xFF))
    t_ar = await ar
    t_header = src.log[-1][0] if src.log else t0
    rl = await _first_cycle(host, [dut.m_axi_rvalid, dut.m_axi_rready, dut.m_axi_rlast], limit=500)
    await bench_wait(host, lambda: got)
    res["read_header_to_arvalid_cycles"] = t_ar - t_header
    res["rlast_to_response_header_cycles"] = got[0].header_cycle - rl
    res["dma_read_round_trip_cycles"] = got[0].header_cycle - t_header
    got.clear()

    # DMA read rate: 8-word reads back to back, every tag in flight, at the configured t_dm
    n, tags = tb_params().get("reads", 512), list(range(32))
    sent = 0
    while sent < n or len(got) < n:
        while tags and sent < n:
            tag = tags.pop()
            src.send(HtaxPacket(HtaxCmd.READ, src=NIC_SRC, dst=0, tag=tag, addr=region + 64 * (sent % 1024),
                                length=8, first_be=0xFF, last_be=0xFF))
            sent += 1
        done = len(got)
        await bench_wait(host, lambda done=done: len(got) > done)
        tags.extend(r.packet.tag for r in got[done:])
    steady = got[64:]       # past the first round of every tag
    cycles = steady[-1].header_cycle - steady[0].header_cycle
    res["dma_read_words_per_cycle"] = round(8 * (len(steady) - 1) / cycles, 4)
    res["dma_read_latency_cycles"] = host.latency_cycles
    assert all(r.packet.status == HtaxStatus.OK and len(r.packet.data) == 8 for r in got)
    assert not host.errors and not sink.errors, (host.errors[:3], sink.errors[:3])
    dut._log.info(f"hostbus bench: {res}")
    with open(tb_params()["out"], "w") as f:
        json.dump(res, f)


async def bench_wait(host, pred, limit=20000):
    for _ in range(limit):
        if pred():
            return
        await RisingEdge(host.clk)
    raise AssertionError("timed out")
