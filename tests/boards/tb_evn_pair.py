"""cocotb: two board designs (boards/ecp5_5g_evn.py) on DCU models, driven only through their UARTs
over sim.uart_bridge.UartBridgeHost, as a PC drives the real boards.  Board a's core runs at 12.5 ns,
b's at 12.52 ns, the word clocks at 10 and 10.01 ns.

``bring_up`` (bring-up variant, sim.board.PhyLanes): both boards' lanes come up (status over the
UART, LEDs), PRBS31 and PRBS7 run both ways without an error, wrong bytes on b's lines show as
counted bit errors at b only, internal loopback on one lane of a, a cut cable into b counts a retry
and relocks.

``nic_demo`` (NIC variant): the unchanged driver (sim.driver) on sim.board.BoardHost runs make demo's
steps (sim.demo.scenario: init, VELO both ways, put, get, lock) between the boards; a put to an NLA
beyond the GATEs in b's host memory faults (ATU_FAULT, counted), never a wrong translation; then VELO
messages both ways, two of them sent into cables of lane 0 cut for 600 cycles (the receive sides
lose lock and relock): every message arrives once and in order, the link ports' retransmission hides
the loss (a cut of more than some 2,000 cycles ends in the link-error state instead, which needs
``retrain``: tests/phy).
"""

import json
import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from rtl.rma.formats import RmaCommand, RmaError
from rtl.rma.formats import RmaNotifyClass as Cls
from sim.board import PhyLanes, board_demo
from sim.clock import start_clock
from sim.runner import tb_params, tb_seed
from sim.tops.configs import board_config
from sim.uart_bridge import UartBridgeHost
from sim.uart_pins import SimClock, UartPins

PERIODS = {"clk": 12.5, "core_b_clk": 12.52, "line_a_clk": 10.0, "line_b_clk": 10.01}


async def _boards(dut, divisor):
    for name, period in PERIODS.items():
        start_clock(getattr(dut, name), period)
    for x in "ab":
        getattr(dut, f"{x}_error_rate").value = 0
        getattr(dut, f"{x}_cut").value = 0
    dut.rst.value = dut.core_b_rst.value = 1
    dut.line_a_rst.value = dut.line_b_rst.value = 0
    await ClockCycles(dut.clk, 4)
    dut.rst.value = dut.core_b_rst.value = 0
    boards = {}
    for x, clk in (("a", dut.clk), ("b", dut.core_b_clk)):
        pins = UartPins(clk, getattr(dut, f"{x}_uart_rx"), getattr(dut, f"{x}_uart_tx"), divisor=divisor)
        host = UartBridgeHost(pins, mem_size=128 * 1024)
        boards[x] = PhyLanes(host)
    return boards


async def _all(boards, fn):
    return {(x, lane): await fn(b, lane) for x, b in boards.items() for lane in range(b.lanes)}


@cocotb.test()
async def bring_up(dut):
    prm = tb_params()
    dut._log.info(f"seed {tb_seed()}")
    boards = await _boards(dut, prm.get("divisor", 8))
    await ClockCycles(dut.clk, 2000)

    async def status(b, lane):
        return await b.status(lane)

    s = await _all(boards, status)
    for key, v in s.items():
        assert v["tx_ready"] and v["rx_ready"] and v["tx_cycles"] > 0 and v["rx_cycles"] > 0, (key, v)
    assert int(dut.a_leds.value) & 0b110011 == 0b110011 and int(dut.b_leds.value) & 0b110011 == 0b110011

    async def prbs_run(pattern, cycles):
        for b in boards.values():
            for lane in range(b.lanes):
                await b.control(lane, mode=1, pattern=pattern)
        await ClockCycles(dut.clk, 300)
        for b in boards.values():
            for lane in range(b.lanes):
                await b.control(lane, prbs_clear=1)
        await ClockCycles(dut.clk, cycles)
        return await _all(boards, status)

    for pattern in (1, 0):
        s = await prbs_run(pattern, 4000)
        for key, v in s.items():
            assert v["rx_prbs_locked"] and v["rx_prbs_errors"] == 0 and v["rx_prbs_words"] > 4000, (pattern, key, v)
    dut.b_error_rate.value = int(1e-3 * 2 ** 32)
    s = await prbs_run(1, 8000)
    dut.b_error_rate.value = 0
    dut._log.info(f"with errors at b: { {k: v['rx_prbs_errors'] for k, v in s.items()} }")
    assert all(s["a", lane]["rx_prbs_errors"] == 0 for lane in range(2)), s
    assert all(s["b", lane]["rx_prbs_errors"] > 0 for lane in range(2)), s

    # internal loopback on a's lane 1: it checks its own pattern
    await boards["a"].control(1, loopback=1)
    await ClockCycles(dut.clk, 1500)
    s = await prbs_run(1, 3000)
    assert s["a", 1]["rx_prbs_locked"] and s["a", 1]["rx_prbs_errors"] == 0, s
    await boards["a"].control(1, loopback=0)

    # a cut cable into b's lane 0: the receive side loses the signal, retries, relocks
    before = (await boards["b"].status(0))["rx_retries"]
    dut.b_cut.value = 0b01
    await ClockCycles(dut.clk, 2000)
    dut.b_cut.value = 0
    await ClockCycles(dut.clk, 2000)
    v = await boards["b"].status(0)
    assert v["rx_retries"] > before and v["rx_ready"], v


