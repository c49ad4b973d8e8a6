"""cocotb testbench: the generated register file driven through the host bus functional model.

Every expected value comes from :class:`sim.regs_model.RegModel`, which reads the SystemRDL sources
independently of the exporter.  The tests walk the model, so a register added to the RDL is tested
without touching this file.  Run from ``test_regs_cocotb.py``.
"""

import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from rtl.common.addrmap import AddressMap
from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from rtl.config import load
from sim.clock import start_clock
from sim.host import HostModel, HtaxResponseError
from sim.htax_packet import HtaxPacket
from sim.regs_model import RegModel
from sim.runner import tb_params, tb_seed


class Env:
    def __init__(self, dut):
        self.dut = dut
        self.cfg = load()
        params = tb_params()
        self.model = RegModel.from_config(self.cfg, revision=tuple(params["revision"]))
        self.seed = tb_seed()
        self.rng = random.Random(self.seed)
        self.port = self.cfg["regs"]["htax_port"]
        self.host = HostModel(dut, cfg=self.cfg, port="htax", host_port=self.cfg["regs"]["host_port"],
                              route=lambda addr: self.port, seed=self.seed, latency_cycles=8)
        self.ext = {}           # external array port prefix -> {index: value}
        self.ext_writes = []
        self.window = AddressMap.from_config(self.cfg)["regs"]

    def sig(self, name):
        return getattr(self.dut, name)

    def inputs(self):
        """Every hardware input of the register file, from the model (name, width)."""
        out = []
        for r in self.model.registers():
            if r.storage == "ram":
                if r.index == 0:
                    out.append(f"{r.port}__addr")
                continue
            if r.storage == "external":
                if r.index == 0:
                    out.append(f"{r.port}__r_data")
                continue
            for f in r.fields:
                if f.role:
                    continue
                if f.counter:
                    out.append(f"{r.port}__{f.name}_incr")
                if f.intr:
                    out.append(f"{r.port}__{f.name}_event")
                if f.hwset:
                    out.append(f"{r.port}__{f.name}_set")
                if "w" in f.hw and not (f.counter or f.intr or f.hwset):
                    out.append(f"{r.port}__{f.name}_next")
        return out

    async def start(self):
        cocotb.log.info(f"seed {self.seed} (replay with SEED={self.seed})")
        for name in self.inputs():
            self.sig(name).value = 0
        start_clock(self.dut.clk, self.cfg.cycle_ns)
        self.dut.rst.value = 1
        await self.host.start()
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        for r in self.model.registers("external"):
            self.ext.setdefault(r.port, {})[r.index] = r.reset
        cocotb.start_soon(self._external())
        await ClockCycles(self.dut.clk, 2)

    async def _external(self):
        """The units' side of the external arrays: synchronous read, byte-enabled write."""
        ports = list(self.ext)
        while True:
            await ReadOnly()
            reads, writes = [], []
            for p in ports:
                if int(self.sig(f"{p}__r_en").value):
                    reads.append((p, int(self.sig(f"{p}__r_addr").value)))
                if int(self.sig(f"{p}__w_en").value):
                    writes.append((p, int(self.sig(f"{p}__w_addr").value),
                                   int(self.sig(f"{p}__w_data").value), int(self.sig(f"{p}__w_be").value)))
            await RisingEdge(self.dut.clk)
            for p, a in reads:
                self.sig(f"{p}__r_data").value = self.ext[p].get(a, 0)
            for p, a, d, be in writes:
                mask = sum(0xFF << (8 * i) for i in range(8) if (be >> i) & 1)
                self.ext[p][a] = (self.ext[p].get(a, 0) & ~mask) | (d & mask)
                self.ext_writes.append((p, a, d, be))

    async def pulse(self, name, value=1, cycles=1):
        await RisingEdge(self.dut.clk)
        self.sig(name).value = value
        await ClockCycles(self.dut.clk, cycles)
        self.sig(name).value = 0

    async def read(self, path):
        return await self.host.read64(self.model.addr(path))

    async def write_bytes(self, path, data, be):
        """A store of the bytes enabled by ``be`` (contiguous) of ``data`` into register ``path``."""
        lo = (be & -be).bit_length() - 1
        hi = be.bit_length()
        raw = data.to_bytes(8, "little")[lo:hi]
        await self.host.write(self.model.addr(path) + lo, raw)

    async def settle(self):
        """Wait until every posted write the host queued has reached the register file."""
        await self.host.idle()
        await ClockCycles(self.dut.clk, 4)

    def check_errors(self):
        assert not self.host.errors, self.host.errors


