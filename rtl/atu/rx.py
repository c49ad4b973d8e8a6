"""The ATU's receive side: one HTAX link split by virtual channel and ATS command (dissertation
ch. 5.3-5.4, fig. 5-12 "ATS in" and the GATE read responses of fig. 5-9)."""

from amaranth.hdl import Assert, Cat, Const, Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.ats import NLA_PAGE_BITS, AtsCmd
from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxLinkSignature, HtaxStatus, HtaxVC
from rtl.common.htax_rules import sink_rules

from .layout import GATE_INDEX_BITS
from .util import stream_rules

__all__ = ["AtuRxDecoder"]


class AtuRxDecoder(wiring.Component):
    """Receive decoder of the ATU's HTAX port.

    * ATS VC: a single-beat ATS packet with status OK carrying a translation request becomes a
      ``requests`` item, with ``bad`` set when its VPID is not below ``vpids`` or its GAT index not
      below ``gat_entries`` (decided here, on arrival, and stored as one bit).  ``rx.ready[ATS]`` is
      ``requests.ready``, ``rx.ready2[ATS]`` is ``requests_ready2``: the request queue's room decides.
      A flush response becomes a ``flush_responses`` strobe in the cycle it moves.
    * RESPONSE VC: always ready (a GATE read's answer is never refused); every beat is passed on as
      ``gate_beats`` in the cycle it moves.
    * POSTED and NON-POSTED VCs: always ready, dropped.

    Deviation (ch. 5.3 names no error path): packets the ATU does not take (ATS messages other than
    translation requests and flush responses, multi-beat ATS packets, posted and non-posted packets)
    are consumed, and their first beats strobe ``dropped`` one cycle later.  Flush responses the flush
    controller does not wait for are counted there.

    Parameters
    ----------
    formats : AtuFormats

    Members
    -------
    rx : In(HtaxLinkSignature)
        The ATU's receive link.
    requests : Out(stream.Signature(formats.request))
        Translation requests; follows ``rx``, so it obeys the stream rules.
    requests_ready2 : In(1)
        The queue has room for two requests (the link's ``ready2`` promise on the ATS VC).
    flush_responses : Out(stream.Signature(formats.flush_response, always_ready=True))
        A flush response moved in this cycle (always ready: the beat has moved).
    gate_beats : Out(stream.Signature(HtaxBeat, always_ready=True))
        A RESPONSE-VC beat moved in this cycle.
    dropped : Out(1)
        One cycle after the first beat of a dropped packet moved.
    """

    def __init__(self, *, formats):
        self._f = formats
        super().__init__({
            "rx": In(HtaxLinkSignature()),
            "requests": Out(stream.Signature(formats.request)),
            "requests_ready2": In(1),
            "flush_responses": Out(stream.Signature(formats.flush_response, always_ready=True)),
            "gate_beats": Out(stream.Signature(HtaxBeat, always_ready=True)),
            "dropped": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        f = self._f
        rx = self.rx
        beat = rx.payload
        hdr = beat.word.header
        msg = hdr.body.ats
        vc = beat.vc.as_value()
        # ready[v] by VC index: POSTED, NONPOSTED, RESPONSE always, ATS when the queue has room
        m.d.comb += [rx.ready.eq(Cat(Const(1), Const(1), Const(1), self.requests.ready)),
                     rx.ready2.eq(Cat(Const(1), Const(1), Const(1), self.requests_ready2))]

        on_ats = rx.valid & (vc == HtaxVC.ATS.value)
        single = (beat.first & beat.last & (hdr.cmd == HtaxCmd.ATS) & (hdr.vc == HtaxVC.ATS)
                  & (hdr.status == HtaxStatus.OK))
        tr = msg.translation_request
        bad = tr.vpid[f.vpid_bits:] != 0
        if f.nla_bits < NLA_PAGE_BITS:
            bad = bad | (tr.nla_page[f.nla_bits:] != 0)
        # with the first-level table in host memory every GAT index is valid, those beyond the on-chip
        # table only while it is on (the lookup decides)
        far = tr.nla_page[GATE_INDEX_BITS + f.chip_bits:f.nla_bits] != 0 if f.chip_bits < f.gat_bits else 0
        req = self.requests.payload
        m.d.comb += [
            self.requests.valid.eq(on_ats & single & (msg.cmd == AtsCmd.TRANSLATION_REQUEST)),
            req.vpid.eq(tr.vpid), req.nla.eq(tr.nla_page), req.write.eq(tr.write), req.next.eq(tr.next),
            req.src.eq(hdr.src), req.tag.eq(hdr.tag), req.bad.eq(bad), req.far.eq(far),
        ]
        treq = self.requests.valid & self.requests.ready
        fresp = on_ats & self.requests.ready & single & (msg.cmd == AtsCmd.FLUSH_RESPONSE)
        m.d.comb += [
            self.flush_responses.valid.eq(fresp),
            self.flush_responses.payload.src.eq(hdr.src),
            self.flush_responses.payload.flush_id.eq(msg.flush_response.flush_id),
            self.gate_beats.valid.eq(rx.valid & (vc == HtaxVC.RESPONSE.value)),
            self.gate_beats.payload.eq(beat),
        ]
        # dropped packets, counted at their first beat
        first_moves = rx.transfer() & beat.first
        np_vc = (vc == HtaxVC.POSTED.value) | (vc == HtaxVC.NONPOSTED.value)
        other_ats = (vc == HtaxVC.ATS.value) & ~treq & ~fresp
        m.d.sync += self.dropped.eq(first_moves & (np_vc | other_ats))

        if platform == "formal":
            # the link's ready2 promise (the queue's counters keep it); requests follow rx, which the
            # environment keeps to the link rules, so they obey the stream rules
            sink_rules(m, rx, Assert, name="rx")
            stream_rules(m, self.requests, Assert, name="requests")
            m.d.comb += [
                Assert(rx.ready[:3] == 0b111),
                Assert(~(self.requests.valid & self.flush_responses.valid)),
                Assert(~(self.requests.valid & self.gate_beats.valid)),
            ]
        return m
