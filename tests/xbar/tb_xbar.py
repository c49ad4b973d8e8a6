"""cocotb: the crossbar with a source and a sink on every (port, VC) stream, against sim.netroute.

Every input stream gets random packets with random routes (valid ones to every output, and routes
that name missing ports, run out, or packets that do not start with a route beat); the expected
output of each packet is :func:`sim.netroute.route_step`'s.  The scoreboard checks every delivered
packet beat for beat (route word updated, the rest unchanged), on the right port and VC, in order per
(input port, input VC, output port, output VC), and at the end that every packet arrived once and the
drop counters count the dropped ones by cause.

Parameters (``sim.runner.tb_params``): ``packets`` per input stream, ``gap`` (source pause
probability), ``ready`` (sink ready probability), ``bad`` (fraction of packets with a bad route).
"""

import random
from collections import defaultdict, deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from rtl.common.net import RouteError
from sim.clock import start_clock
from sim.net_stream import COMMAND, HEADER, PAYLOAD, NetStreamSink, NetStreamSource, Side, Timing, net_beat
from sim.netroute import (
    eject_char,
    header_fields,
    net_header,
    network_packet,
    route_char,
    route_step,
    route_word,
)
from sim.runner import tb_params, tb_seed

PERIOD = 10
_CAUSE = {RouteError.MISSING_PORT: "missing", RouteError.EXHAUSTED: "exhausted", RouteError.MALFORMED: "malformed"}


def random_route(rng, links, nets, bad):
    """A route word: mostly a valid first character (a link hop or an ejection), with probability
    ``bad`` one that names a missing port or has run out."""
    tail = [route_char(rng.randrange(links), rng.randint(0, 3), rng.randint(0, 3)), eject_char(0)]
    r = rng.random()
    if r < bad / 2:
        first = rng.choice([route_char(links + rng.randrange(8 - links), 1),
                            eject_char(nets + rng.randrange(8 - nets))])
    elif r < bad:
        first = route_char(rng.randrange(links), 0, 0)
    elif rng.random() < nets / (links + nets):
        first = eject_char(rng.randrange(nets))
    else:
        first = route_char(rng.randrange(links), rng.randint(0, 2), rng.randint(0, 2))
        if first >> 4 == 0:                                # no hops at all: give it one
            first |= 1 << 4
    return route_word([first] + tail)


