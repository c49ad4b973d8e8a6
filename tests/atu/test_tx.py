"""AtuTxArbiter: priority flush request > GATE read > response, beat formats, backpressure, the
``failed`` and ``answered`` strobes (Amaranth simulator)."""

from rtl.atu import AtuFormats, AtuTxArbiter
from rtl.common.ats import AtsCause, AtsCmd
from rtl.common.htax import HtaxCmd, HtaxVC
from sim.amsim import Clock, HtaxSink, run_sim
from sim.atu_model import Translation, decode_ats

F = AtuFormats(gat_entries=512, tlb_entries=1024, tlb_ways=1, reorder_entries=32, vpids=32, fus=3)


def test_priority_and_formats():
    dut = AtuTxArbiter(formats=F, htax_port=2, host_port=0)
    switch = HtaxSink(dut.tx)                   # always ready

    async def tb(ctx):
        clock = Clock(switch)
        ctx.set(dut.flush_requests.valid, 1)
        ctx.set(dut.flush_requests.payload, {"dst": 4, "vpid": 9, "flush_id": 3})
        ctx.set(dut.flush_requests.payload.nla.as_value(), 0x2_0005)
        ctx.set(dut.reads.valid, 1)
        ctx.set(dut.reads.payload, {"slot": 17, "addr": (0x123 << 18) | 0x3_0001, "more": 2})
        ctx.set(dut.responses.valid, 1)
        ctx.set(dut.responses.payload, {"dst": 5, "tag": 21, "ok": 0, "cause": AtsCause.PERMISSION, "ppn": 0,
                                        "epoch": 1})
        order = []
        for _ in range(6):
            clock.drive(ctx)
            ready = (ctx.get(dut.flush_requests.ready), ctx.get(dut.reads.ready), ctx.get(dut.responses.ready))
            # `answered` with the response, the third packet
            assert ctx.get(dut.answered.valid) == (ctx.get(dut.tx.valid) and len(switch.packets) == 2)
            await clock.tick(ctx)
            # each source leaves once it was taken; `failed` strobes one cycle after the refused
            # answer was loaded
            taken = next((src for src, r in zip((dut.flush_requests, dut.reads, dut.responses), ready,
                                                strict=True) if r and ctx.get(src.valid)), None)
            assert ctx.get(dut.failed) == (taken is dut.responses)
            if taken is not None:
                order.append(taken)
                ctx.set(taken.valid, 0)
        assert order == [dut.flush_requests, dut.reads, dut.responses]

    run_sim(dut, tb)
    fl, rd, rsp = (r.packet for r in switch.packets)
    assert (fl.cmd, fl.vc, fl.src, fl.dst, fl.tag) == (HtaxCmd.ATS, HtaxVC.ATS, 2, 4, 0)
    cmd, fields = decode_ats(fl.ats)
    assert cmd == AtsCmd.FLUSH_REQUEST
    assert (fields["flush_request.vpid"], fields["flush_request.nla_page"], fields["flush_request.flush_id"]) \
        == (9, 0x2_0005, 3)
    # a read of the GATE and two look-ahead GATEs
    assert (rd.cmd, rd.vc, rd.src, rd.dst, rd.tag, rd.length) == (HtaxCmd.READ, HtaxVC.NONPOSTED, 2, 0, 17, 3)
    assert rd.addr == (0x123 << 21) + 8 * 0x3_0001
    assert (rsp.dst, rsp.tag) == (5, 21)
    assert decode_ats(rsp.ats)[1] == Translation(0, AtsCause.PERMISSION, 0)


def test_beat_held_under_backpressure():
    """The switch refuses the ATS VC: the beat and valid hold, no source is taken; a READ behind it
    waits."""
    dut = AtuTxArbiter(formats=F, htax_port=2, host_port=0)

    lanes = {"ready": 0b1111 & ~(1 << HtaxVC.ATS.value)}
    switch = HtaxSink(dut.tx, ready=lambda: lanes["ready"])      # checks that the beat holds

    async def tb(ctx):
        clock = Clock(switch)
        ctx.set(dut.responses.valid, 1)
        ctx.set(dut.responses.payload, {"dst": 3, "tag": 1, "ok": 1, "cause": AtsCause.NONE, "ppn": 0x77,
                                        "epoch": 0})
        await clock.tick(ctx)
        ctx.set(dut.responses.valid, 0)
        ctx.set(dut.reads.valid, 1)
        first = ctx.get(dut.tx.payload)
        for _ in range(5):
            clock.drive(ctx)
            assert ctx.get(dut.tx.valid) and ctx.get(dut.tx.payload) == first
            assert not ctx.get(dut.reads.ready) and not ctx.get(dut.answered.valid)
            await clock.tick(ctx)
        lanes["ready"] = 0b1111
        clock.drive(ctx)
        assert ctx.get(dut.reads.ready) and ctx.get(dut.answered.valid)
        await clock.tick(ctx)
        await clock.tick(ctx)
        assert [r.packet.cmd for r in switch.packets] == [HtaxCmd.ATS, HtaxCmd.READ]

    run_sim(dut, tb)


def test_reads_after_first_level_entries_go_first():
    """A GATE read that follows a first-level entry (``reads2``) leaves before a waiting GATE read."""
    dut = AtuTxArbiter(formats=F, htax_port=2, host_port=0)
    switch = HtaxSink(dut.tx)

    async def tb(ctx):
        clock = Clock(switch)
        ctx.set(dut.reads.valid, 1)
        ctx.set(dut.reads.payload, {"slot": 1, "addr": 0x100, "more": 0})
        ctx.set(dut.reads2.valid, 1)
        ctx.set(dut.reads2.payload, {"slot": 2, "addr": 0x200, "more": 3})
        for _ in range(4):
            clock.drive(ctx)
            for src in (dut.reads2, dut.reads):
                if ctx.get(src.valid) and ctx.get(src.ready):
                    await clock.tick(ctx)
                    ctx.set(src.valid, 0)
                    break
            else:
                await clock.tick(ctx)

    run_sim(dut, tb)
    assert [(r.packet.tag, r.packet.addr, r.packet.length) for r in switch.packets] == [(2, 0x1000, 4), (1, 0x800, 1)]
