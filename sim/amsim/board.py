"""Amaranth-simulator bus models of the board blocks (``rtl/board``): AXI4 over flat ports (a manager
that drives :class:`~rtl.board.HostMemory`, a subordinate that stands for the NIC's device window
behind :class:`~rtl.board.UartBridge`) and a UART pin model.  The flat ports are found through the
channel layouts of :mod:`rtl.common.axi` (the same walk ``flat_members`` makes), never by hand-written
names, and each channel is presented as a stream (``valid``, ``ready``, a ``payload`` view over the
flat signals), so the stream models of :mod:`sim.amsim.stream` drive and check it.
"""

from collections import deque

from amaranth.hdl import Cat
from amaranth.lib import data

from rtl.common.axi import AxiResp, _fields

from .clock import Clocked
from .stream import StreamSink, StreamSource

__all__ = ["FlatStream", "axi_streams", "AxiManager", "AxiSubordinate", "UartPin"]


class FlatStream:
    """One AXI channel of flat ports as a stream: ``valid``, ``ready`` and ``payload`` (a
    :class:`amaranth.lib.data.View` of the channel layout over the flat field signals)."""

    def __init__(self, component, prefix, ch, sig):
        layout = sig.members[ch].signature.members["payload"].shape
        names = [name for c, name, _, _ in _fields(sig) if c == ch and name not in ("valid", "ready")]
        self.valid = getattr(component, f"{prefix}_{ch}valid")
        self.ready = getattr(component, f"{prefix}_{ch}ready")
        self.payload = data.View(layout, Cat(*(getattr(component, f"{prefix}_{ch}{n}") for n in names)))


def axi_streams(component, prefix, sig):
    """``{channel: FlatStream}`` of the flat AXI port ``prefix`` of ``component`` (signature ``sig``,
    unflipped)."""
    return {ch: FlatStream(component, prefix, ch, sig) for ch in ("aw", "w", "b", "ar", "r")}


class _HoldSink(StreamSink):
    """A :class:`StreamSink` whose ``ready`` stays low while ``hold`` (a subordinate that never
    answers)."""
    hold = False

    def drive(self, ctx, now):
        super().drive(ctx, now)
        if self.hold:
            self._ready = False
            ctx.set(self.stream.ready, 0)


class AxiManager(Clocked):
    """An AXI4 manager on a subordinate's flat ports: queues bursts, collects B and R.

    AW, W and AR are :class:`StreamSource` (idle gaps with probability ``stall``), B and R
    :class:`StreamSink` (``ready`` low with probability ``stall``, the stream rules checked).  Write
    bursts send their AW and W beats independently, in queue order.

    Attributes
    ----------
    b : list of (id, resp)
    r : list of (id, data, resp, last)
    """

    def __init__(self, component, prefix, sig, *, rng, stall=0.0):
        s = axi_streams(component, prefix, sig)
        self.aw, self.w, self.ar = (StreamSource(s[c], rng=rng, idle=stall) for c in ("aw", "w", "ar"))
        self.bs, self.rs = (StreamSink(s[c], rng=rng, stall=stall) for c in ("b", "r"))
        self.models = [self.aw, self.w, self.ar, self.bs, self.rs]

    def write(self, addr, beats, *, id=0, size=3, burst=1, last_at=None):
        """Queue a write burst of ``beats`` ``[(data, strb)]``; WLAST on beat ``last_at`` (default the
        last one)."""
        last_at = len(beats) - 1 if last_at is None else last_at
        self.aw.put({"id": id, "addr": addr, "len": len(beats) - 1, "size": size, "burst": burst})
        for k, (d, strb) in enumerate(beats):
            self.w.put({"data": d, "strb": strb, "last": int(k == last_at)})

    def read(self, addr, length, *, id=0, size=3, burst=1):
        """Queue a read burst of ``length`` beats."""
        self.ar.put({"id": id, "addr": addr, "len": length - 1, "size": size, "burst": burst})

    @property
    def b(self):
        return [(int(p.id), AxiResp(p.resp)) for _, p in self.bs.items]

    @property
    def r(self):
        return [(int(p.id), int(p.data), AxiResp(p.resp), int(p.last)) for _, p in self.rs.items]

    def drive(self, ctx, now):
        for model in self.models:
            model.drive(ctx, now)

    def signals(self):
        return tuple(s for model in self.models for s in model.signals())

    def observe(self, now, values):
        k = 0
        for model in self.models:
            n = len(model.signals())
            model.observe(now, values[k:k + n])
            k += n


