"""The VELO completer alone (Amaranth simulator) against :class:`sim.velo_model.VeloCompleterModel`:
random packets -- every length, offsets, MTTs, malformed headers, VPIDs beyond the configuration,
disabled mailboxes, rings that fill -- with random gaps on the input and random backpressure on the
HTAX link.  The mailbox tables are memories of a small harness holding the model's configuration."""

import os
import random

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxCmd, HtaxLinkSignature, HtaxVC
from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.velo import VeloCompleter, VeloWritePointers
from rtl.velo.formats import VeloNetFields
from sim.amsim import HtaxSink, run_sim, stream_put
from sim.layout import pack
from sim.velo_model import Mailbox, VeloCompleterModel, net_header

VPIDS = 8


class Harness(wiring.Component):
    net_rx: In(NetStreamSignature())
    tx: Out(HtaxLinkSignature())

    def __init__(self, mailboxes):
        self.mb = mailboxes
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.cpl = cpl = VeloCompleter(vpids=VPIDS, htax_port=2, host_port=0)
        m.submodules.wplt = wplt = VeloWritePointers(vpids=VPIDS)
        tables = {}
        for name, width, key in (("mslt", 64, "size"), ("balt", 40, "base"), ("rp", 32, "rp")):
            init = [getattr(mb, key) >> (12 if key == "base" else 0) for mb in self.mb]
            m.submodules[name] = mem = Memory(shape=width, depth=VPIDS, init=init)
            tables[name] = mem.read_port()
            m.d.comb += [tables[name].addr.eq(cpl.vpid), getattr(cpl, name).eq(tables[name].data)]
        wiring.connect(m, wiring.flipped(self.net_rx), cpl.net_rx)
        wiring.connect(m, cpl.tx, wiring.flipped(self.tx))
        m.d.comb += [cpl.enable.eq(sum(int(mb.enable) << i for i, mb in enumerate(self.mb))),
                     wplt.addr.eq(cpl.vpid), cpl.wp.eq(wplt.data), wplt.w_en.eq(cpl.wp_we),
                     wplt.w_addr.eq(cpl.vpid), wplt.w_data.eq(cpl.wp_next)]
        return m


def random_packet(rng):
    """FU-side words of a VELO packet: mostly good, some malformed or for a VPID beyond ``VPIDS``."""
    msg = rng.randint(1, 8)
    words = rng.randint(1, msg)
    offset = rng.randint(0, msg - words)
    vpid = rng.randrange(VPIDS + 2) if rng.random() < 0.1 else rng.randrange(VPIDS)
    hdr = net_header(dst_node=0, src_node=rng.randrange(1 << 18), words=words, dst_vpid=vpid,
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
    dut = Harness(mbs)
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
