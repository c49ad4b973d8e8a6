"""The register-file runtime: an HTAX target built from a :mod:`rtl.common.regspec` description (ch. 7.2).

The generated module (``build/regs/<key>/nic_regs.py``, written by :mod:`rtl.regs.exporter` from the
SystemRDL sources) subclasses :class:`RegisterFile` with the description of the NIC's registers; this
file holds the hand-written logic every register file shares.  It replaces the dissertation's
generated Verilog plus the hand-written HTAX wrapper with its MSI translation (ch. 7.2, last paragraph).

HTAX side (:mod:`rtl.common.htax`)
    * posted WRITEs, 1..8 words with byte enables: applied one word per cycle, two cycles after the
      data beat arrives (the word address decoded into a registered one-hot select, then the update);
    * non-posted READs: answered with a RESPONSE of the same tag to the request's ``src``; the response
      header leaves two cycles after the request header arrived, the data words (fetched through a
      two-stage pipeline: address/RAM read and one-hot select, then registered data) one per cycle from
      the fourth; the output register has a skid register behind it, so no load waits for ``tx.ready``;
    * status ``NO_TARGET`` (no data) when the address is outside the window or any requested word
      decodes to no register; ``MALFORMED`` for a READ on the non-posted VC that breaks a header rule;
    * every other malformed or unexpected packet (RESPONSE, ATS, reserved command, a beat outside a
      packet) is consumed up to its ``last`` beat and dropped; writes to unmapped words are ignored.
      Both count in the ``rf_role = "dropped"``/``"unmapped"`` counters and raise the ``"error"``
      interrupt;
    * ``rx.ready``: posted, response and ATS VCs always ready; the non-posted VC is ready while no read
      is in progress.  ``ready`` never depends on ``valid`` or ``payload``.  ``rx.ready2`` promises
      room for two beats on the always-ready VCs, not on the non-posted one.
    * read byte enables are ignored: whole words are returned (and read side effects apply to them).

Field semantics (SystemRDL): ``sw`` rw/r/w/na, ``onwrite`` woclr/woset, ``onread`` rclr, ``hw`` r/w/rw
with ``we``, ``hwset``/``hwclr``, ``singlepulse``, ``swmod``, counters and interrupts.  In a cycle
where software and hardware both act on a field, ``precedence`` decides for plain writes; counter
increments and interrupt events always apply after the software write or clear, so no event is lost.

Counters: the unit pulses ``<field>_incr`` for one cycle per event; the counter adds one per cycle
the strobe is high and saturates at all-ones (``incrsaturate``) or wraps.

Interrupts: ``intr`` fields are sticky bits set by ``<field>_event`` (per bit, level or pulse),
cleared by writing ones (``woclr``), enabled by the field named in their ``enable`` property.  An MSI
(posted WRITE of ``msi_data`` to ``msi_address``, 4 bytes) is sent when the OR of all enabled status
bits rises, and again when a software write to an interrupt status or mask register leaves bits
pending, so an event that arrives while software is clearing another is never lost.

RAM arrays (``storage="ram"``) are :class:`amaranth.lib.memory.Memory` blocks initialised to the reset
value at configuration time (the reset signal does not clear block RAM); the unit reads them through a
synchronous port (``addr`` in, ``data`` out one cycle later).  External arrays keep their storage in
the unit, which serves ``r_addr``/``r_en`` -> ``r_data`` one cycle later (holding ``r_data`` while
``r_en`` is low, as a memory read port does) and ``w_addr``/``w_en``/``w_data``/``w_be`` write strobes.

Port names: ``hw.<block>[.<index>].<register>.<member>``, flattened with ``__`` in Verilog; members are
``<field>`` (value out), ``<field>_next``/``<field>_we`` (hardware write), ``<field>_set``/``_clr``,
``<field>_incr``, ``<field>_event``, ``<field>_swmod``, and ``addr``/``data`` or the ``r_*``/``w_*``
ports of arrays.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import Out
from amaranth.utils import ceil_log2

from rtl.common.htax import (
    ADDR_BITS,
    MAX_DATA_WORDS,
    NUM_VCS,
    PORT_BITS,
    HtaxBeat,
    HtaxCmd,
    HtaxPortSignature,
    HtaxStatus,
    HtaxVC,
    malformed,
)
from rtl.common.params import check_port, check_pow2
from rtl.common.regspec import Block, Reg, port_members

__all__ = ["RegisterFile"]

WINDOW_BITS_MAX = ADDR_BITS


@dataclass
class _Flop:
    reg: Reg
    word: int               # word address inside the window
    path: str
    port: object            # the interface with the register's hardware members, or None


@dataclass
class _Array:
    reg: Reg
    word: int
    path: str
    port: object
    shift: int              # log2(stride / 8)
    idx_bits: int

    def hit(self, w):
        """Amaranth expression: word address ``w`` is an element of this array."""
        top = self.shift + self.idx_bits
        cond = (w >> top) == (self.word >> top)
        if self.shift:
            cond &= w[:self.shift] == 0
        if self.reg.count != 1 << self.idx_bits:
            cond &= self.index(w) < self.reg.count
        return cond

    def index(self, w):
        if not self.idx_bits:
            return Const(0, 1)
        return w[self.shift:self.shift + self.idx_bits]


def _expand_be(be):
    return Cat(*(b.replicate(8) for b in be))


class RegisterFile(wiring.Component):
    """Register file with an HTAX target port, generated from a register-map description.

    Parameters
    ----------
    regmap : :class:`rtl.common.regspec.Block`
        The top block; offsets are bytes inside the window.
    window_base : int
        Host physical address of the register window (``regs`` in :mod:`rtl.common.addrmap`).
    window_size : int
        Bytes in the window, a power of two.
    htax_port : int
        This unit's HTAX port: the ``src`` of its responses and interrupt writes.
    host_port : int
        The host's HTAX port: the ``dst`` of interrupt writes.

    Members
    -------
    htax : Out(HtaxPortSignature())
        ``tx`` into the switch (responses, interrupt writes), ``rx`` out of it (requests).
    hw : Out(...)
        The units' view of the registers (see the module docstring for member names).

    Raises
    ------
    ValueError
        On a bad parameter or a register map that does not fit the window.
    """

    def __init__(self, regmap, *, window_base, window_size=1 << 24, htax_port, host_port):
        if not isinstance(regmap, Block):
            raise TypeError(f"regmap must be a Block, not {regmap!r}")
        check_pow2("window_size", window_size, 64)
        if window_base % window_size or not 0 <= window_base < 1 << ADDR_BITS:
            raise ValueError(f"window_base must be a multiple of window_size ({window_size:#x}) inside "
                             f"the {ADDR_BITS}-bit address space, not {window_base:#x}")
        check_port("htax_port", htax_port)
        check_port("host_port", host_port)
        if htax_port == host_port:
            raise ValueError(f"htax_port and host_port must differ, both are {htax_port}")
        self.regmap = regmap
        self.window_base = window_base
        self.window_size = window_size
        self.htax_port = htax_port
        self.host_port = host_port
        members = port_members(regmap)
        super().__init__({
            "htax": Out(HtaxPortSignature()),
            "hw": Out(wiring.Signature(members)),
        })
        self._flops, self._arrays = [], []
        self._collect(regmap, 0, self.hw, regmap.name)
        self._check_layout()

    # -- description walking ------------------------------------------------------------------
    def _collect(self, block, base, port, path):
        for child in block.children:
            cport = getattr(port, child.name, None) if port is not None else None
            if isinstance(child, Block):
                for i in range(child.count):
                    p = cport[i] if (cport is not None and child.array) else cport
                    suffix = f"[{i}]" if child.array else ""
                    self._collect(child, base + child.offset + i * child.stride, p,
                                  f"{path}.{child.name}{suffix}")
            elif child.storage == "flops":
                for i in range(child.count):
                    p = cport[i] if (cport is not None and child.array) else cport
                    suffix = f"[{i}]" if child.array else ""
                    addr = base + child.offset + i * child.stride
                    self._flops.append(_Flop(child, addr // 8, f"{path}.{child.name}{suffix}", p))
            else:
                addr = base + child.offset
                idx_bits = ceil_log2(child.count)
                shift = ceil_log2(child.stride) - 3
                span = (1 << idx_bits) * child.stride
                if addr % span:
                    raise ValueError(f"{child.storage} array {path}.{child.name} at {addr:#x} must be "
                                     f"aligned to its span {span:#x}")
                self._arrays.append(_Array(child, addr // 8, f"{path}.{child.name}", cport, shift, idx_bits))

    def _check_layout(self):
        spans = [(f.word * 8, f.word * 8 + 8, f.path) for f in self._flops]
        spans += [(a.word * 8, a.word * 8 + ((1 << a.idx_bits) * a.reg.stride), a.path) for a in self._arrays]
        spans.sort()
        for (lo, hi, p), (lo2, _, p2) in zip(spans, spans[1:], strict=False):
            if lo2 < hi:
                raise ValueError(f"{p2} at {lo2:#x} overlaps {p} ({lo:#x}..{hi - 1:#x})")
        if spans and spans[-1][1] > self.window_size:
            raise ValueError(f"{spans[-1][2]} ends at {spans[-1][1]:#x}, outside the "
                             f"{self.window_size:#x}-byte window")
        self._fields = {}
        for fl in self._flops:
            for f in fl.reg.fields:
                self._fields[f"{fl.path}.{f.name}"] = (fl, f)
        for fl in self._flops:
            for f in fl.reg.fields:
                if f.enable is not None:
                    key = ".".join((self.regmap.name,) + tuple(f.enable))
                    if key not in self._fields:
                        raise ValueError(f"{fl.path}.{f.name} enable refers to unknown field {key}")
                    if self._fields[key][1].width != f.width:
                        raise ValueError(f"{fl.path}.{f.name} enable {key} has a different width")

    @property
    def address_map(self):
        """``[(byte offset, path, Reg, count, stride)]`` of every register (flops unrolled)."""
        out = [(f.word * 8, f.path, f.reg, 1, 8) for f in self._flops]
        out += [(a.word * 8, a.path, a.reg, a.reg.count, a.reg.stride) for a in self._arrays]
        return sorted(out, key=lambda t: t[0])

    # -- gateware -----------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        rx, tx = self.htax.rx, self.htax.tx
        win_bits = ceil_log2(self.window_size)
        wbits = win_bits - 3                            # word address inside the window

        beat = rx.payload
        hdr = beat.word.header
        mem = hdr.body.mem
        moved = rx.transfer()

        ev_dropped_rx = Signal()     # a packet or beat dropped at the receiver
        ev_dropped = Signal(2)       # ... and/or a READ answered MALFORMED
        ev_unmapped = Signal(2)      # an unmapped write word and/or a read answered NO_TARGET
        ev_dropped_q = Signal(2)     # ... one cycle later, into the counters (off the decode paths)
        ev_unmapped_q = Signal(2)
        m.d.sync += [ev_dropped_q.eq(ev_dropped), ev_unmapped_q.eq(ev_unmapped)]

        # ---- receive framing -----------------------------------------------------------------
        rd_busy = Signal()
        m.d.comb += [rx.ready.eq(Cat(Const(1, 1), ~rd_busy, Const(0b11, NUM_VCS - 2))),
                     # always-ready VCs keep the ready2 promise; a read makes the unit busy
                     rx.ready2.eq(Cat(Const(1, 1), Const(0, 1), Const(0b11, NUM_VCS - 2)))]

        in_pkt = Signal()
        # the state of a well-formed WRITE is kept as flags, so the beat-accept condition is a few gates
        wr_more = Signal()          # the current packet is a WRITE with words still to come
        wr_ok = Signal()            # ... inside the window
        wr_addr = Signal(wbits)     # the word address of the next data beat
        wr_left = Signal(4)         # words still to come
        wr_first = Signal()         # the next data beat is the first (first_be)
        wr_lastw = Signal()         # ... the last (last_be)
        wr_first_be = Signal(8)
        wr_last_be = Signal(8)

        w_addr = Signal(wbits)
        w_data = Signal(64)
        w_be = Signal(8)
        # the word address is decoded as the data beat arrives, into one registered select bit per flop
        # register and array (w_fsel, w_asel): the update cycle sees no address comparator
        w_fsel = Signal(len(self._flops))
        w_asel = Signal(len(self._arrays))
        w_unmapped = Signal()       # the word decodes to no register (or lies outside the window)
        beat_w = Signal()           # a WRITE data beat moves that carries a word to apply

        rd_src = Signal(PORT_BITS)
        rd_tag = Signal.like(hdr.tag)
        rd_haddr = Signal(ADDR_BITS)
        rd_len = Signal(4)
        rd_be = Signal(16)
        rd_status = Signal(HtaxStatus)      # decided from the request header as it arrives
        status_in = Signal(HtaxStatus)
        rd_phase_hdr = Signal()     # the response header still has to be sent
        rd_addr = Signal(wbits)     # next word to fetch
        rd_left = Signal(4)         # words still to fetch
        rd_fetch = Signal()         # rd_left != 0 for an OK read, as a flag (on the fetch-enable path)
        rd_beats = Signal(4)        # data beats still to send

        in_window = (mem.addr[win_bits:] == (self.window_base >> win_bits))
        cmd = hdr.cmd.as_value()
        hdr_mal = malformed(hdr)

        # the write word, its address and byte enables are registered every cycle (they matter only
        # with a select bit set): no enable with a high fanout on the beat-accept path
        m.d.sync += [w_addr.eq(wr_addr), w_data.eq(beat.word.data),
                     w_be.eq(Mux(wr_first, wr_first_be, Mux(wr_lastw, wr_last_be, 0xFF)))]
        with m.If(moved):
            with m.If(beat.first):
                m.d.sync += [in_pkt.eq(~beat.last), wr_more.eq(0)]
                is_write = (cmd == HtaxCmd.WRITE.value) & ~hdr_mal
                is_read = (cmd == HtaxCmd.READ.value) & (hdr.vc.as_value() == HtaxVC.NONPOSTED.value)
                with m.If(is_write):
                    m.d.sync += [
                        wr_more.eq(mem.length != 0), wr_ok.eq(in_window), wr_addr.eq(mem.addr[3:win_bits]),
                        wr_left.eq(mem.length), wr_first.eq(1), wr_lastw.eq(mem.length == 1),
                        wr_first_be.eq(mem.first_be), wr_last_be.eq(mem.last_be),
                    ]
                with m.Elif(is_read):
                    m.d.sync += [
                        rd_busy.eq(1), rd_phase_hdr.eq(1), rd_src.eq(hdr.src), rd_tag.eq(hdr.tag),
                        rd_haddr.eq(mem.addr), rd_len.eq(mem.length),
                        rd_be.eq(Cat(mem.first_be, mem.last_be)), rd_status.eq(status_in),
                        rd_addr.eq(mem.addr[3:win_bits]),
                        rd_left.eq(mem.length), rd_beats.eq(mem.length),
                        rd_fetch.eq((status_in == HtaxStatus.OK) & (mem.length != 0)),
                    ]
                with m.Else():
                    m.d.comb += ev_dropped_rx.eq(1)
            with m.Elif(in_pkt):
                m.d.sync += in_pkt.eq(~beat.last)
                with m.If(wr_more):
                    m.d.comb += beat_w.eq(1)
                    m.d.sync += [
                        wr_left.eq(wr_left - 1), wr_more.eq(wr_left != 1), wr_first.eq(0),
                        wr_lastw.eq(wr_left == 2), wr_addr.eq(wr_addr + 1),
                    ]
            with m.Else():
                m.d.comb += ev_dropped_rx.eq(1)       # a data beat outside any packet

        # ---- decode ----------------------------------------------------------------------------
        wmask = _expand_be(w_be)

        a_valid = Signal()
        b_valid = Signal()          # stage B: the word's data, registered off the RAM outputs
        b_flop = Signal(64)
        b_load = Signal()
        a_hit = Signal(len(self._arrays))
        out_valid = Signal()
        out_beat = Signal(HtaxBeat)
        tx_moved = tx.transfer()
        # the output register has a skid register behind it: a source loads while the skid register is
        # empty (a flop), so no load decision, and no fetch behind it, waits for tx.ready
        skid_valid = Signal()
        skid_beat = Signal(HtaxBeat)
        can_load = ~skid_valid
        load_rd_data = Signal()
        load_rd_hdr = Signal()
        load_msi_hdr = Signal()
        load_msi_data = Signal()

        # write decode, one cycle ahead of the update: wr_addr is the address of the arriving beat
        fhit = Cat(*(wr_addr == fl.word for fl in self._flops))
        ahit = Cat(*(arr.hit(wr_addr) for arr in self._arrays))
        m.d.sync += [
            w_fsel.eq(Mux(beat_w & wr_ok, fhit, 0)), w_asel.eq(Mux(beat_w & wr_ok, ahit, 0)),
            w_unmapped.eq(beat_w & ~(wr_ok & (fhit.any() | ahit.any()))),
        ]

        # read decode: a_fsel is the one-hot select of the flop register of the word in stage A, decoded
        # from rd_addr as the word enters stage A
        a_fsel = Signal(len(self._flops))

        # ---- flop registers --------------------------------------------------------------------
        values = {}
        flop_rdata = Const(0, 64)
        irq_written = Const(0, 1)
        pend_terms = []
        for fl in self._flops:
            for f in fl.reg.fields:
                values[f"{fl.path}.{f.name}"] = Signal(f.width, init=f.reset,
                                                      name=fl.path.replace(".", "_").replace("[", "_")
                                                      .replace("]", "") + "_" + f.name)
        msi_addr_f = msi_data_f = None
        for k, fl in enumerate(self._flops):
            sel_w = w_fsel[k]
            # read-to-clear acts one cycle after the word is captured (off the output-backpressure
            # path), removing exactly the value that was read, so events in between are kept
            sel_r = Const(0, 1)
            if any(f.onread == "rclr" for f in fl.reg.fields):
                sel_r = Signal(name=fl.path.replace(".", "_").replace("[", "_").replace("]", "") + "_rclr")
                m.d.sync += sel_r.eq(b_load & a_fsel[k])
            reg_rdata = Const(0, 64)
            for f in fl.reg.fields:
                v = values[f"{fl.path}.{f.name}"]
                self._field(m, fl, f, v, sel_w, sel_r, b_flop[f.lsb:f.lsb + f.width],
                            w_data[f.lsb:f.lsb + f.width],
                            wmask[f.lsb:f.lsb + f.width], ev_dropped_q, ev_unmapped_q, values)
                if "r" in f.sw:
                    reg_rdata = reg_rdata | (v.as_unsigned() << f.lsb)
                if f.intr:
                    if f.enable:
                        en = values[".".join((self.regmap.name,) + tuple(f.enable))]
                    else:
                        en = Const(-1, f.width)
                    pend_terms.append((v & en).any())
                    irq_written = irq_written | sel_w
                if f.role == "msi_address":
                    msi_addr_f = (v, f)
                if f.role == "msi_data":
                    msi_data_f = (v, f)
            flop_rdata = flop_rdata | Mux(a_fsel[k], reg_rdata, 0)
        # mask writes also re-arm the MSI: find the registers holding enable fields
        enable_words = set()
        for fl in self._flops:
            for f in fl.reg.fields:
                if f.intr and f.enable:
                    key = ".".join((self.regmap.name,) + tuple(f.enable))
                    enable_words.add(self._fields[key][0].word)
        for k, fl in enumerate(self._flops):
            if fl.word in enable_words:
                irq_written = irq_written | w_fsel[k]

        # ---- arrays: RAM and external ---------------------------------------------------------
        sync_rdata = Const(0, 64)
        a_fill = Signal()
        for i, arr in enumerate(self._arrays):
            reg = arr.reg
            hit_f = arr.hit(rd_addr)
            wr_en = w_asel[i]
            sw_wmask = Const(sum(f.mask for f in reg.fields if "w" in f.sw), 64)
            rd_mask = Const(sum(f.mask for f in reg.fields if "r" in f.sw), 64)
            m.d.sync += a_hit[i].eq(Mux(a_fill, hit_f, a_hit[i]))
            if reg.storage == "ram":
                mem_ = Memory(shape=unsigned(64), depth=reg.count, init=[reg.reset] * reg.count)
                m.submodules[arr.path.replace(".", "_") + "_ram"] = mem_
                wp = mem_.write_port(granularity=8)
                rp = mem_.read_port(domain="sync")
                hp = mem_.read_port(domain="sync")
                m.d.comb += [
                    wp.addr.eq(arr.index(w_addr)),
                    wp.data.eq((w_data & sw_wmask) | Const(reg.reset, 64) & ~sw_wmask),
                    wp.en.eq(Mux(wr_en, w_be, 0)),
                    rp.addr.eq(arr.index(rd_addr)),
                    rp.en.eq(a_fill),
                ]
                if arr.port is not None:
                    m.d.comb += [hp.addr.eq(arr.port.addr), arr.port.data.eq(hp.data)]
                data = rp.data
            else:
                p = arr.port
                m.d.comb += [
                    p.r_addr.eq(arr.index(rd_addr)), p.r_en.eq(a_fill & hit_f),
                    p.w_addr.eq(arr.index(w_addr)), p.w_en.eq(wr_en),
                    p.w_data.eq(w_data & sw_wmask), p.w_be.eq(w_be),
                ]
                data = p.r_data.as_value()
            # the RAM output goes straight into a register (the block RAM's output register), the
            # selection happens after it
            rdq = Signal(64, name=arr.path.replace(".", "_") + "_rdq")
            hitq = Signal(name=arr.path.replace(".", "_") + "_hitq")
            with m.If(b_load):
                m.d.sync += [rdq.eq(data), hitq.eq(a_hit[i])]
            sync_rdata = sync_rdata | Mux(hitq, rdq & rd_mask, 0)

        # ---- read engine -----------------------------------------------------------------------
        # status of the response, decided from the header as it arrives (registered in rd_status, off
        # the response path): every requested word must decode to a register
        hdr_base = mem.addr[3:win_bits]
        line = hdr_base[3:]
        mapped = []
        for i in range(MAX_DATA_WORDS):
            w = Cat(Const(i, 3), line)
            hit = Const(0, 1)
            for fl in self._flops:
                hit = hit | (w == fl.word)
            for arr in self._arrays:
                hit = hit | arr.hit(w)
            mapped.append(hit)
        mapped = Cat(*mapped)
        first = hdr_base[:3]
        want = (((Const(1, 9) << mem.length) - 1) << first)[:MAX_DATA_WORDS]
        all_mapped = (want & ~mapped) == 0
        with m.If(hdr_mal):
            m.d.comb += status_in.eq(HtaxStatus.MALFORMED)
        with m.Elif(~in_window | ~all_mapped):
            m.d.comb += status_in.eq(HtaxStatus.NO_TARGET)
        with m.Else():
            m.d.comb += status_in.eq(HtaxStatus.OK)
        status = rd_status
        status_ok = status == HtaxStatus.OK
        m.d.comb += [
            ev_dropped.eq(ev_dropped_rx.as_unsigned()
                          + (load_rd_hdr & (status == HtaxStatus.MALFORMED)).as_unsigned()),
            ev_unmapped.eq(w_unmapped.as_unsigned()
                           + (load_rd_hdr & (status == HtaxStatus.NO_TARGET)).as_unsigned()),
        ]

        # stage A: a word whose synchronous sources (RAM, external) are being read; stage B: its data,
        # registered (read side effects happen here: a word in B is always sent)
        m.d.comb += b_load.eq(a_valid & (~b_valid | load_rd_data))
        with m.If(b_load):
            m.d.sync += [b_valid.eq(1), b_flop.eq(flop_rdata)]
        with m.Elif(load_rd_data):
            m.d.sync += b_valid.eq(0)
        a_take = b_load
        m.d.comb += a_fill.eq(rd_fetch & (~a_valid | a_take))
        with m.If(a_fill):
            m.d.sync += [a_valid.eq(1), rd_addr.eq(rd_addr + 1), rd_left.eq(rd_left - 1), rd_fetch.eq(rd_left != 1),
                         a_fsel.eq(Cat(*(rd_addr == fl.word for fl in self._flops)))]
        with m.Elif(a_take):
            m.d.sync += a_valid.eq(0)

        # ---- interrupts and MSI ----------------------------------------------------------------
        pending = Signal()
        pending_q = Signal()
        irq_written_q = Signal()
        msi_req = Signal()
        msi_data_next = Signal()
        msi_word = Signal(64)
        if pend_terms:
            m.d.comb += pending.eq(Cat(*pend_terms).any())
        m.d.sync += [pending_q.eq(pending), irq_written_q.eq(irq_written)]
        trigger = pending & (~pending_q | irq_written_q)
        with m.If(load_msi_hdr):
            m.d.sync += msi_req.eq(trigger)
        with m.Elif(trigger):
            m.d.sync += msi_req.eq(1)

        # ---- output register and arbitration ---------------------------------------------------
        # the source is chosen from flops only; the beat it builds (out) does not wait for can_load
        rd_in_data = rd_busy & ~rd_phase_hdr
        src_msi_data = msi_data_next
        src_rd_data = ~msi_data_next & rd_in_data & b_valid
        src_msi_hdr = ~msi_data_next & ~rd_in_data & msi_req & Const(int(msi_addr_f is not None), 1)
        src_rd_hdr = ~msi_data_next & ~rd_in_data & ~src_msi_hdr & rd_busy & rd_phase_hdr
        m.d.comb += [
            load_msi_data.eq(can_load & src_msi_data),
            load_rd_data.eq(can_load & src_rd_data),
            load_msi_hdr.eq(can_load & src_msi_hdr),
            load_rd_hdr.eq(can_load & src_rd_hdr),
        ]
        load_any = load_rd_hdr | load_rd_data | load_msi_hdr | load_msi_data

        out = Signal(HtaxBeat)
        ohdr = out.word.header
        omem = ohdr.body.mem
        with m.If(src_rd_hdr):
            length = Mux(status_ok, rd_len, 0)
            m.d.comb += [
                ohdr.cmd.eq(HtaxCmd.RESPONSE), ohdr.vc.eq(HtaxVC.RESPONSE), ohdr.status.eq(status),
                ohdr.src.eq(self.htax_port), ohdr.dst.eq(rd_src), ohdr.tag.eq(rd_tag),
                omem.addr.eq(rd_haddr), omem.length.eq(length), omem.first_be.eq(rd_be[:8]),
                omem.last_be.eq(rd_be[8:]),
                out.vc.eq(HtaxVC.RESPONSE), out.first.eq(1), out.last.eq(length == 0),
            ]
        with m.If(load_rd_hdr):
            m.d.sync += rd_phase_hdr.eq(0)
            with m.If(~status_ok):
                m.d.sync += rd_busy.eq(0)
        with m.If(src_rd_data):
            m.d.comb += [
                out.word.data.eq(b_flop | sync_rdata), out.vc.eq(HtaxVC.RESPONSE),
                out.first.eq(0), out.last.eq(rd_beats == 1),
            ]
        with m.If(load_rd_data):
            m.d.sync += rd_beats.eq(rd_beats - 1)
            with m.If(rd_beats == 1):
                m.d.sync += rd_busy.eq(0)
        if msi_addr_f is not None:
            (va, fa), (vd, _) = msi_addr_f, msi_data_f
            byte_addr = Cat(Const(0, fa.lsb), va)             # the field holds address bits lsb..
            hi = byte_addr[2]
            with m.If(src_msi_hdr):
                m.d.comb += [
                    ohdr.cmd.eq(HtaxCmd.WRITE), ohdr.vc.eq(HtaxVC.POSTED), ohdr.status.eq(HtaxStatus.OK),
                    ohdr.src.eq(self.htax_port), ohdr.dst.eq(self.host_port), ohdr.tag.eq(0),
                    omem.addr.eq(Cat(Const(0, 3), byte_addr[3:ADDR_BITS])), omem.length.eq(1),
                    omem.first_be.eq(Mux(hi, 0xF0, 0x0F)), omem.last_be.eq(0),
                    out.vc.eq(HtaxVC.POSTED), out.first.eq(1), out.last.eq(0),
                ]
            with m.If(load_msi_hdr):
                m.d.sync += [msi_data_next.eq(1),
                             msi_word.eq(Mux(hi, vd.as_unsigned() << 32, vd.as_unsigned()))]
            with m.If(src_msi_data):
                m.d.comb += [out.word.data.eq(msi_word), out.vc.eq(HtaxVC.POSTED), out.first.eq(0),
                             out.last.eq(1)]
            with m.If(load_msi_data):
                m.d.sync += msi_data_next.eq(0)

        # the beat registers load without looking at load_any (a beat loaded with valid low is unused)
        with m.If(~out_valid | tx_moved):
            with m.If(skid_valid):
                m.d.sync += [out_beat.eq(skid_beat), out_valid.eq(1), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [out_beat.eq(out), out_valid.eq(load_any)]
        with m.Elif(~skid_valid):
            m.d.sync += [skid_beat.eq(out), skid_valid.eq(load_any)]
        m.d.comb += [tx.valid.eq(out_valid), tx.payload.eq(out_beat)]
        return m

    # -- one field ----------------------------------------------------------------------------
    def _field(self, m, fl, f, v, sel_w, sel_r, snap, wd, wm, ev_dropped, ev_unmapped, values):
        port = fl.port
        w = f.width
        ones = Const((1 << w) - 1, w)

        def member(suffix):
            return getattr(port, f.name + suffix)

        # software effect
        sw_wr = sel_w if "w" in f.sw else Const(0, 1)
        if f.onwrite == "woclr":
            sw_val = v & ~(wd & wm)
        elif f.onwrite == "woset":
            sw_val = v | (wd & wm)
        else:
            sw_val = (v & ~wm) | (wd & wm)
        sw_next = Signal(w, name=f"{v.name}_sw")
        m.d.comb += sw_next.eq(v)
        if "w" in f.sw:
            with m.If(sw_wr):
                m.d.comb += sw_next.eq(sw_val)
        if f.onread == "rclr":
            with m.If(sel_r):
                m.d.comb += sw_next.eq((v - snap) if f.counter else (v & ~snap))
        sw_touch = sw_wr | (sel_r if f.onread == "rclr" else Const(0, 1))

        # hardware effect on top of a base value
        def hw_apply(base):
            nxt = base
            if f.hw_driven:
                nxt = member("_next")
            if f.we:
                nxt = Mux(member("_we"), member("_next"), nxt)
            if f.hwclr:
                nxt = Mux(member("_clr"), 0, nxt)
            if f.hwset:
                nxt = Mux(member("_set"), ones, nxt)
            return nxt

        has_hw_write = f.hw_driven or f.we or f.hwset or f.hwclr
        if f.role in ("dropped", "unmapped", "error"):
            event = {"dropped": ev_dropped, "unmapped": ev_unmapped,
                     "error": (ev_dropped.any() | ev_unmapped.any()).replicate(w)}[f.role]
        elif f.counter:
            event = member("_incr")
        elif f.intr:
            event = member("_event")
        else:
            event = None

        # a read-to-clear counter that only events change: between the capture and the clear one cycle
        # later the counter moved by exactly what the previous cycle's event added, so the clear
        # loads that amount (plus this cycle's event) instead of subtracting the value read
        rclr_by_events = (f.counter and f.onread == "rclr" and "w" not in f.sw and not has_hw_write
                          and w >= 3)
        if f.counter:
            base = v if rclr_by_events else sw_next
            if has_hw_write:
                base = hw_apply(base)
            # events add at most 2 (the register file's own counters), so base + event overflows into
            # the carry bit only: saturation is that carry, not a comparator behind the adder
            total = Signal(w + 1, name=f"{v.name}_sum")
            m.d.comb += total.eq(base + event)
            nxt = (total[:w] | total[w].replicate(w)) if f.saturate else total[:w]
            if rclr_by_events:
                added = Signal(2, name=f"{v.name}_added")    # what this cycle's event adds
                if f.saturate:
                    # at the carry the counter stops at all-ones: it gains event - 1 - total[0]
                    m.d.sync += added.eq(Mux(total[w], event - 1 - total[0], event))
                else:
                    m.d.sync += added.eq(event)
                nxt = Mux(sel_r, added + event, nxt)
        elif f.intr:
            base = hw_apply(sw_next) if has_hw_write else sw_next
            nxt = base | event
        elif has_hw_write:
            if f.precedence == "hw":
                nxt = hw_apply(sw_next)
            else:
                nxt = Mux(sw_touch, sw_next, hw_apply(v))
        else:
            nxt = sw_next
        if f.singlepulse:
            nxt = Mux(sw_wr, sw_val, 0)
        m.d.sync += v.eq(nxt)

        if port is not None and not f.role:
            if "r" in f.hw:
                m.d.comb += member("").eq(v)
            if f.swmod:
                m.d.comb += member("_swmod").eq(sw_wr & wm.any())