class Bench:
    def __init__(self, dut, rng, *, links, nets, vcs, gap, ready):
        self.dut, self.rng = dut, rng
        self.links, self.nets, self.vcs = links, nets, vcs
        self.ports = links + nets
        self.expected = defaultdict(deque)      # (in port, in vc, out port, out vc) -> packets (words)
        self.dropped = defaultdict(int)         # (in port, cause) -> count
        self.granted = defaultdict(int)         # in port -> packets granted an output
        self.delivered = 0
        self.errors = []
        self.seq = 0
        self.sources = {}
        self.sinks = {}
        for p in range(self.ports):
            for v in range(vcs):
                self.sources[p, v] = NetStreamSource(dut, f"ports__{p}__i__{v}", dut.clk, dut.rst, side=Side.NETWORK,
                                                     period_ns=PERIOD,
                                                     pause=gap or None, rng=rng, timing=Timing.FALLING)
                self.sinks[p, v] = NetStreamSink(
                    dut, f"ports__{p}__o__{v}", dut.clk, dut.rst, side=Side.NETWORK, period_ns=PERIOD,
                    ready=None if ready >= 1 else ready, rng=rng, timing=Timing.FALLING,
                    callback=lambda rec, p=p, v=v: self.receive(p, v, rec))

    def start(self):
        for model in list(self.sources.values()) + list(self.sinks.values()):
            model.start()

    def send(self, p, v, route, *, payload=None, commands=0, malformed=False):
        """Queue a packet at input (p, v); record where it must come out."""
        self.seq += 1
        rng = self.rng
        pw = rng.randint(0, 8) if payload is None else payload
        hdr = net_header(dst_node=rng.getrandbits(16), unit=rng.randint(1, 3), command_words=commands,
                         payload_words=pw, src_node=p, specific=self.seq)
        words = network_packet(route, hdr, [rng.getrandbits(64) for _ in range(commands)],
                               [rng.getrandbits(64) for _ in range(pw)])
        if malformed:                   # no route beat: the header comes first
            kinds = [HEADER] + [COMMAND] * commands + [PAYLOAD] * pw
            words = words[1:]
            self.sources[p, v].send_raw([net_beat(w, k, int(i == 0), int(i == len(words) - 1))
                                         for i, (w, k) in enumerate(zip(words, kinds, strict=True))])
            self.dropped[p, "malformed"] += 1
            return
        self.sources[p, v].send(words)
        step = route_step(route, link_ports=self.links, net_ports=self.nets)
        if step.error != RouteError.NONE:
            self.dropped[p, _CAUSE[step.error]] += 1
            return
        out = self.links + step.port if step.eject else step.port
        out_vc = 2 * (v // 2) + (0 if step.eject else step.dateline)
        self.expected[p, v, out, out_vc].append([step.route] + words[1:])
        self.granted[p] += 1

    def receive(self, o, u, rec):
        words = rec.packet
        hdr = header_fields(words[1])
        src, seq = hdr["src_node"], hdr["specific"]
        for v in range(self.vcs):
            q = self.expected.get((src, v, o, u))
            if q and header_fields(q[0][1])["specific"] == seq:
                exp = q.popleft()
                if exp != words:
                    self.errors.append(f"output ({o}, {u}): packet {seq} from port {src} differs:\n"
                                       f" got      {[hex(w) for w in words]}\n expected {[hex(w) for w in exp]}")
                self.delivered += 1
                return
        self.errors.append(f"output ({o}, {u}): packet {seq} from port {src} not expected here "
                           f"(or out of order)")

    def pending(self):
        return sum(len(q) for q in self.expected.values())

    def errors_all(self):
        return self.errors + [e for s in self.sinks.values() for e in s.errors]


async def reset(dut):
    start_clock(dut.clk, PERIOD)
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0


async def drain(bench, dut, limit):
    for _ in range(limit // 50):
        if not bench.pending() and all(s.idle() for s in bench.sources.values()):
            break
        await Timer(50 * PERIOD, "ns")
    await Timer(20 * PERIOD, "ns")
    await FallingEdge(dut.clk)


def counter(dut, name, port):
    """A counter of the test top (sim/tops/xbar.py): ``in_packet``, ``in_missing``, ... of a port."""
    return int(getattr(dut, f"{name}__{port}").value)


def check_counters(bench, dut):
    for p in range(bench.ports):
        assert counter(dut, "in_packet", p) == bench.granted[p], (p, counter(dut, "in_packet", p), bench.granted[p])
        for cause in ("missing", "exhausted", "malformed"):
            got = counter(dut, f"in_{cause}", p)
            assert got == bench.dropped[p, cause], (p, cause, got, bench.dropped[p, cause])


@cocotb.test()
async def random_traffic(dut):
    """Random packets on every input stream, random routes (some bad), random backpressure."""
    prm = tb_params()
    seed = tb_seed()
    rng = random.Random(seed)
    links, nets, vcs = prm["links"], prm["nets"], prm["vcs"]
    dut._log.info(f"seed {seed}, params {prm}")
    bench = Bench(dut, rng, links=links, nets=nets, vcs=vcs, gap=prm.get("gap", 0.2), ready=prm.get("ready", 0.7))
    bench.start()
    await reset(dut)
    n = prm.get("packets", 30)
    for _ in range(n):
        for p in range(bench.ports):
            for v in range(vcs):
                if rng.random() < prm.get("malformed", 0.03):
                    bench.send(p, v, 0, malformed=True, commands=rng.randint(0, 3))
                else:
                    bench.send(p, v, random_route(rng, links, nets, prm.get("bad", 0.1)),
                               commands=rng.randint(0, 3))
    await drain(bench, dut, prm.get("limit", 200000))
    assert not bench.errors_all(), "\n".join(bench.errors_all()[:10])
    assert bench.pending() == 0, f"{bench.pending()} packets not delivered"
    check_counters(bench, dut)
    dut._log.info(f"{bench.delivered} packets delivered, drops {dict(bench.dropped)}")
