"""Bus models of the network stream (:mod:`rtl.common.net`): source, sink and monitor (cocotb).

The stream is an ``amaranth.lib.stream`` of :class:`~rtl.common.net.NetBeat`: ``valid``, ``ready`` and a
68-bit ``payload`` (64-bit data, the beat's ``kind``, ``first``, ``last``).  A packet is one HEADER beat
(the network header), ``command_words`` COMMAND beats and ``payload_words`` PAYLOAD beats, the two
counts taken from the header, on every stream of the path: unit, network port, crossbar, link port
(``docs/network.md``).  The models are built from ``(dut, prefix, clock, reset)``, ``prefix`` naming
the stream's signals (``<prefix>__valid``, ``__payload``, ``__ready``; for the link port's virtual
channel 1, ``"tx__1"``), and move whole packets:

* :class:`NetStreamSource` sends a packet given as its list of 64-bit words (kinds, ``first`` and
  ``last`` from the header) or as raw :func:`net_beat` integers (for malformed packets), with an
  optional pause generator.
* :class:`NetStreamMonitor` checks the stream rules and the framing (``first`` on the header only,
  kinds in order, ``last`` exactly where the header's lengths end the packet) and reports every packet
  as a :class:`sim.bus.Record` whose ``packet`` is its list of words; :class:`NetStreamSink` also drives
  ``ready`` (always, with a probability per cycle, or as a function of the cycle).

Event driven, like every model of :mod:`sim.bus`.
"""

from rtl.common.net import MAX_PAYLOAD_WORDS, NetBeat, NetBeatKind, NetHeader

from .bus import StreamMonitor, StreamSink, StreamSource, Timing
from .layout import fields, pack

__all__ = ["NetStreamBus", "NetStreamMonitor", "NetStreamSink", "NetStreamSource", "net_beat",
           "beat_tuple", "packet_beats", "packet_length", "HEADER", "COMMAND", "PAYLOAD", "Timing"]

HEADER, COMMAND, PAYLOAD = NetBeatKind.HEADER.value, NetBeatKind.COMMAND.value, NetBeatKind.PAYLOAD.value
_B = fields(NetBeat)
_H = fields(NetHeader)


def _get(word, f):
    return (word >> f[0]) & ((1 << f[1]) - 1)


def net_beat(data, kind, first, last):
    """A :class:`NetBeat` as the integer on the ``payload`` signal."""
    return pack(NetBeat, {"data": data, "kind": kind, "first": first, "last": last})


def beat_tuple(beat):
    """``(data, kind, first, last)`` of a payload integer."""
    return tuple(_get(beat, _B[n]) for n in ("data", "kind", "first", "last"))


def packet_length(header):
    """Beats of the packet whose network header word is ``header`` (payload words above 8 count as 8,
    as the link and the network port clamp them)."""
    return 1 + _get(header, _H["command_words"]) + min(_get(header, _H["payload_words"]), MAX_PAYLOAD_WORDS)


def _kinds(header):
    return [HEADER] + [COMMAND] * _get(header, _H["command_words"]) + [PAYLOAD] * MAX_PAYLOAD_WORDS


def packet_beats(words):
    """The payload integers of a well-formed packet given as its words (header first)."""
    n = len(words)
    kinds = _kinds(words[0])
    return [net_beat(w, kinds[i] if i < len(kinds) else PAYLOAD, int(i == 0), int(i == n - 1))
            for i, w in enumerate(words)]


class NetStreamBus:
    """The signals of one stream: ``<prefix>__valid``, ``__payload``, ``__ready``."""

    ready2 = None

    def __init__(self, dut, prefix):
        self.prefix = prefix
        self.valid = getattr(dut, f"{prefix}__valid")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.ready = getattr(dut, f"{prefix}__ready")


class _NetFraming:
    """The network packet's framing, checked beat by beat (``check_framing``)."""

    check_framing = True

    def _frame(self, cycle, part, beat):
        data, kind, first, last = beat_tuple(beat)
        if not self.check_framing:
            return bool(last)
        i = len(part) - 1
        hdr = beat_tuple(part[0])[0]
        n = packet_length(hdr)
        want = _kinds(hdr)[i]
        if first != (i == 0):
            self._error(cycle, f"beat {i} has first = {first}")
        if kind != want:
            self._error(cycle, f"beat {i} of kind {kind}, the header says {want}")
        if bool(last) != (i == n - 1):
            self._error(cycle, f"last = {last} on beat {i} of a {n}-beat packet")
        return bool(last) or i == n - 1

    def _decode(self, record):
        return [beat_tuple(b)[0] for b in record.beats]


class NetStreamMonitor(_NetFraming, StreamMonitor):
    """Watches one stream, checks the stream rules and the framing, reports every packet.

    Parameters
    ----------
    dut, prefix, clock, reset
        The stream's signals (:class:`NetStreamBus`).
    period_ns : float
    callback : callable(Record) or None
        Called for every packet (``record.packet``: its words); without one, packets collect in
        :attr:`queue` (:meth:`recv`).
    check_framing : bool
        Check kinds, ``first`` and ``last`` against the header (default); without, ``last`` alone ends a
        packet.
    timing : Timing
    name : str
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, callback=None, check_framing=True,
                 timing=Timing.READONLY, name=None):
        super().__init__(NetStreamBus(dut, prefix), clock, reset, period_ns=period_ns, callback=callback,
                         timing=timing, name=name or prefix)
        self.check_framing = check_framing


class NetStreamSink(_NetFraming, StreamSink):
    """Receives packets on one stream: drives ``ready``, checks the rules and the framing.

    Parameters
    ----------
    ready : None, float or callable(cycle) -> int
        ``None``: always ready; a float: ready with that probability per cycle; a callable: ``ready`` of
        a cycle (0 or 1).
    Other parameters as :class:`NetStreamMonitor`.
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, ready=None, rng=None, callback=None,
                 check_framing=True, timing=Timing.READONLY, name=None):
        super().__init__(NetStreamBus(dut, prefix), clock, reset, lanes=1, period_ns=period_ns, ready=ready,
                         rng=rng, callback=callback, timing=timing, name=name or prefix)
        self.check_framing = check_framing


class NetStreamSource(StreamSource):
    """Sends packets on one stream.

    Parameters
    ----------
    dut, prefix, clock, reset
        The stream's signals (:class:`NetStreamBus`).
    period_ns : float
    pause : None, float or callable() -> bool
        An idle cycle before a beat (never inside a held beat).
    rng, timing, on_header, fetch
        As :class:`sim.bus.StreamSource`.
    """

    def __init__(self, dut, prefix, clock, reset=None, *, period_ns, pause=None, rng=None,
                 timing=Timing.READONLY, on_header=None, fetch=None, name=None):
        super().__init__(NetStreamBus(dut, prefix), clock, reset, period_ns=period_ns, pause=pause, rng=rng,
                         timing=timing, on_header=on_header, fetch=fetch, name=name or prefix)

    def _item(self, pkt, tag, raw=False):
        pkt = list(pkt)
        if not pkt:
            raise ValueError("a packet has at least one beat")
        return 0, pkt if raw else packet_beats(pkt), tag

    def send(self, words, *, tag=None):
        """Queue a well-formed packet given as its words (header first)."""
        super().send(words, tag=tag)

    def send_raw(self, beats, *, tag=None):
        """Queue payload integers as they are (:func:`net_beat`), for malformed packets."""
        super().send(beats, tag=tag, raw=True)
