"""The crossbar's routing step against sim.netroute.route_step, over every character it can see."""

import itertools
import random

from amaranth.sim import Simulator

from rtl.common.net import RouteError
from rtl.xbar.route import RouteStep
from sim.netroute import route_step


def _check(link_ports, net_ports, dateline, words):
    dut = RouteStep(link_ports=link_ports, net_ports=net_ports, dateline=dateline)

    async def bench(ctx):
        for word, cls in words:
            ctx.set(dut.route.as_value(), word)
            ctx.set(dut.cls, cls)
            ref = route_step(word, link_ports=link_ports, net_ports=net_ports, dateline=dateline)
            err = ctx.get(dut.error)
            assert err == ref.error, (hex(word), err, ref)
            if ref.error != RouteError.NONE:
                continue
            port = link_ports + ref.port if ref.eject else ref.port
            assert ctx.get(dut.port) == port, (hex(word), ref)
            assert ctx.get(dut.vc) == 2 * cls + ref.dateline, (hex(word), ref)
            assert ctx.get(dut.next.as_value()) == ref.route, (hex(word), hex(ctx.get(dut.next.as_value())), ref)
            # what the input port keeps to rebuild the route word as the beat leaves
            hops = ctx.get(dut.next.as_value()) & 0xfff0
            rebuilt = word >> 16 if ctx.get(dut.consume) else (word & ~0xfff0) | hops
            assert rebuilt == ref.route, (hex(word), hex(rebuilt), ref)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


def test_every_character():
    """Every port and hop-count combination of the current character (with random later characters),
    both classes, on a 6-link 2-network-port crossbar, with and without the dateline."""
    rng = random.Random(7)
    words = []
    for port, h0, h1 in itertools.product(range(16), (0, 1, 2, 31, 63), (0, 1, 5, 63)):
        rest = rng.getrandbits(48)
        words.append(((rest << 16) | port | h0 << 4 | h1 << 10, rng.randrange(2)))
    for dateline in (True, False):
        _check(6, 2, dateline, words)


def test_small_crossbars():
    rng = random.Random(8)
    words = [(rng.getrandbits(64), rng.randrange(2)) for _ in range(400)]
    for links, nets in ((1, 1), (7, 4), (3, 2)):
        _check(links, nets, True, words)
