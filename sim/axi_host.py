"""The host bus functional model for a DUT whose host side is AXI4: the CPU and its memory (cocotb).

:class:`AxiHostModel` offers :class:`sim.host.HostModel`'s Python API, so the driver (``sim/driver/``:
``Nic``, ``nic.velo``, ``nic.rma``, ``nic.atu``) runs on it unchanged.  It attaches to a DUT's flat
AXI4 ports (one clock ``clk``, synchronous active-high reset ``rst``, 64-bit data, 8 strobes, no
lock/cache/prot/qos/user signals; ``prefix`` in front of every name) through the bus models of
cocotbext-axi:

* **CPU** (``<prefix>s_axi_*``, the DUT's subordinate; a :class:`cocotbext.axi.AxiMaster`):
  :meth:`~AxiHostModel.write` sends a store of 1..64 bytes inside one 64-byte line as *one* burst
  (AWSIZE 8 bytes, INCR, one beat per 64-bit word the store touches, WSTRB selecting exactly the
  stored bytes: a 64-byte write-combined store is one burst of 8 beats).  Every store uses AWID 0, so
  stores reach the DUT in program order; :meth:`~AxiHostModel.write` returns at once, as HostModel's
  does, and a B response other than OKAY goes to :attr:`~AxiHostModel.errors`.  AXI orders nothing
  between its write and read channels, so :meth:`~AxiHostModel.read_raw` waits until every earlier
  store's B response has arrived before it issues its AR (how a CPU on AXI keeps a load behind the
  stores before it).  Reads use rotating ARIDs and may be outstanding together; RRESP OKAY, SLVERR and
  DECERR become :class:`~rtl.common.htax.HtaxStatus` OK, TARGET_ERROR and NO_TARGET (EXOKAY, which a
  plain read must not get, becomes MALFORMED and an error).
* **Memory** (``<prefix>m_axi_*``, the DUT's manager; cocotbext-axi's subordinate halves
  :class:`~cocotbext.axi.AxiSlaveRead` and :class:`~cocotbext.axi.AxiSlaveWrite` with our own burst
  handling, on :class:`sim.memory.HostMemory`).  A read burst is read from memory at its AR handshake
  (one :meth:`~sim.memory.HostMemory.device_read` per burst) and answered ``latency_cycles`` later
  (default: t_dm = 280 ns of table 3-1 at the configured clock) plus a random
  0..``jitter_cycles``: RVALID is first high in cycle ``a + latency`` when the AR handshake happened at
  the rising edge that starts cycle ``a``.  Responses leave in the order of their ARs, whatever their
  IDs, unless ``reorder`` (then when due, in order per ID) and ``interleave`` (beats of bursts due
  together alternate) ask for what an AXI interconnect may do; ``write_delay_cycles`` applies a write
  that long after its last beat, while reads go on.  A read that touches unallocated memory is
  answered with all its beats, RRESP SLVERR and zero data, and recorded in
  :attr:`~AxiHostModel.errors` (and in the memory's ``violations``).  A write burst is applied when
  its last beat has arrived, with its WSTRB bytes, as one
  :meth:`~sim.memory.HostMemory.device_write` (logged and ownership-checked; a refused write is a
  memory violation and still answered OKAY, as the posted write it is on HTAX); a write into the MSI
  page ``[msi_address, msi_address + 4096)`` is captured in :attr:`~AxiHostModel.interrupts` as
  ``(address, first data word)`` instead.  A burst that breaks a rule the model relies on is
  recorded in :attr:`~AxiHostModel.errors` and answered SLVERR: beats wider than the bus, FIXED or
  WRAP, crossing a 4 KiB boundary (nothing is read or written), WLAST on the wrong beat or strobes
  outside a beat's byte lanes (a write still applies its strobed bytes inside the lanes; beats are
  counted by AWLEN).
* **Interrupt line** (``<prefix>irq``, optional): each rising edge appends ``(None, cycle)`` to
  :attr:`~AxiHostModel.interrupts` (no address; the cycle of the edge), so MSI writes and line
  interrupts count alike for :meth:`~AxiHostModel.wait_interrupt`.
* **Stalls**: with ``stall_probability`` > 0 every one of the ten channels (five per port) drops its
  ``valid`` (sources) or ``ready`` (sinks) with that probability per cycle (cocotbext-axi pause
  generators, seeded from ``seed``).

It is event driven where cocotbext-axi allows: while the ports are idle and no stalls are asked for, no
Python runs per cycle (channel models wait for ``valid`` to rise or for work, a read response waits on
a timer); the pause generators, when on, run once per cycle each.

Compatibility: cocotbext-axi 0.1.28 predates cocotb 2 and calls four APIs that cocotb 2.1 deprecates
but still runs (``Task.kill``, ``setimmediatevalue``, ``Edge(signal)``, ``Event.set(data)`` /
``Event.data``).  Under ``PYTHONWARNINGS=error`` each warning would end the test, so importing this
module ignores exactly those four deprecation messages when they come from ``cocotbext.axi``
modules; anything else still fails.  cocotbext-axi logs every transfer at INFO: the model sets its
ports' loggers to WARNING.

Not provided, unlike :class:`~sim.host.HostModel`: the HTAX-level parts (``send``, ``send_beats``,
``source``, ``sink``, ``received``, ``arrivals``, ``sent_log``, ``route``, ``host_port``), the
write-combining split (``wc_split_probability``: an AXI store is always one burst;
``stats["wc_splits"]`` stays 0) and the per-channel
probabilities (``tx_ready_probability``, ``rx_gap_probability``: one ``stall_probability`` instead).
:meth:`AxiHostModel.queued` stands in for ``source.queued()``.  Of table 3-1's host timing only
``t_dm`` is modelled, as in HostModel (:attr:`AxiHostModel.timing` converts the rest).
"""

