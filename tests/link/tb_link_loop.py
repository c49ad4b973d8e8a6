"""cocotb: the RTL loop (sim.tops.link.LinkLoop) run in large steps, no per-cycle Python.

Parameters: ``vcs`` (the loop's VC count, default 4), ``packets`` per VC and direction (0: run
``cycles`` cycles with unlimited traffic), ``cycles`` (limit), ``flit_error`` (per-flit error
probability; converted to a per-phit bit-flip probability with ``flit_phits``), ``drop``/``burst``
(per-phit probabilities), ``src_stall``/``dst_stall``, ``fixed_cw``/``fixed_pw`` (one packet shape),
``out`` (write the final counters there as JSON), ``check`` (assert exactly-once in-order delivery;
default true).
"""

import json

import cocotb
from cocotb.triggers import ClockCycles, Timer

from sim.clock import start_clock
from sim.runner import tb_params, tb_seed

COUNTERS = ("crc_errors", "retransmissions", "naks_sent", "naks_received", "replay_timeouts",
            "link_errors", "malformed_packets", "protocol_errors")


def _thr(p):
    return min(0xffffffff, int(round(p * 2 ** 32)))


def snapshot(dut, vcs):
    out = {"cycles": int(dut.cycles.value)}
    for x in "ab":
        for c in COUNTERS + ("data_phits", "busy_phits", "data_flits", "injected", "link_error"):
            out[f"{x}_{c}"] = int(getattr(dut, f"{x}_{c}").value)
        for v in range(vcs):
            for c in ("sent", "received", "errors", "payload"):
                out[f"{x}{v}_{c}"] = int(getattr(dut, f"{x}{v}_{c}").value)
    return out


@cocotb.test()
async def link_loop(dut):
    prm = tb_params()
    dut._log.info(f"seed {tb_seed()} (the loop's generators are fixed xorshift seeds), params {prm}")
    packets = prm.get("packets", 0)
    vcs = prm.get("vcs", 4)
    limit = prm.get("cycles", 1_000_000)
    flit_phits = prm.get("flit_phits", 62)
    flip = 1 - (1 - prm.get("flit_error", 0.0)) ** (1 / flit_phits)
    dut.packets.value = packets or 0xffffffff
    dut.src_stall.value = _thr(prm.get("src_stall", 0.0))
    dut.dst_stall.value = _thr(prm.get("dst_stall", 0.0))
    dut.flip.value = _thr(flip)
    dut.drop.value = _thr(prm.get("drop", 0.0))
    dut.burst.value = _thr(prm.get("burst", 0.0))
    dut.fixed.value = int("fixed_pw" in prm)
    dut.fixed_cw.value = prm.get("fixed_cw", 0)
    dut.fixed_pw.value = prm.get("fixed_pw", 0)
    dut.replay_timeout.value = prm.get("replay_timeout", 512)
    start_clock(dut.clk, 10, start_high=False)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    step = prm.get("step", 20000)
    ran = 0
    while ran < limit:
        await ClockCycles(dut.clk, min(step, limit - ran))
        ran += min(step, limit - ran)
        if packets:
            s = snapshot(dut, vcs)
            if all(s[f"{x}{v}_received"] >= packets for x in "ab" for v in range(vcs)):
                await ClockCycles(dut.clk, 2000)     # anything in flight (duplicates) arrives too
                break
    await Timer(1, "ns")
    s = snapshot(dut, vcs)
    dut._log.info(f"result {json.dumps(s)}")
    if prm.get("out"):
        with open(prm["out"], "w") as f:
            json.dump(s, f)
    if prm.get("check", True):
        for x in "ab":
            assert s[f"{x}_protocol_errors"] == 0, s
            assert s[f"{x}_link_error"] == 0, s
            for v in range(vcs):
                assert s[f"{x}{v}_errors"] == 0, f"{x}{v}: {s[f'{x}{v}_errors']} beats differ: {s}"
                if packets:
                    assert s[f"{x}{v}_received"] == packets == s[f"{x}{v}_sent"], s
        if prm.get("flit_error"):
            assert s["a_crc_errors"] + s["b_crc_errors"] > 0, s