def _contiguous_be(rng):
    lo = rng.randrange(8)
    hi = rng.randrange(lo, 8)
    return sum(1 << i for i in range(lo, hi + 1))


@cocotb.test()
async def reset_values(dut):
    """Every register (every array element) reads its RDL reset value after reset."""
    env = Env(dut)
    await env.start()
    m = env.model
    regs = sorted(m.registers(), key=lambda r: r.addr)
    done = set()
    for r in regs:
        if r.addr in done:
            continue
        # read up to a whole line at once where consecutive words are mapped
        n = 1
        while n < 8 - (r.addr % 64) // 8 and m.mapped(r.addr + 8 * n) \
                and all(f.onread is None for f in m.reg(m.base + r.addr + 8 * n).fields):
            n += 1
        if any(f.onread for f in r.fields):
            n = 1
        status, words = await env.host.read_raw(m.base + r.addr, n)
        assert status == HtaxStatus.OK, f"{r.path}: {status!r}"
        for i, w in enumerate(words):
            ri = m.reg(m.base + r.addr + 8 * i)
            expect = m.read(ri.path)
            assert w == expect, f"{ri.path} @ {ri.addr:#x}: reset value {w:#x}, RDL says {expect:#x}"
            done.add(ri.addr)
    assert len(done) == len(regs)
    v = m.field("rf.version", "rev")
    assert v == tb_params()["revision"][0]
    env.check_errors()


@cocotb.test()
async def access_types(dut):
    """rw, r, w, woset, woclr, rclr, singlepulse and hw=r outputs of every flop register."""
    env = Env(dut)
    await env.start()
    m, rng = env.model, env.rng
    pulses = []

    async def watch(name):
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(env.sig(name).value):
                pulses.append(env.host.now())

    for r in m.registers("flops"):
        for f in r.fields:
            if f.singlepulse:
                cocotb.start_soon(watch(m.port(r.path, f.name)))
    for r in m.registers("flops"):
        # make woclr fields non-zero first so clearing is observable
        for f in r.fields:
            if f.intr and not f.role:
                await env.pulse(m.port(r.path, f.name, "_event"), f.max)
                m.event(r.path, f.name, f.max)
            elif f.hwset:
                await env.pulse(m.port(r.path, f.name, "_set"))
                m.hw_set(r.path, f.name)
        for _ in range(3):
            data = rng.getrandbits(64)
            be = _contiguous_be(rng)
            n_pulses = len(pulses)
            await env.write_bytes(r.path, data, be)
            m.write(r.path, data, be)
            got = await env.read(r.path)
            expect = m.read(r.path)
            assert got == expect, \
                f"{r.path}: wrote {data:#x} be {be:#04x}: read {got:#x}, expected {expect:#x}"
            for f in r.fields:
                if "r" in f.hw and not f.role:
                    hwv = int(env.sig(m.port(r.path, f.name)).value)
                    want = m.field(r.path, f.name)
                    assert hwv == want, f"{r.path}.{f.name}: unit sees {hwv:#x}, expected {want:#x}"
                if f.singlepulse:
                    fm = ((sum(0xFF << 8 * i for i in range(8) if be >> i & 1)) >> f.lsb) & f.max
                    exp_pulses = 1 if (data >> f.lsb) & fm else 0
                    assert len(pulses) - n_pulses == exp_pulses, f"{r.path}.{f.name}: {pulses[n_pulses:]}"
        if any(f.onread == "rclr" for f in r.fields):
            assert await env.read(r.path) == m.read(r.path)
    env.check_errors()


@cocotb.test()
async def hardware_fields(dut):
    """Hardware-driven status fields and hwset read back as the unit drives them."""
    env = Env(dut)
    await env.start()
    m, rng = env.model, env.rng
    for r in m.registers("flops"):
        for f in r.fields:
            if "w" in f.hw and not (f.counter or f.intr or f.hwset):
                v = rng.getrandbits(f.width)
                await RisingEdge(dut.clk)
                env.sig(m.port(r.path, f.name, "_next")).value = v
                m.hw_drive(r.path, f.name, v)
                await ClockCycles(dut.clk, 2)
                assert await env.read(r.path) == m.read(r.path), r.path
    env.check_errors()


