"""EXTOLL link port: flits, per-flit CRC, hardware retransmission, credit flow control (ch. 7.3).

The dissertation's link ports "convert packets to the link layer format and implement a hardware
retransmission protocol to ensure reliable network operation"; the protocol is built from 16+2-bit
phits, up to 64 phits form a flit, a flit is the unit of buffer space and credits, and each flit is
protected by a CRC (ch. 7.3).  The wire format, the protocol and the sizing rules are in
``docs/link.md``.

Deviations from the dissertation (ch. 7.3 gives no more detail than the above):

- packet boundaries are not marked in the phit stream; they follow from the network header
  (:mod:`rtl.link.framing`), and a flit may carry the end of one packet and the start of the next;
- a credit is one 64-bit beat of receive buffer, not one flit, so short flits do not waste buffer;
- the phit width is a parameter (16, 32 or 64 data bits) and wider phits use CRC-32 instead of
  CRC-16;
- four virtual channels by default (two message classes x two dateline VCs, ``docs/network.md``)
  where the seed's link has two; the number is a parameter (2 or 4).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NUM_NET_VCS, NetStreamSignature
from rtl.common.params import check_int

from .link_rx import LinkRx
from .link_tx import LinkTx
from .params import LinkParams, PhitCtl

__all__ = ["LinkPort", "COUNTERS"]

COUNTERS = ("crc_errors", "retransmissions", "naks_sent", "naks_received", "replay_timeouts",
            "link_errors", "malformed_packets", "protocol_errors")


class LinkPort(wiring.Component):
    """One end of an EXTOLL link: two ports, each one's ``tx_phit``/``tx_ctl`` wired to the other's
    ``rx_phit``/``rx_ctl``, make a link.

    Parameters (keyword-only)
    -------------------------
    phit_bits : int
        Data bits per phit: 16, 32 or 64.
    flit_phits : int
        Maximum data flit length in phits, header and CRC included, up to 64.
    replay_flits : int
        Replay buffer depth in flits: a power of two, 2 to 256.
    vcs : int
        Virtual channels: 2 or 4 (``vc = 2 * class + dateline``, ``docs/network.md``).
    rx_buffer_beats : int
        Receive buffer (credits) per virtual channel, in 64-bit beats: a power of two.
    seq_bits : int or None
        Sequence number width (default ``log2(replay_flits) + 1``).
    counter_bits : int
        Width of the saturating event counters.
    replay_timeout : int
        ``init`` of the ``replay_timeout`` input, in cycles (1 to 65535): its value when a parent
        Amaranth design leaves the input undriven.  In emitted Verilog (``link.v``) the input is a
        plain port without a reset value, which the integrator must drive.
    max_replays : int
        ``init`` of the ``max_replays`` input (1 to 15), likewise.

    Members
    -------
    tx : ``In(NetStreamSignature()).array(vcs)``
        Packets to send, one stream per virtual channel.
    rx : ``Out(NetStreamSignature()).array(vcs)``
        Received packets, one stream per virtual channel.
    tx_phit, tx_ctl : ``Out(phit_bits)``, ``Out(PhitCtl)``
        Phit to the PHY, every cycle.
    rx_phit, rx_ctl : ``In(phit_bits)``, ``In(PhitCtl)``
        Phit from the PHY, every cycle.
    replay_timeout : ``In(16)``
        Replay timer, cycles without acknowledgement progress before a replay; also the time the
        receiver waits after a NAK before it may send another.  Not checked: 0 starts a replay
        every other cycle while a flit is unacknowledged.
    max_replays : ``In(4)``
        Replays in a row without progress before the link-error state (0: the first NAK or timeout
        enters it).
    retrain : ``In(1)``
        Pulse: leave the link-error state; every unacknowledged flit is sent again.
    link_error : ``Out(1)``
        Status: the port is in the link-error state.
    irq : ``Out(1)``
        One-cycle strobe on entering the link-error state.
    crc_errors, retransmissions, naks_sent, naks_received, replay_timeouts, link_errors,
    malformed_packets, protocol_errors : ``Out(counter_bits)``
        Event counters since reset, saturating at ``2**counter_bits - 1``.
    tx_data_phit : ``Out(1)``
        ``tx_phit`` belongs to a data flit (for performance measurement).

    Raises
    ------
    TypeError, ValueError
        On a bad parameter, with a message naming it.
    """

    def __init__(self, *, phit_bits=16, flit_phits=64, replay_flits=32, vcs=NUM_NET_VCS,
                 rx_buffer_beats=128, seq_bits=None, counter_bits=16, replay_timeout=512, max_replays=4,
                 idle_gap=0):
        self.params = p = LinkParams(phit_bits=phit_bits, flit_phits=flit_phits,
                                     replay_flits=replay_flits, vcs=vcs, rx_buffer_beats=rx_buffer_beats,
                                     seq_bits=seq_bits, counter_bits=counter_bits, idle_gap=idle_gap)
        check_int("replay_timeout", replay_timeout, 1, 0xFFFF)
        check_int("max_replays", max_replays, 1, 15)
        self.replay_timeout_init = replay_timeout
        self.max_replays_init = max_replays
        ports = {
            "tx": In(NetStreamSignature()).array(p.vcs),
            "rx": Out(NetStreamSignature()).array(p.vcs),
            "tx_phit": Out(p.phit_bits), "tx_ctl": Out(PhitCtl),
            "rx_phit": In(p.phit_bits), "rx_ctl": In(PhitCtl),
            "replay_timeout": In(16, init=replay_timeout),
            "max_replays": In(4, init=max_replays),
            "retrain": In(1),
            "link_error": Out(1), "irq": Out(1), "tx_data_phit": Out(1),
        }
        ports.update({name: Out(p.counter_bits) for name in COUNTERS})
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        p = self.params
        m.submodules.tx = tx = LinkTx(p)
        m.submodules.rx = rx = LinkRx(p)
        for v in range(p.vcs):
            wiring.connect(m, wiring.flipped(self.tx[v]), tx.tx[v])
            wiring.connect(m, wiring.flipped(self.rx[v]), rx.rx[v])
        m.d.comb += [
            self.tx_phit.eq(tx.phit), self.tx_ctl.eq(tx.ctl), self.tx_data_phit.eq(tx.tx_data_phit),
            rx.phit.eq(self.rx_phit), rx.ctl.eq(self.rx_ctl),
            rx.nak_holdoff.eq(self.replay_timeout),
            tx.expected.eq(rx.expected),
            tx.replay_timeout.eq(self.replay_timeout), tx.max_replays.eq(self.max_replays),
            tx.retrain.eq(self.retrain),
            self.link_error.eq(tx.link_error), self.irq.eq(tx.irq),
        ]
        # Registered: cuts the path CRC check -> ack window check -> replay/link-error decision
        # (one cycle more acknowledgement latency, which the protocol does not notice).
        m.d.sync += [tx.ack_valid.eq(rx.ack_valid), tx.ack.eq(rx.ack), tx.ack_nak.eq(rx.ack_nak),
                     tx.credit_valid.eq(rx.credit_valid), tx.nak_req.eq(rx.nak_req)]
        m.d.sync += [tx.credit[v].eq(rx.credit[v]) for v in range(p.vcs)]
        m.d.comb += [tx.freed[v].eq(rx.freed[v]) for v in range(p.vcs)]

        events = {
            "crc_errors": [rx.bad_flit], "retransmissions": [tx.ev_retransmit],
            "naks_sent": [tx.ev_nak_sent], "naks_received": [tx.ev_nak_received],
            "replay_timeouts": [tx.ev_timeout], "link_errors": [tx.irq],
            "malformed_packets": [tx.ev_malformed[v] for v in range(p.vcs)],
            "protocol_errors": [tx.ev_protocol, rx.overflow],
        }
        top = (1 << p.counter_bits) - 1
        for name, pulses in events.items():
            counter = getattr(self, name)
            inc = Signal(range(len(pulses) + 1), name=f"{name}_inc")
            m.d.sync += inc.eq(sum(pulses))      # registered: the counters are off the event paths
            with m.If(counter + inc >= top):
                m.d.sync += counter.eq(top)
            with m.Else():
                m.d.sync += counter.eq(counter + inc)
        return m
