"""cocotb: the crossbar with a source and a sink on every (port, VC) stream, against sim.netroute.

The testbench writes a random route table (valid entries to every output, entries that name missing
ports, entries not valid) and random dateline rules, then sends random packets on every input stream:
destinations in and beyond the table, hop counts up to the limit, and packets that do not start with a
header beat.  The expected output of each packet is :func:`sim.netroute.table_step`'s.  The scoreboard
checks every delivered packet beat for beat (hop count updated, the rest unchanged), on the right port
and VC, in order per (input port, input VC, output port, output VC), and at the end that every packet
arrived once and the drop counters count the dropped ones by cause.

Parameters (``sim.runner.tb_params``): ``packets`` per input stream, ``gap`` (source pause
probability), ``ready`` (sink ready probability), ``bad`` (fraction of bad table entries and
destinations beyond the table), ``malformed`` (fraction of packets without a header first).
"""

import random
from collections import defaultdict, deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from rtl.common.net import EJECT, MAX_HOPS, RouteError
from sim.clock import start_clock
from sim.net_stream import COMMAND, PAYLOAD, NetStreamSink, NetStreamSource, Timing, net_beat
from sim.netroute import fu_packet, header_fields, net_header, port_route, route_entry, table_step
from sim.runner import tb_params, tb_seed

PERIOD = 10
NODES = 64              # the crossbar's route table (the top's default)
_CAUSE = {RouteError.MISSING_PORT: "missing", RouteError.MALFORMED: "malformed", RouteError.NO_ROUTE: "no_route",
          RouteError.LOOP: "loop"}


def random_table(rng, links, nets, bad):
    """A route table: mostly valid entries to a link port (some forcing the dateline VC) or a network
    port, with probability ``bad`` one not valid or naming a missing port."""
    table = []
    for _ in range(NODES):
        r = rng.random()
        if r < bad / 2:
            table.append(0)
        elif r < bad:
            table.append(route_entry(port=links + rng.randrange(EJECT - links)) if links < EJECT and rng.random() < 0.5
                         else route_entry(net_port=nets + rng.randrange(8 - nets)))
        elif rng.random() < nets / (links + nets):
            table.append(route_entry(net_port=rng.randrange(nets)))
        else:
            table.append(route_entry(port=rng.randrange(links), dateline=int(rng.random() < 0.2)))
    return table


def random_rules(rng, links):
    """A dateline rule per link port: on along a random ring port or none, wrapped or not."""
    return [port_route(straight=rng.choice([None, *range(links)]), wrapped=rng.randrange(2)) for _ in range(links)]


