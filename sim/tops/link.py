"""Link-port tops: two link ports side by side (:class:`LinkPair`, PHY sides open for a testbench
channel), and a loop of two ports through an error-injecting channel with traffic generators and
checkers (:class:`LinkLoop`).

Not part of the NIC.  The loop lets the long runs (``make soak``, ``bench/link.py``) go without per-cycle
Python: every packet (network header, command and payload words) is a function of its VC and its
number (:func:`_beat`), so a checker recomputes
what it must receive and counts mismatches; the channel draws its errors from xorshift generators.
The Python channel model (:mod:`sim.channel`) covers the flit-level error kinds; this one injects bit
flips, dropped phits and burst errors, with probabilities given as 32-bit thresholds on ports.
"""

from amaranth.hdl import Cat, Const, DomainRenamer, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import MAX_PACKET_BEATS, NetBeatKind, NetHeader, NetStreamSignature, NetUnit
from rtl.link.link_port import COUNTERS, LinkPort
from rtl.link.params import PhitCtl

__all__ = ["LinkPair", "LinkLoop", "LfsrChannel", "TrafficGen", "TrafficCheck", "attach_traffic",
           "traffic_members"]

_K = 0x9E3779B97F4A7C15


def _xorshift(m, state):
    """Advance a 32-bit xorshift generator every cycle; return its current value."""
    x1 = Signal(32)
    x2 = Signal(32)
    x3 = Signal(32)
    m.d.comb += [x1.eq(state ^ (state << 13)[:32]), x2.eq(x1 ^ (x1 >> 17)), x3.eq(x2 ^ (x2 << 5)[:32])]
    m.d.sync += state.eq(x3)
    return state


def _structure(pkt):
    """(command_words field, payload_words) of packet ``pkt``: 0..3 and 0..8."""
    h = (pkt * 0x2545F491)[:32]
    pw = Mux(h[8:12] > 8, h[8:12] - 8, h[8:12])
    return h[4:6], pw[:4]


def _beat(m, vc, pkt, idx, cw, pw, fixed_cw, fixed_pw, fixed):
    """Data and framing of beat ``idx`` of packet ``pkt`` on ``vc``: network header, ``cw`` command
    words, ``pw`` payload words."""
    cw = Mux(fixed, fixed_cw, cw)
    pw = Mux(fixed, fixed_pw, pw)
    length = 1 + cw + pw
    word = Cat(idx[:4], Const(vc, 4), pkt[:32], Const(0, 24)) ^ (pkt * _K)[:64]
    header = Signal(NetHeader)
    m.d.comb += [header.dst_node.eq((pkt * _K)[38:54] ^ vc), header.unit.eq(NetUnit.VELO),
                 header.command_words.eq(cw), header.payload_words.eq(pw), header.hops.eq((pkt * _K)[54:60]),
                 header.src_node.eq(pkt[:16]), header.specific.eq((pkt * _K)[:22])]
    data = Mux(idx == 0, header.as_value(), word)
    kind = Mux(idx == 0, NetBeatKind.HEADER, Mux(idx < 1 + cw, NetBeatKind.COMMAND, NetBeatKind.PAYLOAD))
    return data, kind, idx == 0, idx == length - 1