@cocotb.test()
async def counters(dut):
    """Every counter: increments by strobes, several at once, then saturation or wrap."""
    env = Env(dut)
    await env.start()
    m, rng = env.model, env.rng
    for r in m.registers("flops"):
        cnt = [f for f in r.fields if f.counter and not f.role]
        if not cnt:
            continue
        for _ in range(2):
            ks = {f.name: rng.randrange(1, 6) for f in cnt}
            for step in range(max(ks.values())):
                await RisingEdge(dut.clk)
                for f in cnt:
                    env.sig(m.port(r.path, f.name, "_incr")).value = int(step < ks[f.name])
            await RisingEdge(dut.clk)
            for f in cnt:
                env.sig(m.port(r.path, f.name, "_incr")).value = 0
                m.incr(r.path, f.name, ks[f.name])
            await ClockCycles(dut.clk, 2)
            got = await env.read(r.path)
            assert got == m.read(r.path), f"{r.path}: {got:#x} after {ks}"
        # saturation / wrap: preload near the top where software can write, else count there
        for f in cnt:
            name = m.port(r.path, f.name, "_incr")
            if f.writable:
                await env.host.write64(m.addr(r.path), (f.max - 1) << f.lsb)
                m.write(r.path, (f.max - 1) << f.lsb)
                await env.settle()
                await env.pulse(name, 1, 3)
                m.incr(r.path, f.name, 3)
            else:
                await env.pulse(name, 1, f.max + 3)
                m.incr(r.path, f.name, f.max + 3)
            await ClockCycles(dut.clk, 2)
            got = await env.read(r.path)
            expect = m.read(r.path)
            assert got == expect, f"{r.path}.{f.name}: {got:#x}, expected {expect:#x} " \
                                  f"({'saturate' if f.saturate else 'wrap'})"
    env.check_errors()


@cocotb.test()
async def interrupts(dut):
    """Every interrupt bit: masked -> no MSI; enabled -> one MSI write; clear -> quiet; re-arm."""
    env = Env(dut)
    await env.start()
    m, rng, host = env.model, env.rng, env.host
    msi_data = rng.getrandbits(32)
    data_reg = [r for r in m.registers("flops") if any(f.role == "msi_data" for f in r.fields)][0]
    await host.write64(m.addr(data_reg.path), msi_data)
    m.write(data_reg.path, msi_data)
    await env.settle()
    intr = [(r, f) for r in m.registers("flops") for f in r.fields if f.intr and not f.role]
    n_irq = 0
    for r, f in intr:
        mask_path, mask_field = f.enable.rsplit(".", 1)
        for bit in range(f.width):
            # masked: the status bit sets, no MSI
            await env.pulse(m.port(r.path, f.name, "_event"), 1 << bit)
            m.event(r.path, f.name, 1 << bit)
            await ClockCycles(dut.clk, 10)
            assert len(host.interrupts) == n_irq, f"{r.path}.{f.name}[{bit}] masked but sent an MSI"
            assert await env.read(r.path) == m.read(r.path)
            # unmask: pending rises -> one MSI
            mf = m.reg(mask_path).field(mask_field)
            await host.write64(m.addr(mask_path), (1 << bit) << mf.lsb)
            m.write(mask_path, (1 << bit) << mf.lsb)
            await host.wait_interrupt(200, n_irq + 1)
            n_irq += 1
            assert host.interrupts[-1] == m.msi(), f"{host.interrupts[-1]} != {m.msi()}"
            # a second event on the pending bit sends nothing
            await env.pulse(m.port(r.path, f.name, "_event"), 1 << bit)
            await ClockCycles(dut.clk, 10)
            assert len(host.interrupts) == n_irq
            # clear (write one): quiet
            await host.write64(m.addr(r.path), (1 << bit) << f.lsb)
            m.write(r.path, (1 << bit) << f.lsb)
            assert await env.read(r.path) == m.read(r.path) == 0
            assert not m.pending()
            await ClockCycles(dut.clk, 10)
            assert len(host.interrupts) == n_irq, f"{r.path}.{f.name}[{bit}] MSI after clear"
            # an event with the mask set: a new MSI
            await env.pulse(m.port(r.path, f.name, "_event"), 1 << bit)
            await host.wait_interrupt(200, n_irq + 1)
            n_irq += 1
            await host.write64(m.addr(r.path), (1 << bit) << f.lsb)
            await host.write64(m.addr(mask_path), 0)
            m.write(mask_path, 0)
            await env.settle()
            assert len(host.interrupts) == n_irq
    # re-arm: two bits pending, clearing one leaves one pending -> another MSI
    (r1, f1), (r2, f2) = intr[0], intr[-1]
    for f in (f1, f2):
        mp, mf = f.enable.rsplit(".", 1)
        await host.write64(m.addr(mp), m.reg(mp).field(mf).max << m.reg(mp).field(mf).lsb)
    await env.settle()
    assert len(host.interrupts) == n_irq
    for r, f in ((r1, f1), (r2, f2)):
        await env.pulse(m.port(r.path, f.name, "_event"), 1)
    await host.wait_interrupt(200, n_irq + 1)
    n_irq += 1
    await ClockCycles(dut.clk, 10)
    assert len(host.interrupts) == n_irq
    await host.write64(m.addr(r1.path), 1 << f1.lsb)
    await host.wait_interrupt(200, n_irq + 1)
    n_irq += 1
    await host.write64(m.addr(r2.path), 1 << f2.lsb)
    await ClockCycles(dut.clk, 20)
    assert len(host.interrupts) == n_irq
    # the MSI address moves with the register (upper half of the word: data in bits 32..63)
    addr_reg = [r for r in m.registers("flops") if any(f.role == "msi_address" for f in r.fields)][0]
    new = env.cfg["system"]["msi_address"] + 0x44
    await host.write64(m.addr(addr_reg.path), new)
    m.write(addr_reg.path, new)
    await env.settle()
    await env.pulse(m.port(r1.path, f1.name, "_event"), 1)
    await host.wait_interrupt(200, n_irq + 1)
    assert host.interrupts[-1] == m.msi() == (new & ~7, msi_data << 32)
    env.check_errors()


