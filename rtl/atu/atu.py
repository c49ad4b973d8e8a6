"""The EXTOLL address translation unit (dissertation ch. 5.3-5.4, figs. 5-8 to 5-12).

Translation path (fig. 5-12), one ATS translation request per cycle:

1. **Request FIFO** (``request_fifo`` entries, block RAM, ``SyncFIFOBuffered``): translation
   requests from the HTAX ATS VC.  Range checks (VPID below ``vpids``, GAT index below
   ``gat_entries``) are decided as a request enters and stored as one bit.
2. **Lookup** (stage s1): the TLB (block RAM, ``tlb_entries`` entries in ``tlb_ways`` ways, tagged
   with the NLA page and the VPID) and the GAT base-address table (the register file's RAM, read port
   ``regs.gat_addr``/``regs.gat_data``) are read in the same cycle (step 8 of fig. 5-9), so a miss
   knows the GATE address without another cycle.
3. **Result**: a hit or a request that fails a range/configuration check has its answer at once.  It
   goes straight to the HTAX output (*bypass*) if its FU has nothing pending in the reorder buffer;
   otherwise it waits in the reorder buffer.  A miss takes a reorder-buffer slot whose index is the
   HTAX tag of one 64-bit DMA READ of the GATE (length 1).
4. **Reorder buffer** (``reorder_entries`` slots, at most 32 = the HTAX tag space): results retire in
   allocation order, so the answers to each FU leave in request order although memory answers out of
   order.  The returning GATE is checked (valid, VPID, read/write permission), the result stored, and
   the TLB filled.
5. **Flush** (ch. 5.3, fig. 5-11): ``regs.flush_start`` with ``flush_tlb`` invalidates the TLB set of
   ``flush_nla`` (every way); with ``flush_ats`` one ATS flush request goes to every FU in
   ``fu_ports``.  ``regs.flush_done`` strobes when (a) every flush response with the current flush ID
   has arrived and (b) every translation that read the TLB before the flush started has been sent.
   An epoch bit that flips at the flush start marks translations and misses: a miss of the old epoch
   never fills the TLB, so no GATE read before the flush can re-enter the TLB after it.

Deviations from the prototype (also listed in ``docs/atu.md``):

* Responses leave in allocation order across all FUs once a FU has a result pending in the reorder
  buffer (the ordering rule needs it only per FU); a FU with nothing pending is never blocked.
* Only one flush runs at a time; ``flush_start`` while a flush runs is ignored (software polls
  ``done``, ch. 5.3).  The ATS flush request carries VPID 0: the register has no VPID field.
* The GAT base table is not copied: the register file's RAM has a read port for the unit.
* A GATE whose VPID differs from the request's is never put into the TLB; a GATE read before a flush
  never either.  TLB entries are tagged with the VPID (the prototype compared the TLB VPID as well).
* Unknown ATS messages (translation responses, flush requests sent to the ATU), multi-beat ATS
  packets and anything on the posted/non-posted VCs are consumed and dropped.

Parameters
----------
gat_entries : int
    GAT base-address table entries (power of two, 2..16384).
tlb_entries : int
    TLB entries (power of two, 16..16384).
tlb_ways : int
    1, 2 or 4.
reorder_entries : int
    Reorder-buffer slots = outstanding misses (power of two, 2..32).
request_fifo : int
    Request FIFO depth (power of two, 4..4096).
vpids : int
    Configured number of VPIDs (power of two, 2..65536); a request with a larger VPID fails.
htax_port, host_port : int
    HTAX port numbers of the ATU and of host memory (0..15).
fu_ports : tuple of int
    HTAX ports of the FUs that receive ATS flush requests (distinct, 0..15, not the ATU's).

Members
-------
htax : Out(HtaxPortSignature)
    The ATU's HTAX port.
regs : Out(AtuRegsSignature)
    Register-file side: flush request fields and strobe, done strobe, counter strobes, GAT base read
    port.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.ats import NLA_PAGE_BITS, PPN_BITS, VPID_BITS, AtsCause, AtsCmd
from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxPortSignature, HtaxStatus, HtaxVC
from rtl.common.params import check_choice, check_distinct, check_port, check_pow2

from .layout import GAT_BASE_BITS, GATE_INDEX_BITS, Gate

__all__ = ["Atu", "AtuRegsSignature", "check_params"]


def _log2(n):
    return n.bit_length() - 1


def _count(m, counter, inc, dec):
    """``counter`` += ``inc`` - ``dec``, as a choice among the precomputed +1 and -1: the (late) strobes
    select a result instead of entering a carry chain."""
    with m.If(inc & ~dec):
        m.d.sync += counter.eq(counter + 1)
    with m.Elif(dec & ~inc):
        m.d.sync += counter.eq(counter - 1)


def check_params(*, gat_entries, tlb_entries, tlb_ways, reorder_entries, request_fifo, vpids, htax_port,
                 host_port, fu_ports):
    """Validate the ATU parameters; raise ``TypeError``/``ValueError`` with a precise message."""
    check_pow2("gat_entries", gat_entries, 2, 1 << 14)
    check_pow2("tlb_entries", tlb_entries, 16, 1 << 14)
    check_choice("tlb_ways", tlb_ways, (1, 2, 4))
    check_pow2("reorder_entries", reorder_entries, 2, 32)
    check_pow2("request_fifo", request_fifo, 4, 4096)
    check_pow2("vpids", vpids, 2, 1 << 16)
    check_port("htax_port", htax_port)
    check_port("host_port", host_port)
    if host_port == htax_port:
        raise ValueError(f"host_port must differ from htax_port, both are {htax_port}")
    fu_ports = tuple(fu_ports)
    for p in fu_ports:
        check_port("fu_ports entry", p)
    check_distinct("fu_ports", fu_ports)
    if htax_port in fu_ports:
        raise ValueError(f"fu_ports must not contain the ATU's own port {htax_port}")
    return fu_ports


class AtuRegsSignature(wiring.Signature):
    """The ATU's side of the register file's ATU block (``docs/regs.md``).

    Members
    -------
    flush_nla : In(nla_bits)
    flush_vpid : In(VPID_BITS)
        VPID carried by the ATS flush requests.
    flush_tlb, flush_ats, flush_start : In(1)
        The flush request register (``start`` is a one-cycle strobe).
    flush_done : Out(1)
        One-cycle strobe that sets ``flush.done``.
    hits_incr, misses_incr, tlb_flushes_incr, atu_flushes_incr : Out(1)
        Counter strobes.
    failed_incr : Out(1)
        One strobe per translation answered with ``ok = 0`` (any failed check), one cycle after the
        response entered the output register.
    dropped_incr : Out(1)
        One strobe per packet the ATU drops (ATS messages it does not take, multi-beat ATS packets,
        flush responses it does not wait for, posted/non-posted packets).
    gat_addr : Out(gat_bits)
    gat_data : In(GAT_BASE_BITS)
        Synchronous read port of the GAT base-address table: data one cycle after the address.
    """

    def __init__(self, *, nla_bits, gat_bits):
        super().__init__({
            "flush_nla": In(nla_bits), "flush_vpid": In(VPID_BITS), "flush_tlb": In(1), "flush_ats": In(1),
            "flush_start": In(1), "flush_done": Out(1), "hits_incr": Out(1), "misses_incr": Out(1),
            "tlb_flushes_incr": Out(1), "atu_flushes_incr": Out(1), "failed_incr": Out(1), "dropped_incr": Out(1),
            "gat_addr": Out(gat_bits), "gat_data": In(GAT_BASE_BITS),
        })


class Atu(wiring.Component):
    __doc__ = __doc__

    def __init__(self, *, gat_entries=512, tlb_entries=1024, tlb_ways=1, reorder_entries=32, request_fifo=64,
                 vpids=32, htax_port=2, host_port=0, fu_ports=(3, 4, 5)):
        self.fu_ports = check_params(gat_entries=gat_entries, tlb_entries=tlb_entries, tlb_ways=tlb_ways,
                                     reorder_entries=reorder_entries, request_fifo=request_fifo, vpids=vpids,
                                     htax_port=htax_port, host_port=host_port, fu_ports=fu_ports)
        self.gat_entries = gat_entries
        self.tlb_entries = tlb_entries
        self.tlb_ways = tlb_ways
        self.reorder_entries = reorder_entries
        self.request_fifo = request_fifo
        self.vpids = vpids
        self.htax_port = htax_port
        self.host_port = host_port
        self.gat_bits = _log2(gat_entries)
        self.nla_bits = GATE_INDEX_BITS + self.gat_bits
        self.vpid_bits = _log2(vpids)
        self.set_bits = _log2(tlb_entries // tlb_ways)
        self.tag_bits = self.nla_bits - self.set_bits
        self.tlb_entry = data.StructLayout({
            "valid": 1, "read": 1, "write": 1, "vpid": self.vpid_bits, "tag": max(1, self.tag_bits),
            "ppn": PPN_BITS})
        super().__init__({
            "htax": Out(HtaxPortSignature()),
            "regs": Out(AtuRegsSignature(nla_bits=self.nla_bits, gat_bits=self.gat_bits)),
        })

    def fu_index(self, port):
        """Python: the pending-counter index of an HTAX source port (FUs first, then "others")."""
        return self.fu_ports.index(port) if port in self.fu_ports else len(self.fu_ports)

    def elaborate(self, platform):
        m = Module()
        R = self.reorder_entries
        W = self.tlb_ways
        ent_w = self.tlb_entry.size
        nfu = len(self.fu_ports)
        rx, tx, regs = self.htax.rx, self.htax.tx, self.regs
        rxb = rx.payload
        rxh = rxb.word.header
        msg = rxh.body.ats

        # ---------------------------------------------------------------- request FIFO (fig. 5-12)
        req_layout = data.StructLayout({"vpid": self.vpid_bits, "nla": self.nla_bits, "write": 1, "src": 4,
                                        "tag": 5, "bad": 1})
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=req_layout.size, depth=self.request_fifo)
        # ready[v] is a flop; POSTED/NONPOSTED beats are dropped, RESPONSE beats always taken.  The FIFO's
        # occupancy (its read pipeline included) is counted here: ats_rdy = not full, ats_rdy2 = room
        # for two (the ready2 promise: the switch may then send ATS packets back to back), fempty = empty.
        fcnt = Signal(range(self.request_fifo + 1))
        ats_rdy = Signal(init=1)
        ats_rdy2 = Signal(init=1)
        fempty = Signal(init=1)
        m.d.comb += [rx.ready.eq(Cat(Const(1), Const(1), Const(1), ats_rdy)),
                     rx.ready2.eq(Cat(Const(1), Const(1), Const(1), ats_rdy2))]
        rx_vc = rxb.vc.as_value()
        ats_beat = rx.valid & (rx_vc == HtaxVC.ATS.value) & ats_rdy
        single_ats = (rxb.first & rxb.last & (rxh.cmd == HtaxCmd.ATS) & (rxh.vc == HtaxVC.ATS)
                      & (rxh.status == HtaxStatus.OK))
        treq = ats_beat & single_ats & (msg.cmd == AtsCmd.TRANSLATION_REQUEST)
        fresp = ats_beat & single_ats & (msg.cmd == AtsCmd.FLUSH_RESPONSE)
        tr = msg.translation_request
        wreq = Signal(req_layout)
        page = tr.nla_page
        bad = tr.vpid[self.vpid_bits:] != 0
        if self.nla_bits < NLA_PAGE_BITS:
            bad = bad | (page[self.nla_bits:] != 0)
        m.d.comb += [
            wreq.vpid.eq(tr.vpid), wreq.nla.eq(page), wreq.write.eq(tr.write), wreq.src.eq(rxh.src),
            wreq.tag.eq(rxh.tag), wreq.bad.eq(bad), fifo.w_data.eq(wreq),
        ]
        rreq = data.View(req_layout, fifo.r_data)
        with m.If(fifo.w_en & ~fifo.r_en):
            m.d.sync += [fcnt.eq(fcnt + 1), fempty.eq(0), ats_rdy.eq(fcnt != self.request_fifo - 1),
                         ats_rdy2.eq(fcnt < self.request_fifo - 2)]
        with m.Elif(fifo.r_en & ~fifo.w_en):
            m.d.sync += [fcnt.eq(fcnt - 1), fempty.eq(fcnt == 1), ats_rdy.eq(1),
                         ats_rdy2.eq(fcnt <= self.request_fifo - 1)]

        # ---------------------------------------------------------------- state shared by the stages
        epoch = Signal()                    # flips at each flush start
        busy = Signal()                     # a flush is running
        start_now = regs.flush_start & ~busy
        inval_now = start_now & regs.flush_tlb

        rob_full = Signal()
        head = Signal(range(R))
        tail = Signal(range(R))
        done = Signal(R)
        missv = Signal(R)                   # the slot's result comes from a GATE (res), not from s2 (imm)
        waiting = Signal(R)
        pend = Array(Signal(range(R + 1), name=f"pend{i}") for i in range(nfu + 1))
        # pend[i] == 0 as flops, so that the bypass decision reads one bit instead of a compare
        pend_zero = Signal(nfu + 1, init=(1 << (nfu + 1)) - 1)

        def fu_idx(port):
            idx = Const(nfu, range(nfu + 1))
            for i, p in enumerate(self.fu_ports):
                idx = Mux(port == p, i, idx)
            return idx

        # ---------------------------------------------------------------- s1: TLB + GAT base read, s2: result
        # A request enters s1 from the FIFO, or straight from rx when the FIFO is empty (order kept: the
        # FIFO holds nothing older).  s1 has the TLB row and the GAT base entry; their compare is
        # registered into s2, where the request leaves (bypass or reorder-buffer slot).
        m.submodules.tlb = tlb = Memory(shape=ent_w * W, depth=self.tlb_entries // W, init=[])
        tlb_rd = tlb.read_port(domain="sync")
        tlb_wr = tlb.write_port(granularity=ent_w)

        s1 = Signal(req_layout)
        s1_valid = Signal()
        s1_epoch = Signal()
        s2 = Signal(req_layout)
        s2_valid = Signal()
        s2_epoch = Signal()
        s2_go = s2_valid & ~rob_full        # with a free slot every request leaves s2 (bypass or slot)
        s1_adv = s1_valid & (~s2_valid | s2_go)
        take = (~s1_valid | s1_adv) & ~start_now
        pop = fifo.r_rdy & take
        byp_in = fempty & treq & take       # fempty implies ~fifo.r_rdy
        load = pop | byp_in
        nreq = Signal(req_layout)
        m.d.comb += [
            nreq.eq(Mux(fempty, wreq.as_value(), rreq.as_value())),
            fifo.w_en.eq(treq & ~byp_in),
            fifo.r_en.eq(pop),
            tlb_rd.en.eq(load),
            tlb_rd.addr.eq(nreq.nla[:self.set_bits]),
            regs.gat_addr.eq(Mux(load, nreq.nla[GATE_INDEX_BITS:], s1.nla[GATE_INDEX_BITS:])),
        ]
        with m.If(load):
            m.d.sync += [s1.eq(nreq), s1_valid.eq(1), s1_epoch.eq(epoch)]
        with m.Elif(s1_adv):
            m.d.sync += s1_valid.eq(0)

        ways = [data.View(self.tlb_entry, tlb_rd.data[i * ent_w:(i + 1) * ent_w]) for i in range(W)]
        s1_tag = s1.nla[self.set_bits:] if self.tag_bits else Const(0, 1)
        hit = Signal()
        ent = Signal(self.tlb_entry)
        for w in reversed(ways):
            match = w.valid & (w.tag == s1_tag) & (w.vpid == s1.vpid)
            with m.If(match):
                m.d.comb += [hit.eq(1), ent.eq(w)]
        # one way: the entry goes into s2 as read (only the hit needs the compare); several ways: the
        # matching way's entry
        sel = ways[0] if W == 1 else ent
        # one way: the compare is split into 8-bit pieces registered apart (the block RAM's clock-to-out
        # leaves little of the cycle), s2 ANDs them; several ways: the hit itself is registered
        if W == 1:
            w0 = ways[0]
            key_tlb = Cat(w0.valid, w0.vpid, w0.tag)
            key_req = Cat(Const(1), s1.vpid, s1_tag)
            pieces = [key_tlb[i:i + 8] == key_req[i:i + 8] for i in range(0, len(key_tlb), 8)]
        else:
            pieces = [hit]
        s2_match = Signal(len(pieces))
        s2_hit = s2_match.all()
        s2_perm = Signal()                  # the entry permits the access (read or write)
        s2_ppn = Signal(PPN_BITS)
        s2_lookup = Signal()                # in range and GAT configured: the TLB decides
        s2_gat = Signal(GAT_BASE_BITS)
        s2_fu = Signal(range(nfu + 1))
        with m.If(s1_adv):
            m.d.sync += [s2.eq(s1), s2_valid.eq(1), s2_epoch.eq(s1_epoch), s2_match.eq(Cat(*pieces)),
                         s2_perm.eq(Mux(s1.write, sel.write, sel.read)), s2_ppn.eq(sel.ppn),
                         s2_lookup.eq(~s1.bad & (regs.gat_data != 0)), s2_gat.eq(regs.gat_data),
                         s2_fu.eq(fu_idx(s1.src))]
        with m.Elif(s2_go):
            m.d.sync += s2_valid.eq(0)

        is_hit = s2_lookup & s2_hit
        is_miss = s2_lookup & ~s2_hit
        imm_ok = is_hit & s2_perm
        imm_cause = Signal(AtsCause)
        with m.If(s2.bad):
            m.d.comb += imm_cause.eq(AtsCause.NLA_RANGE)
        with m.Elif(~s2_lookup):
            m.d.comb += imm_cause.eq(AtsCause.GAT_NOT_CONFIGURED)
        with m.Elif(~s2_perm):
            m.d.comb += imm_cause.eq(AtsCause.PERMISSION)
        m.d.comb += [
            regs.hits_incr.eq(s2_go & is_hit),
            regs.misses_incr.eq(s2_go & is_miss),
        ]

        # ---------------------------------------------------------------- reorder buffer storage
        imm_layout = data.StructLayout({"ok": 1, "cause": AtsCause, "ppn": PPN_BITS, "dst": 4,
                                        "fu": range(nfu + 1), "tag": 5, "epoch": 1})
        res_layout = data.StructLayout({"ok": 1, "cause": AtsCause, "ppn": PPN_BITS})
        info_layout = data.StructLayout({"vpid": self.vpid_bits, "write": 1, "nla": self.nla_bits,
                                         "epoch": 1})
        m.submodules.imm = imm = Memory(shape=imm_layout, depth=R, init=[])
        m.submodules.res = res = Memory(shape=res_layout, depth=R, init=[])
        m.submodules.info = info = Memory(shape=info_layout, depth=R, init=[])
        imm_w, imm_r = imm.write_port(), imm.read_port(domain="comb")
        res_w, res_r = res.write_port(), res.read_port(domain="comb")
        info_w, info_r = info.write_port(), info.read_port(domain="comb")
        # DMA READs waiting for the output, {slot, GATE word address}, in a FIFO of R entries kept here
        # (dq_cnt, dq_rdy below) so that its storage is written whenever s2 leaves, without waiting for
        # the miss decision: the entry at the write pointer is free then (the queue holds only misses
        # with a reorder-buffer slot, so it is full only when the reorder buffer is), and only a miss
        # moves the pointer
        dma_layout = data.StructLayout({"slot": 5, "word": GAT_BASE_BITS + GATE_INDEX_BITS})
        m.submodules.dmaq = dmaq = Memory(shape=dma_layout, depth=R, init=[])
        dmaq_w, dmaq_r = dmaq.write_port(), dmaq.read_port(domain="comb")
        dq_wptr = Signal(range(R))
        dq_rptr = Signal(range(R))
        dma_head = dmaq_r.data

        # ---------------------------------------------------------------- output register and arbiter
        out = Signal(HtaxBeat)
        out_valid = Signal()
        out_rsp = Signal()                  # holds a translation response (counted in `inflight`)
        out_epoch = Signal()
        out_np = Signal()                   # out.vc is NONPOSTED (a DMA READ), else ATS: a flop for `free`
        out_moves = out_valid & Mux(out_np, tx.ready[HtaxVC.NONPOSTED.value], tx.ready[HtaxVC.ATS.value])
        free = ~out_valid | out_moves
        m.d.comb += [tx.valid.eq(out_valid), tx.payload.eq(out)]

        # flush state
        fl_nla = Signal(self.nla_bits)
        fl_vpid = Signal(VPID_BITS)
        fl_ats = Signal()
        fl_id = Signal(4)
        fl_sent = Signal(range(nfu + 1))
        fl_got = Signal(max(1, nfu))
        # the first flush request leaves in the cycle the flush starts (from the register fields), the
        # others from the stored copy
        fl_first = (start_now & regs.flush_ats) if nfu else Const(0)
        fl_more = Signal()                  # busy & ats & fewer than nfu requests sent, as a flop
        fl_send = fl_more | fl_first

        retire_rdy = Signal()               # head occupied & done[head], registered (computed below)
        m.d.comb += imm_r.addr.eq(head), res_r.addr.eq(head)
        head_imm = imm_r.data
        bypass_ok = s2_go & ~is_miss & pend_zero.bit_select(s2_fu, 1)

        def rsp_header(dst, tag):
            h = out.word.header
            return [h.cmd.eq(HtaxCmd.ATS), h.vc.eq(HtaxVC.ATS), h.src.eq(self.htax_port), h.dst.eq(dst),
                    h.tag.eq(tag), out.vc.eq(HtaxVC.ATS), out.first.eq(1), out.last.eq(1)]

        retire = Signal()
        bypass = Signal()
        dq_rdy = Signal()
        dma_pop = Signal()
        fl_load = Signal()
        # The source is chosen by priority among the flags that are flops (or register inputs) alone:
        # the output register's data never waits for the bypass decision, which only sets `out_valid`.
        byp_turn = ~fl_send & ~dq_rdy & ~retire_rdy
        m.d.comb += [fl_load.eq(free & fl_send), dma_pop.eq(free & ~fl_send & dq_rdy),
                     retire.eq(free & ~fl_send & ~dq_rdy & retire_rdy), bypass.eq(free & byp_turn & bypass_ok)]
        dq_push = Signal()
        dq_cnt = Signal(range(R + 1))          # DMA queue occupancy, so that its non-empty flag is a flop
        m.d.comb += dmaq_r.addr.eq(dq_rptr)
        with m.If(dma_pop):
            m.d.sync += dq_rptr.eq(dq_rptr + 1)
        with m.If(dq_push):
            m.d.sync += dq_wptr.eq(dq_wptr + 1)
        # dq_rdy = (dq_cnt != 0) of the next cycle without the adder's carry chain (dma_pop needs dq_rdy)
        _count(m, dq_cnt, dq_push, dma_pop)
        m.d.sync += dq_rdy.eq(dq_push | (dq_rdy & ~(dma_pop & (dq_cnt == 1))))
        # padded to a power of two so the index mux is complete (fl_load only happens for fl_sent < nfu)
        dsts = list(self.fu_ports) or [0]
        dsts += [dsts[-1]] * ((1 << len(fl_sent)) - len(dsts))
        fu_dst = Array(Const(p, 4) for p in dsts)
        tresp = out.word.header.body.ats.translation_response
        head_miss = Signal()                # the head slot's result is in res (a miss), a register
        sel_ok = Mux(head_miss, res_r.data.ok, head_imm.ok)
        # The register loads whenever it is free; only `out_valid` waits for the bypass decision (the
        # data is the bypass candidate when nothing else is chosen and is not looked at while invalid),
        # so the late decision drives one flop instead of the 96 enables.
        with m.If(free):
            m.d.sync += [out.eq(0), out_valid.eq(fl_send | dq_rdy | retire_rdy | bypass_ok),
                         out_rsp.eq(~fl_send & ~dq_rdy), out_np.eq(~fl_send & dq_rdy)]
            with m.If(fl_send):
                fr = out.word.header.body.ats.flush_request
                # fl_more: a running flush's later requests (from the stored copy); otherwise the first
                # one, in the cycle the flush starts (from the register fields)
                m.d.sync += rsp_header(fu_dst[Mux(fl_more, fl_sent, 0)], 0)
                m.d.sync += [fr.cmd.eq(AtsCmd.FLUSH_REQUEST), fr.vpid.eq(Mux(fl_more, fl_vpid, regs.flush_vpid)),
                             fr.nla_page.eq(Mux(fl_more, fl_nla, regs.flush_nla)),
                             fr.flush_id.eq(Mux(fl_more, fl_id, fl_id + 1))]
            with m.Elif(dq_rdy):
                h = out.word.header
                m.d.sync += [h.cmd.eq(HtaxCmd.READ), h.vc.eq(HtaxVC.NONPOSTED), h.src.eq(self.htax_port),
                             h.dst.eq(self.host_port), h.tag.eq(dma_head.slot),
                             h.body.mem.addr.eq(Cat(Const(0, 3), dma_head.word)), h.body.mem.length.eq(1),
                             h.body.mem.first_be.eq(0xFF), out.vc.eq(HtaxVC.NONPOSTED), out.first.eq(1),
                             out.last.eq(1)]
            with m.Elif(retire_rdy):
                m.d.sync += rsp_header(head_imm.dst, head_imm.tag)
                m.d.sync += [tresp.cmd.eq(AtsCmd.TRANSLATION_RESPONSE), tresp.ok.eq(sel_ok),
                             tresp.cause.eq(Mux(head_miss, res_r.data.cause, head_imm.cause)),
                             tresp.ppn.eq(Mux(head_miss, res_r.data.ppn, head_imm.ppn)),
                             out_epoch.eq(head_imm.epoch)]
            with m.Else():
                m.d.sync += rsp_header(s2.src, s2.tag)
                m.d.sync += [tresp.cmd.eq(AtsCmd.TRANSLATION_RESPONSE), tresp.ok.eq(imm_ok),
                             tresp.cause.eq(imm_cause), tresp.ppn.eq(Mux(imm_ok, s2_ppn, 0)),
                             out_epoch.eq(s2_epoch)]
        m.d.sync += regs.failed_incr.eq((retire & ~sel_ok) | (bypass & ~imm_ok))

        # ---------------------------------------------------------------- reorder buffer bookkeeping
        alloc = s2_go & ~bypass
        m.d.comb += [
            # the tail slot is free whenever s2 leaves (s2_go needs a free slot), so it is written even
            # for a bypassed result (tail does not move): no bypass decision in the write enables; a miss
            # never bypasses, so alloc & is_miss = s2_go & is_miss
            imm_w.addr.eq(tail), imm_w.en.eq(s2_go),
            imm_w.data.ok.eq(imm_ok), imm_w.data.cause.eq(imm_cause),
            imm_w.data.ppn.eq(Mux(imm_ok, s2_ppn, 0)), imm_w.data.dst.eq(s2.src), imm_w.data.fu.eq(s2_fu),
            imm_w.data.tag.eq(s2.tag),
            imm_w.data.epoch.eq(s2_epoch),
            # the info of a free slot is never read (a GATE is taken only for a waiting slot)
            info_w.addr.eq(tail), info_w.en.eq(s2_go),
            info_w.data.vpid.eq(s2.vpid), info_w.data.write.eq(s2.write), info_w.data.nla.eq(s2.nla),
            info_w.data.epoch.eq(s2_epoch),
            dmaq_w.addr.eq(dq_wptr), dmaq_w.en.eq(s2_go), dq_push.eq(s2_go & is_miss),
            dmaq_w.data.slot.eq(tail), dmaq_w.data.word.eq(Cat(s2.nla[:GATE_INDEX_BITS], s2_gat)),
        ]

        wait_set = Signal(R)
        wait_clr = Signal(R)
        with m.If(alloc):
            m.d.sync += tail.eq(tail + 1)
        with m.If(s2_go & is_miss):         # = alloc & is_miss
            m.d.comb += wait_set.eq(Const(1, R) << tail)
        with m.If(retire):
            m.d.sync += head.eq(head + 1)
        # full after an allocation that is not matched by a retire and makes tail reach head
        with m.If(alloc & ~retire):
            m.d.sync += rob_full.eq((tail + 1)[:len(tail)] == head)
        with m.Elif(retire & ~alloc):
            m.d.sync += rob_full.eq(0)
        ret_fu = head_imm.fu
        for i in range(nfu + 1):
            inc = alloc & (s2_fu == i)
            dec = retire & (ret_fu == i)
            # a retire of FU i needs pend[i] != 0, so pend[i] becomes 0 only by a retire from 1
            with m.If(inc & ~dec):
                m.d.sync += [pend[i].eq(pend[i] + 1), pend_zero[i].eq(0)]
            with m.Elif(dec & ~inc):
                m.d.sync += [pend[i].eq(pend[i] - 1), pend_zero[i].eq(pend[i] == 1)]

        # ---------------------------------------------------------------- memory responses (GATE reads)
        r_in = Signal()                     # inside a RESPONSE packet on rx
        r_want = Signal()                   # the next data beat is a GATE
        r_tag = Signal(5)
        rsp_beat = rx.valid & (rx_vc == HtaxVC.RESPONSE.value)
        fin_err = Signal()
        fin_tag = Signal(5)
        fin_ok = Signal()                   # a GATE or an error response for a slot that waits for it
        is_hdr = rsp_beat & rxb.first & (rxh.cmd == HtaxCmd.RESPONSE)

        def waiting_for(tag):
            """``tag`` (a DMA read tag) names a reorder-buffer slot that waits for its GATE."""
            hit = waiting.bit_select(tag[:_log2(R)], 1)
            return hit & (tag[_log2(R):] == 0) if R < 32 else hit

        with m.If(rsp_beat):
            with m.If(rxb.first):
                m.d.sync += r_in.eq(~rxb.last)
                ok_data = (rxh.status == HtaxStatus.OK) & (rxh.body.mem.length != 0) & ~rxb.last
                # the data beat is taken only for a slot already waiting when the header arrives: its
                # request info (read now, below) was written at least one cycle before
                m.d.sync += [r_want.eq(is_hdr & ok_data & waiting_for(rxh.tag)), r_tag.eq(rxh.tag)]
                with m.If(is_hdr & ~ok_data):
                    m.d.comb += [fin_err.eq(1), fin_tag.eq(rxh.tag), fin_ok.eq(waiting_for(rxh.tag))]
            with m.Elif(r_in):
                m.d.sync += [r_in.eq(~rxb.last), r_want.eq(0)]
                with m.If(r_want):
                    # r_want: the slot waited when the header arrived, and only a response with its tag
                    # clears that, which cannot come before this packet's data beat: no second check
                    m.d.comb += [fin_tag.eq(r_tag), fin_ok.eq(1)]
        slot = fin_tag[:_log2(R)]
        slot_ok = fin_ok
        gate = data.View(Gate, rxb.word.data)
        # the slot's request info is read with the header's tag and registered, so the GATE check in the
        # data beat's cycle starts from flops; an error response (no data) needs no info.  The check's
        # result is registered (stage g) and written into the reorder buffer and the TLB one cycle later.
        inf = Signal(info_layout)
        m.d.comb += info_r.addr.eq(rxh.tag[:_log2(R)])
        with m.If(rsp_beat & rxb.first):
            m.d.sync += inf.eq(info_r.data)
        vpid_ok = gate.vpid == inf.vpid
        g_perm = Mux(inf.write, gate.write, gate.read)
        g_ok = ~fin_err & gate.valid & vpid_ok & g_perm
        g_cause = Signal(AtsCause)
        with m.If(fin_err):
            m.d.comb += g_cause.eq(AtsCause.MEMORY_ERROR)
        with m.Elif(~gate.valid):
            m.d.comb += g_cause.eq(AtsCause.INVALID_GATE)
        with m.Elif(~vpid_ok):
            m.d.comb += g_cause.eq(AtsCause.VPID_MISMATCH)
        with m.Elif(~g_perm):
            m.d.comb += g_cause.eq(AtsCause.PERMISSION)
        # a fill needs a valid GATE of the request's VPID read in the current epoch; a flush starting in
        # this cycle flips the epoch, so it cancels the fill as well
        fill_now = slot_ok & ~fin_err & gate.valid & vpid_ok & (inf.epoch == epoch) & ~start_now
        new = Signal(self.tlb_entry)
        m.d.comb += [new.valid.eq(1), new.read.eq(gate.read), new.write.eq(gate.write), new.vpid.eq(inf.vpid),
                     new.ppn.eq(gate.ppn)]
        if self.tag_bits:
            m.d.comb += new.tag.eq(inf.nla[self.set_bits:])
        g_valid = Signal()
        g_slot = Signal(range(R))
        g_res = Signal(res_layout)
        g_fill = Signal()
        g_set = Signal(self.set_bits)
        g_new = Signal(self.tlb_entry)
        m.d.sync += [g_valid.eq(slot_ok), g_slot.eq(slot), g_res.ok.eq(g_ok), g_res.cause.eq(g_cause),
                     g_res.ppn.eq(gate.ppn), g_fill.eq(fill_now), g_set.eq(inf.nla[:self.set_bits]),
                     g_new.eq(new)]
        m.d.comb += [res_w.addr.eq(g_slot), res_w.en.eq(g_valid), res_w.data.ok.eq(g_res.ok),
                     res_w.data.cause.eq(g_res.cause), res_w.data.ppn.eq(Mux(g_res.ok, g_res.ppn, 0))]
        with m.If(slot_ok):
            m.d.comb += wait_clr.eq(Const(1, R) << slot)
        # done[slot] means something only for an occupied slot: whenever s2 leaves, the (free) tail slot's
        # bit is written with "result known", whether the result is allocated or bypassed, so the bit
        # does not wait for the bypass decision; a GATE (or memory error) arriving sets it
        for j in range(R):
            with m.If(s2_go & (tail == j)):
                m.d.sync += [done[j].eq(~is_miss), missv[j].eq(is_miss)]
            with m.Elif(g_valid & (g_slot == j)):
                m.d.sync += done[j].eq(1)
        m.d.sync += waiting.eq((waiting | wait_set) & ~wait_clr)
        # retire_rdy of the next cycle = the next done vector at the next head, from the head and
        # head + 1 candidates (only bits set by flops or by this cycle's allocation/GATE at that slot)
        head1 = Signal(range(R), init=1 % R)   # head + 1, kept as a register
        # a copy of head for the per-slot bit vectors, so that the reorder buffer's read address does
        # not also drive their multiplexers
        head_b = Signal(range(R), attrs={"keep": 1})
        with m.If(retire):
            m.d.sync += [head1.eq(head1 + 1), head_b.eq(head_b + 1)]
        # An allocation with its result known reaches the head only into an empty buffer (tail == head:
        # no FU has anything pending, so it is not bypassed only when the output is busy or taken) in a
        # cycle without a retire, and head + 1 only in a cycle with a retire (which excludes a bypass):
        # neither case waits for the per-FU bypass check.
        known_go = s2_go & ~is_miss
        # done[] counts at the head only for an occupied slot: the head is occupied unless the buffer is
        # empty (tail == head and not full), head + 1 after a retire unless the retired slot was the last
        d_head = ((done.bit_select(head_b, 1) & ((tail != head_b) | rob_full))
                  | (known_go & ~(free & byp_turn) & (tail == head_b)) | (g_valid & (g_slot == head_b)))
        d_head1 = ((done.bit_select(head1, 1) & (tail != head1)) | (known_go & (tail == head1))
                   | (g_valid & (g_slot == head1)))
        m.d.sync += retire_rdy.eq(Mux(retire, d_head1, d_head))
        # head_miss the same way, so the output's hit/miss select is a flop, not a LUT-RAM read that fans
        # out to every result bit; this cycle's s2 write wins where it targets the next head slot
        m_head = Mux(s2_go & (tail == head_b), is_miss, missv.bit_select(head_b, 1))
        m_head1 = Mux(s2_go & (tail == head1), is_miss, missv.bit_select(head1, 1))
        m.d.sync += head_miss.eq(Mux(retire, m_head1, m_head))

        # TLB write port: flush invalidation wins over a fill (a lost fill only costs a later miss)
        # (an invalidation writes the fill's entry with its valid bit clear: only the valid bit waits
        # for the flush strobe, and an invalid entry's other fields are never used)
        victim = Signal(range(W)) if W > 1 else None
        wr_ent = Signal(self.tlb_entry)
        m.d.comb += [wr_ent.eq(g_new), wr_ent.valid.eq(~inval_now), tlb_wr.data.eq(Cat(*([wr_ent] * W)))]
        with m.If(inval_now):
            m.d.comb += [tlb_wr.addr.eq(regs.flush_nla[:self.set_bits]), tlb_wr.en.eq((1 << W) - 1)]
        with m.Elif(g_fill):
            m.d.comb += [tlb_wr.addr.eq(g_set), tlb_wr.en.eq(Const(1, W) << victim if W > 1 else 1)]
            if W > 1:
                m.d.sync += victim.eq(victim + 1)

        # ---------------------------------------------------------------- flush (ch. 5.3)
        inflight = [Signal(range(R + 4), name=f"inflight{e}") for e in range(2)]
        for e in range(2):
            _count(m, inflight[e], load & (epoch == e), out_moves & out_rsp & (out_epoch == e))
        old_drained = Mux(epoch, inflight[0], inflight[1]) == 0
        # a flush response counts in the cycle it arrives (done may strobe in that cycle)
        fr_in = msg.flush_response
        fr_match = fresp & busy & (fr_in.flush_id == fl_id)
        got_now = Signal(max(1, nfu))
        fr_taken = Signal()
        for i, p in enumerate(self.fu_ports):
            m.d.comb += got_now[i].eq(fl_got[i] | (fr_match & (rxh.src == p)))
        m.d.comb += fr_taken.eq(fr_match & (got_now != fl_got))
        m.d.sync += fl_got.eq(got_now)
        all_got = got_now.all() if nfu else Const(1)
        fl_done = busy & old_drained & (~fl_ats | all_got)
        # the copy of the request fields is used only while busy: it follows them while idle, so that
        # the flush start strobe does not reach its enables
        with m.If(~busy):
            m.d.sync += [fl_nla.eq(regs.flush_nla), fl_vpid.eq(regs.flush_vpid), fl_ats.eq(regs.flush_ats),
                         fl_got.eq(0)]
        with m.If(start_now):
            m.d.sync += [busy.eq(1), epoch.eq(~epoch), fl_id.eq(fl_id + 1), fl_sent.eq(fl_load),
                         fl_more.eq(regs.flush_ats & Mux(fl_load, nfu > 1, nfu > 0))]
        with m.Else():
            with m.If(fl_load):
                m.d.sync += [fl_sent.eq(fl_sent + 1), fl_more.eq(fl_sent + 1 < nfu)]
            with m.If(fl_done):
                m.d.sync += busy.eq(0)
        # dropped packets, counted at their first beat: ATS messages not taken, anything posted/non-posted
        first_moves = rx.valid & rxb.first & rx.ready.bit_select(rx_vc, 1)
        np_vc = (rx_vc == HtaxVC.POSTED.value) | (rx_vc == HtaxVC.NONPOSTED.value)
        ats_drop = (rx_vc == HtaxVC.ATS.value) & ~treq & ~fr_taken
        m.d.sync += regs.dropped_incr.eq(first_moves & (np_vc | ats_drop))
        m.d.comb += [
            regs.tlb_flushes_incr.eq(inval_now),
            regs.flush_done.eq(fl_done),
            regs.atu_flushes_incr.eq(fl_done),
        ]
        return m
