"""cocotb: multi-node fabrics (sim/tops/fabric.py) with stream models or HDL traffic.

``stream_traffic`` (``Fabric(traffic=False)``): random requests and responses from every node's units
to every node, random backpressure at every unit, bit errors on every link (``flip``): every packet
arrives once, intact (its header's hop count that of its path), in order per (source, destination,
class), at the unit its header names; one
packet made only of a header directly behind a long one, and packets of alternating classes back to
back, are part of the mix.  Packets for nodes beyond the route tables and for units no node has are
dropped and counted, and the traffic around them keeps flowing.

``hdl_traffic`` (``Fabric(traffic=True)``): the endpoints send requests (uniform or to the node
``offset`` ahead), check what they receive and optionally answer every request; phases of
``cycles`` with a progress check after each.  Parameters: see :func:`hdl_traffic`.
"""

import json
import random
import time
from collections import defaultdict, deque

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from sim.clock import start_clock
from sim.net_stream import NetStreamSink, NetStreamSource
from sim.netroute import fu_packet, header_fields, net_header
from sim.routing import Topology
from sim.runner import tb_params, tb_seed
from sim.tops.fabric import ENDPOINT_COUNTERS

PERIOD = 10
VELO, RMA_COMPLETER = 1, 3


def threshold(p):
    return min(0xFFFFFFFF, int(round(p * 2 ** 32)))


async def reset(dut):
    start_clock(dut.clk, PERIOD, start_high=False)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0


async def run(dut, cycles):
    """``cycles`` clock cycles without Python per cycle (a timer, then the next edge)."""
    await Timer((cycles - 1) * PERIOD, "ns")
    await RisingEdge(dut.clk)


def flip_threshold(flit_error, flit_phits=40):
    """Per-phit bit-flip probability threshold for a per-flit error rate."""
    return threshold(1 - (1 - flit_error) ** (1 / flit_phits))


def topology(prm):
    """The fabric's topology from the test's parameters ``shape`` and ``wrap``."""
    return Topology(shape=tuple(prm["shape"]), wrap=prm["wrap"])


class Traffic:
    """Stream models on every unit stream of every node, with a scoreboard."""

    def __init__(self, dut, rng, topology, *, gap, ready):
        self.dut, self.rng, self.topology = dut, rng, topology
        nodes = self.n = topology.nodes
        self.expected = defaultdict(deque)      # (src, dst, class) -> FU-side packets (words, header first)
        self.errors = []
        self.arrivals = []                      # the cycle each delivered packet's header was taken
        self.seq = 0
        self.delivered = 0
        self.src = [[NetStreamSource(dut, f"fu_tx__{k}__{s}", dut.clk, dut.rst, period_ns=PERIOD,
                                     pause=gap or None, rng=rng) for s in range(2)] for k in range(nodes)]
        self.snk = [[NetStreamSink(dut, f"fu_rx__{k}__{s}", dut.clk, dut.rst, period_ns=PERIOD,
                                   ready=None if ready >= 1 else ready, rng=rng,
                                   callback=lambda r, k=k, s=s: self.got(k, s, r)) for s in range(2)]
                    for k in range(nodes)]

    def start(self):
        for row in self.src + self.snk:
            for model in row:
                model.start()

    def send(self, src, dst, cls, *, words=None, unit=None, expect=True):
        self.seq += 1
        pw = self.rng.randint(0, 8) if words is None else words
        unit = (VELO if cls == 0 else RMA_COMPLETER) if unit is None else unit
        hdr = net_header(dst_node=dst, unit=unit, payload_words=pw, specific=self.seq)
        pkt = fu_packet(hdr, (), [self.rng.getrandbits(64) for _ in range(pw)])
        self.src[src][cls].send(pkt)
        if expect:
            fields = header_fields(hdr)
            out = net_header(**{**{f: fields[f] for f in ("dst_node", "unit", "payload_words", "specific")},
                                "src_node": src, "hops": len(self.topology.path(src, dst))})
            self.expected[src, dst, cls].append([out] + pkt[1:])

    def got(self, node, sink, rec):
        words = rec.packet
        h = header_fields(words[0])
        cls = sink                              # VELO requests on sink 0, responses on sink 1
        q = self.expected.get((h["src_node"], node, cls))
        if not q:
            self.errors.append(f"node {node} sink {sink}: unexpected packet {h}")
            return
        exp = q.popleft()
        self.arrivals.append(rec.header_cycle)
        if exp != words:
            self.errors.append(f"node {node} sink {sink}: from {h['src_node']} got {[hex(w) for w in words]}, "
                               f"expected {[hex(w) for w in exp]} (lost, reordered or corrupted)")
        self.delivered += 1

    def pending(self):
        return sum(len(q) for q in self.expected.values())

    def all_errors(self):
        return self.errors + [e for row in self.snk for s in row for e in s.errors]