class AxiSubordinate(AxiManager):
    """An AXI4 subordinate on a manager's flat ports: a word memory (``words``, a dict) that stands for
    the NIC's device window.

    Bursts are INCR of 8-byte beats.  A write is applied ``write_delay`` cycles after its last beat has
    arrived (in AW order) and answered on B then, as a slow memory behind an interconnect does (a read
    that passes it reads the old data); a read is answered with its beats after a random delay.  Words in
    ``errors`` (word address -> AXI response) make the burst that touches them answer that response
    (a write then writes nothing).  ``hold_addr`` keeps AWREADY, WREADY and ARREADY low, ``hold_resp`` keeps
    B and R back: a subordinate that never answers.  The channel models check the stream rules of
    what the manager drives.

    Attributes
    ----------
    writes : list of (word address, [(data, strb)])
        Applied write bursts, in order.
    reads : list of (word address, beats)
    """

    def __init__(self, component, prefix, sig, *, rng, stall=0.0):
        s = axi_streams(component, prefix, sig)
        self.rng = rng
        self.awq, self.wq, self.arq = (_HoldSink(s[c], rng=rng, stall=stall) for c in ("aw", "w", "ar"))
        self.bsrc, self.rsrc = (StreamSource(s[c], rng=rng, idle=stall) for c in ("b", "r"))
        self.models = [self.awq, self.wq, self.arq, self.bsrc, self.rsrc]
        self.words = {}
        self.errors = {}
        self.writes, self.reads = [], []
        self.hold_resp = False
        self._beats = deque()               # W beats not yet matched to a burst
        self._due = deque()                 # (cycle, AWID, word, beats) of writes not applied yet
        self.write_delay = 0
        self._w_seen = 0

    @property
    def hold_addr(self):
        return self.awq.hold

    @hold_addr.setter
    def hold_addr(self, value):
        self.awq.hold = self.wq.hold = self.arq.hold = value

    def _resp(self, word, n):
        resps = [self.errors[w] for w in range(word, word + n) if w in self.errors]
        return resps[0] if resps else AxiResp.OKAY

    def drive(self, ctx, now):
        if not self.hold_resp:
            self._serve(now)
        super().drive(ctx, now)

    def _serve(self, now):
        for _, p in self.wq.items[self._w_seen:]:
            self._beats.append((int(p.data), int(p.strb), int(p.last)))
        self._w_seen = len(self.wq.items)
        while len(self.awq.items) > len(self.writes):
            _, aw = self.awq.items[len(self.writes)]
            n = int(aw.len) + 1
            if len(self._beats) < n:
                break
            beats = [self._beats.popleft() for _ in range(n)]
            self.writes.append((int(aw.addr) >> 3, [(d, strb) for d, strb, _ in beats]))
            self._due.append((now + self.write_delay, int(aw.id), int(aw.addr) >> 3, beats))
        while self._due and self._due[0][0] <= now:
            _, bid, word, beats = self._due.popleft()
            n = len(beats)
            resp = self._resp(word, n)
            if resp == AxiResp.OKAY:
                for k, (d, strb, _) in enumerate(beats):
                    old = self.words.get(word + k, 0)
                    mask = sum(0xFF << 8 * i for i in range(8) if strb >> i & 1)
                    self.words[word + k] = old & ~mask | d & mask
            if [last for _, _, last in beats] != [0] * (n - 1) + [1]:
                resp = AxiResp.SLVERR
            self.bsrc.put({"id": bid, "resp": resp})
        while len(self.arq.items) > len(self.reads):
            _, ar = self.arq.items[len(self.reads)]
            n, word = int(ar.len) + 1, int(ar.addr) >> 3
            self.reads.append((word, n))
            resp = self._resp(word, n)
            for k in range(n):
                d = self.words.get(word + k, 0) if resp == AxiResp.OKAY else 0
                self.rsrc.put({"id": int(ar.id), "data": d, "resp": resp, "last": int(k == n - 1)})


class UartPin(Clocked):
    """Both ends of a UART line at bit level, in cycles of ``divisor``: drives the DUT's receive pin
    ``rx`` from queued symbols and decodes the DUT's transmit pin ``tx`` (falling edge, then samples in
    the middle of each bit).

    :meth:`put` queues a byte (``stop=0`` sends a low stop bit, a framing error), :meth:`idle` a gap
    of high cycles, :meth:`glitch` a low pulse of some cycles.

    Attributes
    ----------
    received : list of int
        Bytes decoded from ``tx``.
    frame_errors : int
        Frames on ``tx`` whose stop bit was low.
    """

    def __init__(self, *, divisor, rx=None, tx=None):
        self.divisor, self.rx, self.tx = divisor, rx, tx
        self._levels = deque()              # pending rx levels, one per cycle
        self.received = []
        self.frame_errors = 0
        self._rx_bits = None                # cycles into the frame on tx, or None while idle
        self._rx_shift = 0

    def put(self, byte, *, stop=1):
        for bit in [0] + [byte >> i & 1 for i in range(8)] + [stop]:
            self._levels.extend([bit] * self.divisor)
        if not stop:                        # back to idle after a low stop bit
            self._levels.extend([1] * self.divisor)

    def idle(self, cycles):
        self._levels.extend([1] * cycles)

    def glitch(self, cycles):
        self._levels.extend([0] * cycles + [1] * self.divisor)

    @property
    def busy(self):
        return bool(self._levels)

    def drive(self, ctx, now):
        if self.rx is not None:
            ctx.set(self.rx, self._levels.popleft() if self._levels else 1)

    def signals(self):
        return () if self.tx is None else (self.tx,)

    def observe(self, now, values):
        if self.tx is None:
            return
        level, = values
        if self._rx_bits is None:
            if not level:
                self._rx_bits, self._rx_shift = 0, 0
            return
        self._rx_bits += 1
        t = self._rx_bits - self.divisor // 2
        if t > 0 and t % self.divisor == 0:
            bit = t // self.divisor             # 1..8 data, 9 stop
            if bit <= 8:
                self._rx_shift |= level << (bit - 1)
            else:
                if level:
                    self.received.append(self._rx_shift)
                else:
                    self.frame_errors += 1
                self._rx_bits = None
