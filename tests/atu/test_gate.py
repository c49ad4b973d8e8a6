"""AtuGateCheck: only waiting slots are claimed, the check's causes, and which GATEs fill the TLB
(Amaranth simulator)."""

from rtl.atu import AtuFormats, AtuGateCheck
from rtl.common.ats import AtsCause
from rtl.common.htax import HtaxCmd, HtaxStatus
from sim.amsim import Clock, HtaxSource, run_sim
from sim.atu_model import gate_word
from sim.htax_packet import HtaxPacket

F = AtuFormats(gat_entries=4, tlb_entries=16, tlb_ways=1, reorder_entries=4, vpids=4, fus=1)
PAGE = (2 << 18) | 0x1234
# the request information of each slot: vpid, write, epoch
INFO = {0: (1, 0, 0), 1: (1, 1, 0), 2: (2, 0, 1), 3: (3, 0, 0)}


def _response(tag, *words):
    if not words:
        return HtaxPacket(HtaxCmd.RESPONSE, src=0, dst=2, tag=tag, length=0,
                          status=HtaxStatus.TARGET_ERROR).beats()
    return HtaxPacket(HtaxCmd.RESPONSE, src=0, dst=2, tag=tag, length=len(words), data=list(words)).beats()


def _run(packets, *, waiting, flush_start_at=None, large=0, more=0):
    """Deliver ``packets`` (lists of beats) back to back; return per cycle (arrived slot or None,
    result or None, fill or None)."""
    dut = AtuGateCheck(formats=F)
    memory = HtaxSource(dut.beats)              # the response beats the ATU's port takes (always ready)
    for p in packets:
        memory.send(p)
    log = []

    async def tb(ctx):
        ctx.set(dut.waiting, waiting)
        clock = Clock(memory)
        for cycle in range(sum(len(p) for p in packets) + 2):
            clock.drive(ctx)
            vpid, write, epoch = INFO[ctx.get(dut.info.addr)]
            ctx.set(dut.info.data, {"vpid": vpid, "write": write, "epoch": epoch, "large": large, "more": more})
            ctx.set(dut.info.data.nla.as_value(), PAGE)
            ctx.set(dut.flush_start, cycle == flush_start_at)
            res = ctx.get(dut.results.payload) if ctx.get(dut.results.valid) else None
            fill = ctx.get(dut.fill.payload) if ctx.get(dut.fill.valid) else None
            log.append((ctx.get(dut.arrived.payload) if ctx.get(dut.arrived.valid) else None,
                        None if res is None else (res.slot, res.ok, AtsCause(res.cause), res.ppn),
                        None if fill is None else (fill.vpid, fill.read, fill.write, fill.ppn, fill.nla.as_bits(),
                                                   fill.large, fill.pref)))
            await clock.tick(ctx)

    run_sim(dut, tb)
    return log


def test_check_and_fill():
    ok_gate = gate_word(ppn=0xABC, vpid=1, read=1, write=0)
    log = _run([_response(0, ok_gate), _response(1, ok_gate), _response(3, ok_gate), _response(2, 0)],
               waiting=0b1111)
    arrived = [a for a, _, _ in log if a is not None]
    results = [r for _, r, _ in log if r is not None]
    fills = [f for _, _, f in log if f is not None]
    assert arrived == [0, 1, 3, 2]
    assert results == [(0, 1, AtsCause.NONE, 0xABC),
                       (1, 0, AtsCause.PERMISSION, 0),          # a write to a read-only page
                       (3, 0, AtsCause.VPID_MISMATCH, 0),
                       (2, 0, AtsCause.INVALID_GATE, 0)]
    # a valid GATE of the slot's VPID fills the TLB, also when this access was refused
    assert fills == [(1, 1, 0, 0xABC, PAGE, 0, 0)] * 2
    # each result one cycle after its arrival (the data beat)
    for i, (a, _, _) in enumerate(log):
        if a is not None:
            assert log[i + 1][1][0] == a


def test_only_waiting_slots_and_errors():
    log = _run([_response(1, gate_word(ppn=5, vpid=1)), _response(9, gate_word(ppn=5, vpid=1)),
                _response(0), _response(2)], waiting=0b0101)
    # slot 1 does not wait, tag 9 is no slot: ignored; error responses claim at their (only) beat
    assert [a for a, _, _ in log if a is not None] == [0, 2]
    assert [r for _, r, _ in log if r is not None] == [(0, 0, AtsCause.MEMORY_ERROR, 0),
                                                        (2, 0, AtsCause.MEMORY_ERROR, 0)]
    assert not [f for _, _, f in log if f is not None]


def test_no_fill_across_a_flush():
    """A GATE read in another epoch, or checked in the cycle a flush starts, never fills the TLB."""
    gate2 = gate_word(ppn=7, vpid=2)
    assert not [f for _, _, f in _run([_response(2, gate2)], waiting=0b0100) if f is not None]   # epoch 1
    gate1 = gate_word(ppn=7, vpid=1)
    log = _run([_response(0, gate1)], waiting=0b0001, flush_start_at=1)        # the data beat's cycle
    assert [r for _, r, _ in log if r is not None] == [(0, 1, AtsCause.NONE, 7)]
    assert not [f for _, _, f in log if f is not None]