class LfsrChannel(wiring.Component):
    """One direction: ``latency`` cycles of delay with random bit flips, lost phits and bursts.

    Thresholds are probabilities times 2**32 per phit.  ``injected`` counts error events.

    Members
    -------
    i_phit : In(phit_bits) ; i_ctl : In(PhitCtl)
        The sending port's phit.
    o_phit : Out(phit_bits) ; o_ctl : Out(PhitCtl)
        The phit ``latency`` cycles later, with the errors injected.
    flip, drop, burst : In(32)
        Per-phit probabilities (times 2**32) of a bit flip, a lost phit, a burst of errors.
    injected : Out(32)
        Error events injected.
    """

    def __init__(self, *, phit_bits, latency, seed):
        self.phit_bits, self.latency, self.seed = phit_bits, latency, seed
        super().__init__({
            "i_phit": In(phit_bits), "i_ctl": In(PhitCtl), "o_phit": Out(phit_bits), "o_ctl": Out(PhitCtl),
            "flip": In(32), "drop": In(32), "burst": In(32), "injected": Out(32)})

    def elaborate(self, platform):
        m = Module()
        W = self.phit_bits
        r1 = _xorshift(m, Signal(32, init=(self.seed & 0xffffffff) | 1))
        r2 = _xorshift(m, Signal(32, init=((self.seed * 7919) & 0xffffffff) | 1))
        burst_left = Signal(4)
        phit = Signal(W)
        ctl = Signal(2)
        noise = Cat(r2, r1, r2, r1)[:W + 2]
        flip_bit = Signal(range(W + 2))
        m.d.comb += flip_bit.eq(Mux(r2[8:16] < (W + 2) * 3, r2[8:16] % (W + 2), r2[0:4]))
        m.d.comb += [phit.eq(self.i_phit), ctl.eq(self.i_ctl)]
        event = Signal()
        with m.If(burst_left != 0):
            m.d.comb += [phit.eq(noise[:W]), ctl.eq(noise[W:])]
            m.d.sync += burst_left.eq(burst_left - 1)
        with m.Elif(r1 < self.burst):
            m.d.comb += [phit.eq(noise[:W]), ctl.eq(noise[W:]), event.eq(1)]
            m.d.sync += burst_left.eq(r2[16:19] | 1)
        with m.Elif(r1 < self.burst + self.drop):
            m.d.comb += [phit.eq(0), ctl.eq(PhitCtl.IDLE), event.eq(1)]
        with m.Elif(r1 < self.burst + self.drop + self.flip):
            m.d.comb += [Cat(phit, ctl).eq(Cat(self.i_phit, self.i_ctl) ^ (1 << flip_bit)), event.eq(1)]
        with m.If(event):
            m.d.sync += self.injected.eq(self.injected + 1)
        line = [Signal(W + 2, name=f"d{i}") for i in range(self.latency)]
        m.d.sync += line[0].eq(Cat(phit, ctl))
        for i in range(1, len(line)):
            m.d.sync += line[i].eq(line[i - 1])
        m.d.comb += Cat(self.o_phit, self.o_ctl).eq(line[-1])
        return m


