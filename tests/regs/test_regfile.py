# amaranth: UnusedElaboratable=no
"""Register-file runtime in the Amaranth simulator: parameters, latency, same-cycle semantics."""

import random

import pytest

from rtl.common.htax import HtaxCmd, HtaxStatus
from rtl.common.regspec import Block, Field, Reg
from rtl.config import load
from rtl.regs.generate import build
from rtl.regs.regfile import RegisterFile
from sim.amsim import Clock, HtaxSink, HtaxSource, run_sim
from sim.htax_packet import HtaxPacket, line_write_packet
from sim.regs_model import RegModel

REVISION = (0x0123456789ABCD, True)


def _small():
    return Block("top", 0, (Reg("a", 0, (Field("x", 0, 8),)),))


@pytest.mark.parametrize("kwargs, message", [
    ({"htax_port": 16, "host_port": 0}, "htax_port must be between 0 and 15, not 16"),
    ({"htax_port": 1, "host_port": -1}, "host_port must be between 0 and 15, not -1"),
    ({"htax_port": 2, "host_port": 2}, "htax_port and host_port must differ, both are 2"),
    ({"htax_port": 1, "host_port": 0, "window_size": 1000},
     "window_size must be a power of two, not 1000"),
    ({"htax_port": 1, "host_port": 0, "window_size": 32}, "window_size must be at least 64, not 32"),
    ({"htax_port": 1, "host_port": 0, "window_base": 0x1000},
     "window_base must be a multiple of window_size (0x1000000) inside the 52-bit address space, not 0x1000"),
])
def test_parameter_errors(kwargs, message):
    kwargs = {"window_base": 0, **kwargs}
    with pytest.raises(ValueError) as e:
        RegisterFile(_small(), **kwargs)
    assert str(e.value) == message


def test_description_errors():
    with pytest.raises(ValueError) as e:
        Field("x", 60, 8)
    assert str(e.value) == "field x bits 60+8 do not fit a 64-bit register"
    with pytest.raises(ValueError) as e:
        Reg("r", 0, (Field("x", 0, 8), Field("y", 4, 8)))
    assert str(e.value) == "register r field y overlaps another field"
    with pytest.raises(ValueError) as e:
        Reg("r", 0, (Field("x", 0, 8, counter=True),), count=4, storage="ram")
    assert str(e.value) == ("ram register r field x must be plain rw/r/w storage (no side effects, "
                            "counters or interrupts)")
    with pytest.raises(ValueError) as e:
        RegisterFile(Block("t", 0, (Reg("a", 8, (Field("x", 0, 8),)), Reg("b", 8, (Field("x", 0, 8),)))),
                     window_base=0, htax_port=1, host_port=0)
    assert str(e.value) == "t.b at 0x8 overlaps t.a (0x8..0xf)"
    with pytest.raises(ValueError) as e:
        ram = Reg("a", 0x18, (Field("x", 0, 8),), count=4, storage="ram", array=True)
        RegisterFile(Block("t", 0, (ram,)), window_base=0, htax_port=1, host_port=0)
    assert str(e.value) == "ram array t.a at 0x18 must be aligned to its span 0x20"


def _setup():
    cfg = load()
    dut = build(cfg, revision=REVISION)
    model = RegModel.from_config(cfg, revision=REVISION)
    return cfg, dut, model


def test_read_latency_and_write_effect():
    """Response header two cycles after the request header; a write reaches the unit two cycles later."""
    cfg, dut, m = _setup()
    host, unit = HtaxSource(dut.htax.rx), HtaxSink(dut.htax.tx)      # the unit's tx always ready
    clock = Clock(host, unit)
    src, dst = cfg["regs"]["host_port"], cfg["regs"]["htax_port"]
    out = {}

    async def bench(ctx):
        await clock.tick(ctx)
        t0, _ = await host.transmit(ctx, HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=9, addr=m.addr("rf.version"),
                                                    length=1), clock=clock)
        await unit.wait_packets(ctx, 1, clock=clock, limit=200)
        rsp = unit.packets[0].packet
        out["latency"] = unit.packets[0].header_cycle - t0
        assert rsp.status == HtaxStatus.OK and rsp.tag == 9 and rsp.dst == src and rsp.src == dst
        assert rsp.data == [m.read("rf.version")]
        # a write to a hw=r field: cycles from the data beat to the unit's output
        value = 0x5A5A_0001
        pkt = line_write_packet(m.addr("velo.mbox_enable"), value.to_bytes(8, "little"), src=src, dst=dst)
        _, t_data = await host.transmit(ctx, pkt, clock=clock)
        t1 = await clock.until(ctx, lambda: ctx.get(dut.hw.velo.mbox_enable.enable) == value, limit=20)
        out["write"] = t1 - t_data

    run_sim(dut, bench)
    assert out["latency"] == 3
    assert out["write"] == 2


def test_rclr_and_increment_in_one_cycle():
    """A counter read-to-clear in the cycle it increments keeps that increment: no event is lost."""
    cfg, dut, m = _setup()
    host, unit = HtaxSource(dut.htax.rx), HtaxSink(dut.htax.tx)
    clock = Clock(host, unit)
    src, dst = cfg["regs"]["host_port"], cfg["regs"]["htax_port"]
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    incr = dut.hw.velo.counters.sent_incr
    reads = []
    counted = 0

    async def bench(ctx):
        nonlocal counted
        for i in range(6):          # a read offered while the counter counts at random
            host.send(HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=i, addr=m.addr("velo.counters"), length=1))
            for _ in range(rng.randrange(3, 12)):
                bit = rng.random() < 0.7
                ctx.set(incr, bit)
                counted += bit
                await clock.tick(ctx)
        ctx.set(incr, 0)
        await clock.repeat(ctx, 10)
        host.send(HtaxPacket(HtaxCmd.READ, src=src, dst=dst, tag=7, addr=m.addr("velo.counters"), length=1))
        await unit.wait_packets(ctx, 7, clock=clock, limit=200)
        reads.extend(r.packet.data[0] & 0xFFFF for r in unit.packets)

    run_sim(dut, bench)
    assert len(reads) == 7
    assert sum(reads) == counted, f"seed {seed}: reads {reads} sum to {sum(reads)}, {counted} increments"