@cocotb.test()
async def arrays_random(dut):
    """RAM and external arrays: random single/multi-word writes with byte enables, reads, hw ports."""
    env = Env(dut)
    await env.start()
    m, rng, host = env.model, env.rng, env.host
    arrays = {}
    for r in m.registers():
        if r.storage != "flops":
            arrays.setdefault(r.port, []).append(r)
    names = sorted(arrays)
    for _ in range(300):
        port = rng.choice(names)
        elems = arrays[port]
        r = rng.choice(elems)
        op = rng.random()
        if op < 0.35:
            data, be = rng.getrandbits(64), _contiguous_be(rng)
            await env.write_bytes(r.path, data, be)
            m.write(r.path, data, be)
        elif op < 0.5 and r.addr % 64 == 0 and m.mapped(r.addr + 8):
            n = rng.randrange(2, 9)
            words = [rng.getrandbits(64) for _ in range(n)]
            await host.write(m.base + r.addr, b"".join(w.to_bytes(8, "little") for w in words))
            for i, w in enumerate(words):
                m.write(m.base + r.addr + 8 * i, w)
        elif op < 0.65 and m.mapped(r.addr + 8) and (r.addr % 64) // 8 < 7:
            n = 1
            while n < 8 - (r.addr % 64) // 8 and m.mapped(r.addr + 8 * n):
                n += 1
            status, words = await host.read_raw(m.base + r.addr, n)
            assert status == HtaxStatus.OK
            for i, w in enumerate(words):
                assert w == m.read(m.base + r.addr + 8 * i), f"{port}[{r.index + i}]"
        else:
            got = await env.read(r.path)
            assert got == m.read(r.path), f"{r.path}: {got:#x} != {m.peek(r.path):#x}"
        if r.storage == "ram" and rng.random() < 0.3:
            # the unit's read port: address in, data one cycle later
            await env.settle()
            env.sig(f"{port}__addr").value = r.index
            await RisingEdge(dut.clk)
            await ReadOnly()
            got = int(env.sig(f"{port}__data").value)
            assert got == m.peek(r.path), f"{port}.data[{r.index}] = {got:#x}, expected {m.peek(r.path):#x}"
            await RisingEdge(dut.clk)
    # the last operation may be a posted write still on its way to the unit's external port
    await env.settle()
    for port, elems in arrays.items():
        if elems[0].storage == "external":
            for r in elems:
                assert env.ext[port][r.index] == m.peek(r.path), f"{port}[{r.index}] in the unit"
    assert env.ext_writes, "no external write seen"
    env.check_errors()


