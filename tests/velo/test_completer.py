"""The VELO completer alone (Amaranth simulator) against :class:`sim.velo_model.VeloCompleterModel`:
random packets -- every length, offsets, MTTs, malformed headers, VPIDs beyond the configuration,
disabled mailboxes, rings that fill -- with random gaps on the input and random backpressure on the
HTAX link.  The mailbox tables are memories of a small harness holding the model's configuration."""

import os
import random

from rtl.common.htax import HtaxCmd, HtaxVC
from rtl.common.net import NODE_BITS, NetBeatKind, NetHeader, NetUnit
from rtl.velo.formats import VeloNetFields
from sim.amsim import HtaxSink, run_sim, stream_put
from sim.layout import pack
from sim.tops.velo import VeloCompleterTop
from sim.velo_model import Mailbox, VeloCompleterModel, net_header

VPIDS = 8


def random_packet(rng):
    """FU-side words of a VELO packet: mostly good, some malformed or for a VPID beyond ``VPIDS``."""
    msg = rng.randint(1, 8)
    words = rng.randint(1, msg)
    offset = rng.randint(0, msg - words)
    vpid = rng.randrange(VPIDS + 2) if rng.random() < 0.1 else rng.randrange(VPIDS)
    hdr = net_header(dst_node=0, src_node=rng.randrange(1 << NODE_BITS), words=words, dst_vpid=vpid,
                     src_vpid=rng.randrange(32), msg_words=msg, mtt=rng.randrange(4), offset=offset)
    if rng.random() < 0.05:     # a fragment beyond the message, or another unit
        spec = pack(VeloNetFields, {"dst_vpid": vpid, "words_m1": 0, "offset": 7})
        hdr = pack(NetHeader, {"unit": rng.choice([NetUnit.VELO, NetUnit.RMA_COMPLETER]), "payload_words": words,
                               "specific": spec})
    return [hdr] + [rng.getrandbits(64) for _ in range(words)]


def test_completer_random():
    seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    print(f"seed {seed} (replay with SEED={seed})")
    rng = random.Random(seed)
    mbs = [Mailbox(enable=v != 3, base=0x10_0000 * (v + 1), size=rng.choice([0, 0, 1]), wp=0,
                   rp=rng.choice([0, 5, 40])) for v in range(VPIDS)]
    model = VeloCompleterModel(vpids=VPIDS, mailboxes=[Mailbox(**vars(mb)) for mb in mbs])
    packets = [random_packet(rng) for _ in range(400)]
    expect = []
    for p in packets:
        out = model.packet(p)
        if isinstance(out, list):
            expect += out
    dut = VeloCompleterTop(mbs, vpids=VPIDS)
    got = []

    async def producer(ctx):
        for p in packets:
            for i, w in enumerate(p):
                beat = {"data": w, "kind": NetBeatKind.HEADER if i == 0 else NetBeatKind.PAYLOAD,
                        "first": i == 0, "last": i == len(p) - 1}
                await stream_put(ctx, dut.net_rx, beat, rng=rng, idle=0.2)

    def collect(rec):
        hp = rec.packet
        assert hp.malformed_reason() is None, hp.malformed_reason()
        assert (hp.cmd, hp.src, hp.dst, hp.vc) == (HtaxCmd.WRITE, 2, 0, HtaxVC.POSTED)
        assert len(hp.data) == hp.length
        got.append((hp.addr, hp.data))

    # the HTAX side refuses 4 cycles in 10; the sink checks the link rules and the framing
    sink = HtaxSink(dut.tx, rng=rng, stall=0.4, on_packet=collect)

    async def consumer(ctx):
        await sink.wait_packets(ctx, len(expect), limit=100_000)

    run_sim(dut, producer, consumer)
    assert got == expect
    assert model.discarded > 0 and model.rejected > 0      # the run reached both outcomes