def test_large_pages():
    """In a large-page GAT: a large GATE with a 2 MB-aligned PPN answers PPN + the page's index in the
    2 MB page and fills the large-page TLB; a misaligned one, or a 4 KB GATE, is PAGE_SIZE (and fills
    nothing); in a 4 KB-page GAT a large GATE is PAGE_SIZE."""
    good = gate_word(ppn=0x1200, vpid=1, large=1)
    log = _run([_response(0, good), _response(1, gate_word(ppn=0x1201, vpid=1, large=1))], waiting=0b0011,
               large=1)
    assert [r for _, r, _ in log if r is not None] == [(0, 1, AtsCause.NONE, 0x1200 | (PAGE & 0x1FF)),
                                                        (1, 0, AtsCause.PAGE_SIZE, 0)]
    assert [f for _, _, f in log if f is not None] == [(1, 1, 1, 0x1200, PAGE, 1, 0)]
    log = _run([_response(0, gate_word(ppn=0x1200, vpid=1))], waiting=0b0001, large=1)
    assert [r for _, r, _ in log if r is not None] == [(0, 0, AtsCause.PAGE_SIZE, 0)]
    log = _run([_response(0, good)], waiting=0b0001, large=0)
    assert [r for _, r, _ in log if r is not None] == [(0, 0, AtsCause.PAGE_SIZE, 0)]
    assert not [f for _, _, f in log if f is not None]


def test_lookahead_fills():
    """After the slot's own GATE, the look-ahead GATEs of its line fill the TLB for the following pages
    with pref set, only as many as the read asked for, only valid GATEs of the slot's VPID; they give no
    result.  PAGE's GATE is at line position 4: the read asked for 2 more (pages +1, +2)."""
    own = gate_word(ppn=0x10, vpid=1)
    log = _run([_response(0, own, gate_word(ppn=0x11, vpid=1), gate_word(ppn=0x12, vpid=2),
                          gate_word(ppn=0x13, vpid=1))], waiting=0b0001, more=2)
    assert [r for _, r, _ in log if r is not None] == [(0, 1, AtsCause.NONE, 0x10)]
    # page + 2 belongs to another VPID, page + 3 was not asked for
    assert [f for _, _, f in log if f is not None] == [(1, 1, 1, 0x10, PAGE, 0, 0), (1, 1, 1, 0x11, PAGE + 1, 0, 1)]
    # large pages: the next 2 MB page
    log = _run([_response(0, gate_word(ppn=0x200, vpid=1, large=1), gate_word(ppn=0x400, vpid=1, large=1))],
               waiting=0b0001, more=1, large=1)
    assert [f[3:] for _, _, f in log if f is not None] == [(0x200, PAGE, 1, 0), (0x400, PAGE + 0x200, 1, 1)]


def test_first_level_entry():
    """With the first-level table: the first response to a slot whose GAT was not cached is its
    first-level entry.  A configured one fills the GAT cache and sends the slot's GATE read (with its
    look-ahead) one cycle later, and the slot keeps waiting; the GATE that follows is checked with the
    entry's page size.  An entry that is 0 answers GAT_NOT_CONFIGURED."""
    f = AtuFormats(gat_entries=4, tlb_entries=16, tlb_ways=1, reorder_entries=4, vpids=4, fus=1,
                   gat_cache_entries=4)
    dut = AtuGateCheck(formats=f, lookahead=7)
    page = (700 << 18) | (3 << 9) | 0x15            # GAT 700, 2 MB page 3 of a large-page GAT
    table_entry = (0x7_3000 << 12) | 1              # a large-page GAT at 0x7_3000_000
    packets = [_response(1, table_entry), _response(1, gate_word(ppn=0x400, vpid=1, large=1)),
               _response(2, 0)]
    memory = HtaxSource(dut.beats)
    for p in packets:
        memory.send(p)
    log = []

    async def tb(ctx):
        ctx.set(dut.waiting, 0b0110)
        clock = Clock(memory)
        for _ in range(10):
            clock.drive(ctx)
            ctx.set(dut.info.data, {"vpid": 1, "write": 0, "epoch": 0, "large": 0, "more": 0, "next": 1,
                                    "gmiss": 1})
            ctx.set(dut.info.data.nla.as_value(), page)
            row = {}
            if ctx.get(dut.arrived.valid):
                row["arrived"] = ctx.get(dut.arrived.payload)
            if ctx.get(dut.results.valid):
                r = ctx.get(dut.results.payload)
                row["result"] = (r.slot, r.ok, AtsCause(r.cause), r.ppn)
            if ctx.get(dut.reads2.valid):
                r = ctx.get(dut.reads2.payload)
                row["read"] = (r.slot, r.addr, r.more)
            if ctx.get(dut.gfill.valid):
                g = ctx.get(dut.gfill.payload)
                row["gfill"] = (g.gat, g.large, g.addr)
            if row:
                log.append(row)
            await clock.tick(ctx)

    run_sim(dut, tb)
    # the entry: a cache fill and the GATE read (index 3 in the 4 KiB table, 4 more GATEs of its line)
    assert log[0] == {"read": (1, (0x7_3000 << 9) | 3, 4), "gfill": (700, 1, 0x7_3000)}
    assert log[1] == {"arrived": 1}
    assert log[2] == {"result": (1, 1, AtsCause.NONE, 0x400 | 0x15)}
    assert log[3] == {"arrived": 2} and log[4] == {"result": (2, 0, AtsCause.GAT_NOT_CONFIGURED, 0)}


def test_no_lookahead_fill_after_a_flush_started():
    """A flush that starts while a read's look-ahead words arrive stops their fills for the rest of the
    packet, although the epoch input (constant here, as after two flushes) equals the slot's."""
    words = [gate_word(ppn=0x10 + k, vpid=1) for k in range(4)]
    log = _run([_response(0, *words)], waiting=0b0001, more=3, flush_start_at=3)
    # own GATE (cycle 1) and the first look-ahead (cycle 2) fill; the flush cycle (3) and after do not
    assert [f[3] for _, _, f in log if f is not None] == [0x10, 0x11]
