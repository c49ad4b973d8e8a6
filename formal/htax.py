# amaranth: UnusedElaboratable=no
"""Formal proofs for the HTAX crossbar (``make formal UNIT=htax``), on a 2-port switch with tiny buffers.

* ``conservation`` (k-induction): per input port, packets taken in (stored headers plus generated error
  responses) minus headers that left on any output equals the packets still waiting for their header
  to leave, computed from the slot occupancy and the read engine: no packet is lost, duplicated or
  created, and buffer occupancy is accounted for exactly.  Every header an output offers is well
  formed, addressed to that output and on the VC of its beat.  The slot counters per class (the four
  VCs and the switch's error responses) and the count of shared slots in use match the slots; a header
  taken in always finds a free slot; a VC with a free reserved slot is ready whatever the other VCs
  hold, and the non-posted VC is ready whenever its reserved slot is free and none of the input's own
  error responses waits (the unit's responses never take that slot: they never hold back its
  requests).  An issued read whose word the read engine uses never reads the address the data
  memory's write port writes in that cycle (the memories' ``no_rw_check``; this check is in all
  three proofs).
* ``links`` (k-induction): the link rules of :mod:`rtl.common.htax_rules` hold on every output while
  the inputs obey them (with malformed headers allowed) and sinks refuse VCs at random (keeping their
  ``ready2`` promise, :func:`~rtl.common.htax_rules.sink_rules`); invariants tie each output's rule
  checker (``remaining``, ``vc``, ``in_packet``) to the read engines.  No output offers a header in
  the cycle after a beat of the header's VC moved on it unless the sink raised ``ready2`` for that beat
  (the switch decides on a VC's ``ready`` only after the previous beat of that VC has moved, or on the
  sink's promise: ``docs/htax.md``).
* ``pipelined`` (bounded, 13 cycles): on :class:`~rtl.htax.HtaxPipelined` (2 ports, 9-beat output
  buffers), the link rules and the fresh-``ready`` rule of ``links`` on every output, every offered
  header well formed, for that output and on its beat's VC, never more headers out than in, a free slot
  for every header taken in and the slot accounting of ``conservation`` (the inputs' ``ready`` is
  registered there), the registered lowest free slot equal to the lowest free slot, each read
  engine's look-ahead flag (``near``) equal to its beats still to read being below ``_IN_AHEAD`` (and
  1 while the engine is idle), its registered remaining beats (``erem``) and "next beat is the last"
  (``e_last``, and ``nx_last`` of the looked-up packet) equal to what they stand for, its registered
  "the next word is stored" terms (``e_k0``, ``e_ge``, and ``e_same`` while the writer stores a
  packet) equal to the comparisons they replace, the registered
  class flags ``cnt_over`` / ``cnt_full`` equal to the counters' comparisons with their reservations,
  ``can_book`` (from registers) equal to ``~bk & ~nx & near``, a
  one-hot write-register output ``w_dst`` (and skid-register output ``s_dst``, the skid register full
  only behind a full write register), the write register's end flags ``w_end`` equal to ``w_dst`` on a
  packet's last beat and 0 otherwise, the released-slot one-hot ``rel_oh`` (a register of the slot
  being read, gated by ``release``) equal to the decoded ``release``/``rel_slot``, the writer's
  registered ``wmore`` equal to "not dropping and ``wcount < wexp``", each output buffer's pointers
  and "not empty" flag equal to a count of its pushes and pops, each input's register ``sel`` ("output
  *o* takes my beats") equal to the outputs' ``wact & wsel_oh``, the one-hot copies of ``wsel`` and
  ``obk_in`` equal to the binary ones, no registered grant of a booked output, the registered room
  flags (``space_ok``) exact whenever the output may grant, the registered request flags ``has`` equal
  to "queue not empty", the head lookup from the registered queue heads equal to a search of the
  current slots (and never empty), every header read from the data memory well formed and equal in
  output, VC and length to what the read engine reads, and every output buffer's free space plus its
  beats plus a beat on its way in at most its depth (no overflow). Not yet k-induction: the invariants
  of the pipelined matching are not written (``docs/htax.md``).
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Elaboratable, Module, Mux, Signal

from fpga.formal import Proof
from rtl.common.htax import MAX_DATA_WORDS, HtaxVC, malformed
from rtl.common.htax_rules import data_beats, link_rules, sink_rules
from rtl.htax import Htax, HtaxPipelined
from rtl.htax.pipelined import _IN_AHEAD, _RESERVE
from rtl.htax.rr import lowest


class HtaxProperties(Elaboratable):
    def __init__(self, *, ports=2, slots_per_vc=1, shared_slots=1, links=True, conservation=True,
                 pipelined=False):
        self.pipelined = pipelined
        self.ports = ports
        self.slots_per_vc = slots_per_vc
        self.shared_slots = shared_slots
        self.links = links
        self.conservation = conservation

    def elaborate(self, platform):
        m = Module()
        n, s = self.ports, self.slots_per_vc
        if self.pipelined:
            dut = HtaxPipelined(ports=n, slots_per_vc=s, shared_slots=self.shared_slots, counter_bits=2,
                                out_depth=MAX_DATA_WORDS + 1)
        else:
            dut = Htax(ports=n, slots_per_vc=s, shared_slots=self.shared_slots, counter_bits=2)
        m.submodules.dut = dut.elaborate(platform)
        st = dut._state
        checkers = []
        for i in range(n):
            port = dut.port(i)
            m.d.comb += [
                port.tx.valid.eq(AnySeq(1)),
                port.tx.payload.as_value().eq(AnySeq(len(port.tx.payload.as_value()))),
                port.rx.ready.eq(AnySeq(4)),
                port.rx.ready2.eq(AnySeq(4)),
            ]
            promised = sink_rules(m, port.rx, Assume, name=f"out{i}")
            link_rules(m, port.tx, Assume, well_formed=False, name=f"in{i}")
            if self.links:
                checker = {}
                link_rules(m, port.rx, Assert, well_formed=True, name=f"out{i}", state=checker)
                checkers.append(checker)
                # No header directly behind a beat of its own VC unless the sink promised room for it
                # (ready2): a packet on VC v is started only on a ready[v] sampled after the previous v
                # beat to this output had moved, or on that beat's ready2[v].
                # (sink_rules' `promised` has bit v set after a v beat moved under ready2[v].)
                moved = Signal(name=f"f_out{i}_moved")
                moved_vc = Signal(2, name=f"f_out{i}_moved_vc")
                m.d.sync += [moved.eq(port.rx.transfer()), moved_vc.eq(port.rx.payload.vc.as_value())]
                with m.If(moved & ~promised.bit_select(moved_vc, 1) & port.rx.valid & port.rx.payload.first):
                    m.d.comb += Assert(port.rx.payload.vc.as_value() != moved_vc)

        if self.pipelined:
            self._pipelined_bounded(m, dut)
            return m
        if self.links:
            self._link_invariants(m, st, checkers)
        if not self.conservation:
            return m

        for o in range(n):
            rx = dut.port(o).rx
            hdr = rx.payload.word.header
            with m.If(rx.valid & rx.payload.first):
                m.d.comb += [
                    Assert(~malformed(hdr)),
                    Assert(hdr.dst == o),
                    Assert(hdr.vc.as_value() == rx.payload.vc.as_value()),
                    Assert(rx.payload.last == (data_beats(hdr) == 0)),
                ]

        for i, x in enumerate(st["inputs"]):
            # consistency of the slots, the read engine and the read register
            for k, occ in enumerate(x.occ):
                with m.If(occ):
                    h = x.shdr[k]
                    m.d.comb += [
                        Assert(~malformed(h)),
                        Assert(h.dst == x.sdst[k]),
                        Assert(h.vc.as_value() == x.svc[k]),
                        Assert(data_beats(h) == x.snb[k]),
                    ]
            with m.If(x.act):
                m.d.comb += [
                    Assert(x.ek <= x.enb),
                    Assert(x.enb <= MAX_DATA_WORDS),
                ]
                for k, occ in enumerate(x.occ):
                    with m.If(x.eslot == k):
                        m.d.comb += [Assert(occ), Assert(x.enb == x.snb[k]), Assert(x.edst == x.sdst[k]),
                                     Assert(x.evc == x.svc[k]),
                                     Assert(x.ecls == Mux(x.serr[k], x.err_cls, x.svc[k]))]
                m.d.comb += Assert(x.eslot < len(x.occ))
            self._read_header(m, x)
            self._no_collision(m, x)
            with m.If(x.act & (x.ek != 0)):
                m.d.comb += Assert(x.edst == x.rd_dst)
                # the read register holds a beat of this packet (never its last) or nothing
                m.d.comb += Assert(~x.rd_valid | ~x.rd_last)
                with m.If(x.rd_valid & ~x.rd_first):
                    m.d.comb += Assert(x.ek >= 2)

            self._accounting(m, x)
            rsp = HtaxVC.RESPONSE.value
            for k in range(x.nslots):
                with m.If(x.occ[k] & x.serr[k]):
                    m.d.comb += Assert(x.svc[k] == rsp)
            # the age matrix orders every queue: of two waiting packets of one (VC, destination)
            # exactly one is the older (so at most one slot per queue is eligible)
            for k in range(x.nslots):
                with m.If(x.occ[k]):
                    m.d.comb += Assert(~x.older[k][k])
                for j in range(k + 1, x.nslots):
                    with m.If(x.occ[k] & x.occ[j] & (x.svc[k] == x.svc[j]) & (x.sdst[k] == x.sdst[j])):
                        m.d.comb += Assert(x.older[k][j] != x.older[j][k])
            # ... only within a queue ...
            for a in range(x.nslots):
                for b in range(x.nslots):
                    if a != b:
                        with m.If(x.occ[a] & x.occ[b] & x.older[a][b]):
                            m.d.comb += [Assert(x.svc[a] == x.svc[b]), Assert(x.sdst[a] == x.sdst[b])]
            # ... and transitively, so every non-empty queue has an eligible (oldest) packet
            for a in range(x.nslots):
                for b in range(x.nslots):
                    for c in range(x.nslots):
                        if len({a, b, c}) == 3:
                            with m.If(x.occ[a] & x.occ[b] & x.occ[c] & x.older[a][b] & x.older[b][c]):
                                m.d.comb += Assert(x.older[a][c])
            # the queue counters behind the requests count the waiting packets of each (VC, output)
            for v, row in enumerate(x.qcnt):
                for o, qc in enumerate(row):
                    m.d.comb += Assert(qc == sum((x.occ[k] & (x.svc[k] == v) & (x.sdst[k] == o)).as_unsigned()
                                                 for k in range(x.nslots)))
            # a header that is taken in always finds a free slot
            with m.If(x.alloc):
                m.d.comb += Assert(~Cat(x.occ).bit_select(x.alloc_slot, 1))
            # reservations: a VC with a free reserved slot is ready, whatever the other VCs hold; the
            # non-posted VC also needs its possible error response's reserved slot, which the unit's
            # responses never take (a unit's responses never hold back its requests)
            with m.If(~x.in_pkt):
                for v in range(len(x.ready)):
                    own = x.cnt[v] < x.res[v]
                    if v == HtaxVC.NONPOSTED.value:
                        own = own & (x.cnt[x.err_cls] == 0)
                    with m.If(own):
                        m.d.comb += Assert(x.ready[v])

            # the conservation law
            width = 6
            taken = Signal(width, name=f"in{i}_taken")
            left = Signal(width, name=f"in{i}_left")
            with m.If(x.alloc):
                m.d.sync += taken.eq(taken + 1)
            header_left = 0
            for o in range(n):
                rx = dut.port(o).rx
                header_left = header_left | (st["out_move"][o] & rx.payload.first & st["busy"][o]
                                             & (st["owner"][o] == i))
            with m.If(header_left):
                m.d.sync += left.eq(left + 1)
            waiting = Signal(width, name=f"in{i}_waiting")
            m.d.comb += waiting.eq(sum(o.as_unsigned() for o in x.occ)
                                   - (x.act & (x.ek != 0) & ~(x.rd_valid & x.rd_first))
                                   + (x.rd_valid & x.rd_first & x.rd_last))
            m.d.comb += Assert(((taken - left)[:width]) == waiting)
        return m

    @staticmethod
    def _read_header(m, x):
        """A header in the read register of input ``x`` is well formed and is the header of the packet
        the read engine reads (its output, VC and length as the engine has them)."""
        with m.If(x.rd_valid & x.rd_first):
            m.d.comb += [
                Assert(~malformed(x.rd_hdr)),
                Assert(x.rd_hdr.dst == x.rd_dst),
                Assert(x.rd_hdr.vc.as_value() == x.rd_vc),
                Assert(x.rd_last == (data_beats(x.rd_hdr) == 0)),
            ]
            with m.If(~x.rd_last):
                m.d.comb += [Assert(x.act), Assert(x.ek == 1), Assert(x.edst == x.rd_dst),
                             Assert(x.enb == data_beats(x.rd_hdr)), Assert(x.evc == x.rd_vc)]
            with m.Else():
                m.d.comb += Assert(~x.act | (x.ek == 0))

    @staticmethod
    def _accounting(m, x):
        """Slot accounting of input ``x``: cnt[c] counts the slots of class c (the VCs and ERR, the
        switch's error responses), ``shared`` the slots held beyond their class's reservation."""
        cls = [Mux(x.serr[k], x.err_cls, x.svc[k]) for k in range(x.nslots)]
        excess = 0
        for c, cnt in enumerate(x.cnt):
            m.d.comb += Assert(cnt == sum((x.occ[k] & (cls[k] == c)).as_unsigned() for k in range(x.nslots)))
            excess = excess + Mux(cnt > x.res[c], cnt - x.res[c], 0)
        m.d.comb += [Assert(x.shared == excess), Assert(x.shared <= x.nslots - sum(x.res))]

    @staticmethod
    def _no_collision(m, x):
        """An issued read whose word the engine uses (every word with ``header_memory``, else the data
        words) never reads the address the write port writes in the same cycle: the data memories'
        ``no_rw_check`` (``rtl/htax/switch.py``)."""
        used = x.rd_issue if x.header_memory else x.rd_issue & (x.rd_k != 0)
        with m.If(used & x.wp.en):
            m.d.comb += Assert(x.rp.addr != x.wp.addr)
        # (for the induction: a packet the writer stores has at most MAX_DATA_WORDS data words, and
        # the writer is at or before its end, so its writes stay inside its slot)
        with m.If(x.m_in_pkt & ~x.m_wdrop):
            m.d.comb += [Assert(x.wexp <= MAX_DATA_WORDS), Assert(x.m_wcount <= x.wexp)]
        # the writer's registered "the next data beat is stored"
        m.d.comb += Assert(x.wmore == (~x.m_wdrop & (x.m_wcount < x.wexp)))

    @classmethod
    def _pipelined_bounded(cls, m, dut):
        """Bounded properties of ``HtaxPipelined`` (besides the link rules and the fresh-``ready`` rule
        above): every header an output offers is well formed, addressed to that output and on its
        beat's VC, no more headers leave than were taken in (stored or answered by an error
        response), and the state the module docstring lists (slots, accounting, ``near``, one-hot
        registers) is consistent."""
        n = len(dut.ports)
        taken = Signal(8, name="f_taken")
        left = Signal(8, name="f_left")
        allocs = sum(x.alloc.as_unsigned() for x in dut._state["inputs"])
        outs = 0
        for o in range(n):
            rx = dut.port(o).rx
            hdr = rx.payload.word.header
            with m.If(rx.valid & rx.payload.first):
                m.d.comb += [Assert(~malformed(hdr)), Assert(hdr.dst == o),
                             Assert(hdr.vc.as_value() == rx.payload.vc.as_value())]
            outs = outs + (rx.transfer() & rx.payload.first).as_unsigned()
        m.d.sync += [taken.eq(taken + allocs), left.eq(left + outs)]
        m.d.comb += Assert(left <= taken)
        st = dut._state
        for x in st["inputs"]:
            # the registered ready never takes in a header without a free slot, nor beyond the
            # reservations and the shared slots
            with m.If(x.alloc):
                m.d.comb += Assert(~Cat(x.occ).bit_select(x.alloc_slot, 1))
            cls._accounting(m, x)
            cls._no_collision(m, x)
            # the registered lowest free slot is the lowest free slot
            m.d.comb += Assert(x.low == lowest(~Cat(x.occ)))
            # the registered request flags equal "queue not empty"
            for v in range(len(x.has)):
                for o in range(n):
                    m.d.comb += Assert(x.has[v][o] == (x.qcnt[v][o] != 0))
            # the head lookup from the registered heads finds the booked queue's oldest packet that is
            # not being read, as a search of this cycle's slots would
            waiting = Cat(x.occ) & ~x.busy
            now = Cat(waiting[k] & ~(waiting & x.older[k]).any() & (x.svc[k] == x.bk_vc)
                      & (x.sdst[k] == x.bk_dst) for k in range(x.nslots))
            with m.If(x.bk & ~x.nx):
                m.d.comb += [Assert(x.hit == now), Assert(x.hit != 0)]
            # the look-ahead flag: fewer than _IN_AHEAD beats still to read
            with m.If(x.act):
                m.d.comb += Assert(x.near == (x.enb - x.ek < _IN_AHEAD))
                # the engine's registered remaining beats and "the next beat is the last"
                m.d.comb += [Assert(x.erem == x.enb - x.ek), Assert(x.e_last == (x.ek == x.enb))]
            with m.Else():
                m.d.comb += Assert(x.near)
            with m.If(x.nx):
                m.d.comb += Assert(x.nx_last == (x.nx_nb == 0))
            # the read engine's registered "the next word is stored" terms
            m.d.comb += [Assert(x.e_k0 == (x.ek == 0)), Assert(x.e_ge == (x.m_wcount >= x.ek))]
            with m.If(x.m_in_pkt & ~x.m_wdrop):
                m.d.comb += Assert(x.e_same == (x.m_wslot == x.eslot))
            # the registered class flags: the counters beyond / at their reservation
            for c in x.classes:
                m.d.comb += [Assert(x.cnt_over[c] == (x.cnt[c] > x.res[c])),
                             Assert(x.cnt_full[c] == (x.cnt[c] >= x.res[c]))]
            # can_book (from registers) is "no booking waiting and the engine idle or near its end"
            m.d.comb += Assert(x.can_book == (~x.bk & ~x.nx & x.near))
            # a header read from the data memory is the header of the packet the engine reads
            cls._read_header(m, x)
            # the write register names one output
            with m.If(x.w_valid):
                m.d.comb += Assert((x.w_dst != 0) & ((x.w_dst & (x.w_dst - 1)) == 0))
            # ... and so does the skid register, which holds a beat only behind one in w
            with m.If(x.s_valid):
                m.d.comb += [Assert(x.w_valid), Assert((x.s_dst != 0) & ((x.s_dst & (x.s_dst - 1)) == 0))]
            # the registered released-slot one-hot decodes release and rel_slot
            m.d.comb += Assert(x.rel_oh == Mux(x.release, Const(1, x.nslots) << x.rel_slot, 0))
            # w_end is the write register's output when it holds a packet's last beat, else 0
            m.d.comb += Assert(x.w_end == Mux(x.w_valid & x.w_beat.last, x.w_dst, 0))
        # the inputs' registered copies of "output o takes from input i"
        for i, sel in enumerate(st["sel"]):
            m.d.comb += Assert(sel == Cat(st["wact"][o] & st["wsel_oh"][o][i] for o in range(n)))
        # the one-hot copies of wsel and obk_in name the same input as the binary ones; an output
        # buffer's free space never counts a beat that is in the buffer or on its way into it
        for o in range(n):
            depth = dut.out_depth
            for v, (wp, rp, buffered, push, pop, in_ow) in enumerate(zip(*st["buffers"][o], strict=True)):
                # the buffer's beats (counted here: the switch keeps only the pointers and a "not
                # empty" flag), never more than its depth, and the pointers and the flag agree with them
                cnt = Signal(range(depth + 2), name=f"f_o{o}_vc{v}_count")
                m.d.sync += cnt.eq(cnt + push - pop)
                m.d.comb += [Assert(cnt <= depth), Assert(buffered == (cnt != 0)),
                             Assert(wp == (rp + cnt) % depth),
                             Assert(st["space"][o][v] + cnt + in_ow <= depth)]
                # the registered "room for a booking" flag is exact whenever the output may grant
                with m.If(st["o_open"][o]):
                    m.d.comb += Assert(st["space_ok"][o][v] == (st["space"][o][v] >= _RESERVE))
            with m.If(st["wact"][o]):
                m.d.comb += Assert(st["wsel_oh"][o] == (1 << st["wsel"][o]))
            with m.If(st["obk"][o]):
                m.d.comb += Assert(st["obk_in_oh"][o] == (1 << st["obk_in"][o]))
                # a registered grant never meets a booked output (the accept step has no obk term)
                m.d.comb += Assert(st["g"][o] == 0)

    @staticmethod
    def _link_invariants(m, st, checkers):
        """Relate every output's link checker to the read engines, so the link rules are inductive."""
        inputs, busy, owner = st["inputs"], st["busy"], st["owner"]
        nxt_valid, nxt = st["nxt_valid"], st["nxt"]
        n = len(inputs)
        mid, mid_out, mid_rem, mid_vc, pend = [], [], [], [], []
        for i, x in enumerate(inputs):
            data_pending = x.rd_valid & ~x.rd_first           # a data beat waits in the read register
            hdr_gone = x.act & (x.ek != 0) & ~(x.rd_valid & x.rd_first)
            mi = Signal(name=f"f_i{i}_mid")
            mo = Signal.like(x.edst, name=f"f_i{i}_mid_out")
            rem = Signal(5, name=f"f_i{i}_mid_rem")
            vc = Signal(2, name=f"f_i{i}_mid_vc")
            m.d.comb += [
                mi.eq(data_pending | hdr_gone),
                mo.eq(Mux(data_pending, x.rd_dst, x.edst)),
                rem.eq(Mux(data_pending & x.rd_last, 1,
                           Mux(data_pending, x.enb - x.ek + 2, x.enb - x.ek + 1))),
                vc.eq(Mux(data_pending, x.rd_vc, x.evc)),
            ]
            mid.append(mi)
            mid_out.append(mo)
            mid_rem.append(rem)
            mid_vc.append(vc)
            pend.append([(x.rd_valid & x.rd_first & (x.rd_dst == o))
                         | (x.act & (x.ek == 0) & (x.edst == o)) for o in range(n)])
            with m.If(mi):
                m.d.comb += Assert(rem != 0)
            with m.If(data_pending & ~x.rd_last):
                m.d.comb += [Assert(x.act), Assert(x.ek >= 2), Assert(x.edst == x.rd_dst),
                             Assert(x.evc == x.rd_vc)]
        for o, chk in enumerate(checkers):
            # a matched packet whose header has not left belongs to the output's owner or next packet
            for i, x in enumerate(inputs):
                with m.If(pend[i][o]):
                    m.d.comb += Assert(busy[o] & ((owner[o] == i) | (nxt_valid[o] & (nxt[o] == i))))
                # a beat for o in the read register and the next packet for o in the engine: the owner's
                # last beat, followed by the owner's next packet
                with m.If(x.rd_valid & (x.rd_dst == o) & x.act & (x.ek == 0) & (x.edst == o)):
                    m.d.comb += Assert((owner[o] == i) & nxt_valid[o] & (nxt[o] == i))
            in_pkt = 0
            for i in range(n):
                here = mid[i] & (mid_out[i] == o)
                in_pkt = in_pkt | here
                with m.If(here):
                    m.d.comb += [
                        Assert(chk["in_packet"]),
                        Assert(busy[o] & (owner[o] == i)),
                        Assert(chk["remaining"] == mid_rem[i]),
                        Assert(chk["vc"] == mid_vc[i]),
                    ]
            m.d.comb += Assert(chk["in_packet"] == in_pkt)
            with m.If(busy[o]):
                m.d.comb += Assert(Array(mid[i] & (mid_out[i] == o) | pend[i][o] for i in range(n))[owner[o]])
            with m.If(nxt_valid[o]):
                # a next packet is only matched once the owner's last beat for o waits to move
                own = Array(Cat(x.rd_valid, x.rd_last, x.rd_dst == o) for x in inputs)[owner[o]]
                m.d.comb += [Assert(busy[o]), Assert(Array(pend[i][o] for i in range(n))[nxt[o]]),
                             Assert(own == 0b111)]
                # the next packet is on another VC than the one whose last beat waits (a packet on the
                # same VC is matched only with ready[v] high, when that last beat moves: it becomes the
                # owner at once)
                nx = Array(Cat(x.act & (x.ek == 0) & (x.edst == o), x.evc, x.rd_vc)
                           for x in inputs)[nxt[o]]
                nxt_vc = Mux(nx[0], nx[1:3], nx[3:5])
                m.d.comb += Assert(nxt_vc != Array(x.rd_vc for x in inputs)[owner[o]])
                with m.If(nxt[o] == owner[o]):
                    m.d.comb += Assert(Array(x.act & (x.ek == 0) & (x.edst == o)
                                             for x in inputs)[owner[o]])


def proofs(cfg):
    yield Proof("conservation", HtaxProperties(links=False), mode="prove", depth=6)
    yield Proof("links", HtaxProperties(), mode="prove", depth=8)
    # depth 13: the 14th step alone took over 40 minutes with the header registers (steps 0-12 about
    # 13 minutes on a busy machine), and still over 15 with the headers in the data memory (steps 0-12
    # 6.6 minutes, depth 13 in all about 6)
    yield Proof("pipelined", HtaxProperties(pipelined=True, conservation=False), mode="bmc", depth=13)
