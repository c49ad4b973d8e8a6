"""The ``next`` bit of the RMA unit's ATS translation requests (``docs/rma.md``, "Translation"): 1
exactly when the operation side's last byte lies at or beyond the last byte of the translated 4 KiB
page, i.e. the access reaches the end of its page (:func:`tests.rma.test_rma.next_bit`).

``test_crossing_trains``: node 1 of ``test_rma.py`` alone, its completer fed hand-built put and
get-response trains for a translated VPID, some as a requester that skips the page-crossing check would
send them: trains that cross a page (an operation of at most 4 KiB spans at most two pages: ``next`` 1
for the first, 0 for the second, whose end it cannot reach), full pages, trains in quadwords and in
lines that end at a page's end or one quadword before it, a single quadword at the page's last one and
one inside the page.  The translation requests must be, in order, one per NLA page of each operation;
the data must land in the physical pages the GATEs map, and nowhere else.

``test_single_page_sides``: the two cross-connected units of ``test_rma.py``, puts, gets and immediate
puts between NLAs (requester, completer and responder translate): full pages, sides that end at a
page's end or one quadword before it, single quadwords at a page's last one, a side inside its page.
Each side's page is asked for with its ``next``, and no other request is made.

The expected requests are packed by :func:`sim.atu_model.translation_request` with ``next`` computed
from the operations' addresses and lengths, not taken from a run."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import AtsMessage
from rtl.common.net import NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.rma.formats import DATA_COMMAND_WORDS, LINE_BYTES, PAGE_BYTES, RmaCommand, RmaNetDescriptor, RmaNetFields
from sim.amsim import Clock, StreamSink, StreamSource, run_sim
from sim.atu_model import translation_request
from sim.layout import pack, unpack
from sim.rma_model import descriptor
from tests.rma.test_rma import (
    MEM,
    WATCHDOG,
    FlatMemory,
    Gates,
    Host,
    Node,
    free_pages,
    next_bit,
    queues_for,
    seed_rng,
    simulate,
)

VPID = 2                        # translated (test_rma.VIRTUAL), enabled
SRC = 0                         # the trains' source node
MASK64 = (1 << 64) - 1


def expected_requests(vpid, start, nbytes, write):
    """The translation requests of an operation side on NLAs ``start .. start + nbytes - 1``: one per
    page, in order, with :func:`next_bit`."""
    return [translation_request(vpid=vpid, nla_page=page, write=write, next=next_bit(start, nbytes, page))
            for page in range(start // PAGE_BYTES, (start + nbytes - 1) // PAGE_BYTES + 1)]


def train(command, start, data, *, cache_line):
    """The packets of a put, immediate put or get response carrying ``data`` to NLA ``start``, cut at
    64-byte lines as a requester or responder cuts them (the first with its command word)."""
    units = len(data) // (LINE_BYTES if cache_line else 8)
    spec = {"command": command.value, "cache_line": cache_line, "src_vpid": 0, "dst_vpid": VPID}
    packets, off = [], 0
    while off < len(data):
        n = min(len(data) - off, LINE_BYTES - (start + off) % LINE_BYTES)
        hdr = pack(NetHeader, {"dst_node": 1, "unit": NetUnit.RMA_COMPLETER, "payload_words": n // 8,
                               "command_words": 0 if off else DATA_COMMAND_WORDS, "src_node": SRC,
                               "specific": pack(RmaNetFields, spec | {"last": off + n == len(data)})})
        cmd = [] if off else [pack(RmaNetDescriptor, {"dst_qw": start // 8, "size_m1": units - 1}) & MASK64]
        packets.append([hdr, *cmd, *(int.from_bytes(data[off + i:off + i + 8], "little") for i in range(0, n, 8))])
        off += n
    return packets


class OneNode(wiring.Component):
    """Node 1 of ``test_rma.py`` with its network streams as ports (``req_rx`` stays idle)."""
    rsp_rx: In(NetStreamSignature())
    req_tx: Out(NetStreamSignature())
    rsp_tx: Out(NetStreamSignature())

    def __init__(self):
        self.node = Node(1, queues_for())
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.node = node = self.node
        wiring.connect(m, wiring.flipped(self.rsp_rx), node.rma.rsp_rx)
        wiring.connect(m, node.rma.req_tx, wiring.flipped(self.req_tx))
        wiring.connect(m, node.rma.rsp_tx, wiring.flipped(self.rsp_tx))
        return m


def crossing_operations(rng):
    """``(command, cache_line, start offset in its first page, bytes, crosses)`` of the trains."""
    k, j = rng.randint(1, 63), rng.randint(1, 63)
    return [
        # crossing: next 1 for the first page, 0 for the second
        (RmaCommand.PUT, 0, PAGE_BYTES - 8 * k, 8 * rng.randint(k + 1, 64), True),         # quadwords
        (RmaCommand.PUT, 1, 8 * rng.randint(1, 511), PAGE_BYTES, True),                     # 64 lines
        (RmaCommand.GET, 1, LINE_BYTES * j, LINE_BYTES * rng.randint(65 - j, 64), True),    # get response
        (RmaCommand.GET, 0, PAGE_BYTES - 8 * k, 8 * rng.randint(k + 1, 64), True),
        (RmaCommand.PUT, 0, PAGE_BYTES - 8, 16, True),                  # its last quadword, then one more
        (RmaCommand.PUT, 1, PAGE_BYTES - LINE_BYTES * j + 8 * rng.randint(1, 7), LINE_BYTES * j, True),  # mid-line
        # a full page, ending at the page's end: next 1
        (RmaCommand.PUT, 1, 0, PAGE_BYTES, False),
        (RmaCommand.GET, 1, 0, PAGE_BYTES, False),
        (RmaCommand.PUT, 0, PAGE_BYTES - 8 * k, 8 * k, False),
        (RmaCommand.GET, 1, PAGE_BYTES - LINE_BYTES * j, LINE_BYTES * j, False),
        (RmaCommand.IMMEDIATE_PUT, 0, PAGE_BYTES - 8, 8, False),        # the page's last quadword
        (RmaCommand.PUT, 0, PAGE_BYTES - 8, 8, False),
        # ending one quadword before the page's end, or inside the page: next 0
        (RmaCommand.PUT, 0, PAGE_BYTES - 8 * k - 8, 8 * k, False),
        (RmaCommand.GET, 1, PAGE_BYTES - LINE_BYTES * j - 8, LINE_BYTES * j, False),
        (RmaCommand.IMMEDIATE_PUT, 0, PAGE_BYTES - 16, 8, False),
        (RmaCommand.GET, 0, 8 * rng.randint(0, 200), 8 * rng.randint(1, 64), False),
    ]


def test_crossing_trains():
    rng = seed_rng()
    gates = Gates()
    pages = free_pages(rng)[1]
    init = rng.randbytes(MEM)
    expect_mem = bytearray(init)
    packets, expected = [], []
    ops = crossing_operations(rng)
    rng.shuffle(ops)
    for command, cache_line, offset, nbytes, crosses in ops:
        phys = [pages.pop() for _ in range((offset + nbytes - 1) // PAGE_BYTES + 1)]
        assert (len(phys) == 2) == crosses, (command, offset, nbytes)
        nlas = [gates.register(VPID, p) for p in phys]          # consecutive NLA pages
        start = nlas[0] + offset
        data = rng.randbytes(nbytes)
        packets += train(command, start, data, cache_line=cache_line)
        expected += expected_requests(VPID, start, nbytes, 1)
        for i in range(nbytes):                                 # the bytes, page by page
            page, at = divmod(offset + i, PAGE_BYTES)
            expect_mem[phys[page] + at] = data[i]

    dut = OneNode()
    mem = FlatMemory(init)
    host = Host(1, dut.node, rng, mem, gates, [], ready_p=0.7, reorder=True)
    source = StreamSource(dut.rsp_rx, rng=rng, idle=0.2)
    sinks = [StreamSink(dut.req_tx), StreamSink(dut.rsp_tx)]
    for p in packets:
        cw = unpack(NetHeader, p[0], ("command_words",))["command_words"]
        for i, w in enumerate(p):
            kind = NetBeatKind.HEADER if i == 0 else NetBeatKind.COMMAND if i <= cw else NetBeatKind.PAYLOAD
            source.put({"data": w, "kind": kind, "first": i == 0, "last": i == len(p) - 1})

    async def bench(ctx):
        clock = Clock(host, source, *sinks, limit=WATCHDOG)
        idle = 0
        while idle <= 400:
            await clock.tick(ctx)
            idle = 0 if host.busy or source.busy else idle + 1

    run_sim(dut, bench)
    assert host.requests == expected, [hex(w) for w in host.requests]
    assert not any(s.items for s in sinks), "the completer sent a network packet"
    assert mem.b == expect_mem, "memory differs: data outside the GATEs' pages or missing"


def test_single_page_sides():
    rng = seed_rng()
    gates = [Gates(), Gates()]
    pages = free_pages(rng)
    k, j, u = rng.randint(1, 63), rng.randint(1, 63), rng.randint(1, 64)
    put, get, imm = RmaCommand.PUT, RmaCommand.GET, RmaCommand.IMMEDIATE_PUT
    # (origin, its VPID, command, cache_line, offset in the page on both sides, units, target VPID)
    sides = [(0, 2, put, 1, 0, 64, 6), (1, 5, get, 1, 0, 64, 2),                 # full pages: next 1
             (0, 2, get, 0, PAGE_BYTES - 8 * k, k, 6),                           # ending at the page's end
             (1, 6, get, 1, PAGE_BYTES - LINE_BYTES * j, j, 5),
             (1, 5, put, 0, PAGE_BYTES - 8 * k, k, 2),
             (0, 6, put, 0, PAGE_BYTES - 8, 1, 2), (1, 2, get, 0, PAGE_BYTES - 8, 1, 6),  # the last quadword
             (0, 5, imm, 0, PAGE_BYTES - 8, 1, 6),
             (0, 2, put, 0, PAGE_BYTES - 8 * k - 8, k, 5),                       # one quadword before: next 0
             (1, 6, get, 1, PAGE_BYTES - LINE_BYTES * j - 8, j, 2),
             (1, 2, imm, 0, PAGE_BYTES - 16, 1, 5),
             (1, 5, put, 0, 8 * rng.randint(0, 511 - u), u, 2)]                  # inside the page
    ops, expected = [], [set(), set()]
    for origin, vpid, command, cache_line, offset, units, dst_vpid in sides:
        target, nbytes = 1 - origin, units * (LINE_BYTES if cache_line else 8)
        local = gates[origin].register(vpid, pages[origin].pop()) + offset
        remote = gates[target].register(dst_vpid, pages[target].pop()) + offset
        fields = {"command": command.value, "req_notify": 1, "cpl_notify": 1, "rsp_notify": 1,
                  "cache_line": cache_line, "vpid": vpid, "irq": 0}
        ops.append((origin, fields, descriptor(command=command, dst_node=target, dst_vpid=dst_vpid, local=local,
                                               remote=remote, units=units, payload=rng.getrandbits(64))))
        # put: the origin's requester reads, the target's completer writes; get: the target's responder
        # reads, the origin's completer writes; immediate put: the target's completer writes
        is_get = command == get
        if command != imm:
            expected[origin].update(expected_requests(vpid, local, nbytes, int(is_get)))
        expected[target].update(expected_requests(dst_vpid, remote, nbytes, int(not is_get)))
    assert {unpack(AtsMessage, w, ["translation_request.next"])["translation_request.next"]
            for e in expected for w in e} == {0, 1}

    _, hosts, shared = simulate(rng, [rng.randbytes(MEM) for _ in range(2)], gates, ops, ready_p=0.7, reorder=True)
    for n in range(2):
        # a page may be asked for again: the operations overlap, and a completer keeps one translation
        assert set(hosts[n].requests) == expected[n], (n, [hex(w) for w in hosts[n].requests])
        assert shared["counts"][n]["atu_fault"] == 0, shared["counts"][n]
