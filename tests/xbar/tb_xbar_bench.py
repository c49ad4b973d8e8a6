"""cocotb: crossbar performance for ``bench/network.py`` (results to the JSON file ``out``).

* ``hop_latency_cycles``: a packet's header offered (``valid``) at an idle crossbar's input to the
  same packet's header moving out, sinks always ready.
* ``crossbar_saturation_uniform``: every input saturated with 8-beat packets (header, 7 payload
  words) to uniformly random output ports, on every VC it has (a link port's four, a network
  port's VCs 0 and 2: every one of them always has a packet waiting), the output VC's dateline half
  random; sinks always ready; beats delivered per cycle per output port over ``window`` cycles after
  ``warmup``.
* ``crossbar_saturation_uniform_one_vc``: the same with every packet on VC 0 in and out (each input
  then has one queue: head-of-line blocking within the VC bounds it).
"""

import json
import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from sim.clock import start_clock
from sim.net_stream import NetStreamSink, NetStreamSource, Timing
from sim.netroute import fu_packet, net_header, route_entry
from sim.runner import tb_params, tb_seed

PERIOD = 10


class Load:
    def __init__(self, dut, rng, links, nets):
        self.dut, self.rng, self.links, self.nets = dut, rng, links, nets
        self.ports = links + nets
        self.out_beats = [0] * self.ports
        self.hdr_out = {}
        self.sources = {(p, v): NetStreamSource(dut, f"ports__{p}__i__{v}", dut.clk, dut.rst,
                                                period_ns=PERIOD, timing=Timing.FALLING)
                        for p in range(self.ports) for v in range(4)}
        self.sinks = [NetStreamSink(dut, f"ports__{o}__o__{v}", dut.clk, dut.rst, period_ns=PERIOD,
                                    timing=Timing.FALLING, callback=lambda r, o=o: self.got(o, r))
                      for o in range(self.ports) for v in range(4)]
        self.tag = 0

    def got(self, o, rec):
        self.out_beats[o] += len(rec.beats)
        self.hdr_out[(rec.packet[0] >> 45)] = rec.header_cycle

    def start(self):
        for s in list(self.sources.values()) + self.sinks:
            s.start()

    def vcs(self, p, one_vc):
        """The VCs input port ``p`` offers packets on: all four at a link port, 0 and 2 at a network
        port, only 0 with ``one_vc``."""
        return (0,) if one_vc else (0, 1, 2, 3) if p < self.links else (0, 2)

    def packet(self, p, one_vc, v=None):
        """Queue one 8-beat packet at input port ``p`` (on VC ``v``, default random) for a random
        output; returns its tag and the source."""
        rng = self.rng
        o = rng.randrange(self.ports)
        if v is None:
            v = rng.choice(self.vcs(p, one_vc))
        # destination 2 * o + d: output o, on dateline VC d (the table of `program`)
        d = 0 if one_vc or o >= self.links else rng.randrange(2)
        self.tag += 1
        hdr = net_header(dst_node=2 * o + d, payload_words=7, specific=self.tag & 0x7FFFF)
        self.sources[p, v].send(fu_packet(hdr, [], [0] * 7))
        return self.tag, self.sources[p, v]

    async def program(self):
        """Route table: destination ``2 * o + d`` to output ``o`` (a link port on dateline VC ``d``)."""
        dut = self.dut
        for o in range(self.ports):
            for d in range(2):
                entry = route_entry(port=o, dateline=d) if o < self.links else route_entry(net_port=o - self.links)
                await FallingEdge(dut.clk)
                dut.table_w_en.value, dut.table_w_addr.value, dut.table_w_data.value = 1, 2 * o + d, entry
        await FallingEdge(dut.clk)
        dut.table_w_en.value = 0

    def backlog(self, p):
        return sum(self.sources[p, v].pending() for v in range(4))


async def run_cycles(dut, n):
    for _ in range(n):
        await FallingEdge(dut.clk)


@cocotb.test()
async def measure(dut):
    p = tb_params()
    seed = tb_seed()
    rng = random.Random(seed)
    links, nets = p["links"], p["nets"]
    res = {"ports": links + nets, "seed": seed}
    start_clock(dut.clk, PERIOD)
    dut.rst.value = 1
    load = Load(dut, rng, links, nets)
    load.start()
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await load.program()

    # hop latency: one packet at a time into the idle crossbar
    lat = []
    for _ in range(16):
        tag, source = load.packet(rng.randrange(load.ports), one_vc=False)
        await run_cycles(dut, 30)
        offered = source.log[-1][0]                 # the cycle its header was first offered
        lat.append(load.hdr_out[tag] - offered)
    res["hop_latency_cycles"] = max(lat)
    res["hop_latency_min"] = min(lat)

    warm, window = p.get("warmup", 300), p.get("window", 2000)
    for one_vc, key in ((False, "crossbar_saturation_uniform"), (True, "crossbar_saturation_uniform_one_vc")):
        for c in range(warm + window):
            if c == warm:
                b0 = sum(load.out_beats)
            for q in range(load.ports):
                for v in load.vcs(q, one_vc):       # every VC of every input keeps a packet waiting
                    while load.sources[q, v].pending() < 2:
                        load.packet(q, one_vc, v)
            await FallingEdge(dut.clk)
        res[key] = round((sum(load.out_beats) - b0) / window / load.ports, 4)
        while any(load.backlog(q) for q in range(load.ports)):      # drain before the next phase
            await run_cycles(dut, 50)
        await run_cycles(dut, 50)
    errors = [e for s in load.sinks for e in s.errors]
    assert not errors, errors[:5]
    with open(p["out"], "w") as f:
        json.dump(res, f, indent=1)
