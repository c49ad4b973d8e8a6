"""cocotb: the network port between unit-side and crossbar-side stream models.

``transmit``: random packets from every unit stream (some malformed, some for nodes beyond the route
tables) must leave on the crossbar VC of their class, the header with ``src_node`` set to this node and
``hops`` to 0, in order per unit stream; bad ones are dropped and counted.  ``receive``: random network
packets on both classes' VCs (some for unknown units, for other nodes, or malformed) must reach the
unit their header names, in order per class and unit; the rest is dropped and counted.  Random
backpressure everywhere.
"""

import random
from collections import defaultdict, deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from rtl.common.net import NetClass
from sim.clock import start_clock
from sim.net_stream import (
    COMMAND,
    PAYLOAD,
    NetStreamSink,
    NetStreamSource,
    net_beat,
)
from sim.netroute import fu_packet, header_fields, net_header
from sim.runner import tb_params, tb_seed

PERIOD = 10
NODE = 5


class Env:
    def __init__(self, dut, rng, *, sources, sinks, entries, gap, ready):
        self.dut, self.rng = dut, rng
        self.sources, self.sinks, self.entries = sources, sinks, entries
        self.expected = defaultdict(deque)
        self.counts = defaultdict(int)
        self.errors = []
        self.seq = 0
        clk, rst = dut.clk, dut.rst
        self.fu_src = [NetStreamSource(dut, f"fu_tx__{k}", clk, rst, period_ns=PERIOD, pause=gap or None,
                                       rng=rng) for k in range(len(sources))]
        self.fu_snk = [NetStreamSink(dut, f"fu_rx__{k}", clk, rst, period_ns=PERIOD,
                                     ready=None if ready >= 1 else ready, rng=rng,
                                     callback=lambda r, k=k: self.got(("fu", k), r)) for k in range(len(sinks))]
        self.net_src = {v: NetStreamSource(dut, f"xbar_i__{v}", clk, rst, period_ns=PERIOD,
                                           pause=gap or None, rng=rng) for v in (0, 2)}
        self.net_snk = {v: NetStreamSink(dut, f"xbar_o__{v}", clk, rst, period_ns=PERIOD,
                                         ready=None if ready >= 1 else ready, rng=rng,
                                         callback=lambda r, v=v: self.got(("net", v), r)) for v in range(4)}

    def start(self):
        for model in self.fu_src + self.fu_snk + list(self.net_src.values()) + list(self.net_snk.values()):
            model.start()

    def body(self, pw=None, cw=None):
        rng = self.rng
        cw = rng.randint(0, 3) if cw is None else cw
        pw = rng.randint(0, 8) if pw is None else pw
        return cw, pw, [rng.getrandbits(64) for _ in range(cw)], [rng.getrandbits(64) for _ in range(pw)]

    def send_fu(self, k):
        """A random FU packet on unit stream ``k`` (sometimes bad); its expected outcome recorded."""
        rng = self.rng
        self.seq += 1
        cw, pw, cmds, pay = self.body()
        dst = rng.randrange(self.entries + 2)
        if rng.random() < 0.05:                             # too many payload words: dropped
            hdr = net_header(dst_node=dst, unit=2, command_words=cw, payload_words=9, specific=self.seq)
            self.fu_src[k].send(fu_packet(hdr, cmds, pay + [0]))
            self.counts["tx_malformed", self.sources[k].value] += 1
            return
        hdr = net_header(dst_node=dst, unit=rng.randint(1, 3), command_words=cw, payload_words=pw,
                         src_node=rng.getrandbits(15), hops=rng.getrandbits(6), specific=self.seq)
        self.fu_src[k].send(fu_packet(hdr, cmds, pay))
        cls = self.sources[k].value
        if dst >= self.entries:
            self.counts["tx_no_route", cls] += 1
            return
        fields = header_fields(hdr)
        out = net_header(**{**{f: fields[f] for f in ("dst_node", "unit", "command_words", "payload_words",
                                                        "specific")}, "src_node": NODE, "hops": 0})
        self.expected["net", 2 * cls, k].append(fu_packet(out, cmds, pay))
        self.counts["tx_sent", cls] += 1

    def send_net(self, cls):
        """A random network packet on class ``cls``'s VC (sometimes bad)."""
        rng = self.rng
        self.seq += 1
        cw, pw, cmds, pay = self.body()
        unit = rng.randint(1, 3) if rng.random() > 0.1 else rng.choice([0, 4, 7])
        dst = NODE if rng.random() < 0.9 else NODE + 1
        hdr = net_header(dst_node=dst, unit=unit, command_words=cw, payload_words=pw, hops=rng.getrandbits(6),
                         specific=self.seq)
        if rng.random() < 0.04:                             # the header not marked as one: malformed
            words = fu_packet(hdr, cmds, pay)
            kinds = [COMMAND] + [COMMAND] * cw + [PAYLOAD] * pw
            self.net_src[2 * cls].send_raw([net_beat(w, kd, int(i == 0), int(i == len(words) - 1))
                                            for i, (w, kd) in enumerate(zip(words, kinds, strict=True))])
            self.counts["rx_malformed", cls] += 1
            return
        self.net_src[2 * cls].send(fu_packet(hdr, cmds, pay))
        if dst != NODE:
            self.counts["rx_misrouted", cls] += 1
        elif unit not in self.sinks:
            self.counts["rx_unknown_unit", cls] += 1
        else:
            self.expected["fu", self.sinks.index(unit), cls].append(fu_packet(hdr, cmds, pay))
            self.counts["rx_delivered", cls] += 1

    def got(self, where, rec):
        words = rec.packet
        # per (VC, unit stream) or (unit, class) in order; the two merged streams identified by the
        # sequence number in the header's unit-specific field
        seq = header_fields(words[0])["specific"]
        keys = [where + (k,) for k in (range(len(self.sources)) if where[0] == "net" else (0, 1))]
        q = next((self.expected[key] for key in keys if self.expected[key]
                  and header_fields(self.expected[key][0][0])["specific"] == seq), None)
        if not q:
            self.errors.append(f"{where}: unexpected packet {[hex(w) for w in words]}")
            return
        exp = q.popleft()
        if exp != words:
            self.errors.append(f"{where}: got {[hex(w) for w in words]}\n expected {[hex(w) for w in exp]}")

    def pending(self):
        return sum(len(q) for q in self.expected.values())

    def all_errors(self):
        return self.errors + [e for s in self.fu_snk + list(self.net_snk.values()) for e in s.errors]