@cocotb.test()
async def unmapped_and_malformed(dut):
    """Unmapped addresses answer NO_TARGET or are ignored; malformed packets are dropped, never hang."""
    env = Env(dut)
    await env.start()
    m, host, rng = env.model, env.host, env.rng
    cnt = [r for r in m.registers("flops") if any(f.role == "dropped" for f in r.fields)][0]
    err = [(r, f) for r in m.registers("flops") for f in r.fields if f.role == "error"][0]
    unmapped = [off for off in (0x20, 0x9F8, 0x10_0008, 0x10_1010, 0xFF_FFF8, 0x3_0100)
                if not m.mapped(off)]
    assert len(unmapped) >= 4
    for off in unmapped:
        try:
            await host.read64(m.base + off)
            raise AssertionError(f"read of unmapped {off:#x} answered OK")
        except HtaxResponseError as e:
            assert e.status == HtaxStatus.NO_TARGET
        m.incr(cnt.path, "unmapped")
        await host.write64(m.base + off, rng.getrandbits(64))
        m.incr(cnt.path, "unmapped")
    # a line read that covers a register and a hole: NO_TARGET, and the rclr register is not cleared
    status, words = await host.read_raw(m.addr("rf.version"), 8)
    assert status == HtaxStatus.NO_TARGET and words == []
    m.incr(cnt.path, "unmapped")
    # outside the register window (the next window up): NO_TARGET
    status, _ = await host.read_raw(env.window.base + env.window.size, 1)
    assert status == HtaxStatus.NO_TARGET
    m.incr(cnt.path, "unmapped")
    # malformed packets
    src, dst = env.cfg["regs"]["host_port"], env.port
    bad_read = HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=7, addr=m.addr("rf.scratch"), length=0,
                          first_be=0xFF, last_be=0)
    host.send(bad_read)
    m.incr(cnt.path, "dropped")
    drops = [
        HtaxPacket(HtaxCmd.WRITE, src=src, dst=dst, addr=m.addr("rf.scratch"), length=1, first_be=0,
                   last_be=0, data=[0x55]),                                        # empty byte enables
        HtaxPacket(HtaxCmd.WRITE, src=src, dst=dst, addr=m.addr("rf.version") + 56, length=2,
                   data=[1, 2]),                                        # crosses a line
        HtaxPacket(HtaxCmd.RESPONSE, src=src, dst=dst, tag=3, addr=m.addr("rf.scratch"), length=1, data=[9]),
        HtaxPacket(HtaxCmd.ATS, src=src, dst=dst, ats=0x1234),
        HtaxPacket(HtaxCmd.WRITE, src=src, dst=dst, addr=m.addr("rf.scratch"), length=1, data=[7],
                   vc=HtaxVC.NONPOSTED),                                # wrong VC
    ]
    for p in drops:
        host.send(p)
        m.incr(cnt.path, "dropped")
    stray = HtaxPacket(HtaxCmd.WRITE, src=src, dst=dst, addr=m.addr("rf.scratch"), length=1,
                       data=[3]).beats()[1]
    host.send_beats([stray], HtaxVC.POSTED)                            # a data beat outside a packet
    m.incr(cnt.path, "dropped")
    await host.idle()
    await ClockCycles(dut.clk, 10)
    # the read was answered MALFORMED
    rsp = [p for p in host.received if p.cmd == HtaxCmd.RESPONSE and p.tag == 7]
    assert rsp and rsp[-1].status == HtaxStatus.MALFORMED and rsp[-1].length == 0
    host.errors[:] = [e for e in host.errors if "response with unexpected tag 7" not in e]
    m.event(err[0].path, err[1].name, 1)
    # nothing reached scratch, and the unit still answers
    assert await env.read("rf.scratch") == m.read("rf.scratch") == 0
    assert await env.read(cnt.path) == m.read(cnt.path)
    assert await env.read(err[0].path) == m.read(err[0].path)
    env.check_errors()