import heapq
import logging
import random

import cocotb
from cocotb.triggers import Event, First, RisingEdge, Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiBurstType, AxiBus, AxiMaster, AxiResp, AxiSlaveRead, AxiSlaveWrite

from rtl.common.htax import MAX_DATA_WORDS, HtaxStatus

from . import axi_compat  # noqa: F401  (cocotbext-axi's deprecation warnings, before any use)
from .host import MSI_WINDOW, HostApi, HostTimeout, HtaxResponseError
from .host_timing import HostTiming
from .memory import HostMemory

__all__ = ["AxiHostModel", "AXI_SIGNALS", "HtaxResponseError", "HostTimeout"]

BUS_BYTES = 8
#: the signals of each port, ``<prefix>s_axi_<name>`` and ``<prefix>m_axi_<name>``, all required
AXI_SIGNALS = ["awid", "awaddr", "awlen", "awsize", "awburst", "awvalid", "awready",
               "wdata", "wstrb", "wlast", "wvalid", "wready", "bid", "bresp", "bvalid", "bready",
               "arid", "araddr", "arlen", "arsize", "arburst", "arvalid", "arready",
               "rid", "rdata", "rresp", "rlast", "rvalid", "rready"]

_STATUS = {AxiResp.OKAY: HtaxStatus.OK, AxiResp.SLVERR: HtaxStatus.TARGET_ERROR,
           AxiResp.DECERR: HtaxStatus.NO_TARGET, AxiResp.EXOKAY: HtaxStatus.MALFORMED}
_BURSTS = {0: "FIXED", 1: "INCR", 2: "WRAP", 3: "3 (reserved)"}


def _stalls(rng, probability):
    """A cocotbext-axi pause generator: paused with ``probability`` in each cycle."""
    while True:
        yield rng.random() < probability


