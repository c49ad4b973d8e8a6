"""HTAX scratch-memory target with a DMA engine: the host model's self-test DUT.

Not a unit of the dissertation: a small, real HTAX endpoint (ch. 7.1 packet rules, ch. 6.4.4 split
stores) that lets the host bus functional model be tested against RTL before the NIC units exist, and
that serves as the reference for how a unit sits on an HTAX port.  It answers CPU reads and writes
to a register bank and a scratch RAM, runs a DMA engine that reads host memory into the RAM and writes
the RAM back to host memory (split into line-sized packets, several reads in flight with distinct
tags), and signals DMA completion with an MSI-style posted write.

Address map (offsets inside the target's 64 KiB window; higher address bits are ignored, since the
host's address decode already chose this port):

=======  ==============  =========================================================================
offset   name            access
=======  ==============  =========================================================================
0x00     ``ID``          r: ``0x5C7A << 48 | words``
0x08     ``SCRATCH``     rw
0x10     ``DMA_HOST``    rw: host byte address (bits 2:0 read as zero)
0x18     ``DMA_LOCAL``   rw: first scratch word
0x20     ``DMA_LEN``     rw: words to move (16 bits)
0x28     ``DMA_CTRL``    w: bit 0 starts host -> scratch, bit 1 scratch -> host; r: bit 0 busy
0x30     ``DMA_STATUS``  r: bits 31:0 completed DMA jobs, bit 32 the last job failed
0x38     ``MSI_ADDR``    rw: where completion interrupts go (0: none; bits 2:0 read as zero); data =
                         completed jobs
0x40     ``ERRORS``      r: requests refused (malformed, no target, unsupported command, start while busy)
0x8000+  scratch RAM     rw, ``words`` 64-bit words
=======  ==============  =========================================================================

Bad input has a defined outcome: a malformed packet is consumed and counted; a READ of an unmapped
offset is answered with status NO_TARGET, a malformed READ with MALFORMED; a WRITE to an unmapped
offset is dropped and counted; a DMA job whose scratch range exceeds the RAM, or whose host reads come
back with an error status, completes with the failure bit set.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import Out

from rtl.common.htax import (
    MAX_DATA_WORDS,
    HtaxCmd,
    HtaxHeader,
    HtaxPortSignature,
    HtaxStatus,
    HtaxVC,
    malformed,
)
from rtl.common.params import check_int, check_port, check_pow2

__all__ = ["HtaxScratch", "UNITS"]

ID_MAGIC = 0x5C7A
RAM_OFFSET = 0x8000
WINDOW_BITS = 16

REG_ID, REG_SCRATCH, REG_DMA_HOST, REG_DMA_LOCAL, REG_DMA_LEN, REG_DMA_CTRL, REG_DMA_STATUS, \
    REG_MSI_ADDR, REG_ERRORS = range(9)


def _merge(old, new, be):
    """Byte-enable merge of two 64-bit values."""
    return Cat(*(Mux(be[i], new[8 * i:8 * i + 8], old[8 * i:8 * i + 8]) for i in range(8)))


class _TxSource(data.Struct):
    """What the data beats of the packet being sent come from."""
    ram: 1
    reg: 1


class HtaxScratch(wiring.Component):
    """Scratch-memory HTAX target with a DMA engine.

    Parameters
    ----------
    words : int
        Scratch RAM size in 64-bit words (power of two, 8..4096).
    max_outstanding : int
        DMA reads in flight (1..32, one tag each).
    port : int
        This target's HTAX port number (``src`` of what it sends).
    host_port : int
        HTAX port of the host (destination of DMA traffic and interrupts).

    Members
    -------
    htax : Out(HtaxPortSignature)
        The HTAX port (``tx`` into the switch, ``rx`` from it).
    dma_busy : Out(1)
    errors : Out(16)
        Refused requests (saturating).
    """

    def __init__(self, *, words=512, max_outstanding=16, port=1, host_port=0):
        self._check(words, max_outstanding, port, host_port)
        self.words = words
        self.max_outstanding = max_outstanding
        self.port = port
        self.host_port = host_port
        super().__init__({
            "htax": Out(HtaxPortSignature()),
            "dma_busy": Out(1),
            "errors": Out(16),
        })
        # transmit state, created here so that formal/scratch.py can state invariants over it
        self._out_valid = Signal()
        self._out_data_phase = Signal()
        self._out_left = Signal(4)      # data beats still to send after the current beat

    @staticmethod
    def _check(words, max_outstanding, port, host_port):
        check_pow2("words", words, 8, 4096)
        check_int("max_outstanding", max_outstanding, 1, 32)
        check_port("port", port)
        check_port("host_port", host_port)
        if port == host_port:
            raise ValueError(f"port and host_port must differ, both are {port}")

    def elaborate(self, platform):
        m = Module()
        rx, tx = self.htax.rx, self.htax.tx
        wbits = (self.words - 1).bit_length()

        m.submodules.ram = ram = Memory(shape=64, depth=self.words, init=[])
        wr = ram.write_port(granularity=8)
        rd = ram.read_port()

        regs = {n: Signal(64, name=f"reg_{n}") for n in ("scratch", "dma_host", "dma_local", "dma_len",
                                                           "msi_addr")}
        done_count = Signal(32)
        job_failed = Signal()
        errors = Signal(16)
        error_inc = Signal()
        m.d.comb += self.errors.eq(errors)
        with m.If(error_inc & (errors != 0xFFFF)):
            m.d.sync += errors.eq(errors + 1)

        # -- DMA engine state -----------------------------------------------------------------
        dma_dir_write = Signal()           # 0: host -> scratch, 1: scratch -> host
        dma_busy = Signal()
        dma_host = Signal(52)
        dma_local = Signal(wbits + 1)
        dma_left = Signal(17)
        tags = self.max_outstanding
        # indexed by the whole 5-bit tag space, so a response with a tag never issued finds a
        # clear busy bit (and is refused) instead of indexing past the end
        tag_busy = Signal(32)
        tag_local = Signal(data.ArrayLayout(wbits + 1, 32))
        msi_pending = Signal()
        m.d.comb += self.dma_busy.eq(dma_busy)

        start_read = Signal()
        start_write = Signal()
        finish = Signal()
        fail = Signal()

        # -- receive side ---------------------------------------------------------------------
        # Posted writes and responses are always taken (they complete in place, one beat per
        # cycle).  A non-posted read waits while the previous read's response is still pending,
        # which is the only reason to refuse a VC here: posted writes and responses pass it.
        rsp_pending = Signal()
        m.d.comb += [rx.ready.eq(Cat(Const(1), ~rsp_pending, Const(1), Const(1))),
                     rx.ready2.eq(Cat(Const(1), Const(0), Const(1), Const(1)))]

        in_pkt = Signal()
        hdr = Signal(HtaxHeader)
        beat_idx = Signal(4)
        drop = Signal()
        moved = rx.transfer()
        beat = rx.payload

        # the request the response engine will answer
        rsp_hdr = Signal(HtaxHeader)
        rsp_src = Signal(_TxSource)
        rsp_reg_data = Signal(64)

        def offset_of(h, i):
            return (h.body.mem.addr[:WINDOW_BITS] + (i << 3))[:WINDOW_BITS]

        def decode(off):
            is_ram = (off >= RAM_OFFSET) & (off < RAM_OFFSET + 8 * self.words)
            reg_index = off[3:WINDOW_BITS]
            is_reg = off < 8 * (REG_ERRORS + 1)
            return is_ram, is_reg, reg_index

        reg_read_value = Signal(64)

        def reg_value(index):
            return Mux(index == REG_ID, (ID_MAGIC << 48) | self.words,
                   Mux(index == REG_SCRATCH, regs["scratch"],
                   Mux(index == REG_DMA_HOST, regs["dma_host"],
                   Mux(index == REG_DMA_LOCAL, regs["dma_local"],
                   Mux(index == REG_DMA_LEN, regs["dma_len"],
                   Mux(index == REG_DMA_CTRL, dma_busy,
                   Mux(index == REG_DMA_STATUS, Cat(done_count, job_failed),
                   Mux(index == REG_MSI_ADDR, regs["msi_addr"], errors))))))))

        with m.If(moved):
            with m.If(beat.first):
                m.d.sync += [hdr.eq(beat.word.header), beat_idx.eq(0), in_pkt.eq(~beat.last)]
                bad = malformed(beat.word.header)
                m.d.sync += drop.eq(bad)
                h = beat.word.header
                with m.If(bad):
                    m.d.comb += error_inc.eq(1)
                    with m.If(h.cmd == HtaxCmd.READ):
                        m.d.sync += [rsp_pending.eq(1), rsp_hdr.eq(h), rsp_src.eq(0),
                                     rsp_hdr.status.eq(HtaxStatus.MALFORMED)]
                with m.Elif(h.cmd == HtaxCmd.READ):
                    off = offset_of(h, 0)
                    is_ram, is_reg, reg_index = decode(off)
                    last_off = offset_of(h, h.body.mem.length - 1)
                    last_ram, last_reg, _ = decode(last_off)
                    m.d.sync += [rsp_pending.eq(1), rsp_hdr.eq(h)]
                    with m.If(is_ram & last_ram):
                        m.d.sync += [rsp_src.ram.eq(1), rsp_src.reg.eq(0), rsp_hdr.status.eq(HtaxStatus.OK)]
                    with m.Elif(is_reg & (h.body.mem.length == 1)):
                        m.d.sync += [rsp_src.ram.eq(0), rsp_src.reg.eq(1), rsp_hdr.status.eq(HtaxStatus.OK),
                                     rsp_reg_data.eq(reg_read_value)]
                        m.d.comb += reg_read_value.eq(reg_value(reg_index))
                    with m.Else():
                        m.d.comb += error_inc.eq(1)
                        m.d.sync += [rsp_src.eq(0), rsp_hdr.status.eq(HtaxStatus.NO_TARGET)]
                with m.Elif(h.cmd == HtaxCmd.ATS):
                    m.d.comb += error_inc.eq(1)           # no ATS client here
                with m.Elif((h.cmd == HtaxCmd.RESPONSE) & (h.status != HtaxStatus.OK)):
                    # a failed DMA read: free the tag, mark the job failed
                    with m.If(tag_busy.bit_select(h.tag, 1)):
                        m.d.sync += tag_busy.bit_select(h.tag, 1).eq(0)
                        m.d.comb += fail.eq(1)
                    with m.Else():
                        m.d.comb += error_inc.eq(1)
                with m.Elif((h.cmd == HtaxCmd.RESPONSE) & ~tag_busy.bit_select(h.tag, 1)):
                    m.d.comb += error_inc.eq(1)           # a response nobody asked for
                    m.d.sync += drop.eq(1)
                with m.Elif((h.cmd == HtaxCmd.RESPONSE) & beat.last):
                    # an OK response without data cannot fill the scratch words: the job fails
                    m.d.sync += tag_busy.bit_select(h.tag, 1).eq(0)
                    m.d.comb += [fail.eq(1), error_inc.eq(1)]
            with m.Else():
                # a data beat of the packet in `hdr`
                m.d.sync += [beat_idx.eq(beat_idx + 1), in_pkt.eq(~beat.last)]
                be = Mux(beat_idx == 0, hdr.body.mem.first_be,
                         Mux(beat_idx == hdr.body.mem.length - 1, hdr.body.mem.last_be, 0xFF))
                with m.If(~drop & (hdr.cmd == HtaxCmd.WRITE)):
                    off = offset_of(hdr, beat_idx)
                    is_ram, is_reg, reg_index = decode(off)
                    with m.If(is_ram):
                        m.d.comb += [wr.addr.eq((off - RAM_OFFSET)[3:]), wr.data.eq(beat.word.data),
                                     wr.en.eq(be)]
                    with m.Elif(is_reg):
                        for name, index in (("scratch", REG_SCRATCH), ("dma_host", REG_DMA_HOST),
                                            ("dma_local", REG_DMA_LOCAL), ("dma_len", REG_DMA_LEN),
                                            ("msi_addr", REG_MSI_ADDR)):
                            with m.If(reg_index == index):
                                new = _merge(regs[name], beat.word.data, be)
                                if name in ("dma_host", "msi_addr"):
                                    new = Cat(Const(0, 3), new[3:52])     # 8-byte aligned host addresses
                                m.d.sync += regs[name].eq(new)
                        with m.If((reg_index == REG_DMA_CTRL) & be[0]):
                            m.d.comb += [start_read.eq(beat.word.data[0]), start_write.eq(beat.word.data[1])]
                        with m.If(~reg_index.matches(REG_SCRATCH, REG_DMA_HOST, REG_DMA_LOCAL, REG_DMA_LEN,
                                                     REG_MSI_ADDR, REG_DMA_CTRL)):
                            m.d.comb += error_inc.eq(1)   # a read-only register
                    with m.Else():
                        m.d.comb += error_inc.eq(1)
                with m.Elif(~drop & (hdr.cmd == HtaxCmd.RESPONSE)):
                    local = tag_local[hdr.tag] + beat_idx
                    m.d.comb += [wr.addr.eq(local), wr.data.eq(beat.word.data), wr.en.eq(0xFF)]
                    with m.If(beat.last):
                        m.d.sync += tag_busy.bit_select(hdr.tag, 1).eq(0)

        # -- DMA control ---------------------------------------------------------------------
        with m.If(start_read | start_write):
            with m.If(dma_busy | (start_read & start_write)):
                m.d.comb += error_inc.eq(1)
            with m.Else():
                length = regs["dma_len"][:16]
                in_range = (regs["dma_local"] + length) <= self.words
                m.d.sync += [dma_busy.eq(1), dma_dir_write.eq(start_write), job_failed.eq(~in_range),
                             dma_host.eq(regs["dma_host"][:52]), dma_local.eq(regs["dma_local"][:wbits + 1]),
                             dma_left.eq(Mux(in_range, length, 0))]
        with m.If(fail):
            m.d.sync += job_failed.eq(1)

        # -- transmit side --------------------------------------------------------------------
        out_valid = self._out_valid
        out_hdr = Signal(HtaxHeader)
        out_src = Signal(_TxSource)
        out_left = self._out_left
        out_data_phase = self._out_data_phase
        out_ram_addr = Signal(wbits)
        out_vc = Signal(HtaxVC)
        out_reg_data = Signal(64)       # the data beat of a register response or an interrupt
        tx_moved = tx.transfer()

        m.d.comb += [
            tx.valid.eq(out_valid),
            tx.payload.vc.eq(out_vc),
            tx.payload.first.eq(~out_data_phase),
            tx.payload.last.eq(Mux(out_data_phase, out_left == 0,
                                   ~(out_src.ram | out_src.reg) | (out_hdr.body.mem.length == 0))),
        ]
        with m.If(out_data_phase):
            m.d.comb += tx.payload.word.data.eq(Mux(out_src.reg, out_reg_data, rd.data))
        with m.Else():
            m.d.comb += tx.payload.word.header.eq(out_hdr)

        # RAM reads for outgoing data: the port's output holds while the beat is stalled
        m.d.comb += [rd.addr.eq(out_ram_addr), rd.en.eq(~out_valid | tx_moved)]

        chunk = Signal(4)
        m.d.comb += chunk.eq(Mux(dma_left < (MAX_DATA_WORDS - dma_host[3:6]), dma_left,
                                 MAX_DATA_WORDS - dma_host[3:6]))
        free_tag = Signal(range(tags))
        have_tag = Signal()
        for t in reversed(range(tags)):          # only the first max_outstanding tags are issued
            with m.If(~tag_busy[t]):
                m.d.comb += [free_tag.eq(t), have_tag.eq(1)]

        def start_packet(cmd, dst, tag, addr, length, status=HtaxStatus.OK, ram=0, reg=0, ram_addr=0,
                         first_be=0xFF, last_be=0xFF):
            vc = {HtaxCmd.WRITE: HtaxVC.POSTED, HtaxCmd.READ: HtaxVC.NONPOSTED,
                  HtaxCmd.RESPONSE: HtaxVC.RESPONSE}[cmd]
            return [
                out_valid.eq(1), out_data_phase.eq(0), out_vc.eq(vc),
                out_hdr.cmd.eq(cmd), out_hdr.vc.eq(vc), out_hdr.status.eq(status), out_hdr.src.eq(self.port),
                out_hdr.dst.eq(dst), out_hdr.tag.eq(tag), out_hdr.body.mem.addr.eq(addr),
                out_hdr.body.mem.length.eq(length), out_hdr.body.mem.first_be.eq(first_be),
                out_hdr.body.mem.last_be.eq(Mux(length > 1, last_be, 0)),
                out_src.ram.eq(ram), out_src.reg.eq(reg), out_ram_addr.eq(ram_addr),
            ]

        with m.If(out_valid & tx_moved):
            with m.If(~out_data_phase & (out_src.ram | out_src.reg) & (out_hdr.body.mem.length != 0)):
                m.d.sync += [out_data_phase.eq(1), out_left.eq(out_hdr.body.mem.length - 1),
                             out_ram_addr.eq(out_ram_addr + 1)]
            with m.Elif(out_data_phase & (out_left != 0)):
                m.d.sync += [out_left.eq(out_left - 1), out_ram_addr.eq(out_ram_addr + 1)]
            with m.Else():
                m.d.sync += [out_valid.eq(0), out_data_phase.eq(0)]
                with m.If(out_hdr.cmd == HtaxCmd.RESPONSE):
                    m.d.sync += rsp_pending.eq(0)

        with m.If(~out_valid):
            # responses first (they must always progress), then the interrupt, then DMA traffic
            with m.If(rsp_pending):
                ok = rsp_hdr.status == HtaxStatus.OK
                ram_word = (rsp_hdr.body.mem.addr[:WINDOW_BITS] - RAM_OFFSET)[3:3 + wbits]
                # echo the request's address, aligned: the answer to a malformed request is well formed
                rsp_addr = Cat(Const(0, 3), rsp_hdr.body.mem.addr[3:])
                m.d.sync += start_packet(HtaxCmd.RESPONSE, rsp_hdr.src, rsp_hdr.tag, rsp_addr,
                                         Mux(ok, rsp_hdr.body.mem.length, 0), status=rsp_hdr.status,
                                         ram=ok & rsp_src.ram, reg=ok & rsp_src.reg, ram_addr=ram_word,
                                         first_be=rsp_hdr.body.mem.first_be,
                                         last_be=rsp_hdr.body.mem.last_be)
                m.d.sync += out_reg_data.eq(rsp_reg_data)
                m.d.comb += rd.addr.eq(ram_word)
            with m.Elif(msi_pending):
                m.d.sync += [start_packet(HtaxCmd.WRITE, self.host_port, 0, regs["msi_addr"][:52], 1, reg=1),
                             out_reg_data.eq(done_count), msi_pending.eq(0)]
            with m.Elif(dma_busy & (dma_left != 0) & dma_dir_write):
                m.d.sync += [start_packet(HtaxCmd.WRITE, self.host_port, 0, dma_host, chunk, ram=1,
                                          ram_addr=dma_local[:wbits]),
                             dma_host.eq(dma_host + (chunk << 3)), dma_local.eq(dma_local + chunk),
                             dma_left.eq(dma_left - chunk)]
                m.d.comb += rd.addr.eq(dma_local[:wbits])
            with m.Elif(dma_busy & (dma_left != 0) & ~dma_dir_write & have_tag):
                m.d.sync += [start_packet(HtaxCmd.READ, self.host_port, free_tag, dma_host, chunk),
                             tag_busy.bit_select(free_tag, 1).eq(1), tag_local[free_tag].eq(dma_local),
                             dma_host.eq(dma_host + (chunk << 3)), dma_local.eq(dma_local + chunk),
                             dma_left.eq(dma_left - chunk)]
            with m.Elif(dma_busy & (dma_left == 0) & (tag_busy == 0)):
                m.d.comb += finish.eq(1)

        with m.If(finish):
            m.d.sync += [dma_busy.eq(0), done_count.eq(done_count + 1),
                         msi_pending.eq(regs["msi_addr"] != 0)]
        return m


#: the scratch target as a harness unit (``make report UNIT=scratch``; not written by ``make verilog``)
UNITS = {
    "scratch": lambda cfg: HtaxScratch(words=cfg["scratch"]["words"],
                                       max_outstanding=cfg["scratch"]["max_outstanding"]),
}
