"""Bus models of one HTAX link direction (:mod:`rtl.common.htax`): source, sink and monitor (cocotb).

Modelled on cocotbext-axi's ``AxiStreamSource`` / ``AxiStreamSink`` / ``AxiStreamMonitor``: each is
built from ``(dut, prefix, clock, reset)``, where ``prefix`` names the link's signals
(``<prefix>__valid``, ``__payload``, ``__ready``, ``__ready2``), and moves whole packets.  For a unit
with an ``htax`` port, the unit's output link is ``"htax__tx"`` and its input ``"htax__rx"``; for the
switch, ``"ports__3__tx"`` is the link *into* switch port 3 and ``"ports__3__rx"`` the link out of it.
No testbench looks HTAX port names up itself.

* :class:`HtaxMonitor` watches a link, checks the link rules of ``docs/architecture.md`` (``valid`` and
  ``payload`` hold until the beat moves, packets framed by ``first``/``last`` on one VC and never
  interleaved, ``ready2`` implies ``ready`` and keeps its promise) and hands every packet it sees to
  a callback as a :class:`sim.bus.Record` whose ``packet`` is an :class:`HtaxPacket`.  Rule
  violations go to :attr:`HtaxMonitor.errors`.
* :class:`HtaxSink` is a monitor that also drives ``ready``/``ready2``: always ready, or random
  backpressure per VC (a probability, drawn one cycle ahead so that ``ready2`` can be promised), or a
  function of the cycle; it keeps its own ``ready2`` promises.
* :class:`HtaxSource` sends queued packets in one of three orders (:class:`Order`), with an optional
  pause generator (idle cycles between beats), and optionally commits to a VC that is not ready
  (``blind``: valid raised and held until the beat moves, allowed by the rules).

All three are event driven: an idle source waits on an event, an always-ready sink or a monitor waits
for ``valid`` to rise; a busy link costs one wake-up per cycle.  The handshake, the timing and the
stream rules are :mod:`sim.bus`'s; this module adds the per-VC lanes, the HTAX framing and the send
orders.
"""

from collections import deque

from rtl.common.htax import NUM_VCS, HtaxVC

from .bus import Record, StreamMonitor, StreamSink, StreamSource, Timing
from .htax_packet import HtaxPacket, HtaxProtocolError, beat_field

__all__ = ["HtaxBus", "HtaxRecord", "HtaxMonitor", "HtaxSink", "HtaxSource", "Order", "Timing", "may_pass"]

HtaxRecord = Record     # beats, header_cycle, last_cycle, packet (an HtaxPacket, or None on a framing error)


class HtaxBus:
    """The signals of one HTAX link direction: ``<prefix>__valid``, ``__payload``, ``__ready``,
    ``__ready2``."""

    def __init__(self, dut, prefix):
        self.prefix = prefix
        self.valid = getattr(dut, f"{prefix}__valid")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.ready2 = getattr(dut, f"{prefix}__ready2")


def may_pass(later, earlier, pass_pw=False):
    """HyperTransport ordering: a posted write may pass anything, a response may pass a non-posted
    request; nothing else passes a posted write, except a response with PassPW set (``pass_pw``)."""
    if later == HtaxVC.POSTED:
        return True
    if later == HtaxVC.RESPONSE and pass_pw:
        return True
    return later == HtaxVC.RESPONSE and earlier == HtaxVC.NONPOSTED


class Order:
    """The order in which :class:`HtaxSource` sends its queued packets."""
    FIFO = "fifo"   # as queued
    HT = "ht"       # the oldest packet whose VC is ready and that may pass every older one (may_pass)
    VC = "vc"       # one queue per VC; among the ready VCs' oldest packets, one chosen at random


class _HtaxFraming:
    """The HTAX framing of a packet's beats: ``first`` on the first beat only, one VC, ``last`` ends it."""

    def _lane(self, beat):
        return beat_field(beat, "vc")

    def _frame(self, cycle, part, beat):
        first = beat_field(beat, "first")
        if len(part) == 1:
            if not first:
                self._error(cycle, "packet does not start with a first beat")
        else:
            if first:
                self._error(cycle, "first beat inside a packet (interleaved packets?)")
            if beat_field(beat, "vc") != beat_field(part[0], "vc"):
                self._error(cycle, "VC changes inside a packet")
        return bool(beat_field(beat, "last"))

    def _decode(self, record):
        try:
            return HtaxPacket.from_beats(record.beats)
        except (HtaxProtocolError, ValueError) as e:
            self._error(record.last_cycle, f"framing: {e}")
            return None