class _MemoryWrite(AxiSlaveWrite):
    """The write half of host memory on the DUT's ``m_axi``: one burst at a time, applied when its last
    beat has arrived (:meth:`AxiHostModel._write_burst`), then answered on B."""

    def __init__(self, host, bus, clock, reset):
        self._host = host
        self.busy = False               # an AW taken whose B is not queued yet
        super().__init__(bus, clock, reset)

    def _handle_reset(self, state):
        super()._handle_reset(state)
        if state:
            self.busy = False

    async def _process_write(self):
        while True:
            aw = await self.aw_channel.recv()
            self.busy = True
            beats = []
            for _ in range(int(aw.awlen) + 1):
                w = await self.w_channel.recv()
                beats.append((int(w.wdata), int(w.wstrb), bool(int(w.wlast))))
            if self._host.write_delay_cycles:       # the write reaches memory late, its B with it
                await self._host.cycles(self._host.write_delay_cycles)
            b = self.b_channel._transaction_obj()
            b.bid = int(aw.awid)
            b.bresp = self._host._write_burst(int(aw.awaddr), int(aw.awsize), int(aw.awburst), beats)
            await self.b_channel.send(b)
            self.busy = False


class _MemoryRead(AxiSlaveRead):
    """The read half of host memory on the DUT's ``m_axi``: reads memory at the AR handshake
    (:meth:`AxiHostModel._read_burst`) and hands the burst's beats to the R channel so that RVALID
    rises ``due`` cycles later; one timer wake-up per burst."""

    def __init__(self, host, bus, clock, reset):
        self._host = host
        self._due = []                  # heap of (cycle RVALID is due, AR number, [R transactions])
        self._seq = 0
        self._id_due = {}               # ARID -> the due cycle of its latest burst
        self._due_event = Event()
        self._last_due = 0
        self._respond_cr = None
        super().__init__(bus, clock, reset)
        self.r_channel.queue_occupancy_limit = -1       # whole bursts are queued at once

    def idle(self):
        return not self._due and self.r_channel.idle()

    def _handle_reset(self, state):
        super()._handle_reset(state)
        if state:
            if self._respond_cr is not None:
                self._respond_cr.cancel()
                self._respond_cr = None
            self._due.clear()
        elif self._respond_cr is None:
            self._respond_cr = cocotb.start_soon(self._respond())

    async def _process_read(self):
        host = self._host
        while True:
            ar = await self.ar_channel.recv()
            arrival = host.now()                # the AR moved at the edge that started this cycle
            resp, words = host._read_burst(int(ar.araddr), int(ar.arlen) + 1, int(ar.arsize), int(ar.arburst))
            due = arrival + host.latency_cycles
            if host.jitter_cycles:
                due += host.rng.randrange(host.jitter_cycles + 1)
            rid = int(ar.arid)
            # AR order, or (reorder) only the order of each ID, as AXI requires
            due = max(due, self._last_due if not host.reorder else self._id_due.get(rid, 0))
            self._last_due = max(self._last_due, due)
            self._id_due[rid] = due
            beats = []
            for i, word in enumerate(words):
                r = self.r_channel._transaction_obj()
                r.rid, r.rdata, r.rresp, r.rlast = rid, word, resp, i == len(words) - 1
                beats.append(r)
            self._seq += 1
            heapq.heappush(self._due, (due, self._seq, beats))
            self._due_event.set()

    async def _respond(self):
        period_ps = self._host.period_ns * 1000
        while True:
            if not self._due:
                self._due_event.clear()
                await self._due_event.wait()
                continue
            due = self._due[0][0]
            # queued in the middle of cycle due - 1, the R source drives RVALID after the edge that
            # starts cycle due (mid-cycle: no race with the source's own wake-up at an edge)
            wake = round((due - 0.5) * period_ps)
            now = round(get_sim_time("ps"))
            if wake > now:
                self._due_event.clear()
                await First(Timer(wake - now, "ps"), self._due_event.wait())
                continue
            ready = []
            while self._due and self._due[0][0] <= due:
                ready.append(heapq.heappop(self._due)[2])
            if self._host.interleave:       # the beats of bursts due together, alternating by burst
                busy = {}
                for beats in ready:         # (bursts of one ID stay whole and in order)
                    busy.setdefault(int(beats[0].rid), []).extend(beats)
                lanes = list(busy.values())
                while lanes:
                    for lane in list(lanes):
                        self.r_channel.send_nowait(lane.pop(0))
                        if not lane:
                            lanes.remove(lane)
            else:
                for beats in ready:
                    for r in beats:
                        self.r_channel.send_nowait(r)


