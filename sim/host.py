"""The host bus functional model: the CPU and its memory on an HTAX port of a DUT (cocotb).

:class:`HostModel` attaches to a DUT's HTAX port through the link bus models of :mod:`sim.htax_bus`
(an :class:`~sim.htax_bus.HtaxSink` on the DUT's ``<port>__tx`` link, an
:class:`~sim.htax_bus.HtaxSource` in HyperTransport order on its ``<port>__rx`` link) and plays the host:

* **Memory** (:class:`sim.memory.HostMemory`): device READs are answered after ``latency_cycles``
  (default: t_dm = 280 ns of table 3-1 at the configured clock), optionally with random extra delay
  (``jitter_cycles``) that lets later reads overtake earlier ones (``reorder=True``); device WRITEs are
  applied with their byte enables, logged and ownership-checked.  A READ of unallocated memory is
  answered with status TARGET_ERROR and recorded as a violation.
* **CPU**: :meth:`write` (1..64-byte stores through a write-combining buffer that splits a store into
  two packets with probability ``wc_split_probability``, ch. 6.4.4 / fig. 6-5), :meth:`write64`,
  :meth:`read64`/:meth:`read_raw` (non-posted, split-phase with tags).
* **Interrupts**: WRITEs into the MSI page at ``msi_address`` are captured in :attr:`interrupts`.
* **Checking**: every packet from the DUT is checked against the HTAX rules, the link against the link
  rules (by the sink); violations go to :attr:`errors` (a test asserts it stays empty).

It is event driven: while the port is idle no Python runs per cycle (the receive side waits for
``valid`` to rise, the send side and the memory scheduler wait on events and timers); busy ports cost
one wake-up per beat.  Latency is exact: ``latency_cycles`` counts from the clock edge that moves the
READ's header to the edge where the RESPONSE's header is first offered (``valid`` high).

Of table 3-1's host timing only ``t_dm`` is modelled: CPU stores and reads reach the port at once, and
a device write has landed when its header moves.  :attr:`HostModel.timing`
(:class:`sim.host_timing.HostTiming`) holds the rest and converts port cycles into end-to-end
nanoseconds (``docs/driver.md``, "Timing").
"""

import heapq
import random
from collections import deque

import cocotb
from cocotb.triggers import Event, First, RisingEdge, Timer, with_timeout

from rtl.common.htax import MAX_DATA_WORDS, HtaxCmd, HtaxStatus

from .clock import start_clock
from .host_timing import HostTiming
from .htax_bus import HtaxSink, HtaxSource, Order
from .htax_packet import HtaxPacket, line_write_packet
from .memory import HostMemory

__all__ = ["HostModel", "HostApi", "DeviceReads", "MemWords", "HtaxResponseError", "HostTimeout"]

_TX_PIPELINE = 2    # cycles from a scheduled send to valid on the link (wake-up, then drive after an edge)
MSI_WINDOW = 4096


class HtaxResponseError(Exception):
    def __init__(self, status, addr):
        super().__init__(f"read of {addr:#x} answered with {HtaxStatus(status).name}")
        self.status = HtaxStatus(status)
        self.addr = addr


class HostTimeout(Exception):
    pass