class HtaxMonitor(_HtaxFraming, StreamMonitor):
    """Watches one HTAX link, checks its rules and reports every packet.

    Parameters
    ----------
    dut, prefix, clock, reset
        The link's signals are ``<prefix>__valid`` ... of ``dut`` (:class:`HtaxBus`).
    period_ns : float
        Clock period (cycle numbers in records).
    callback : callable(Record) or None
        Called for every complete packet; without one, packets collect in :attr:`queue`.
    timing : Timing
    name : str
        Used in error messages (default: ``prefix``).
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, callback=None, timing=Timing.READONLY,
                 name=None):
        super().__init__(HtaxBus(dut, prefix), clock, reset, period_ns=period_ns, callback=callback,
                         timing=timing, name=name or prefix)


class HtaxSink(_HtaxFraming, StreamSink):
    """Receives packets on one HTAX link: drives ``ready``/``ready2`` (per VC), checks the link rules.

    Parameters
    ----------
    ready : None, float or callable(cycle) -> int
        ``None``: always ready (and ``ready2`` promised) on every VC; a float: each VC ready with that
        probability per cycle, ``ready2`` promised where the next cycle is ready too; a callable: the
        4-bit ready mask of a cycle.
    ready2 : None or callable(cycle, ready) -> int
        With a callable ``ready``: the ``ready2`` mask of a cycle; the sink keeps its promises.
    Other parameters as :class:`HtaxMonitor` and :class:`sim.bus.StreamSink`.
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, ready=None, ready2=None, rng=None,
                 callback=None, timing=Timing.READONLY, name=None):
        super().__init__(HtaxBus(dut, prefix), clock, reset, lanes=NUM_VCS, period_ns=period_ns, ready=ready,
                         ready2=ready2, rng=rng, callback=callback, timing=timing, name=name or prefix)


class HtaxSource(StreamSource):
    """Sends packets on one HTAX link.

    Parameters
    ----------
    dut, prefix, clock, reset
        The link's signals (:class:`HtaxBus`).
    period_ns : float
    order : str
        :class:`Order`: ``FIFO`` (default), ``HT`` or ``VC``.
    pause : None, float or callable() -> bool
        An idle cycle before a beat (:class:`sim.bus.StreamSource`).
    blind : float
        With :attr:`Order.VC`: probability of committing to a VC that is not ready when no queued VC
        is (``valid`` raised and held until the beat moves).
    pass_pw : bool
        With ``HT``: responses carry HyperTransport's PassPW bit, so they may pass posted writes.
    wait_ready : bool
        With ``FIFO``/``HT``: raise ``valid`` only for a VC that was ready (default ``False``: offer the
        chosen packet and hold it).
    rng, timing, on_header, fetch
        As :class:`sim.bus.StreamSource`.
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, order=Order.FIFO, pause=None, blind=0.0,
                 wait_ready=False, pass_pw=False, rng=None, timing=Timing.READONLY, on_header=None, fetch=None,
                 name=None):
        if order not in (Order.FIFO, Order.HT, Order.VC):
            raise ValueError(f"order must be one of 'fifo', 'ht', 'vc', not {order!r}")
        super().__init__(HtaxBus(dut, prefix), clock, reset, period_ns=period_ns, pause=pause, rng=rng,
                         timing=timing, on_header=on_header, fetch=fetch, name=name or prefix)
        self.order = order
        self.blind = blind
        self.wait_ready = wait_ready
        self.pass_pw = pass_pw
        self._vcq = [deque() for _ in range(NUM_VCS)]  # per VC: VC order
        self._picked_at = 0                             # the queue index of the packet last picked

    def _item(self, pkt, tag, vc=None):
        """``(vc, beats, tag)`` for an :class:`HtaxPacket`, or a list of integer beats with ``vc``
        (default: the first beat's)."""
        if isinstance(pkt, HtaxPacket):
            beats, vc = pkt.beats(), pkt.vc
        else:
            beats = list(pkt)
            if not beats:
                raise ValueError("a packet has at least one beat")
            vc = beat_field(beats[0], "vc") if vc is None else vc
        return HtaxVC(int(getattr(vc, "value", vc))).value, beats, tag

    def send(self, pkt, *, vc=None, tag=None):
        """Queue a packet: an :class:`HtaxPacket`, or a list of integer beats with ``vc`` (default: the
        first beat's).  Returns at once; ``tag`` is handed to ``on_header``."""
        super().send(pkt, vc=vc, tag=tag)

    def _enqueue(self, item):
        if self.order == Order.VC:
            self._vcq[item[0]].append(item)
        else:
            self._queue.append(item)

    def queued(self, vc=None):
        """Packets waiting to be started (of ``vc`` only), or, without ``vc``, not yet completely sent."""
        if vc is None:
            return self.queued_packets
        vc = int(getattr(vc, "value", vc))
        if self.order == Order.VC:
            return len(self._vcq[vc])
        return sum(1 for item in self._queue if item[0] == vc)

    def _has_work(self):
        return super()._has_work() or any(self._vcq)

    def _pick(self, ready):
        self._picked_at = 0
        if self.order == Order.VC:
            nonempty = [v for v in range(NUM_VCS) if self._vcq[v]]
            ok = [v for v in nonempty if (ready >> v) & 1]
            if not ok and self.blind and nonempty and self.rng.random() < self.blind:
                ok = nonempty
            return self._vcq[self.rng.choice(ok)].popleft() if ok else None
        if not self._queue:
            return self._fetched()
        i = 0
        if self.order == Order.HT:
            for k, (vc, _, _) in enumerate(self._queue):
                if (ready >> vc) & 1 and all(may_pass(HtaxVC(vc), HtaxVC(e), self.pass_pw)
                                             for e, _, _ in list(self._queue)[:k]):
                    i = k
                    break
        if self.wait_ready and not (ready >> self._queue[i][0]) & 1:
            return None
        item = self._queue[i]
        del self._queue[i]
        self._picked_at = i
        return item

    def _requeue(self, item):
        if self.order == Order.VC:
            self._vcq[item[0]].appendleft(item)
        else:
            self._queue.insert(self._picked_at, item)
