# amaranth: UnusedElaboratable=no
"""The scratch target in the Amaranth simulator: parameter checks and one PIO round trip."""

import pytest

from rtl.common.htax import HtaxCmd, HtaxStatus
from sim.amsim import Clock, HtaxSink, HtaxSource, run_sim
from sim.htax_packet import HtaxPacket, line_write_packet
from sim.tops.scratch import ID_MAGIC, RAM_OFFSET, HtaxScratch


@pytest.mark.parametrize("kw,msg", [
    (dict(words=1000), "words must be a power of two, not 1000"),
    (dict(words=8192), "words must be between 8 and 4096, not 8192"),
    (dict(max_outstanding=0), "max_outstanding must be between 1 and 32, not 0"),
    (dict(port=16), "port must be between 0 and 15, not 16"),
    (dict(port=2, host_port=2), "port and host_port must differ, both are 2"),
])
def test_parameter_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        HtaxScratch(**kw)


def test_pio_round_trip_in_amaranth_sim():
    dut = HtaxScratch(words=64, max_outstanding=2)
    got = []

    host, unit = HtaxSource(dut.htax.rx), HtaxSink(dut.htax.tx)        # the unit's tx always ready
    clock = Clock(host, unit)

    async def bench(ctx):
        async def send(pkt):
            await host.transmit(ctx, pkt, clock=clock)

        async def receive(limit=50):
            await unit.wait_packets(ctx, len(got) + 1, clock=clock, limit=limit)
            return unit.packets[-1].packet

        await send(line_write_packet(RAM_OFFSET + 8, (0x1122334455667788).to_bytes(8, "little"), src=0, dst=1))
        await send(HtaxPacket(HtaxCmd.READ, src=0, dst=1, tag=5, addr=RAM_OFFSET + 8, length=1, last_be=0))
        got.append(await receive())
        await send(HtaxPacket(HtaxCmd.READ, src=0, dst=1, tag=6, addr=0, length=1, last_be=0))
        got.append(await receive())
        await send(HtaxPacket(HtaxCmd.READ, src=0, dst=1, tag=7, addr=0x100, length=1, last_be=0))
        got.append(await receive())

    run_sim(dut, bench)
    rsp, ident, unmapped = got
    assert (rsp.cmd, rsp.tag, rsp.dst, rsp.src, rsp.status, rsp.data) == \
        (HtaxCmd.RESPONSE, 5, 0, 1, HtaxStatus.OK, [0x1122334455667788])
    assert ident.data == [(ID_MAGIC << 48) | 64] and ident.tag == 6
    assert (unmapped.status, unmapped.length, unmapped.data) == (HtaxStatus.NO_TARGET, 0, [])
