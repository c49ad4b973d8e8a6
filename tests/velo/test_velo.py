# amaranth: UnusedElaboratable=no
"""VELO: parameter checks and the cocotb system testbench ``tb_velo.py`` (Verilator)."""

import pytest

from rtl.velo import Velo, VeloRequester
from sim.runner import run_cocotb
from sim.tops.configs import velo_config
from sim.tops.velo import VeloNetSystem, VeloSystem

BASE = 0x8000_1000_0000


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(vpids=64), ValueError, "vpids must be between 2 and 32, not 64"),
    (dict(vpids=24), ValueError, "vpids must be a power of two, not 24"),
    (dict(nodes=1 << 16), ValueError, "nodes must be between 2 and 32768, not 65536"),
    (dict(window_base=-1), ValueError, "window_base must be at least 0, not -1"),
    (dict(host_port=6), ValueError, "host_port must differ from htax_port, both are 6"),
    (dict(htax_port=16), ValueError, "htax_port must be between 0 and 15, not 16"),
])
def test_parameter_errors(kw, exc, msg):
    args = dict(vpids=32, nodes=64, window_base=BASE, htax_port=6, host_port=0) | kw
    with pytest.raises(exc) as e:
        Velo(**args)
    assert str(e.value) == msg


def test_window_alignment():
    with pytest.raises(ValueError, match=r"^window_base must be aligned to 0x10000000, not 0x1000$"):
        VeloRequester(vpid_bits=5, node_bits=6, window_base=0x1000)


@pytest.mark.parametrize("testcase, nodes, params", [
    ("random_messages", 1, {"messages": 80}),
    ("random_messages", 2, {"messages": 80, "nodes": 2, "ready_p": 0.5}),
    # the directed testcases in one simulation: one elaboration and start instead of six
    (["splits_everywhere", "ring_full", "bad_input", "interrupt", "source_vpid_from_page", "split_half_lost"], 1, {}),
])
def test_velo_cocotb(testcase, nodes, params):
    run_cocotb(VeloSystem(velo_config(), nodes=nodes), name=f"velo_system{nodes}", test_module="tests.velo.tb_velo",
               testcase=testcase, params=params)


def test_velo_other_nodes():
    """Stores to other nodes through the requester and a network port looped back to itself: they
    leave, come back, and are dropped and counted as misrouted; nothing lands, stores to this node
    still arrive."""
    run_cocotb(VeloNetSystem(velo_config()), name="velo_netport", test_module="tests.velo.tb_velo_netport",
               testcase="other_nodes")


def test_requester_takes_whole_packets():
    """The requester refuses whole posted packets (``docs/htax.md``, sink rules): with the network
    stalled it starts a 64-byte store only while its output FIFO has room for all of it, and once it
    took a header it takes every beat.  A requester that withdrew ``ready`` inside a packet stalled the
    switch input of the host, with the host's read responses behind it, and two NICs deadlocked."""
    from rtl.common.addrmap import AddressMap
    from sim.amsim import Clock, HtaxSource, lane, run_sim
    from sim.htax_packet import line_write_packet
    from sim.velo_model import encode_address

    amap = AddressMap(device_base=0x8000_0000_0000, vpids=32, nodes=64)
    dut = VeloRequester(vpid_bits=amap.vpid_bits, node_bits=amap.node_bits, window_base=amap["velo"].base)
    addr = encode_address(amap, dst_node=1, dst_vpid=2, src_vpid=3, nbytes=64, mtt=0)
    packets = [line_write_packet(addr, bytes(range(k, k + 64)), src=0, dst=6) for k in range(4)]
    host = HtaxSource(dut.rx)
    withdrawn = []

    async def bench(ctx):
        ctx.set(dut.net_tx.ready, 0)
        clock = Clock(host)
        for p in packets:
            host.send(p)
        for _ in range(60):
            clock.drive(ctx)
            beat = host.offered
            if beat is not None and not beat.first and not lane(ctx.get(dut.rx.ready), beat.vc):
                withdrawn.append((len(host.sent), host.moved))
            await clock.tick(ctx)

    run_sim(dut, bench)
    assert not withdrawn, f"ready withdrawn inside a packet: (packet, beats moved) {withdrawn[0]}"
    taken = [packets.index(p) for _, _, p in host.sent]
    # 18 beats of FIFO: two 9-beat packets (network header + 8 words), then the third is refused whole
    assert taken == [0, 1] and host.moved == 18