async def setup(dut):
    prm = tb_params()
    seed = tb_seed()
    dut._log.info(f"seed {seed}, params {prm}")
    rng = random.Random(seed)
    env = Env(dut, rng, sources=[NetClass(c) for c in prm["sources"]], sinks=prm["sinks"], entries=prm["entries"],
              gap=prm.get("gap", 0.2), ready=prm.get("ready", 0.7))
    start_clock(dut.clk, PERIOD)
    dut.rst.value = 1
    dut.node_id.value = NODE
    env.start()
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    return env, rng, prm


async def finish(env, dut, limit=100000):
    for _ in range(limit // 100):
        if not env.pending() and all(s.idle() for s in env.fu_src + list(env.net_src.values())):
            break
        await Timer(100 * PERIOD, "ns")
    await Timer(20 * PERIOD, "ns")
    await FallingEdge(dut.clk)
    assert not env.all_errors(), "\n".join(env.all_errors()[:8])
    assert env.pending() == 0, f"{env.pending()} packets not delivered"
    for (name, cls), n in env.counts.items():
        got = int(getattr(dut, f"{name}__{cls}").value)
        assert got == n, (name, cls, got, n)


@cocotb.test()
async def transmit(dut):
    env, rng, prm = await setup(dut)
    for _ in range(prm.get("packets", 40)):
        for k in range(len(env.sources)):
            env.send_fu(k)
    await finish(env, dut)


@cocotb.test()
async def receive(dut):
    env, rng, prm = await setup(dut)
    for _ in range(prm.get("packets", 40)):
        for cls in (0, 1):
            env.send_net(cls)
    await finish(env, dut)

