"""The crossbar input's look-ahead (``rtl/xbar/input.py``, ``docs/network.md``): packets of different
VCs of one input follow each other without an idle cycle, also when the first one's source stalls
before its last beat (the grant then waits, ``pend``), and both arrive whole at their outputs."""

from functools import partial

import pytest
from amaranth.sim import Simulator

from rtl.xbar import Crossbar
from sim.netroute import fu_packet, net_header, route_entry

LINKS, NETS = 2, 1
VIA_LINK, HERE = 0, 1       # destination nodes: through link port 1, and this node (network port 0)
TABLE = [route_entry(port=1), route_entry(net_port=0)]


def _packet(dst, tag):
    return fu_packet(net_header(dst_node=dst, payload_words=2, specific=tag), payload=[tag, tag + 1])


def _run(second_port, stall):
    """Input port 0 holds a request packet on VC 0 for link port 1 and a response packet on VC 2 for
    ``second_port``; VC 0's source stalls ``stall`` cycles before its last beat.  Returns the cycles
    in which input beats moved and the packets every output VC delivered."""
    dut = Crossbar(link_ports=LINKS, net_ports=NETS, nodes=2, table_init=TABLE)
    first = _packet(VIA_LINK, 0x100)
    second = _packet(HERE if second_port == LINKS else VIA_LINK, 0x200)
    moved, got = [], {}

    async def source(ctx, vc, words, stall_before_last):
        s = dut.ports[0].i[vc]
        for k, word in enumerate(words):
            if k == len(words) - 1 and stall_before_last:
                await ctx.tick().repeat(stall_before_last)
            ctx.set(s.valid, 1)
            ctx.set(s.payload.data, word)
            ctx.set(s.payload.kind, 0 if k == 0 else 2)
            ctx.set(s.payload.first, k == 0)
            ctx.set(s.payload.last, k == len(words) - 1)
            await ctx.tick().until(s.ready)
            ctx.set(s.valid, 0)

    async def watch(ctx):
        cycle = 0
        async for _clk, _rst, *vals in ctx.tick().sample(*(dut.ports[0].i[v].valid for v in (0, 2)),
                                                   *(dut.ports[0].i[v].ready for v in (0, 2))):
            v0, v2, r0, r2 = vals
            for vc, v, r in ((0, v0, r0), (2, v2, r2)):
                if v and r:
                    moved.append((cycle, vc))
            cycle += 1

    async def sink(ctx, port, vc):
        s = dut.ports[port].o[vc]
        ctx.set(s.ready, 1)
        words = []
        async for _clk, _rst, valid, data, last in ctx.tick().sample(s.valid, s.payload.data, s.payload.last):
            if valid:
                words.append(data)
                if last:
                    got.setdefault((port, vc), []).append(words)
                    words = []

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(partial(source, vc=0, words=first, stall_before_last=stall))
    sim.add_testbench(partial(source, vc=2, words=second, stall_before_last=0))
    sim.add_process(watch)
    for port in range(LINKS + NETS):
        for vc in range(4):
            sim.add_process(partial(sink, port=port, vc=vc))
    sim.run_until(60 * 1e-8)
    return moved, got, first, second


@pytest.mark.parametrize("second_port", [1, LINKS], ids=["same_output", "other_output"])
@pytest.mark.parametrize("stall", [0, 3], ids=["no_stall", "stall"])
def test_next_packet_without_gap(second_port, stall):
    moved, got, first, second = _run(second_port, stall)
    cycles = {vc: [c for c, v in moved if v == vc] for vc in (0, 2)}
    assert len(cycles[0]) == len(first) and len(cycles[2]) == len(second), moved
    done = max(cycles[0]) if cycles[0][0] < cycles[2][0] else max(cycles[2])
    later = cycles[2] if cycles[0][0] < cycles[2][0] else cycles[0]
    # the later packet's header moves in the cycle after the earlier packet's last beat
    assert later[0] == done + 1, moved
    assert later == list(range(later[0], later[0] + len(later))), moved
    # both arrive whole (the hop count updated by the crossbar, the rest unchanged)
    out = {k: p for k, ps in got.items() for p in ps}
    assert len(out) == 2, got
    assert out[(1, 0)][1:] == first[1:]
    assert out[(second_port, 2)][1:] == second[1:]
