"""A host-memory responder at an HTAX port, for Amaranth-simulator testbenches.

:class:`HtaxHost` plays the host side of a unit's HTAX port: it takes every packet the unit sends
(:class:`sim.amsim.htax.HtaxSink`), answers a READ from a Python memory after a random latency
(in order, or out of order with ``reorder``), applies a WRITE with its byte enables, and hands any
other packet (ATS messages, ...) to a callback; on the other direction
(:class:`sim.amsim.htax.HtaxSource`) it sends, between packets and in this order of precedence,
packets queued with :meth:`HtaxHost.send_now`, due read responses (a response passes a posted
write), packets scheduled with :meth:`HtaxHost.send_at` once due, and packets queued with
:meth:`HtaxHost.post` while the unit is ready for posted beats.
"""

from collections import deque

from rtl.common.htax import HtaxCmd, HtaxStatus, HtaxVC
from sim.htax_packet import HtaxPacket

from .clock import Clocked
from .htax import HtaxSink, HtaxSource, lane
from .stream import _check_p

__all__ = ["HtaxHost"]


class HtaxHost(Clocked):
    """The host behind an HTAX port: memory responder and packet sender.

    Parameters
    ----------
    tx : HtaxLinkInterface
        The link the unit sends on (the host takes from it).
    rx : HtaxLinkInterface
        The link into the unit (the host sends on it).
    memory : object
        ``memory.read(addr, size)`` returns ``size`` bytes, or ``None`` for an address that fails (the
        READ is answered with ``TARGET_ERROR`` and no data); ``memory.write(addr, data, mask)`` stores
        the bytes whose ``mask`` entry is 1.  :class:`sim.memory.HostMemory` fits.
    port : int
        The host's HTAX port: the ``src`` of its responses.
    rng : random.Random or None
        Generator of the latencies, stalls and posting gaps.
    latency : (int, int)
        A read response is due a uniform ``latency[0]..latency[1]`` cycles after the request's last beat.
    reorder : bool
        Among due responses send a random one; otherwise responses leave in request order.
    stall : float
        Probability of a cycle in which the host refuses the unit's beats (all VCs), in [0, 1).
    post : float
        Probability that the host sends a posted packet in a cycle in which it could, in (0, 1].
    on_packet : callable or None
        ``on_packet(host, packet)`` for a packet that is neither a READ nor a WRITE; without it such a
        packet raises ``AssertionError``.
    on_cycle : callable or None
        ``on_cycle(host, now)`` at the start of every cycle, before the host picks what to send.

    Attributes
    ----------
    accesses : list of (int, HtaxCmd, int, int)
        ``(cycle, cmd, addr, length)`` of every READ and WRITE, when its last beat arrived.
    now : int
        The cycle the host is in.
    """

    def __init__(self, tx, rx, memory, *, port, rng=None, latency=(4, 40), reorder=False, stall=0.0,
                 post=1.0, on_packet=None, on_cycle=None):
        if not 0 <= latency[0] <= latency[1]:
            raise ValueError(f"latency must be a range (low, high) with 0 <= low <= high, not {latency}")
        if not 0 < post <= 1:
            raise ValueError(f"post must be in (0, 1], not {post}")
        self.memory, self.port, self.rng = memory, port, rng
        self.latency, self.reorder, self.post_p = latency, reorder, post
        self.on_packet, self.on_cycle = on_packet, on_cycle
        self.sink = HtaxSink(tx, rng=rng, stall=_check_p("stall", stall), on_packet=self._handle)
        self.source = HtaxSource(rx, next_packet=self._next)
        self.rx = rx
        self.urgent = deque()       # sent first
        self.responses = []         # (due, seq, packet) of read responses
        self.later = deque()        # (due, packet), in order
        self.posted = deque()
        self.accesses = []
        self.now = 0
        self._seq = 0

    # -- what to send --------------------------------------------------------------------------
    def send_now(self, packet):
        """Send ``packet`` before anything else (at the next packet boundary)."""
        self.urgent.append(packet)

    def send_at(self, due, packet):
        """Send ``packet`` from cycle ``due`` on, after the packets scheduled before it."""
        self.later.append((due, packet))

    def post(self, packet):
        """Send the posted ``packet`` when nothing more urgent waits and the unit is ready for it."""
        self.posted.append(packet)

    @property
    def busy(self):
        """Something is queued, scheduled, being sent or partly received."""
        return bool(self.urgent or self.responses or self.later or self.posted
                    or self.source.busy or self.sink.busy)

    def _next(self, ctx, now):
        if self.urgent:
            return self.urgent.popleft()
        due = [r for r in self.responses if r[0] <= now]
        if due:
            pick = self.rng.choice(due) if self.reorder else min(due)
            self.responses.remove(pick)
            return pick[2]
        if self.later and self.later[0][0] <= now:
            return self.later.popleft()[1]
        if (self.posted and (self.post_p >= 1 or self.rng.random() < self.post_p)
                and lane(ctx.get(self.rx.ready), HtaxVC.POSTED)):
            return self.posted.popleft()
        return None

    # -- what arrives --------------------------------------------------------------------------
    def _handle(self, rec):
        p = rec.packet
        reason = p.malformed_reason()
        assert reason is None, f"cycle {rec.last_cycle}: malformed packet from the unit ({reason}): {p}"
        if p.cmd == HtaxCmd.READ:
            self.accesses.append((self.now, p.cmd, p.addr, p.length))
            raw = self.memory.read(p.addr, 8 * p.length)
            if raw is None:
                rsp = HtaxPacket(HtaxCmd.RESPONSE, src=self.port, dst=p.src, tag=p.tag, addr=p.addr,
                                 status=HtaxStatus.TARGET_ERROR)
            else:
                words = [int.from_bytes(raw[8 * i:8 * i + 8], "little") for i in range(p.length)]
                rsp = HtaxPacket(HtaxCmd.RESPONSE, src=self.port, dst=p.src, tag=p.tag, addr=p.addr,
                                 length=p.length, status=HtaxStatus.OK, data=words)
            lo, hi = self.latency
            due = self.now + (self.rng.randint(lo, hi) if self.rng is not None else lo)
            if not self.reorder:        # in order: never before an earlier read's answer
                due = max([due] + [r[0] for r in self.responses])
            self._seq += 1
            self.responses.append((due, self._seq, rsp))
        elif p.cmd == HtaxCmd.WRITE:
            self.accesses.append((self.now, p.cmd, p.addr, p.length))
            buf = b"".join(d.to_bytes(8, "little") for d in p.data)
            self.memory.write(p.addr, buf, [(p.byte_mask(i // 8) >> (i % 8)) & 1 for i in range(len(buf))])
        elif self.on_packet is not None:
            self.on_packet(self, p)
        else:
            raise AssertionError(f"cycle {rec.last_cycle}: the host cannot handle {p}")

    # -- the step ------------------------------------------------------------------------------
    def drive(self, ctx, now):
        self.now = now
        if self.on_cycle is not None:
            self.on_cycle(self, now)
        self.sink.drive(ctx, now)
        self.source.drive(ctx, now)

    def signals(self):
        return self.sink.signals() + self.source.signals()

    def observe(self, now, values):
        n = len(self.sink.signals())
        self.sink.observe(now, values[:n])
        self.source.observe(now, values[n:])
