"""A board seen from a PC (``docs/board.md``): bring-up of its SerDes lanes and the driver's host.

* :class:`PhyLanes`: the lanes' registers (:mod:`rtl.board.phy_regs`) in the UART bridge's memory
  space above the host memory, read and written through :class:`sim.uart_bridge.UartBridgeHost`.
* :class:`BoardMemory` and :class:`BoardHost`: the host the driver (:mod:`sim.driver`) runs on, made
  of the bridge: CPU stores and reads of the NIC's device window, the CPU's accesses of the board's
  host memory (block RAM at ``HOST_MEMORY_BASE``), an allocator of its pages, and a clock
  (:class:`WallClock` on a real board, :class:`sim.uart_pins.SimClock` in cocotb).
* :class:`SerialTransport`: pyserial for a real board; and a command line::

    python -m sim.board --port /dev/ttyUSB1 status
    python -m sim.board --port /dev/ttyUSB1 prbs --pattern 31 --seconds 10 [--loopback]
    python -m sim.board --port /dev/ttyUSB1 link
    python -m sim.board --port /dev/ttyUSB1 --port /dev/ttyUSB3 demo

The same classes run in simulation on a cocotb UART transport (``sim/uart_pins.py``).

The board's host memory map: 64 KiB of block RAM at ``0x1F_1000 .. 0x20_0FFF``.  Its 15 pages below
2 MB are the allocator's; the page above is the start of the one GAT (base 2 MB, the ATU's GATs are
2 MB aligned): 512 GATEs, so the driver hands out NLA pages 1..511 only, and a translation of an NLA
page beyond reads a GATE outside the memory, which the memory answers ``DECERR``: the ATU faults it
(``MEMORY_ERROR``), never a wrong translation.
"""

import argparse
import asyncio
import time

from amaranth.lib import data

from rtl.board.formats import GAT_BASE, HOST_MEMORY, HOST_MEMORY_BASE
from rtl.board.phy_regs import STROBES, WORDS_PER_LANE, ControlWord, LaneWords
from rtl.config import ROOT, load

from .host import DeviceReads, MemWords
from .memory import KERNEL, PAGE
from .uart_bridge import BridgeTransport, UartBridgeHost

__all__ = ["PHY_BASE", "PhyLanes", "BoardMemory", "BoardHost", "WallClock", "SerialTransport", "board_topology",
           "board_demo", "main"]

PHY_BASE = HOST_MEMORY      # bytes: the PHY registers follow the host memory in the bridge's space
BAUD = 3_000_000
BOARD_CONFIG = ROOT / "configs" / "board_evn.toml"     # the ECP5-5G board's NIC (boards/ecp5_5g_evn.py)