async def _handshakes(signal, clk, out):
    """Append the time (ns) of every cycle ``signal`` is high at a rising edge of ``clk``."""
    while True:
        await RisingEdge(signal)
        await ReadOnly()
        while int(signal.value):
            out.append(get_sim_time("ns"))
            await RisingEdge(clk)
            await ReadOnly()


@cocotb.test()
async def nic_demo(dut):
    prm = tb_params()
    seed = tb_seed()
    dut._log.info(f"seed {seed}")
    rng = random.Random(seed)
    boards = await _boards(dut, prm.get("divisor", 8))
    cfg = board_config(record=prm.get("config") == "record")
    clocks = (SimClock(dut.clk, PERIODS["clk"]), SimClock(dut.core_b_clk, PERIODS["core_b_clk"]))
    # make demo BOARD=...'s path: link mode, lanes polled until up, the steps through the driver on BoardHost
    log, nics = await board_demo([b.host for b in boards.values()], clocks, cfg, period_ns=PERIODS["clk"],
                                 revision=(0, False), clear=False, poll=lambda: ClockCycles(dut.clk, 500))
    for r in log.records:
        dut._log.info(f"{r['step']:30} {r['cycles']!s:>8} {r['ns']!s:>10}  {r['detail']}")

    # a put to NLA page 0x200 of b: beyond the GATEs of b's GAT in its host memory.  The ATU's GATE
    # read leaves the memory (DECERR -> TARGET_ERROR): a fault, counted, told to b's VPID; no data moves
    rma = [nic.rma.ports[2] for nic in nics]
    local = nics[0].atu.regions[0]
    faults = (await nics[1].rma.counters())["drops.atu_faults"]
    b_writes = []
    watch = cocotb.start_soon(_handshakes(dut.b_dma_write, dut.core_b_clk, b_writes))
    await rma[0].put(1, 2, local.nla, 0x200 << 12, 64, notify=(0, 1, 0))
    n = await rma[1].wait(lambda n: n["cls"] == Cls.COMPLETER.value, timeout_cycles=400)
    watch.cancel()
    assert (n["command"], n["error"]) == (RmaCommand.PUT.value, RmaError.ATU_FAULT.value), n
    assert (await nics[1].rma.counters())["drops.atu_faults"] == faults + 1
    assert len(b_writes) == 1, b_writes         # b's NIC wrote the notification only, not the data

    # VELO 8 B from a to b, NIC to NIC: the store entering a's NIC to b's NIC writing the slot
    a_ns, b_ns = [], []
    watch = [cocotb.start_soon(_handshakes(dut.a_store, dut.clk, a_ns)),
             cocotb.start_soon(_handshakes(dut.b_dma_write, dut.core_b_clk, b_ns))]
    halves = []
    for _ in range(prm.get("latency_runs", 3)):
        a_ns.clear()
        b_ns.clear()
        await nics[0].velo.ports[1].send(1, 1, bytes(8))
        await nics[1].velo.ports[1].recv(timeout_cycles=400)
        halves.append(b_ns[0] - a_ns[0])
    for w in watch:
        w.cancel()
    dut._log.info(f"VELO 8 B a -> b, the store at a's NIC to the slot write at b's: {halves} ns")
    assert all(300 < h < 2000 for h in halves), halves      # no retransmission, no stall on the way

    # VELO both ways while lane 0's cables are cut for a while: nothing lost, nothing twice
    ports = [nic.velo.ports[1] for nic in nics]
    before = [await nic.link_counters() for nic in nics]
    sent = {0: [], 1: []}
    for k in range(prm.get("messages", 12)):
        src = k % 2
        payload = rng.randbytes(8 * rng.randrange(1, 5))
        await ports[src].send(1 - src, 1, payload, mtt=k % 4)
        sent[1 - src].append(payload)
        if k in (3, 4):         # the messages on the line when the cables go; the cut shorter than
            dut.a_cut.value = dut.b_cut.value = 0b01    # the link ports' way to the link-error state
            await ClockCycles(dut.clk, prm.get("cut_cycles", 600))
            dut.a_cut.value = dut.b_cut.value = 0
    for dst in (0, 1):
        got = []
        for _ in sent[dst]:
            try:
                got.append((await ports[dst].recv(timeout_cycles=400)).payload)     # 100 polls over the UART
            except TimeoutError:
                links = [await nic.link_counters() for nic in nics]
                lanes = {(x, lane): await b.status(lane) for x, b in boards.items() for lane in range(2)}
                raise AssertionError(f"node {dst}: {len(got)} of {len(sent[dst])} messages; links before "
                                     f"{before}, now {links}; lanes {lanes}") from None
        assert got == sent[dst], (dst, got, sent[dst])
        assert (await ports[dst].poll()) is None, f"node {dst}: a message arrived twice"
    links = [await nic.link_counters() for nic in nics]
    dut._log.info(f"link counters before the cut {before}, after {links}")
    assert any(links[n][0]["retransmissions"] > before[n][0]["retransmissions"] for n in (0, 1)), links
    assert all(links[n][p]["link_errors"] == before[n][p]["link_errors"] for n in (0, 1) for p in (0, 1)), links
    for n, nic in enumerate(nics):
        c = await nic.velo.counters()
        assert c["discarded"] == c["rejected"] == c["dropped"] == 0, (n, c)
        assert not nic.host.errors, nic.host.errors[:5]
    if "out" in prm:
        with open(prm["out"], "w") as f:
            json.dump({"steps": log.records, "velo_8B_nic_to_nic_ns": halves, "seed": seed}, f)