@cocotb.test()
async def stream_traffic(dut):
    prm = tb_params()
    seed = tb_seed()
    rng = random.Random(seed)
    n = prm["nodes"]
    dut._log.info(f"seed {seed}, params {prm}")
    t = Traffic(dut, rng, topology(prm), gap=prm.get("gap", 0.1), ready=prm.get("ready", 0.8))
    dut.flip.value = flip_threshold(prm.get("flit_error", 0.0))
    t.start()
    await reset(dut)
    bad = 0
    for _ in range(prm.get("packets", 20)):
        for src in range(n):
            dst = rng.randrange(n)
            cls = rng.randrange(2)
            r = rng.random()
            if r < 0.03:                                        # a node beyond the route tables
                t.send(src, n + rng.randrange(4), cls, expect=False)
                bad += 1
            elif r < 0.06:                                      # a unit no node has
                t.send(src, dst, cls, unit=rng.choice((0, 5, 7)), expect=False)
                bad += 1
            elif r < 0.12:                                      # a long packet, a header alone right behind
                t.send(src, dst, cls, words=8)
                t.send(src, dst, cls, words=0)
            elif r < 0.18:                                      # both classes back to back
                t.send(src, dst, 0, words=rng.randint(0, 2))
                t.send(src, dst, 1, words=rng.randint(0, 2))
            else:
                t.send(src, dst, cls)
    limit = prm.get("limit", 100000)
    start = time.perf_counter()
    for _ in range(limit // 500):
        if not t.pending() and all(s.idle() for row in t.src for s in row):
            break
        await Timer(500 * PERIOD, "ns")
    await run(dut, 200)
    errors = t.all_errors()
    assert not errors, "\n".join(errors[:8])
    assert t.pending() == 0, f"{t.pending()} packets not delivered"
    assert int(dut.drops.value) == bad, (int(dut.drops.value), bad)
    assert int(dut.link_errors.value) == 0
    dut._log.info(f"{t.delivered} packets delivered, {bad} dropped, {time.perf_counter() - start:.1f} s")


def counters(dut, nodes):
    return {name: [int(getattr(dut, f"{name}__{k}").value) for k in range(nodes)] for name in ENDPOINT_COUNTERS}


@cocotb.test()
async def hdl_traffic(dut):
    """Parameters: ``nodes``; ``rate`` (requests per cycle per node, a probability); ``offset`` (0:
    uniform); ``respond``; ``phases`` of ``cycles`` each; ``expect`` ("flow": every phase delivers,
    "stall": the last phase delivers nothing); ``flit_error``; ``out`` (JSON results)."""
    prm = tb_params()
    n = prm["nodes"]
    dut._log.info(f"params {prm}")
    dut.flip.value = flip_threshold(prm.get("flit_error", 0.0))
    dut.enable.value = 0
    dut.rate.value = threshold(prm.get("rate", 1.0))
    dut.offset.value = prm.get("offset", 0)
    dut.respond.value = int(prm.get("respond", False))
    await reset(dut)
    await RisingEdge(dut.clk)
    dut.enable.value = 1
    history = []
    t0 = time.perf_counter()
    c0 = int(dut.cycles.value)
    for _ in range(prm.get("phases", 4)):
        await run(dut, prm.get("cycles", 5000))
        history.append(counters(dut, n))
    seconds = time.perf_counter() - t0
    cycles = int(dut.cycles.value) - c0
    dut.enable.value = 0
    await run(dut, prm.get("drain", 3000))
    final = counters(dut, n)
    received = [sum(h["received"]) for h in history]
    deltas = [b - a for a, b in zip([0] + received, received, strict=False)]
    res = {"cycles": cycles, "seconds": seconds, "received_per_phase": deltas, "final": final,
           "drops": int(dut.drops.value)}
    dut._log.info(f"result {json.dumps(res)}")
    if prm.get("out"):
        with open(prm["out"], "w") as f:
            json.dump(res, f)
    assert sum(final["errors"]) == 0, final
    if prm.get("expect", "flow") == "stall":
        assert deltas[-1] == 0, f"still delivering without the dateline: {deltas}"
        return
    assert all(d > 0 for d in deltas), f"a phase delivered nothing: {deltas}"
    assert sum(final["received"]) == sum(final["sent"]), final
    assert int(dut.drops.value) == 0
    if prm.get("respond"):
        assert final["answered"] == final["received"] and sum(final["responses"]) == sum(final["answered"]), final


@cocotb.test()
async def latency(dut):
    """Idle fabric: node 0's unit offers one packet at a time for node 1; cycles from its header being
    offered to node 1's unit taking it, for a header alone and for 7 payload words (a 56-byte VELO
    message).  Results to ``out``."""
    prm = tb_params()
    t = Traffic(dut, random.Random(1), topology(prm), gap=0, ready=1.0)
    dut.flip.value = 0
    t.start()
    await reset(dut)
    await run(dut, 50)
    res = {}
    for key, words in (("node_to_node_latency_cycles", 0), ("node_to_node_latency_cycles_56B", 7)):
        lat = []
        for _ in range(8):
            t.send(0, 1, 0, words=words)
            await run(dut, 150)
            offered = t.src[0][0].log[-1][0]
            lat.append(t.arrivals[-1] - offered)
        res[key] = max(lat)
    assert not t.all_errors() and t.pending() == 0
    with open(prm["out"], "w") as f:
        json.dump(res, f)
