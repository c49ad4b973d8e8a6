"""The bridge's CPU stores: AXI4 write bursts into the device window become HTAX WRITEs (``docs/hostbus.md``)."""

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.axi import AxiResp, axi_addr, axi_bresp, axi_wdata
from rtl.common.htax import ADDR_BITS, MAX_DATA_WORDS, HtaxBeat, HtaxCmd, HtaxHeader, HtaxVC

__all__ = ["TargetWrite"]


class TargetWrite(wiring.Component):
    """Takes one AXI4 write burst at a time, checks it (:meth:`DeviceMap.check`), gathers its beats and
    sends it as exactly one HTAX WRITE (a write-combined 64-byte store is one 8-beat burst and one
    packet, as a write-combining buffer's flush), then answers B OKAY: the write is posted.

    The HTAX header needs the last word's byte enables, so the burst is gathered first (at most 8
    beats); the header leaves the cycle after ``WLAST``.  Refused, with every W beat consumed and
    nothing sent: DECERR outside the device window; SLVERR for a burst :meth:`DeviceMap.check` refuses,
    a beat count other than ``AWLEN + 1``, a first or last beat without strobes, or a middle beat whose
    strobes are not all set (an HTAX write has byte enables only for its first and last word).

    Parameters
    ----------
    devmap : DeviceMap
    host_port : int
        The ``src`` of every packet.
    id_bits : int

    Members
    -------
    aw : In(stream.Signature(axi_addr(id_bits, ADDR_BITS)))
    w : In(stream.Signature(axi_wdata()))
    b : Out(stream.Signature(axi_bresp(id_bits)))
    o : Out(stream.Signature(HtaxBeat))
        WRITE packets to the NIC.
    refused : Out(1)
        A burst is answered with an error now.
    """

    def __init__(self, *, devmap, host_port, id_bits):
        self._map, self._host_port, self._id_bits = devmap, host_port, id_bits
        super().__init__({
            "aw": In(stream.Signature(axi_addr(id_bits, ADDR_BITS))),
            "w": In(stream.Signature(axi_wdata())),
            "b": Out(stream.Signature(axi_bresp(id_bits))),
            "o": Out(stream.Signature(HtaxBeat)),
            "refused": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        aw, w = self.aw.payload, self.w.payload
        req = Signal.like(aw)
        words = Array(Signal(64, name=f"word{k}") for k in range(MAX_DATA_WORDS))
        first_be = Signal(8)
        last_be = Signal(8)
        beats = Signal(4)           # beats gathered (saturating at 9)
        holes = Signal()            # a middle beat with strobes not all set
        check = self._map.check(m, req.addr, burst=req.burst, size=req.size, length=req.len, name="check")
        sent = Signal(4)            # data beats sent

        with m.FSM():
            with m.State("ADDR"):
                m.d.comb += self.aw.ready.eq(1)
                with m.If(self.aw.valid):
                    m.d.sync += [req.eq(aw), beats.eq(0), holes.eq(0)]
                    m.next = "DATA"
            with m.State("DATA"):
                m.d.comb += self.w.ready.eq(1)
                with m.If(self.w.valid):
                    with m.If(beats < MAX_DATA_WORDS):
                        m.d.sync += words[beats[:3]].eq(w.data)
                    m.d.sync += beats.eq(Mux(beats > MAX_DATA_WORDS, beats, beats + 1))
                    with m.If(beats == 0):
                        m.d.sync += first_be.eq(w.strb)
                    with m.Elif(~w.last & (w.strb != 0xFF)):
                        m.d.sync += holes.eq(1)
                    m.d.sync += last_be.eq(w.strb)
                    with m.If(w.last):
                        m.next = "CHECK"
            with m.State("CHECK"):
                length_ok = beats == req.len + 1
                strb_ok = (first_be != 0) & ((req.len == 0) | (last_be != 0)) & ~holes
                resp = Mux(check.resp != AxiResp.OKAY, check.resp, Mux(length_ok & strb_ok, AxiResp.OKAY,
                                                                         AxiResp.SLVERR))
                m.d.sync += [self.b.payload.id.eq(req.id), self.b.payload.resp.eq(resp), sent.eq(0)]
                with m.If(resp == AxiResp.OKAY):
                    m.next = "HEADER"
                with m.Else():
                    m.d.comb += self.refused.eq(1)
                    m.next = "RESP"
            with m.State("HEADER"):
                beat = Signal(HtaxBeat)
                hdr = HtaxHeader(beat.word.as_value())
                m.d.comb += [hdr.cmd.eq(HtaxCmd.WRITE), hdr.vc.eq(HtaxVC.POSTED), hdr.src.eq(self._host_port),
                             hdr.dst.eq(check.dst), hdr.body.mem.addr.eq(req.addr & ~7),
                             hdr.body.mem.length.eq(req.len + 1), hdr.body.mem.first_be.eq(first_be),
                             hdr.body.mem.last_be.eq(Mux(req.len == 0, 0, last_be)),
                             beat.vc.eq(HtaxVC.POSTED), beat.first.eq(1),
                             self.o.valid.eq(1), self.o.payload.eq(beat)]
                with m.If(self.o.ready):
                    m.next = "WORDS"
            with m.State("WORDS"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.word.data.eq(words[sent[:3]]),
                             self.o.payload.vc.eq(HtaxVC.POSTED), self.o.payload.last.eq(sent == req.len)]
                with m.If(self.o.ready):
                    m.d.sync += sent.eq(sent + 1)
                    with m.If(sent == req.len):
                        m.next = "RESP"
            with m.State("RESP"):
                m.d.comb += self.b.valid.eq(1)
                with m.If(self.b.ready):
                    m.next = "ADDR"
        return m
