"""cocotb: two board designs (the bring-up variant of boards/ecp5_5g_evn.py) on DCU models, driven
only through their UARTs by sim.board.PhyLanes over sim.uart_bridge.UartBridgeHost, as a PC drives
the real boards.  Board a's core runs at 12.5 ns, b's at 12.52 ns, the word clocks at 10 and 10.01 ns.

``bring_up``: both boards' lanes come up (status over the UART, LEDs), PRBS31 and PRBS7 run both
ways without an error, wrong bytes on b's lines show as counted bit errors at b only, internal
loopback on one lane of a, a cut cable into b counts a retry and relocks.
"""

import cocotb
from cocotb.triggers import ClockCycles

from sim.board import PhyLanes
from sim.clock import start_clock
from sim.runner import tb_params, tb_seed
from sim.uart_bridge import UartBridgeHost
from sim.uart_pins import UartPins

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