class PhyLanes:
    """The lanes' registers on ``host`` (a :class:`UartBridgeHost` whose ``mem_size`` covers them).

    Parameters
    ----------
    host : UartBridgeHost
    lanes : int
    base : int
        Byte address of lane 0's word 0 in the bridge's memory space.
    """

    def __init__(self, host, *, lanes=2, base=PHY_BASE):
        self.host, self.lanes, self.base = host, lanes, base

    def _addr(self, lane, word):
        if not 0 <= lane < self.lanes:
            raise ValueError(f"lane must be between 0 and {self.lanes - 1}, not {lane}")
        return self.base + (lane * WORDS_PER_LANE + word) * 8

    async def status(self, lane):
        """``{field: value}`` of every named field of the lane's words (:class:`LaneWords`)."""
        layout = data.Layout.cast(LaneWords)
        raw = await self.host.mem_read(self._addr(lane, 0), layout.size // 8)
        words = layout.from_bits(int.from_bytes(raw, "little"))
        out = {}
        for name, _ in layout:
            word = words[name]
            for field, _ in data.Layout.cast(word.shape()):
                if not field.startswith("reserved_"):
                    value = word[field]
                    out[field] = value.value if hasattr(value, "value") else int(value)
        return out

    async def control(self, lane, **levels):
        """Set the lane's control levels (``mode``, ``pattern``, ``loopback``, ``tx_polarity``,
        ``rx_polarity``) and pulse the strobes named with a true value (``prbs_clear``, ``restart``);
        fields not named keep their value."""
        layout = data.Layout.cast(ControlWord)
        bad = sorted(set(levels) - {name for name, _ in layout if not name.startswith("reserved_")})
        if bad:
            raise ValueError(f"no control field {bad[0]!r}")
        now = layout.from_bits(await self.host.mem_read64(self._addr(lane, 0)))
        fields = {name: int(now[name].value if hasattr(now[name], "value") else now[name])
                  for name, _ in layout if not name.startswith("reserved_") and name not in STROBES}
        fields.update({k: int(v.value if hasattr(v, "value") else v) for k, v in levels.items()})
        word = layout.const(fields).as_bits()
        await self.host.mem_write64(self._addr(lane, 0), word)
        await self.host.flush()


def board_topology():
    """Two boards as a ring of two (:func:`sim.routing.ring`), cabled lane 0 to lane 0 and lane 1 to
    lane 1 (``docs/board.md``): board 1 numbers its ports ``+x`` 1, ``-x`` 0."""
    from .routing import ring
    return ring(k=2, ports={1: (1, 0)})


class BoardMemory:
    """The driver's allocator of the board's host memory (:class:`sim.memory.HostMemory`'s ``alloc``
    and ``free``; the data is on the board, reached by :class:`BoardHost`'s ``mem_*``).

    Pages of 4 KiB from ``base`` up to ``gat_base``, first fit; ``alloc(..., huge=True)`` is the GAT
    (once): its base ``gat_base`` and the ``gat_gates`` GATEs that fit above it; no 2 MiB page fits
    (``can_alloc(size, huge=True)`` is false for one, so the driver maps 4 KiB pages).  A page handed out
    again is zeroed before the next access of the board (:meth:`BoardHost.settle`): the driver expects
    fresh pages to be zero, as the operating system's are.  ``zeroed``: the memory is known to be all
    zero (a freshly configured board); otherwise every page is zeroed when first allocated.

    Raises ``MemoryError`` when the pages asked for are not free (how many are), ``ValueError`` for a
    size that is not positive or a GAT of another size.
    """

    def __init__(self, *, base=HOST_MEMORY_BASE, size=HOST_MEMORY, gat_base=GAT_BASE, zeroed=False):
        if base % PAGE or not base < gat_base < base + size:
            raise ValueError(f"the GAT at {gat_base:#x} must be inside the page-aligned memory at {base:#x}")
        self.base, self.size, self.gat_base = base, size, gat_base
        self.gat_gates = (base + size - gat_base) // 8
        self._owner = [None] * ((gat_base - base) // PAGE)
        self._gat = None
        self._dirty = set() if zeroed else set(range(len(self._owner)))
        self.to_zero = []               # (address, bytes) to zero before the next access

    @property
    def free_pages(self):
        return self._owner.count(None)

    def _free_run(self, pages):
        """Index of the first of ``pages`` consecutive free pages, or ``None``."""
        run = 0
        for k, o in enumerate(self._owner):
            run = run + 1 if o is None else 0
            if run == pages:
                return k - pages + 1
        return None

    def can_alloc(self, size, *, huge=False):
        """:meth:`alloc` of ``size`` bytes would succeed: with ``huge`` only the GAT, never a 2 MiB page."""
        if size <= 0:
            return False
        if huge:
            return size == 8 * self.gat_gates and self._gat is None
        return self._free_run(-(-size // PAGE)) is not None

    def alloc(self, size, *, owner=KERNEL, huge=False, zero=True):
        if size <= 0:
            raise ValueError(f"size must be positive, not {size}")
        if huge:
            if size != 8 * self.gat_gates:
                raise ValueError(f"the board's GAT holds {self.gat_gates} GATEs ({8 * self.gat_gates} bytes), "
                                 f"not {size} bytes")
            if self._gat is not None:
                raise MemoryError("the board's host memory holds one GAT, already allocated")
            self._gat = owner
            return self.gat_base
        pages = -(-size // PAGE)
        first = self._free_run(pages)
        if first is not None:
            for pn in range(first, first + pages):
                self._owner[pn] = owner
                if zero and pn in self._dirty:
                    self.to_zero.append((self.base + pn * PAGE, PAGE))
                self._dirty.add(pn)
            return self.base + first * PAGE
        raise MemoryError(f"{pages} consecutive pages of the board's host memory are not free "
                          f"({self.free_pages} of {len(self._owner)} pages free)")

    def free(self, base, size):
        first = (base - self.base) // PAGE
        pages = range(first, first + -(-size // PAGE))
        for pn in pages:                # all or nothing
            if not 0 <= pn < len(self._owner) or self._owner[pn] is None:
                raise ValueError(f"page {self.base + pn * PAGE:#x} is not allocated")
        for pn in pages:
            self._owner[pn] = None

    def owner(self, addr):
        if self.gat_base <= addr < self.base + self.size:
            return self._gat
        pn = (addr - self.base) // PAGE
        return self._owner[pn] if 0 <= pn < len(self._owner) else None


class BoardHost(DeviceReads, MemWords):
    """The host the driver runs on for one board: ``bridge`` (:class:`UartBridgeHost`), ``clock``
    (``now()`` in core cycles and ``async cycles(n)``: :class:`WallClock` or
    :class:`sim.uart_pins.SimClock`) and ``memory`` (:class:`BoardMemory`).

    It offers what the driver uses of :class:`sim.host.HostApi`: ``write``, ``write64``, ``read_raw``
    (and ``read``, ``read64``), ``mem_read``, ``mem_write``, ``mem_read64``, ``mem_write64`` (host
    physical addresses inside the board's memory; anything else is a ``ValueError``, never another
    address of the bridge's space), ``now``, ``cycles``, ``errors`` (posted stores answered with an
    error) and ``stats``.  Every call first zeroes the pages :class:`BoardMemory` handed out again.
    """

    def __init__(self, bridge, *, clock, memory=None):
        self.bridge, self.clock = bridge, clock
        self.memory = memory or BoardMemory()
        self.stats = {"cpu_writes": 0, "cpu_reads": 0, "mem_writes": 0, "mem_reads": 0}

    @property
    def errors(self):
        return self.bridge.errors

    def now(self):
        return self.clock.now()

    async def cycles(self, n):
        await self.clock.cycles(n)

    async def settle(self):
        """Zero the pages handed out again since the last call."""
        while self.memory.to_zero:
            addr, n = self.memory.to_zero.pop(0)
            await self.bridge.mem_write(self._offset(addr, n), bytes(n))

    def _offset(self, addr, nbytes):
        m = self.memory
        if not (m.base <= addr and addr + nbytes <= m.base + m.size):
            raise ValueError(f"{nbytes} bytes at {addr:#x} are not inside the board's host memory "
                             f"({m.base:#x} .. {m.base + m.size - 1:#x})")
        return addr - m.base

    async def write(self, addr, data):
        await self.settle()
        self.stats["cpu_writes"] += 1
        await self.bridge.write(addr, data)

    async def write64(self, addr, value):
        await self.settle()
        self.stats["cpu_writes"] += 1
        await self.bridge.write64(addr, value)

    async def read_raw(self, addr, nwords=1):
        await self.settle()
        self.stats["cpu_reads"] += 1
        return await self.bridge.read_raw(addr, nwords)

    async def mem_read(self, addr, nbytes):
        await self.settle()
        self.stats["mem_reads"] += 1
        return await self.bridge.mem_read(self._offset(addr, nbytes), nbytes)

    async def mem_write(self, addr, data):
        await self.settle()
        self.stats["mem_writes"] += 1
        await self.bridge.mem_write(self._offset(addr, len(data)), data)

    async def clear_memory(self):
        """Zero the whole host memory (a board that ran before) and forget what was handed out."""
        await self.bridge.mem_write(0, bytes(self.memory.size))
        await self.bridge.flush()
        self.memory = BoardMemory(base=self.memory.base, size=self.memory.size, gat_base=self.memory.gat_base,
                                  zeroed=True)


class WallClock:
    """A real board's time in core cycles of ``mhz``: what the driver's polling and time limits count."""

    def __init__(self, mhz):
        self.hz = mhz * 1e6

    def now(self):
        return round(time.monotonic() * self.hz)

    async def cycles(self, n):
        await asyncio.sleep(n / self.hz)


class SerialTransport(BridgeTransport):
    """The board's UART through pyserial (the FT2232H's second port, ``/dev/ttyUSB1`` on Linux)."""

    def __init__(self, port, *, baud=BAUD, timeout=2.0):
        import serial
        self.serial = serial.Serial(port, baud, timeout=timeout)

    async def send(self, data):
        self.serial.write(bytes(data))

    async def recv(self, n):
        got = self.serial.read(n)
        if len(got) != n:
            raise TimeoutError(f"{len(got)} of {n} bytes from the board before the timeout")
        return got


def _print_status(lane, s):
    print(f"lane {lane}: tx_ready {s['tx_ready']} rx_ready {s['rx_ready']} prbs_locked {s['rx_prbs_locked']} "
          f"retries {s['tx_retries']}/{s['rx_retries']} symbol_errors {s['rx_symbol_errors']} "
          f"framing_errors {s['rx_framing_errors']} realigns {s['rx_realigns']} "
          f"prbs {s['rx_prbs_errors']} errors / {s['rx_prbs_words']} words")


async def _bridge(port, baud):
    host = UartBridgeHost(SerialTransport(port, baud=baud), mem_size=2 * PHY_BASE)
    await host.resync()
    return host


async def _run(args):
    for port in args.port:
        if len(args.port) > 1:
            print(f"{port}:")
        await _lanes(args, PhyLanes(await _bridge(port, args.baud)))


async def _lanes(args, lanes):
    if args.command in ("prbs", "link"):
        for lane in range(lanes.lanes):
            await lanes.control(lane, mode=int(args.command == "prbs"),
                                pattern=int(getattr(args, "pattern", 7) == 31),
                                loopback=int(getattr(args, "loopback", False)))
    if args.command == "prbs":
        await asyncio.sleep(0.1)
        for lane in range(lanes.lanes):
            await lanes.control(lane, prbs_clear=1)
        time.sleep(args.seconds)
    for lane in range(lanes.lanes):
        s = await lanes.status(lane)
        _print_status(lane, s)
        if args.command == "prbs" and s["rx_prbs_words"]:
            print(f"lane {lane}: bit error rate <= {max(s['rx_prbs_errors'], 1) / (16 * s['rx_prbs_words']):.2e}")


async def board_demo(bridges, clocks, cfg, *, period_ns, revision=None, clear=True, poll, polls=40):
    """:func:`sim.demo.scenario` on two boards: ``bridges`` (:class:`UartBridgeHost`, board ``n`` is
    node ``n``), ``clocks`` (one per board: :class:`WallClock` or :class:`sim.uart_pins.SimClock`),
    ``cfg`` the bitstream's NIC configuration.  Puts both lanes of each board in link mode, zeroes its
    host memory (``clear``; a freshly configured board's is zero already), reads every lane's status
    until all are up, at most ``polls`` times with ``await poll()`` between (``RuntimeError`` naming
    the lanes that are not up), then runs the steps through the driver.  Returns the steps
    (:class:`sim.demo.Steps`) and the drivers."""
    from sim.demo import Steps, scenario
    from sim.driver.nic import Nic

    hosts, phys = [], [PhyLanes(bridge) for bridge in bridges]
    for bridge, clock, lanes in zip(bridges, clocks, phys, strict=True):
        for lane in range(lanes.lanes):
            await lanes.control(lane, mode=0, loopback=0)
        host = BoardHost(bridge, clock=clock, memory=BoardMemory(zeroed=not clear))
        if clear:
            await host.clear_memory()
        hosts.append(host)
    for attempt in range(polls):
        down = {}
        for n, lanes in enumerate(phys):
            for lane in range(lanes.lanes):
                s = await lanes.status(lane)
                if not (s["tx_ready"] and s["rx_ready"]):
                    down[n, lane] = s
        if not down:
            break
        if attempt + 1 == polls:
            raise RuntimeError("; ".join(f"board {n}: lane {lane} is not up ({s})" for (n, lane), s in down.items())
                               + "; see docs/board.md, bring-up")
        await poll()
    nics = [Nic(h, cfg, node=n, topology=board_topology(), revision=revision) for n, h in enumerate(hosts)]
    log = Steps(period_ns=period_ns)
    await scenario(nics, log, hosts[0].now, lock_vpids=3)
    return log, nics


async def _demo(args):
    """``make demo BOARD=...``: :func:`board_demo` on two boards, board ``n`` on ``--port`` ``n``."""
    from sim.demo import print_steps

    if len(args.port) != 2:
        raise SystemExit(f"demo needs two --port (board 0's and board 1's UART), not {len(args.port)}")
    cfg = load(args.config)
    mhz = args.core_mhz or cfg["system"]["clock_mhz"]
    bridges = [await _bridge(port, args.baud) for port in args.port]
    try:
        log, _ = await board_demo(bridges, [WallClock(mhz)] * 2, cfg, period_ns=1000 / mhz,
                                  poll=lambda: asyncio.sleep(0.05))
    except RuntimeError as e:
        raise SystemExit(str(e)) from None
    print(f"times: from the first CPU store to the result, {mhz} MHz cycles of wall-clock time "
          f"(the UART's operations included)\n")
    print_steps(log.records)


def main(argv=None):
    ap = argparse.ArgumentParser(description="The ECP5-5G boards over their UARTs: SerDes bring-up, the demo")
    ap.add_argument("--port", action="append", required=True, help="a board's UART (repeat for more boards)")
    ap.add_argument("--baud", type=int, default=BAUD)
    ap.add_argument("--config", default=BOARD_CONFIG, help="the bitstream's NIC configuration")
    ap.add_argument("--core-mhz", type=float, help="the bitstream's core clock (default: the configuration's)")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="every lane's state and counters")
    p = sub.add_parser("prbs", help="PRBS on every lane, then its error count")
    p.add_argument("--pattern", type=int, choices=(7, 31), default=31)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--loopback", action="store_true", help="the SerDes' internal loopback")
    sub.add_parser("link", help="every lane back to the link port's flits")
    sub.add_parser("demo", help="make demo's steps through the driver on two boards (two --port)")
    args = ap.parse_args(argv)
    asyncio.run(_demo(args) if args.command == "demo" else _run(args))


if __name__ == "__main__":
    main()