class DeviceReads:
    """The CPU's reads of the device window on a host's own ``read_raw(addr, nwords) -> (status,
    words)``: :meth:`read` and :meth:`read64` raise :class:`HtaxResponseError` for a status that is
    not OK.  Shared by every host (:class:`HostApi`'s and :class:`sim.uart_bridge.UartBridgeHost`)."""

    async def read(self, addr, nbytes=8):
        status, words = await self.read_raw(addr, -(-nbytes // 8))
        if status != HtaxStatus.OK:
            raise HtaxResponseError(status, addr)
        return b"".join(w.to_bytes(8, "little") for w in words)[:nbytes]

    async def read64(self, addr):
        status, words = await self.read_raw(addr, 1)
        if status != HtaxStatus.OK:
            raise HtaxResponseError(status, addr)
        return words[0]


class MemWords:
    """The CPU's 64-bit accesses of host memory (little endian) on a host's own async ``mem_read(addr,
    nbytes)`` and ``mem_write(addr, data)``: the hosts whose memory is behind a bus
    (:class:`sim.uart_bridge.UartBridgeHost`, :class:`sim.board.BoardHost`)."""

    async def mem_read64(self, addr):
        return int.from_bytes(await self.mem_read(addr, 8), "little")

    async def mem_write64(self, addr, value):
        await self.mem_write(addr, (value & (1 << 64) - 1).to_bytes(8, "little"))


class HostApi(DeviceReads):
    """What every host model (:class:`HostModel`, :class:`sim.axi_host.AxiHostModel`) offers the same
    way: ``start_clock``, ``reset``, the CPU's accesses of host memory (``mem_read``, ``mem_write``,
    ``mem_read64``, ``mem_write64``: on :attr:`memory` at once, no bus traffic, as a CPU's cached
    accesses), and the CPU calls built on its own ``read_raw`` and interrupt
    capture: ``read``, ``read64``, ``wait_interrupt``.  The class using it provides ``dut``, ``clk``,
    ``period_ns``, ``_tasks`` (a list), ``read_raw(addr, nwords) -> (status, words)``, ``interrupts``
    (a list), ``_irq_event`` (set on each new interrupt) and ``memory`` (:class:`sim.memory.HostMemory`).

    The driver (:mod:`sim.driver`) reaches host memory only through the ``mem_*`` calls and allocates
    through ``memory.alloc``/``free``, so it runs unchanged on a board's host
    (:class:`sim.board.BoardHost`), whose memory is behind a UART."""

    async def mem_read(self, addr, nbytes):
        return self.memory.read(addr, nbytes)

    async def mem_write(self, addr, data):
        self.memory.write(addr, data)

    async def mem_read64(self, addr):
        return self.memory.read64(addr)

    async def mem_write64(self, addr, value):
        self.memory.write64(addr, value)

    def start_clock(self):
        """Start the DUT clock at the configured frequency (driven by the simulator: :mod:`sim.clock`)."""
        self._tasks.append(start_clock(self.clk, self.period_ns))

    async def reset(self, cycles=4):
        self.dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(self.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.clk)

    async def wait_interrupt(self, timeout_cycles=10000, count=1):
        """Wait until at least ``count`` interrupts have been captured; return the list."""
        async def wait():
            while len(self.interrupts) < count:
                self._irq_event.clear()
                await self._irq_event.wait()
        try:
            await with_timeout(wait(), round(timeout_cycles * self.period_ns), "ns")
        except cocotb.triggers.SimTimeoutError:
            raise HostTimeout(f"{len(self.interrupts)} of {count} interrupts within {timeout_cycles} "
                              f"cycles") from None
        return self.interrupts


class HostModel(HostApi):
    """Host CPU + memory on one HTAX port.

    Parameters
    ----------
    dut : cocotb handle of the top level
    cfg : rtl.config.Config
    port : str
        Prefix of the DUT's HTAX port signals (``"htax"`` -> ``htax__tx__valid`` ...).
    host_port : int
        HTAX port number of the host (the ``src`` of CPU requests, the ``dst`` the DUT answers to).
    route : callable(addr) -> int
        HTAX destination port of a CPU access to ``addr``.
    latency_cycles, jitter_cycles, reorder : DMA read service timing.
    wc_split_probability : float
        Probability that a store of more than 8 bytes leaves as two packets.
    tx_ready_probability : float
        Probability per cycle that the host accepts beats from the DUT (random backpressure).
    rx_gap_probability : float
        Probability of an idle cycle before each beat the host sends.
    seed : int
    memory : HostMemory (default: a new one)
    """

    def __init__(self, dut, *, cfg, port="htax", host_port=0, route=None, clk=None, latency_cycles=None,
                 jitter_cycles=0, reorder=False, wc_split_probability=None, tx_ready_probability=1.0,
                 rx_gap_probability=0.0, seed=None, memory=None, read_timeout_cycles=20000):
        self.dut = dut
        self.cfg = cfg
        self.clk = clk if clk is not None else dut.clk
        self.period_ns = cfg.cycle_ns
        self.timing = HostTiming.from_config(cfg)       # table 3-1, for converting port cycles (not applied)
        self.host_port = host_port
        self.route = route or (lambda addr: 1)
        self.latency_cycles = (cfg.ns_to_cycles(cfg["host"]["dma_read_latency_ns"])
                               if latency_cycles is None else latency_cycles)
        if self.latency_cycles < _TX_PIPELINE + 1:
            raise ValueError(f"latency_cycles must be at least {_TX_PIPELINE + 1}, not {self.latency_cycles}")
        self.jitter_cycles = jitter_cycles
        self.reorder = reorder
        self.wc_split_probability = (cfg["host"]["wc_split_probability"]
                                     if wc_split_probability is None else wc_split_probability)
        self.rng = random.Random(seed)
        self.memory = memory or HostMemory(phys_addr_bits=cfg["system"]["phys_addr_bits"])
        self.msi_address = cfg["system"]["msi_address"]
        self.read_timeout_cycles = read_timeout_cycles
        rst = getattr(dut, "rst", None)
        # DUT -> host: the DUT's tx link; host -> DUT: its rx link, in HyperTransport order.  The answers
        # to the device's DMA reads carry PassPW (HyperTransport copies it from the request; the NIC's
        # read engines set it), so they pass CPU stores the device is not accepting yet: a full RMA
        # command buffer stalls the CPU's next descriptor but never the reads that drain it (ch. 6.4.3);
        # like an HT credit link, a packet is offered only on a VC that was ready and withdrawn if the
        # sink did not take it, so a stalled store never holds the link.
        self.sink = HtaxSink(dut, f"{port}__tx", self.clk, rst, period_ns=self.period_ns,
                             ready=None if tx_ready_probability >= 1.0 else tx_ready_probability,
                             rng=self.rng, callback=self._on_record, name="host rx")
        self.source = HtaxSource(dut, f"{port}__rx", self.clk, rst, period_ns=self.period_ns, order=Order.HT,
                                 pass_pw=True, wait_ready=True, pause=rx_gap_probability or None, rng=self.rng,
                                 name="host tx")
        self.source.withdraw = True

        self.interrupts = []
        self._errors = []
        self.received = deque(maxlen=4096)      # recent packets from the DUT (for debugging and tests)
        self._stats = {"dma_reads": 0, "dma_writes": 0, "cpu_reads": 0, "cpu_writes": 0, "wc_splits": 0}
        self.arrivals = deque(maxlen=4096)      # (cycle the header moved, packet) from the DUT
        self.sent_log = self.source.log         # (cycle the header was first offered, header beat)

        self._sched = []                        # heap of (due cycle, seq, packet)
        self._sched_seq = 0
        self._sched_event = Event()
        self._last_due = 0
        self._free_tags = deque(range(32))
        self._tag_event = Event()
        self._outstanding = {}                  # tag -> [Event, packet or None, addr]
        self._irq_event = Event()
        self._tasks = []

    @property
    def errors(self):
        """Rule violations of the DUT's packets and of the link, in the order found (a list a test
        may clear)."""
        if self.sink.errors:
            self._errors += self.sink.errors
            self.sink.errors.clear()
        return self._errors

    @property
    def stats(self):
        return self._stats | {"beats_in": self.sink.beats, "beats_out": self.source.beats}

    # ------------------------------------------------------------------------------------------
    # life cycle
    async def start(self):
        """Drive idle values and start the model's coroutines."""
        self.source.start()
        self.sink.start()
        self._tasks.append(cocotb.start_soon(self._schedule()))

    def stop(self):
        for t in self._tasks:
            t.cancel()
        self._tasks = []
        self.source.stop()
        self.sink.stop()

    def now(self):
        """The current clock cycle (cycle k starts at the k-th rising edge after time 0)."""
        return self.source.now()

    async def cycles(self, n):
        """Wait ``n`` clock cycles without per-cycle Python (a timer, then the next edge)."""
        await self.source.cycles(n)

    # ------------------------------------------------------------------------------------------
    # CPU side
    async def write(self, addr, data):
        """A CPU store of 1..64 bytes inside one 64-byte line, through the write-combining buffer."""
        data = bytes(data)
        if not 1 <= len(data) <= 64 or addr // 64 != (addr + len(data) - 1) // 64:
            raise ValueError(f"a store of {len(data)} bytes at {addr:#x} does not fit one 64-byte line")
        parts = [(addr, data)]
        if len(data) > 8 and self.rng.random() < self.wc_split_probability:
            cut = self.rng.randrange(1, (len(data) + 7) // 8) * 8
            parts = [(addr, data[:cut]), (addr + cut, data[cut:])]
            self._stats["wc_splits"] += 1
        for a, d in parts:
            pkt = line_write_packet(a, d, src=self.host_port, dst=self.route(a))
            self._stats["cpu_writes"] += 1
            self.send(pkt)

    async def write64(self, addr, value):
        if addr % 8:
            raise ValueError(f"register address {addr:#x} is not 8-byte aligned")
        await self.write(addr, (value & (1 << 64) - 1).to_bytes(8, "little"))

    async def read_raw(self, addr, nwords=1):
        """Non-posted read of ``nwords`` 64-bit words; returns ``(status, words)``."""
        if addr % 8 or not 1 <= nwords <= MAX_DATA_WORDS or (addr % 64) // 8 + nwords > MAX_DATA_WORDS:
            raise ValueError(f"read of {nwords} words at {addr:#x} must be 8-byte aligned inside one line")
        while not self._free_tags:
            self._tag_event.clear()
            await self._tag_event.wait()
        tag = self._free_tags.popleft()
        done = Event()
        self._outstanding[tag] = [done, None, addr]
        self._stats["cpu_reads"] += 1
        self.send(HtaxPacket(HtaxCmd.READ, src=self.host_port, dst=self.route(addr), tag=tag, addr=addr,
                             length=nwords, first_be=0xFF, last_be=0xFF if nwords > 1 else 0))
        try:
            await with_timeout(done.wait(), round(self.read_timeout_cycles * self.period_ns), "ns")
        except cocotb.triggers.SimTimeoutError:
            raise HostTimeout(f"no response to the read of {addr:#x} (tag {tag}) within "
                              f"{self.read_timeout_cycles} cycles") from None
        rsp = self._outstanding.pop(tag)[1]
        self._free_tags.append(tag)
        self._tag_event.set()
        return rsp.status, list(rsp.data)

    def send(self, pkt):
        """Queue a raw :class:`HtaxPacket` towards the DUT (in HyperTransport order)."""
        self.source.send(pkt)

    def send_beats(self, beats, vc):
        """Queue raw beats (for malformed-packet tests)."""
        self.source.send(list(beats), vc=vc)

    def queued(self):
        """Packets the CPU side has queued that are not completely sent yet."""
        return self.source.queued()

    async def idle(self, timeout_cycles=100000):
        """Wait until nothing is queued, scheduled or outstanding."""
        for _ in range(timeout_cycles // 16):
            if self.source.idle() and not self._sched and not self._outstanding:
                return
            await self.cycles(16)
        raise HostTimeout("host model did not become idle")

    # ------------------------------------------------------------------------------------------
    # DUT -> host
    def _on_record(self, record):
        """A packet from the DUT (the sink has checked the link rules)."""
        pkt = record.packet
        if pkt is None:
            return                              # framing error, recorded by the sink
        self.received.append(pkt)
        self.arrivals.append((record.header_cycle, pkt))
        reason = pkt.malformed_reason()
        if reason is None and len(pkt.data) != pkt.data_beats:
            reason = f"{len(pkt.data)} data beats for length {pkt.length}"
        if reason is None and pkt.dst != self.host_port:
            reason = f"packet for port {pkt.dst} arrived at the host (port {self.host_port})"
        if reason is not None:
            self._errors.append(f"cycle {self.now()}: malformed {pkt.cmd!r}: {reason}")
            if pkt.cmd == HtaxCmd.READ:
                self._respond(pkt, HtaxStatus.MALFORMED, [], self.now() + self.latency_cycles)
            return
        if pkt.cmd == HtaxCmd.WRITE:
            self._on_write(pkt)
        elif pkt.cmd == HtaxCmd.READ:
            self._on_read(pkt)
        elif pkt.cmd == HtaxCmd.RESPONSE:
            entry = self._outstanding.get(pkt.tag)
            if entry is None or entry[1] is not None:
                self._errors.append(f"cycle {self.now()}: response with unexpected tag {pkt.tag}")
                return
            if pkt.addr != entry[2] & ~7:
                self._errors.append(f"cycle {self.now()}: response tag {pkt.tag} echoes address "
                                    f"{pkt.addr:#x}, the read was of {entry[2]:#x}")
            entry[1] = pkt
            entry[0].set()
        else:
            self._errors.append(f"cycle {self.now()}: the host does not take {pkt.cmd!r} packets")

    def _on_write(self, pkt):
        self._stats["dma_writes"] += 1
        buf = b"".join(d.to_bytes(8, "little") for d in pkt.data)
        mask = [bool((pkt.byte_mask(i // 8) >> (i % 8)) & 1) for i in range(len(buf))]
        if self.msi_address <= pkt.addr < self.msi_address + MSI_WINDOW:
            self.interrupts.append((pkt.addr, pkt.data[0] if pkt.data else 0))
            self._irq_event.set()
            return
        self.memory.device_write(pkt.addr, buf, mask)

    def _on_read(self, pkt):
        self._stats["dma_reads"] += 1
        arrival = self.now()
        due = arrival + self.latency_cycles - _TX_PIPELINE
        if self.jitter_cycles:
            due += self.rng.randrange(self.jitter_cycles + 1)
        if not self.reorder:
            due = max(due, self._last_due)
            self._last_due = due
        raw = self.memory.device_read(pkt.addr, 8 * pkt.length)
        if raw is None:
            self._respond(pkt, HtaxStatus.TARGET_ERROR, [], due)
        else:
            words = [int.from_bytes(raw[8 * i: 8 * i + 8], "little") for i in range(pkt.length)]
            self._respond(pkt, HtaxStatus.OK, words, due)

    def _respond(self, req, status, words, due):
        rsp = HtaxPacket(HtaxCmd.RESPONSE, src=self.host_port, dst=req.src, tag=req.tag, addr=req.addr & ~7,
                         length=len(words), first_be=req.first_be, last_be=req.last_be if words else 0,
                         status=status, data=words)
        self._sched_seq += 1
        heapq.heappush(self._sched, (due, self._sched_seq, rsp))
        self._sched_event.set()

    async def _schedule(self):
        while True:
            if not self._sched:
                self._sched_event.clear()
                await self._sched_event.wait()
                continue
            due = self._sched[0][0]
            now = self.now()
            if due > now + 1:
                # sleep into cycle due - 1 (or until an earlier response is scheduled)
                self._sched_event.clear()
                await First(Timer(round((due - now - 1) * self.period_ns * 1000), "ps"),
                            self._sched_event.wait())
                continue
            if due > now:
                await RisingEdge(self.clk)      # the edge that starts cycle `due`
            while self._sched and self._sched[0][0] <= self.now():
                _, _, rsp = heapq.heappop(self._sched)
                self.send(rsp)
