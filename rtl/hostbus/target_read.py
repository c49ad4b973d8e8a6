"""The bridge's CPU reads: AXI4 read bursts into the device window become HTAX READs (``docs/hostbus.md``)."""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from rtl.common.axi import AxiResp, axi_addr, axi_rdata
from rtl.common.htax import ADDR_BITS, HtaxBeat, HtaxCmd, HtaxHeader, HtaxStatus, HtaxVC
from rtl.common.params import check_int
from rtl.common.rr import lowest, one_hot_index

__all__ = ["TargetRead"]


class TargetRead(wiring.Component):
    """Sends each AXI4 read burst that :meth:`DeviceMap.check` accepts as one HTAX READ under a free tag,
    and each RESPONSE back as R beats under the burst's ``ARID``.

    AXI4 returns the reads of one ID in order, HTAX responses of different targets may pass each other:
    a read waits while a read of its ID is in flight (reads of different IDs overlap, up to ``tags``).
    A refused burst (DECERR outside the device window, SLVERR for a burst that is not one packet) is
    answered here with ``ARLEN + 1`` error beats, after the reads of its ID in flight.  A RESPONSE with
    an error status becomes ``ARLEN + 1`` beats of DECERR (NO_TARGET) or SLVERR (MALFORMED,
    TARGET_ERROR); one whose length is not the burst's, or whose tag is not in flight, is dropped
    (``dropped``) and, in the first case, answered with SLVERR.

    Parameters
    ----------
    devmap : DeviceMap
    host_port : int
    id_bits : int
    tags : int
        CPU reads in flight, 1..32 (HTAX tags ``0 .. tags - 1``).

    Members
    -------
    ar : In(stream.Signature(axi_addr(id_bits, ADDR_BITS)))
    r : Out(stream.Signature(axi_rdata(id_bits)))
    o : Out(stream.Signature(HtaxBeat))
        READ packets to the NIC.
    i : In(stream.Signature(HtaxBeat))
        RESPONSE packets from the NIC.
    refused : Out(1)
        A burst is refused now.
    dropped : Out(1)
        A RESPONSE is dropped now.
    """

    def __init__(self, *, devmap, host_port, id_bits, tags=4):
        self._map, self._host_port, self._id_bits = devmap, host_port, id_bits
        self._tags = check_int("tags", tags, 1, 32)
        super().__init__({
            "ar": In(stream.Signature(axi_addr(id_bits, ADDR_BITS))),
            "r": Out(stream.Signature(axi_rdata(id_bits))),
            "o": Out(stream.Signature(HtaxBeat)),
            "i": In(stream.Signature(HtaxBeat)),
            "refused": Out(1), "dropped": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        nt = self._tags
        entry = data.StructLayout({"id": self._id_bits, "len": 3})
        table = Array(Signal(entry, name=f"tag{k}") for k in range(nt))
        busy = Signal(nt)
        req = Signal.like(self.ar.payload)
        held = Signal()
        # the burst is checked as it arrives and the verdict kept beside it (the address decode stays
        # off the paths from the held burst to the HTAX port)
        ar = self.ar.payload
        verdict = self._map.check(m, ar.addr, burst=ar.burst, size=ar.size, length=ar.len, name="verdict")
        check = Signal.like(verdict, name="check")
        same_id = Cat(busy[k] & (table[k].id == req.id) for k in range(nt)).any()
        free = lowest(~busy)
        tag = one_hot_index(m, free, name="free_tag")

        # the read-error generator: ``left + 1`` beats of ``resp`` under ``rid``
        gen = Signal()
        gen_id = Signal(self._id_bits)
        gen_resp = Signal(AxiResp)
        left = Signal(8)
        r_free = ~self.r.valid | self.r.ready
        fwd = Signal()              # data beats of an accepted RESPONSE are forwarded
        drop = Signal()             # data beats of a dropped RESPONSE are consumed
        with m.If(self.r.ready):
            m.d.sync += self.r.valid.eq(0)

        # -- AR: one burst at a time waits here ---------------------------------------------------
        m.d.comb += self.ar.ready.eq(~held)
        with m.If(self.ar.valid & self.ar.ready):
            m.d.sync += [req.eq(self.ar.payload), check.eq(verdict), held.eq(1)]
        rbusy = Signal()            # R is taken by a RESPONSE or by error beats
        refuse = held & ~same_id & (check.resp != AxiResp.OKAY) & ~rbusy
        send = held & ~same_id & (check.resp == AxiResp.OKAY) & free.any()
        hdr = Signal(HtaxBeat)
        h = HtaxHeader(hdr.word.as_value())
        m.d.comb += [h.cmd.eq(HtaxCmd.READ), h.vc.eq(HtaxVC.NONPOSTED), h.src.eq(self._host_port),
                     h.dst.eq(check.dst), h.tag.eq(tag), h.body.mem.addr.eq(req.addr & ~7),
                     h.body.mem.length.eq(req.len + 1), h.body.mem.first_be.eq(0xFF),
                     h.body.mem.last_be.eq(Mux(req.len == 0, 0, 0xFF)),
                     hdr.vc.eq(HtaxVC.NONPOSTED), hdr.first.eq(1), hdr.last.eq(1),
                     self.o.valid.eq(send), self.o.payload.eq(hdr), self.refused.eq(refuse)]
        issued = send & self.o.ready
        with m.If(issued | refuse):
            m.d.sync += held.eq(0)
        with m.If(issued):
            m.d.sync += [table[tag].id.eq(req.id), table[tag].len.eq(req.len)]

        # -- RESPONSE to R --------------------------------------------------------------------------
        rh = HtaxHeader(self.i.payload.word.as_value())
        tbits = max(1, ceil_log2(nt))
        fwd_id = Signal(self._id_bits)
        in_table = busy.bit_select(rh.tag[:tbits], 1) & (rh.tag < nt)
        hit = table[rh.tag[:tbits]]
        m.d.comb += [rbusy.eq(fwd | drop | gen),
                     self.i.ready.eq(Mux(fwd, r_free, drop | (~gen & ~refuse & r_free)))]
        released = Signal(nt)
        with m.If(self.i.valid & self.i.ready):
            with m.If(fwd | drop):
                m.d.sync += [self.r.valid.eq(fwd), self.r.payload.id.eq(fwd_id),
                             self.r.payload.data.eq(self.i.payload.word.data),
                             self.r.payload.resp.eq(AxiResp.OKAY), self.r.payload.last.eq(self.i.payload.last)]
                with m.If(self.i.payload.last):
                    m.d.sync += [fwd.eq(0), drop.eq(0)]
            with m.Elif(~in_table):
                m.d.comb += self.dropped.eq(1)
                m.d.sync += drop.eq(~self.i.payload.last)
            with m.Else():
                m.d.comb += released.eq(1 << rh.tag[:tbits])
                good = (rh.status == HtaxStatus.OK) & (rh.body.mem.length == hit.len + 1)
                with m.If(good):
                    m.d.sync += [fwd.eq(1), fwd_id.eq(hit.id)]
                with m.Else():
                    m.d.comb += self.dropped.eq(rh.status == HtaxStatus.OK)
                    m.d.sync += [drop.eq(~self.i.payload.last), gen.eq(1), gen_id.eq(hit.id), left.eq(hit.len),
                                 gen_resp.eq(Mux(rh.status == HtaxStatus.NO_TARGET, AxiResp.DECERR,
                                                 AxiResp.SLVERR))]
        with m.If(refuse):
            m.d.sync += [gen.eq(1), gen_id.eq(req.id), left.eq(req.len), gen_resp.eq(check.resp)]
        with m.If(gen & ~fwd & ~drop & r_free):
            m.d.sync += [self.r.valid.eq(1), self.r.payload.id.eq(gen_id), self.r.payload.data.eq(0),
                         self.r.payload.resp.eq(gen_resp), self.r.payload.last.eq(left == 0),
                         left.eq(left - 1), gen.eq(left != 0)]
        m.d.sync += busy.eq((busy | Mux(issued, free, 0)) & ~released)
        return m
