"""VELO benchmark (issue 35): ``build/bench/velo.json``.  Definitions are in ``docs/velo.md``
("Performance").

* At the blocks, in the Amaranth simulator, outputs always ready (``tests/velo/test_completer.py``'s
  harness holds the completer's mailbox tables):
  ``requester_latency_cycles`` (posted WRITE header moves into ``rx`` -> network header offered on
  ``net_tx``), ``completer_latency_cycles`` (network header moves into ``net_rx`` -> slot WRITE header
  offered on ``tx``), and ``message_rate_per_cycle_{requester,completer}_{8,64}B``: back-to-back
  messages per cycle, from the first header out to the last of 32 messages.
* ``loopback_latency_cycles_{8,56}B``: in ``sim.tops.velo.VeloSystem`` on Verilator, a node sending
  to itself: from the cycle the CPU store is issued (:meth:`sim.host.HostModel.write`) to the cycle the
  slot's WRITE, status word first, lands in host memory (host model at table 3-1's latencies).  The
  system is built from ``configs/default.toml`` as it is: the five-port ``HtaxPipelined``, of which
  the system uses three ports (host, register file, VELO); the other two are idle.
* ``link_cycles_56B``: link cycles of one 56-byte VELO message on the default link: one data flit of
  network header and seven payload words (the same count as ``bench/link.py``'s
  ``link_cycles_56B_single_packet``).
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import write_bench  # noqa: E402
from amaranth.sim import Simulator  # noqa: E402

from rtl.common.addrmap import AddressMap  # noqa: E402
from rtl.common.net import NetBeatKind  # noqa: E402
from rtl.config import load  # noqa: E402
from rtl.link import LinkParams  # noqa: E402
from rtl.velo import VeloRequester  # noqa: E402
from sim.amsim import Clock, HtaxSource, run_sim  # noqa: E402
from sim.htax_packet import line_write_packet  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.velo import VeloCompleterTop, VeloSystem  # noqa: E402
from sim.velo_model import Mailbox, encode_address, net_header  # noqa: E402

MESSAGES = 32


def stream_run(dut, beats, *, put, moved, ready, first_out, limit=2000):
    """Offer ``beats`` back to back on the DUT's input (``put(ctx, beat)``; ``moved(ctx)``: it moves in
    this cycle), keep the output ready (``ready(ctx)``) and return ``(in_cycles, out_cycles)``: the
    cycles in which a header moved in and in which one was first offered out (``first_out(ctx)``)."""
    res = {"in": [], "out": []}

    async def tb(ctx):
        i = 0
        for cycle in range(limit):
            ready(ctx)
            if i < len(beats):
                put(ctx, beats[i][0])
                if moved(ctx):
                    if beats[i][1]:
                        res["in"].append(cycle)
                    i += 1
            if first_out(ctx):
                res["out"].append(cycle)
            await ctx.tick()
            if i == len(beats):
                put(ctx, None)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    return res["in"], res["out"]


def rate(outs, n):
    return round((n - 1) / (outs[n - 1] - outs[0]), 4)


def requester(cfg, amap):
    def run(messages):
        """Posted WRITEs back to back into ``rx`` (:class:`sim.amsim.HtaxSource`), ``net_tx`` always
        ready; ``(in_cycles, out_cycles)`` as :func:`stream_run` gives them."""
        dut = VeloRequester(vpid_bits=amap.vpid_bits, node_bits=amap.node_bits, window_base=amap["velo"].base)
        host = HtaxSource(dut.rx)
        for nbytes in messages:
            addr = encode_address(amap, dst_node=1, dst_vpid=2, src_vpid=3, nbytes=nbytes, mtt=0)
            host.send(line_write_packet(addr, bytes(range(nbytes)), src=0, dst=cfg["velo"]["htax_port"]))
        outs = []

        async def tb(ctx):
            ctx.set(dut.net_tx.ready, 1)
            clock = Clock(host)
            for _ in range(2000):
                clock.drive(ctx)
                if ctx.get(dut.net_tx.valid) and ctx.get(dut.net_tx.payload.first):
                    outs.append(clock.now)
                await clock.tick(ctx)

        run_sim(dut, tb)
        return [header for header, _, _ in host.sent], outs
    ins, outs = run([8])
    res = {"requester_latency_cycles": outs[0] - ins[0]}
    for nbytes in (8, 64):
        _, outs = run([nbytes] * MESSAGES)
        res[f"message_rate_per_cycle_requester_{nbytes}B"] = rate(outs, MESSAGES)
    return res


def completer():
    def run(messages):
        dut = VeloCompleterTop([Mailbox(enable=True, base=0x10_0000 * (v + 1), size=3) for v in range(8)])
        beats = []
        for words in messages:
            hdr = net_header(dst_node=0, src_node=1, words=words, dst_vpid=2, src_vpid=3, msg_words=words, mtt=0,
                             offset=0)
            pkt = [hdr] + list(range(words))
            beats += [({"data": w, "kind": NetBeatKind.HEADER if j == 0 else NetBeatKind.PAYLOAD,
                        "first": j == 0, "last": j == words}, j == 0) for j, w in enumerate(pkt)]

        def put(ctx, b):
            ctx.set(dut.net_rx.valid, b is not None)
            if b is not None:
                ctx.set(dut.net_rx.payload, b)
        # an 8-word message takes two slots: its second slot header is not a message of its own
        return stream_run(dut, beats, put=put, moved=lambda ctx: ctx.get(dut.net_rx.ready),
                          ready=lambda ctx: ctx.set(dut.tx.ready, 0xF),
                          first_out=lambda ctx: ctx.get(dut.tx.valid) and ctx.get(dut.tx.payload.first))
    ins, outs = run([1])
    res = {"completer_latency_cycles": outs[0] - ins[0]}
    for words in (1, 8):
        _, outs = run([words] * MESSAGES)
        per = 2 if words == 8 else 1
        res[f"message_rate_per_cycle_completer_{8 * words}B"] = rate(outs[::per], MESSAGES)
    return res


def loopback(cfg):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "velo.json"
        run_cocotb(VeloSystem(cfg), name="velo_system_default", test_module="tests.velo.tb_velo_bench",
                   params={"out": str(out)}, seed=1)
        return json.loads(out.read_text())


def main():
    cfg = load()
    amap = AddressMap.from_config(cfg)
    res = {**requester(cfg, amap), **completer(), **loopback(cfg)}
    link = {k: v for k, v in cfg["link"].items() if k not in ("replay_timeout", "max_replays")}
    res["link_cycles_56B"] = LinkParams(**link).data_flit_phits(1 + 7)
    write_bench("velo", res, {
        "vpids": cfg["system"]["vpids"], "nodes": cfg["system"]["nodes"], "messages": MESSAGES,
        "memory_latency_cycles": cfg.ns_to_cycles(cfg["host"]["dma_read_latency_ns"]),
        "htax_variant": cfg["htax"]["variant"], "htax_ports_loopback": cfg["htax"]["ports"],
        "measured_at": "requester/completer: the block's ports (Amaranth simulator, outputs ready); "
                       "loopback: VeloSystem, CPU store to slot write in host memory (Verilator)",
        "targets": "requester <= 3, completer <= 4, rate 1 / (payload beats + 1)"})


if __name__ == "__main__":
    main()