class AxiHostModel(HostApi):
    """Host CPU + memory on a DUT's AXI4 host ports.

    Parameters
    ----------
    dut : cocotb handle of the top level
    cfg : rtl.config.Config
    prefix : str
        In front of every port name: ``""`` (``s_axi_awid``, ``m_axi_awid``, ``irq``) or ``"n0_"``
        (node 0 of a multi-node top).
    clk : cocotb handle of the clock (default ``dut.clk``)
    latency_cycles : int
        DMA read latency, AR handshake to RVALID (default ``[host] dma_read_latency_ns`` at the clock).
    jitter_cycles : int
        Random extra DMA read latency, 0..``jitter_cycles`` per burst (responses stay in AR order
        unless ``reorder``).
    reorder : bool
        Read responses leave when due, so a later read of another ID passes an earlier one (an AXI
        interconnect with several memories does); reads of one ID stay in order.
    interleave : bool
        The beats of read bursts of different IDs that are due together alternate on R.
    write_delay_cycles : int
        A write burst reaches memory, and its B leaves, this many cycles after its last beat, while
        reads go on (AXI orders nothing between reads and writes): a read that passes an earlier write
        to its address reads the old data.
    stall_probability : float
        Probability per cycle that each channel stalls (``valid`` or ``ready`` low), in [0, 1).
    seed : int
    memory : HostMemory (default: a new one)
    read_timeout_cycles : int
        A CPU read not answered within this many cycles raises :class:`HostTimeout`.

    Raises
    ------
    ValueError
        For a ``latency_cycles`` below 1, a negative ``jitter_cycles``, a ``stall_probability``
        outside [0, 1), a DUT without one of the :data:`AXI_SIGNALS` on either port, or data not
        64 bits wide.
    """

    def __init__(self, dut, *, cfg, prefix="", clk=None, latency_cycles=None, jitter_cycles=0,
                 stall_probability=0.0, seed=None, memory=None, read_timeout_cycles=20000, reorder=False,
                 interleave=False, write_delay_cycles=0):
        self.dut = dut
        self.cfg = cfg
        self.prefix = prefix
        self.clk = clk if clk is not None else dut.clk
        self.period_ns = cfg.cycle_ns
        self.timing = HostTiming.from_config(cfg)       # table 3-1, for converting port cycles (not applied)
        self.latency_cycles = (cfg.ns_to_cycles(cfg["host"]["dma_read_latency_ns"])
                               if latency_cycles is None else latency_cycles)
        if self.latency_cycles < 1:
            raise ValueError(f"latency_cycles must be at least 1, not {self.latency_cycles}")
        if jitter_cycles < 0:
            raise ValueError(f"jitter_cycles must not be negative, not {jitter_cycles}")
        if not 0 <= stall_probability < 1:
            raise ValueError(f"stall_probability must be in [0, 1), not {stall_probability}")
        self.jitter_cycles = jitter_cycles
        self.reorder, self.interleave = reorder, interleave
        if write_delay_cycles < 0:
            raise ValueError(f"write_delay_cycles must not be negative, not {write_delay_cycles}")
        self.write_delay_cycles = write_delay_cycles
        self.stall_probability = stall_probability
        self.rng = random.Random(seed)
        self.memory = memory or HostMemory(phys_addr_bits=cfg["system"]["phys_addr_bits"])
        self.msi_address = cfg["system"]["msi_address"]
        self.read_timeout_cycles = read_timeout_cycles

        self.interrupts = []
        self._errors = []
        self._stats = {"dma_reads": 0, "dma_writes": 0, "cpu_reads": 0, "cpu_writes": 0, "wc_splits": 0,
                       "beats_in": 0, "beats_out": 0, "irq_edges": 0}
        self._irq_event = Event()
        self._store_seq = 0
        self._stores_open = {}              # store number -> address, in issue order
        self._store_event = Event()
        self._reads_open = 0
        self._tasks = []

        missing = [f"{prefix}{port}_{name}" for port in ("s_axi", "m_axi") for name in AXI_SIGNALS
                   if getattr(dut, f"{prefix}{port}_{name}", None) is None]
        if missing:
            raise ValueError(f"the DUT lacks {len(missing)} of the AXI ports, the first is {missing[0]}")
        for port in ("s_axi", "m_axi"):
            width = len(getattr(dut, f"{prefix}{port}_wdata"))
            if width != 8 * BUS_BYTES:
                raise ValueError(f"{prefix}{port}_wdata must be {8 * BUS_BYTES} bits wide, not {width}")
            # cocotbext-axi logs every burst at INFO
            logging.getLogger(f"cocotb.{dut._name}.{prefix}{port}").setLevel(logging.WARNING)
        rst = getattr(dut, "rst", None)
        self._cpu = AxiMaster(AxiBus.from_prefix(dut, f"{prefix}s_axi"), self.clk, rst)
        mem_bus = AxiBus.from_prefix(dut, f"{prefix}m_axi")
        self._mem_write = _MemoryWrite(self, mem_bus.write, self.clk, rst)
        self._mem_read = _MemoryRead(self, mem_bus.read, self.clk, rst)
        self._irq = getattr(dut, f"{prefix}irq", None)

    @property
    def errors(self):
        """Rule violations and error responses, in the order found (a list a test may clear)."""
        return self._errors

    @property
    def stats(self):
        """Counts: ``cpu_writes`` (stores), ``cpu_reads``, ``dma_writes`` and ``dma_reads`` (bursts on
        ``m_axi``), ``beats_in`` / ``beats_out`` (data beats the host took / gave: W on ``m_axi`` and R
        on ``s_axi`` / R on ``m_axi`` and W on ``s_axi``), ``irq_edges``, ``wc_splits`` (always 0)."""
        return dict(self._stats)

    def _channels(self):
        w, r = self._cpu.write_if, self._cpu.read_if
        return [w.aw_channel, w.w_channel, w.b_channel, r.ar_channel, r.r_channel,
                self._mem_write.aw_channel, self._mem_write.w_channel, self._mem_write.b_channel,
                self._mem_read.ar_channel, self._mem_read.r_channel]

    # ------------------------------------------------------------------------------------------
    # life cycle
    async def start(self):
        """Start the stall generators and the interrupt line's watcher (the bus models run from
        construction and follow ``rst``)."""
        if self.stall_probability:
            for channel in self._channels():
                channel.set_pause_generator(_stalls(random.Random(self.rng.getrandbits(64)),
                                                    self.stall_probability))
        if self._irq is not None:
            self._tasks.append(cocotb.start_soon(self._watch_irq()))

    def stop(self):
        """Stop the clock, the watchers and the stall generators, and hold the bus models in reset
        (``valid`` and ``ready`` low)."""
        for t in self._tasks:
            t.cancel()
        self._tasks = []
        for channel in self._channels():
            channel.clear_pause_generator()
        for model in [self._cpu.write_if, self._cpu.read_if, self._mem_write, self._mem_read, *self._channels()]:
            model.assert_reset(True)

    def now(self):
        """The current clock cycle (cycle k starts at the k-th rising edge after time 0)."""
        return int(get_sim_time("ns") / self.period_ns + 1e-6)

    async def cycles(self, n):
        """Wait ``n`` clock cycles without per-cycle Python (a timer, then the next edge)."""
        if n > 1:
            await Timer(round((n - 1) * self.period_ns * 1000), "ps")
        await RisingEdge(self.clk)

    def queued(self):
        """CPU accesses not yet answered (stores without their B response, reads without data)."""
        return len(self._stores_open) + self._reads_open

    async def idle(self, timeout_cycles=100000):
        """Wait until no CPU access is open and host memory has answered every burst it has taken (bursts
        the DUT still holds are not seen)."""
        for _ in range(timeout_cycles // 16):
            mw = self._mem_write
            if (not self.queued() and not mw.busy and mw.aw_channel.empty() and mw.w_channel.empty()
                    and mw.b_channel.idle() and self._mem_read.idle() and self._mem_read.ar_channel.empty()):
                return
            await self.cycles(16)
        raise HostTimeout("host model did not become idle")

    # ------------------------------------------------------------------------------------------
    # CPU side
    async def write(self, addr, data):
        """A CPU store of 1..64 bytes inside one 64-byte line: one AXI burst, queued (returns at once)."""
        data = bytes(data)
        if not 1 <= len(data) <= 64 or addr // 64 != (addr + len(data) - 1) // 64:
            raise ValueError(f"a store of {len(data)} bytes at {addr:#x} does not fit one 64-byte line")
        seq = self._store_seq
        self._store_seq += 1
        self._stores_open[seq] = addr
        self._stats["cpu_writes"] += 1
        self._stats["beats_out"] += (addr + len(data) - 1) // BUS_BYTES - addr // BUS_BYTES + 1
        cocotb.start_soon(self._store(seq, addr, data))

    async def _store(self, seq, addr, data):
        rsp = await self._cpu.write(addr, data, awid=0)        # one ID: the stores stay in order
        del self._stores_open[seq]
        self._store_event.set()
        if rsp is not None and rsp.resp != AxiResp.OKAY:       # None: flushed by a reset
            self._errors.append(f"cycle {self.now()}: store of {len(data)} bytes at {addr:#x} answered "
                                f"{AxiResp(rsp.resp).name}")

    async def write64(self, addr, value):
        if addr % 8:
            raise ValueError(f"register address {addr:#x} is not 8-byte aligned")
        await self.write(addr, (value & (1 << 64) - 1).to_bytes(8, "little"))

    async def _after_stores(self, upto):
        """Wait until every store numbered below ``upto`` has its B response."""
        while self._stores_open and next(iter(self._stores_open)) < upto:
            self._store_event.clear()
            await self._store_event.wait()

    async def read_raw(self, addr, nwords=1):
        """Non-posted read of ``nwords`` 64-bit words, after every earlier store has completed; returns
        ``(status, words)``."""
        if addr % 8 or not 1 <= nwords <= MAX_DATA_WORDS or (addr % 64) // 8 + nwords > MAX_DATA_WORDS:
            raise ValueError(f"read of {nwords} words at {addr:#x} must be 8-byte aligned inside one line")
        upto = self._store_seq
        self._stats["cpu_reads"] += 1
        self._reads_open += 1

        async def access():
            await self._after_stores(upto)
            return await self._cpu.read(addr, BUS_BYTES * nwords)
        try:
            rsp = await with_timeout(access(), round(self.read_timeout_cycles * self.period_ns), "ns")
        except cocotb.triggers.SimTimeoutError:
            raise HostTimeout(f"no response to the read of {addr:#x} within {self.read_timeout_cycles} "
                              f"cycles") from None
        finally:
            self._reads_open -= 1
        if rsp is None:
            raise HostTimeout(f"the read of {addr:#x} was flushed by a reset")
        self._stats["beats_in"] += nwords
        resp = AxiResp(rsp.resp)
        if resp == AxiResp.EXOKAY:
            self._errors.append(f"cycle {self.now()}: read of {addr:#x} answered EXOKAY (not exclusive)")
        words = [int.from_bytes(rsp.data[i:i + BUS_BYTES], "little") for i in range(0, len(rsp.data), BUS_BYTES)]
        return _STATUS[resp], words

    async def _watch_irq(self):
        while True:
            await RisingEdge(self._irq)
            self._stats["irq_edges"] += 1
            self.interrupts.append((None, self.now()))
            self._irq_event.set()

    # ------------------------------------------------------------------------------------------
    # DUT -> host memory
    def _beat_addrs(self, what, addr, beats, size, burst):
        """The address of each beat of an INCR burst, or ``None`` after recording why the model cannot
        take the burst."""
        nbytes = 1 << size
        if nbytes > BUS_BYTES:
            reason = f"beats of {nbytes} bytes on a {BUS_BYTES}-byte bus"
        elif burst != AxiBurstType.INCR:
            reason = f"burst type {_BURSTS.get(burst, burst)} (host memory takes INCR bursts only)"
        elif addr % 4096 - addr % nbytes + beats * nbytes > 4096:
            reason = "crosses a 4 KiB boundary"
        else:
            aligned = addr - addr % nbytes
            return [addr] + [aligned + i * nbytes for i in range(1, beats)]
        self._errors.append(f"cycle {self.now()}: {what} burst of {beats} beats at {addr:#x}: {reason}")
        return None

    def _read_burst(self, addr, beats, size, burst):
        """The response to a read burst: ``(RRESP, [word per beat])``."""
        self._stats["dma_reads"] += 1
        self._stats["beats_out"] += beats
        addrs = self._beat_addrs("read", addr, beats, size, burst)
        if addrs is None:
            return AxiResp.SLVERR, [0] * beats
        lo, hi = addr - addr % BUS_BYTES, -(-(addrs[-1] + 1) // BUS_BYTES) * BUS_BYTES
        raw = self.memory.device_read(lo, hi - lo)
        if raw is None:
            self._errors.append(f"cycle {self.now()}: DMA read of unallocated memory at {addr:#x} "
                                f"({beats} beats)")
            return AxiResp.SLVERR, [0] * beats
        return AxiResp.OKAY, [int.from_bytes(raw[a - a % BUS_BYTES - lo:][:BUS_BYTES], "little") for a in addrs]

    def _write_burst(self, addr, size, burst, beats):
        """Apply a write burst of ``[(wdata, wstrb, wlast)]``; return BRESP."""
        self._stats["dma_writes"] += 1
        self._stats["beats_in"] += len(beats)
        lasts = [i for i, (_, _, last) in enumerate(beats) if last]
        resp = AxiResp.OKAY
        if lasts != [len(beats) - 1]:
            self._errors.append(f"cycle {self.now()}: write burst of {len(beats)} beats at {addr:#x} has "
                                f"WLAST on beats {lasts}")
            resp = AxiResp.SLVERR
        addrs = self._beat_addrs("write", addr, len(beats), size, burst)
        if addrs is None:
            return AxiResp.SLVERR
        if self.msi_address <= addr < self.msi_address + MSI_WINDOW:
            self.interrupts.append((addr, beats[0][0]))
            self._irq_event.set()
            return resp
        nbytes = 1 << size
        lo, hi = addr - addr % BUS_BYTES, -(-(addrs[-1] + 1) // BUS_BYTES) * BUS_BYTES
        buf, mask = bytearray(hi - lo), [False] * (hi - lo)
        for a, (data, strb, _) in zip(addrs, beats, strict=True):
            lanes = range(a % BUS_BYTES, (a - a % nbytes) % BUS_BYTES + nbytes)     # the beat's byte lanes
            if strb & ~sum(1 << lane for lane in lanes):
                self._errors.append(f"cycle {self.now()}: write beat at {a:#x} strobes {strb:#04x} outside "
                                    f"its lanes {lanes.start}..{lanes.stop - 1}")
                resp = AxiResp.SLVERR
            off = a - a % BUS_BYTES - lo
            for lane in lanes:
                if strb >> lane & 1:
                    buf[off + lane] = data >> 8 * lane & 0xFF
                    mask[off + lane] = True
        self.memory.device_write(lo, bytes(buf), mask)
        return resp