class Bench:
    def __init__(self, dut, rng, *, links, nets, vcs, gap, ready, bad):
        self.dut, self.rng = dut, rng
        self.links, self.nets, self.vcs, self.bad = links, nets, vcs, bad
        self.table = random_table(rng, links, nets, bad)
        self.rules = random_rules(rng, links)
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
                self.sources[p, v] = NetStreamSource(dut, f"ports__{p}__i__{v}", dut.clk, dut.rst,
                                                     period_ns=PERIOD,
                                                     pause=gap or None, rng=rng, timing=Timing.FALLING)
                self.sinks[p, v] = NetStreamSink(
                    dut, f"ports__{p}__o__{v}", dut.clk, dut.rst, period_ns=PERIOD,
                    ready=None if ready >= 1 else ready, rng=rng, timing=Timing.FALLING,
                    callback=lambda rec, p=p, v=v: self.receive(p, v, rec))

    def start(self):
        for model in list(self.sources.values()) + list(self.sinks.values()):
            model.start()

    async def program(self):
        """Write the route table and the dateline rules (before any packet is sent)."""
        dut = self.dut
        for k in range(self.links):
            getattr(dut, f"port_routes__{k}").value = self.rules[k]
        for dst, entry in enumerate(self.table):
            await FallingEdge(dut.clk)
            dut.table_w_en.value, dut.table_w_addr.value, dut.table_w_data.value = 1, dst, entry
        await FallingEdge(dut.clk)
        dut.table_w_en.value = 0

    def send(self, p, v, *, payload=None, commands=0, malformed=False):
        """Queue a packet at input (p, v); record where it must come out."""
        self.seq += 1
        rng = self.rng
        pw = rng.randint(0, 8) if payload is None else payload
        dst = rng.randrange(NODES) if rng.random() >= self.bad / 4 else NODES + rng.randrange(NODES)
        hops = MAX_HOPS if rng.random() < self.bad / 4 else rng.choice([0, 1, rng.randrange(MAX_HOPS), MAX_HOPS - 1])
        hdr = net_header(dst_node=dst, unit=rng.randint(1, 3), command_words=commands, payload_words=pw,
                         src_node=p, hops=hops, specific=self.seq)
        words = fu_packet(hdr, [rng.getrandbits(64) for _ in range(commands)], [rng.getrandbits(64) for _ in range(pw)])
        if malformed:                   # the header not marked as one
            kinds = [COMMAND] + [COMMAND] * commands + [PAYLOAD] * pw
            self.sources[p, v].send_raw([net_beat(w, k, int(i == 0), int(i == len(words) - 1))
                                         for i, (w, k) in enumerate(zip(words, kinds, strict=True))])
            self.dropped[p, "malformed"] += 1
            return
        self.sources[p, v].send(words)
        if p >= self.links and v % 2:   # a network port injects on dateline VC 0 only
            self.dropped[p, "malformed"] += 1
            return
        step = table_step(self.table, dst, hops=hops, in_port=p if p < self.links else None, in_dateline=v % 2,
                          port_routes=self.rules, link_ports=self.links, net_ports=self.nets)
        if step.error != RouteError.NONE:
            self.dropped[p, _CAUSE[step.error]] += 1
            return
        out = self.links + step.port if step.eject else step.port
        out_vc = 2 * (v // 2) + (0 if step.eject else step.dateline)
        self.expected[p, v, out, out_vc].append([net_header(**(header_fields(hdr) | {"hops": step.hops}))] + words[1:])
        self.granted[p] += 1

    def receive(self, o, u, rec):
        words = rec.packet
        hdr = header_fields(words[0])
        src, seq = hdr["src_node"], hdr["specific"]
        for v in range(self.vcs):
            q = self.expected.get((src, v, o, u))
            if q and header_fields(q[0][0])["specific"] == seq:
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
        for cause in ("missing", "malformed", "no_route", "loop"):
            got = counter(dut, f"in_{cause}", p)
            assert got == bench.dropped[p, cause], (p, cause, got, bench.dropped[p, cause])


@cocotb.test()
async def random_traffic(dut):
    """A random route table, random packets on every input stream (some bad), random backpressure."""
    prm = tb_params()
    seed = tb_seed()
    rng = random.Random(seed)
    links, nets, vcs = prm["links"], prm["nets"], prm["vcs"]
    dut._log.info(f"seed {seed}, params {prm}")
    bench = Bench(dut, rng, links=links, nets=nets, vcs=vcs, gap=prm.get("gap", 0.2), ready=prm.get("ready", 0.7),
                  bad=prm.get("bad", 0.1))
    bench.start()
    await reset(dut)
    await bench.program()
    n = prm.get("packets", 30)
    for _ in range(n):
        for p in range(bench.ports):
            for v in range(vcs):
                bench.send(p, v, malformed=rng.random() < prm.get("malformed", 0.03), commands=rng.randint(0, 3))
    await drain(bench, dut, prm.get("limit", 200000))
    assert not bench.errors_all(), "\n".join(bench.errors_all()[:10])
    assert bench.pending() == 0, f"{bench.pending()} packets not delivered"
    check_counters(bench, dut)
    dut._log.info(f"{bench.delivered} packets delivered, drops {dict(bench.dropped)}")