class TrafficGen(wiring.Component):
    """Sends packets ``0 .. packets-1`` on one VC; idles a cycle when ``rng < stall``.

    Members
    -------
    o : Out(NetStreamSignature())
    packets, stall : In(32)
        Packets to send; idle probability per cycle (times 2**32).
    fixed, fixed_cw, fixed_pw : In
        Every packet with ``fixed_cw`` command and ``fixed_pw`` payload words instead of random ones.
    sent, payload_beats : Out(32)
        Packets and payload beats sent.
    """

    def __init__(self, *, vc, seed):
        self.vc, self.seed = vc, seed
        super().__init__({"o": Out(NetStreamSignature()), "packets": In(32), "stall": In(32),
                          "fixed": In(1), "fixed_cw": In(2), "fixed_pw": In(4),
                          "sent": Out(32), "payload_beats": Out(32)})

    def elaborate(self, platform):
        m = Module()
        rng = _xorshift(m, Signal(32, init=(self.seed & 0xffffffff) | 1))
        pkt = Signal(32)
        idx = Signal(range(MAX_PACKET_BEATS))
        cw, pw = _structure(pkt)
        data, kind, first, last = _beat(m, self.vc, pkt, idx, cw, pw, self.fixed_cw, self.fixed_pw,
                                        self.fixed)
        m.d.comb += [self.o.payload.data.eq(data), self.o.payload.kind.eq(kind),
                     self.o.payload.first.eq(first), self.o.payload.last.eq(last)]
        shown = Signal()        # valid was high and not accepted: hold it (stream rule)
        with m.If(shown | ((pkt < self.packets) & (rng >= self.stall))):
            m.d.comb += self.o.valid.eq(1)
        m.d.sync += shown.eq(self.o.valid & ~self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += idx.eq(idx + 1)
            with m.If(kind == NetBeatKind.PAYLOAD):
                m.d.sync += self.payload_beats.eq(self.payload_beats + 1)
            with m.If(last):
                m.d.sync += [idx.eq(0), pkt.eq(pkt + 1), self.sent.eq(pkt + 1)]
        return m


class TrafficCheck(wiring.Component):
    """Receives one VC; counts packets, payload beats, and beats that differ from what was sent.

    Members
    -------
    i : In(NetStreamSignature())
    stall, fixed, fixed_cw, fixed_pw : In
        As :class:`TrafficGen`'s (``stall``: ``ready`` low with that probability).
    received, payload_beats, errors : Out(32)
        Packets and payload beats received; beats that differ from what the generator sent.
    """

    def __init__(self, *, vc, seed):
        self.vc, self.seed = vc, seed
        super().__init__({"i": In(NetStreamSignature()), "stall": In(32),
                          "fixed": In(1), "fixed_cw": In(2), "fixed_pw": In(4),
                          "received": Out(32), "payload_beats": Out(32), "errors": Out(32)})

    def elaborate(self, platform):
        m = Module()
        rng = _xorshift(m, Signal(32, init=(self.seed & 0xffffffff) | 1))
        pkt = Signal(32)
        idx = Signal(range(MAX_PACKET_BEATS))
        cw, pw = _structure(pkt)
        data, kind, first, last = _beat(m, self.vc, pkt, idx, cw, pw, self.fixed_cw, self.fixed_pw,
                                        self.fixed)
        m.d.comb += self.i.ready.eq(rng >= self.stall)
        with m.If(self.i.valid & self.i.ready):
            p = self.i.payload
            ok = (p.data == data) & (p.kind.as_value() == kind) & (p.first == first) & (p.last == last)
            with m.If(~ok):
                m.d.sync += self.errors.eq(self.errors + 1)
            with m.If(kind == NetBeatKind.PAYLOAD):
                m.d.sync += self.payload_beats.eq(self.payload_beats + 1)
            # resynchronise on the received framing so one error does not cascade
            m.d.sync += idx.eq(idx + 1)
            with m.If(p.last):
                m.d.sync += [idx.eq(0), pkt.eq(pkt + 1), self.received.eq(pkt + 1)]
        return m


def traffic_members(vcs):
    """The top's members :func:`attach_traffic` drives, for sides ``a`` and ``b``: ``<x><v>_sent``,
    ``_received``, ``_errors``, ``_payload``."""
    return {f"{x}{v}_{name}": Out(32) for x in "ab" for v in range(vcs)
            for name in ("sent", "received", "errors", "payload")}


def attach_traffic(m, top, x, src, dst, seed, *, vcs, src_domain="sync", dst_domain="sync"):
    """A :class:`TrafficGen` on every VC of ``src.tx`` (in ``src_domain``) and a :class:`TrafficCheck` on
    the same VC of ``dst.rx`` (in ``dst_domain``), shaped by ``top``'s ``packets``, ``src_stall``,
    ``dst_stall``, ``fixed``, ``fixed_cw``, ``fixed_pw``; their counters to ``top``'s
    ``<x><v>_sent``, ``_received``, ``_errors``, ``_payload``."""
    for v in range(vcs):
        gen = DomainRenamer(src_domain)(TrafficGen(vc=v, seed=seed * 3 + v * 101))
        chk = DomainRenamer(dst_domain)(TrafficCheck(vc=v, seed=seed * 5 + v * 37))
        m.submodules[f"gen_{x}{v}"] = gen
        m.submodules[f"chk_{x}{v}"] = chk
        wiring.connect(m, gen.o, src.tx[v])
        wiring.connect(m, dst.rx[v], chk.i)
        for blk in (gen, chk):
            m.d.comb += [blk.fixed.eq(top.fixed), blk.fixed_cw.eq(top.fixed_cw),
                         blk.fixed_pw.eq(top.fixed_pw)]
        m.d.comb += [gen.packets.eq(top.packets), gen.stall.eq(top.src_stall),
                     chk.stall.eq(top.dst_stall),
                     getattr(top, f"{x}{v}_sent").eq(gen.sent),
                     getattr(top, f"{x}{v}_received").eq(chk.received),
                     getattr(top, f"{x}{v}_errors").eq(chk.errors),
                     getattr(top, f"{x}{v}_payload").eq(chk.payload_beats)]


class LinkLoop(wiring.Component):
    """Ports ``a`` and ``b`` joined by two :class:`LfsrChannel`, traffic on every VC both ways.

    Members
    -------
    packets, src_stall, dst_stall : In(32)
        Packets per VC and direction; idle probabilities of the generators and checkers (times 2**32).
    fixed, fixed_cw, fixed_pw : In
        One packet shape for the efficiency runs (:class:`TrafficGen`).
    flip, drop, burst : In(32)
        Channel error thresholds, both directions.
    <x>_<counter> : Out
        The link port counters of port ``<x>`` (``a`` or ``b``).
    <x><v>_sent, <x><v>_received, <x><v>_errors, <x><v>_payload : Out(32)
        Traffic counters of VC ``<v>`` (0 .. ``vcs - 1``) sent by ``<x>``.
    <x>_data_phits, <x>_busy_phits, <x>_data_flits : Out(32)
        Phits of data flits, phits of any flit, and data flits sent by ``<x>``.
    <x>_injected : Out(32)
        Errors injected on the way out of ``<x>``.
    cycles : Out(32)
    """

    def __init__(self, *, latency=16, **params):
        self.a = LinkPort(**params)
        self.b = LinkPort(**params)
        self.params = self.a.params
        self.latency = latency
        p = self.params
        members = {"packets": In(32), "src_stall": In(32), "dst_stall": In(32), "fixed": In(1),
                   "fixed_cw": In(2), "fixed_pw": In(4), "flip": In(32), "drop": In(32),
                   "burst": In(32), "replay_timeout": In(16, init=self.a.replay_timeout_init),
                   "cycles": Out(32)}
        for x in "ab":
            for name in COUNTERS:
                members[f"{x}_{name}"] = Out(p.counter_bits)
            members[f"{x}_link_error"] = Out(1)
            for name in ("data_phits", "busy_phits", "data_flits", "injected"):
                members[f"{x}_{name}"] = Out(32)
        members.update(traffic_members(p.vcs))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self.params
        m.submodules.a = a = self.a
        m.submodules.b = b = self.b
        m.d.sync += self.cycles.eq(self.cycles + 1)
        ports = {"a": a, "b": b}
        for x, y, seed in (("a", "b", 0x1234567), ("b", "a", 0x7654321)):
            src, dst = ports[x], ports[y]
            ch = LfsrChannel(phit_bits=p.phit_bits, latency=self.latency, seed=seed)
            m.submodules[f"ch_{x}{y}"] = ch
            m.d.comb += [ch.i_phit.eq(src.tx_phit), ch.i_ctl.eq(src.tx_ctl),
                         dst.rx_phit.eq(ch.o_phit), dst.rx_ctl.eq(ch.o_ctl),
                         ch.flip.eq(self.flip), ch.drop.eq(self.drop), ch.burst.eq(self.burst),
                         getattr(self, f"{x}_injected").eq(ch.injected),
                         src.replay_timeout.eq(self.replay_timeout),
                         getattr(self, f"{x}_link_error").eq(src.link_error)]
            for name in COUNTERS:
                m.d.comb += getattr(self, f"{x}_{name}").eq(getattr(src, name))
            busy = src.tx_ctl != PhitCtl.IDLE
            with m.If(src.tx_data_phit):
                m.d.sync += getattr(self, f"{x}_data_phits").eq(getattr(self, f"{x}_data_phits") + 1)
                with m.If(src.tx_ctl == PhitCtl.EOF):
                    m.d.sync += getattr(self, f"{x}_data_flits").eq(getattr(self, f"{x}_data_flits") + 1)
            with m.If(busy):
                m.d.sync += getattr(self, f"{x}_busy_phits").eq(getattr(self, f"{x}_busy_phits") + 1)
            attach_traffic(m, self, x, src, dst, seed, vcs=p.vcs)
        return m


class LinkPair(wiring.Component):
    """Ports ``a`` and ``b``; every member of each appears as ``a_<name>`` / ``b_<name>``.

    The testbench moves phits between ``a_tx_phit`` and ``b_rx_phit`` (and back) through a channel.

    Members
    -------
    a_<member>, b_<member>
        Every member of :class:`rtl.link.LinkPort`'s signature, for port ``a`` and port ``b``.
    """

    def __init__(self, **params):
        self.a = LinkPort(**params)
        self.b = LinkPort(**params)
        self.params = self.a.params
        members = {}
        for side in ("a", "b"):
            for name, member in self.a.signature.members.items():
                members[f"{side}_{name}"] = member
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.a = self.a
        m.submodules.b = self.b
        for side, port in (("a", self.a), ("b", self.b)):
            for name, member in port.signature.members.items():
                outer, inner = getattr(self, f"{side}_{name}"), getattr(port, name)
                if member.is_signature:
                    for v in range(len(inner)):
                        wiring.connect(m, wiring.flipped(outer[v]), inner[v])
                elif member.flow == In:
                    m.d.comb += inner.eq(outer)
                else:
                    assert member.flow == Out
                    m.d.comb += outer.eq(inner)
        return m
