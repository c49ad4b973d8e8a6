"""cocotb: time from a corrupted data flit to its good copy, two default link ports, one-way traffic.

The channel (sim.channel, no random errors) corrupts one bit in the middle of a data flit, ``count``
times, a few thousand cycles apart.  For each: ``t0`` = cycle the corrupted flit's EOF reaches port b,
``t1`` = cycle the EOF of the next good flit with the same sequence number reaches b; the result is
written as JSON to ``out``: per event ``t1 - t0``, the channel latency and the replayed flit length.
Parameters: ``vcs``, ``seq_bits`` and ``seq_lsb`` (the sequence number's place in the data flit
header), ``latency``, ``count``, ``out``.
"""

import json
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from sim.channel import EOF, SOF, Channel
from sim.clock import start_clock
from sim.link_model import beats_of, random_packet
from sim.net_stream import NetStreamSink, NetStreamSource, net_beat
from sim.runner import tb_params, tb_seed


@cocotb.test()
async def recovery(dut):
    prm = tb_params()
    rng = random.Random(tb_seed())
    latency = prm.get("latency", 16)
    ch = {d: Channel(phit_bits=len(dut.a_tx_phit), latency=latency) for d in ("ab", "ba")}
    seq_bits, seq_lsb, vcs = prm["seq_bits"], prm["seq_lsb"], prm["vcs"]
    for side in "ab":
        getattr(dut, f"{side}_replay_timeout").value = 512
        getattr(dut, f"{side}_max_replays").value = 4
        getattr(dut, f"{side}_retrain").value = 0
        getattr(dut, f"{side}_rx_phit").value = 0
        getattr(dut, f"{side}_rx_ctl").value = 0
    start_clock(dut.clk, 10, start_high=False)
    dut.rst.value = 1
    # one-way traffic a -> b on VC 0; every other stream idle, every receiving stream always ready
    source = NetStreamSource(dut, "a_tx__0", dut.clk, dut.rst, period_ns=10).start()
    for _ in range(4000):
        source.send_raw([net_beat(*b) for b in beats_of(random_packet(rng, payload_words=8, command_words=0))])
    for side in "ab":
        for v in range(vcs):
            if (side, v) != ("a", 0):
                NetStreamSource(dut, f"{side}_tx__{v}", dut.clk, dut.rst, period_ns=10).start()
            NetStreamSink(dut, f"{side}_rx__{v}", dut.clk, dut.rst, period_ns=10).start()
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    events = []
    pending_ab = pending_ba = (0, 0)
    cycle = 0
    arm_at = 1500
    in_flit = []       # phits of the data flit entering channel ab
    target = None      # (seq, t0) of the corrupted flit
    rx_flit_seq = None
    while len(events) < prm.get("count", 5) and cycle < 200000:
        await RisingEdge(dut.clk)
        cycle += 1
        dut.b_rx_phit.value, dut.b_rx_ctl.value = pending_ab
        dut.a_rx_phit.value, dut.a_rx_ctl.value = pending_ba
        # what b sees this cycle
        d, c = pending_ab
        if c == SOF and not d & 1:
            rx_flit_seq = (d >> seq_lsb) & (2 ** seq_bits - 1)
            rx_len = 0
        if rx_flit_seq is not None:
            rx_len += 1
            if c == EOF:
                if target and target[0] == rx_flit_seq and target[1] is None:
                    target = (rx_flit_seq, cycle, None)
                elif target and target[0] == rx_flit_seq and target[1] is not None:
                    events.append({"recovery": cycle - target[1], "flit_phits": rx_len,
                                   "latency": latency + 1})
                    target = None
                    arm_at = cycle + rng.randint(1000, 3000)
                rx_flit_seq = None
        await ReadOnly()
        d, c = int(dut.a_tx_phit.value), int(dut.a_tx_ctl.value)
        if c == SOF and not d & 1:
            in_flit = [d]
        elif in_flit:
            in_flit.append(d)
        # corrupt a middle phit of a data flit once armed
        if cycle >= arm_at and target is None and len(in_flit) == 10:
            d ^= 1 << rng.randrange(16)
            target = ((in_flit[0] >> seq_lsb) & (2 ** seq_bits - 1), None)
        pending_ab = ch["ab"].step(d, c)
        pending_ba = ch["ba"].step(int(dut.b_tx_phit.value), int(dut.b_tx_ctl.value))
    await Timer(1, "ns")
    assert len(events) == prm.get("count", 5), events
    assert int(dut.b_crc_errors.value) == len(events)
    with open(prm["out"], "w") as f:
        json.dump(events, f)
