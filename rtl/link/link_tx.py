"""Transmit half of the link port (dissertation ch. 7.3): flit assembly, replay buffer, go-back-N
retransmission, credit flow control."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetStreamSignature

from .framing import BeatBuffer, PacketShaper
from .params import PhitCtl, require_params
from .tx_credits import LinkTxCredits
from .tx_framer import LinkTxFramer
from .tx_replay import LinkTxReplay

__all__ = ["LinkTx"]


class LinkTx(wiring.Component):
    """Transmit side of :class:`~rtl.link.LinkPort`: four blocks joined by ``connect``.

    * per VC a :class:`~rtl.link.framing.PacketShaper` (packets into the shape their headers give) and a
      :class:`~rtl.link.framing.BeatBuffer` (a register FIFO: the flit logic sees registered
      valid/data, the network side a registered ready);
    * :class:`~rtl.link.tx_framer.LinkTxFramer`: flit choice and assembly, phits, CRC, replay buffer;
    * :class:`~rtl.link.tx_replay.LinkTxReplay`: acknowledgement window, replay pointer and timer,
      link-error state;
    * :class:`~rtl.link.tx_credits.LinkTxCredits`: the peer's credits per VC.

    Go-back-N: a NAK (or the replay timer) restarts transmission at the oldest unacknowledged flit;
    when ``max_replays`` attempts in a row fail the port enters the link-error state: it sends only
    control flits (so the peer still gets acks and credits), raises ``link_error`` and strobes
    ``irq``.  ``retrain`` leaves that state and replays every unacknowledged flit, so nothing the port
    accepted is lost.

    Parameters
    ----------
    params : LinkParams

    Members
    -------
    tx : ``In(NetStreamSignature()).array(vcs)``
        Packets to send per virtual channel.
    phit, ctl : ``Out(phit_bits)``, ``Out(PhitCtl)``
        To the PHY, one phit per cycle (registered).
    expected, ack_valid, ack, ack_nak, credit_valid, credit, nak_req, freed :
        From :class:`~rtl.link.link_rx.LinkRx` (see there).
    replay_timeout : ``In(16)``
        Replay timer in cycles.
    max_replays : ``In(4)``
        Failed replays in a row before the link-error state.
    retrain : ``In(1)``
        Pulse: leave the link-error state and replay.
    link_error, irq : ``Out(1)``
        Link-error state; one-cycle strobe on entering it.
    ev_retransmit, ev_nak_sent, ev_nak_received, ev_timeout, ev_malformed, ev_protocol : ``Out(1)``
        Event pulses for the counters (``ev_malformed`` has one bit per VC: several may pulse at once).
    tx_data_phit : ``Out(1)``
        The phit on ``phit`` belongs to a data flit (performance monitoring).
    """

    def __init__(self, params):
        self.params = require_params(params)
        p = params
        super().__init__({
            "tx": In(NetStreamSignature()).array(p.vcs),
            "phit": Out(p.phit_bits), "ctl": Out(PhitCtl),
            "expected": In(p.seq_bits),
            "ack_valid": In(1), "ack": In(p.seq_bits), "ack_nak": In(1),
            "credit_valid": In(1), "credit": In(p.credit_bits).array(p.vcs),
            "nak_req": In(1), "freed": In(p.credit_bits).array(p.vcs),
            "replay_timeout": In(16, init=1024), "max_replays": In(4, init=4), "retrain": In(1),
            "link_error": Out(1), "irq": Out(1),
            "ev_retransmit": Out(1), "ev_nak_sent": Out(1), "ev_nak_received": Out(1),
            "ev_timeout": Out(1), "ev_malformed": Out(p.vcs), "ev_protocol": Out(1),
            "tx_data_phit": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        m.submodules.framer = fr = LinkTxFramer(p)
        m.submodules.replay = rp = LinkTxReplay(p)
        m.submodules.credits = cr = LinkTxCredits(p)
        for vc in range(p.vcs):
            m.submodules[f"shaper{vc}"] = sh = PacketShaper()
            m.submodules[f"fifo{vc}"] = fifo = BeatBuffer()
            wiring.connect(m, wiring.flipped(self.tx[vc]), sh.i)
            wiring.connect(m, sh.o, fifo.i)
            wiring.connect(m, fifo.o, fr.beats[vc])
            m.d.comb += self.ev_malformed[vc].eq(sh.malformed)
        wiring.connect(m, fr.replay, rp.flits)
        wiring.connect(m, fr.credits, cr.flits)
        m.d.comb += [
            self.phit.eq(fr.phit), self.ctl.eq(fr.ctl), self.tx_data_phit.eq(fr.tx_data_phit),
            fr.expected.eq(self.expected), fr.nak_req.eq(self.nak_req),
            rp.ack_valid.eq(self.ack_valid), rp.ack.eq(self.ack), rp.ack_nak.eq(self.ack_nak),
            rp.replay_timeout.eq(self.replay_timeout), rp.max_replays.eq(self.max_replays),
            rp.retrain.eq(self.retrain), cr.credit_valid.eq(self.credit_valid),
            self.link_error.eq(rp.flits.link_error), self.irq.eq(rp.irq),
            self.ev_retransmit.eq(fr.ev_retransmit), self.ev_nak_sent.eq(fr.ev_nak_sent),
            self.ev_nak_received.eq(rp.ev_nak_received), self.ev_timeout.eq(rp.ev_timeout),
            self.ev_protocol.eq(rp.protocol | cr.protocol),
        ]
        for v in range(p.vcs):
            m.d.comb += [cr.credit[v].eq(self.credit[v]), cr.freed[v].eq(self.freed[v]),
                         fr.freed[v].eq(self.freed[v])]
        return m
