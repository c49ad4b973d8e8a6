"""The HTAX header rules: the RTL predicate against the Python reference, and the packet codec."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from rtl.common.htax import (
    HtaxBeat,
    HtaxCmd,
    HtaxHeader,
    HtaxStatus,
    HtaxVC,
    malformed,
    malformed_reason,
    vc_for_cmd,
)
from sim.htax_packet import HtaxPacket, HtaxProtocolError, beat_replace, byte_enables, line_write_packet
from sim.layout import fields, pack


def random_header(rng):
    """Mostly plausible headers with every rule broken now and then."""
    cmd = rng.choice([0, 1, 2, 3, 0, 1, 2, rng.randrange(8)])
    vc = vc_for_cmd(cmd).value if cmd < 4 and rng.random() < 0.85 else rng.randrange(4)
    return {
        "cmd": cmd, "vc": vc,
        "status": 0 if rng.random() < 0.8 else rng.randrange(4),
        "src": rng.randrange(16), "dst": rng.randrange(16), "tag": rng.randrange(32),
        "addr": (rng.randrange(1 << 49) << 3) | (0 if rng.random() < 0.9 else rng.randrange(8)),
        "length": rng.choice([rng.randrange(0, 9), rng.randrange(16)]),
        "first_be": rng.choice([0xFF, rng.randrange(256), 0]),
        "last_be": rng.choice([0xFF, rng.randrange(256), 0]),
    }


def header_bits(h):
    return pack(HtaxHeader, {
        "cmd": h["cmd"], "vc": h["vc"], "status": h["status"], "src": h["src"], "dst": h["dst"],
        "tag": h["tag"], "body.mem.addr": h["addr"], "body.mem.length": h["length"],
        "body.mem.first_be": h["first_be"], "body.mem.last_be": h["last_be"]})


def test_rtl_malformed_matches_reference():
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    headers = [random_header(rng) for _ in range(400)]
    # every rule gets exercised
    reasons = {malformed_reason(h) for h in headers}
    assert None in reasons and len(reasons) >= 8, reasons

    m = Module()
    hdr = Signal(HtaxHeader)
    bad = Signal()
    m.d.comb += bad.eq(malformed(hdr))
    sim = Simulator(m)
    mismatches = []

    async def bench(ctx):
        for h in headers:
            ctx.set(hdr.as_value(), header_bits(h))
            got = ctx.get(bad)
            want = malformed_reason(h) is not None
            if got != want:
                mismatches.append((h, malformed_reason(h), got))

    sim.add_testbench(bench)
    sim.run()
    assert mismatches == []


@pytest.mark.parametrize("h,reason", [
    (dict(cmd=5, vc=0), "reserved command"),
    (dict(cmd=0, vc=1, length=1, first_be=1), "virtual channel does not match command"),
    (dict(cmd=0, vc=0, length=0), "write length out of range"),
    (dict(cmd=0, vc=0, length=9, first_be=1, last_be=1), "write length out of range"),
    (dict(cmd=0, vc=0, length=2, first_be=1, last_be=0), "write with empty byte enables"),
    (dict(cmd=1, vc=1, length=0), "read length out of range"),
    (dict(cmd=2, vc=2, status=1, length=1), "error response with data"),
    (dict(cmd=1, vc=1, status=2, length=1), "request with non-OK status"),
    (dict(cmd=3, vc=3, status=3), "request with non-OK status"),
    (dict(cmd=1, vc=1, length=1, addr=4), "address not 8-byte aligned"),
    (dict(cmd=1, vc=1, length=2, addr=0x38), "packet crosses a 64-byte line"),
    (dict(cmd=1, vc=1, length=8, addr=0x40), None),
    (dict(cmd=3, vc=3, length=15, addr=5), None),        # ATS: the body is the ATS message
])
def test_rules(h, reason):
    full = {"status": 0, "addr": 0, "length": 0, "first_be": 0, "last_be": 0} | h
    assert malformed_reason(full) == reason


def test_codec_round_trip_and_framing():
    rng = random.Random(7)
    for _ in range(200):
        off = rng.randrange(64)
        n = rng.randrange(1, 65 - off)
        pkt = line_write_packet(0x1000 * rng.randrange(1 << 20) + off, bytes(rng.randrange(256) for _ in range(n)),
                                src=rng.randrange(16), dst=rng.randrange(16))
        assert pkt.malformed_reason() is None
        beats = pkt.beats()
        assert len(beats) == 1 + pkt.length
        assert HtaxPacket.from_beats(beats) == pkt
    ats = HtaxPacket(HtaxCmd.ATS, src=2, dst=3, ats=0xDEAD_BEEF_0123_4567)
    assert len(ats.beats()) == 1 and HtaxPacket.from_beats(ats.beats()).ats == ats.ats
    beats = line_write_packet(0, bytes(16), src=0, dst=1).beats()
    with pytest.raises(HtaxProtocolError, match="last flag wrong on beat 0"):
        HtaxPacket.from_beats([beat_replace(beats[0], {"last": 1})] + beats[1:])
    with pytest.raises(HtaxProtocolError, match="needs 2 data words, has 1"):
        HtaxPacket(HtaxCmd.WRITE, length=2, data=[1]).beats()


def test_beat_layout_is_the_documented_one():
    f = fields(HtaxBeat)
    assert HtaxBeat.as_shape().size == 96
    assert f["word.header.cmd"] == (0, 3)
    assert f["word.header.vc"] == (3, 2)
    assert f["word.header.status"] == (5, 2)
    assert f["word.header.src"] == (7, 4)
    assert f["word.header.dst"] == (11, 4)
    assert f["word.header.tag"] == (15, 5)
    assert f["word.header.body.mem.addr"] == (20, 52)
    assert f["word.header.body.mem.length"] == (72, 4)
    assert f["word.header.body.mem.first_be"] == (76, 8)
    assert f["word.header.body.mem.last_be"] == (84, 8)
    assert f["word.header.body.ats.raw"] == (20, 64)
    assert f["word.data"] == (0, 64)
    assert f["vc"] == (92, 2) and f["first"] == (94, 1) and f["last"] == (95, 1)


@pytest.mark.parametrize("offset,n,want", [
    (0, 8, (0xFF, 0, 1)), (3, 2, (0x18, 0, 1)), (6, 4, (0xC0, 0x03, 2)), (0, 64, (0xFF, 0xFF, 8)),
    (63, 1, (0x80, 0, 1)),
])
def test_byte_enables(offset, n, want):
    assert byte_enables(offset, n) == want


def test_byte_enables_reject_line_crossing():
    with pytest.raises(ValueError, match="do not lie in one 64-byte line"):
        byte_enables(60, 8)


def test_vc_for_cmd():
    assert [vc_for_cmd(c) for c in HtaxCmd] == [HtaxVC.POSTED, HtaxVC.NONPOSTED, HtaxVC.RESPONSE, HtaxVC.ATS]
    assert HtaxStatus.OK.value == 0
