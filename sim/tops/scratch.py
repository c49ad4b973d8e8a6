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
offset is answered with status NO_TARGET, a malformed READ with MALFORMED (one that arrives on another
VC while the previous read still waits for or is in its response is only counted); a WRITE to an unmapped
offset is dropped and counted; a DMA job whose scratch range exceeds the RAM, or whose host reads come
back with an error status, completes with the failure bit set.

The target is four blocks joined in :class:`HtaxScratch`: :class:`ScratchReceive` decodes the receive
link (RAM and register writes, the read to answer, DMA read data), :class:`ScratchRegisters` holds the
register bank and the error counter, :class:`ScratchDma` runs the DMA jobs (its tags, its chunks, its
completion interrupt), and :class:`ScratchTransmit` sends the response, the interrupt and the DMA
packets, in that order of priority, on the transmit link.
"""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory, ReadPort, WritePort
from amaranth.lib.wiring import In, Out

from rtl.common.htax import (
    ADDR_BITS,
    MAX_DATA_WORDS,
    TAG_BITS,
    HtaxCmd,
    HtaxHeader,
    HtaxLinkSignature,
    HtaxPortSignature,
    HtaxStatus,
    HtaxVC,
    malformed,
)
from rtl.common.htax_rules import link_rules
from rtl.common.params import check_int, check_port, check_pow2

__all__ = ["HtaxScratch", "ScratchReceive", "ScratchRegisters", "ScratchDma", "ScratchTransmit", "UNITS"]

ID_MAGIC = 0x5C7A
RAM_OFFSET = 0x8000
WINDOW_BITS = 16
INDEX_BITS = WINDOW_BITS - 3        # a register's index: its offset in 64-bit words

REG_ID, REG_SCRATCH, REG_DMA_HOST, REG_DMA_LOCAL, REG_DMA_LEN, REG_DMA_CTRL, REG_DMA_STATUS, \
    REG_MSI_ADDR, REG_ERRORS = range(9)
#: the registers a write changes (DMA_CTRL is written too, but holds nothing)
_WRITABLE = {"scratch": REG_SCRATCH, "dma_host": REG_DMA_HOST, "dma_local": REG_DMA_LOCAL,
             "dma_len": REG_DMA_LEN, "msi_addr": REG_MSI_ADDR}
_TAGS = 1 << TAG_BITS


def _merge(old, new, be):
    """Byte-enable merge of two 64-bit values."""
    return Cat(*(Mux(be[i], new[8 * i:8 * i + 8], old[8 * i:8 * i + 8]) for i in range(8)))


def _word_bits(words):
    return (words - 1).bit_length()


class _TxSource(data.Struct):
    """What the data beats of the packet being sent come from."""
    ram: 1
    reg: 1


class _RegWriteSignature(wiring.Signature):
    """One register write (the data beat of a WRITE into the register bank), from the decoder's side."""
    def __init__(self):
        super().__init__({"en": Out(1), "index": Out(INDEX_BITS), "data": Out(64), "be": Out(8)})


class _RegReadSignature(wiring.Signature):
    """The register a READ names and its value, from the decoder's side."""
    def __init__(self):
        super().__init__({"index": Out(INDEX_BITS), "data": In(64)})


class _DmaStatusSignature(wiring.Signature):
    """The DMA engine's state the registers show, from the engine's side."""
    def __init__(self):
        super().__init__({"busy": Out(1), "done": Out(32), "failed": Out(1)})


class _DmaConfigSignature(wiring.Signature):
    """The DMA registers and the start strobes, from the register bank's side."""
    def __init__(self):
        super().__init__({"host": Out(64), "local": Out(64), "length": Out(64), "msi_addr": Out(64),
                          "start_read": Out(1), "start_write": Out(1)})


class _TagSignature(wiring.Signature):
    """The DMA engine's read tags, from the engine's side: which are in flight and where their data
    goes; the decoder frees a tag when its response has landed or failed."""
    def __init__(self, wbits):
        super().__init__({"busy": Out(_TAGS), "local": Out(data.ArrayLayout(wbits + 1, _TAGS)),
                          "free": In(1), "free_tag": In(TAG_BITS)})


class _RequestSignature(wiring.Signature):
    """The READ the target answers, from the decoder's side: held from its header until ``done`` (the
    response's last beat moved)."""
    def __init__(self):
        super().__init__({"pending": Out(1), "header": Out(HtaxHeader), "source": Out(_TxSource),
                          "reg_data": Out(64), "done": In(1)})


class _DmaPacketsSignature(wiring.Signature):
    """What the DMA engine asks the transmitter to send, from the engine's side.

    ``msi``, ``write`` and ``read`` say that an interrupt, a write chunk or a read chunk is due;
    ``idle`` that the job can complete.  The transmitter answers, in the cycle it starts the packet,
    with ``took_msi``, ``took_write`` or ``took_read``, or with ``finish`` when it completes the job.
    """
    def __init__(self, wbits):
        super().__init__({
            "msi": Out(1), "msi_addr": Out(ADDR_BITS), "msi_data": Out(32),
            "write": Out(1), "read": Out(1), "host": Out(ADDR_BITS), "local": Out(wbits),
            "chunk": Out(4), "tag": Out(TAG_BITS), "idle": Out(1),
            "took_msi": In(1), "took_write": In(1), "took_read": In(1), "finish": In(1)})


class ScratchReceive(wiring.Component):
    """The scratch target's receive side: decodes the packets of the receive link (ch. 7.1).

    A WRITE's data beats go to the scratch RAM or, one beat each, to the register bank; a READ is held
    in ``request`` until its response has left (so a second READ waits on the link: the only VC this
    target ever refuses); a RESPONSE's data beats land in the RAM where the DMA job put that tag's
    chunk.  Malformed packets, ATS messages, unmapped offsets and responses nobody asked for are
    consumed and counted (``error``); a READ among them is answered with an error status.

    Parameters
    ----------
    words : int
        Scratch RAM size in 64-bit words.

    Members
    -------
    rx : In(HtaxLinkSignature)
        The receive link.
    ram : In(WritePort.Signature)
        The scratch RAM's write port (byte enables).
    reg_write : Out(_RegWriteSignature)
    reg_read : Out(_RegReadSignature)
        The register a READ header names, and its value (captured with the request).
    request : Out(_RequestSignature)
        The READ to answer.
    tags : In(_TagSignature)
        The DMA engine's tags: checked against every RESPONSE, freed when one has landed or failed.
    fail : Out(1)
        A DMA read came back with an error (or without data): the job fails.
    error : Out(1)
        A refused request in this cycle.
    """

    def __init__(self, *, words):
        self.words = words
        wbits = _word_bits(words)
        super().__init__({
            "rx": In(HtaxLinkSignature()),
            "ram": In(WritePort.Signature(addr_width=wbits, shape=64, granularity=8)),
            "reg_write": Out(_RegWriteSignature()),
            "reg_read": Out(_RegReadSignature()),
            "request": Out(_RequestSignature()),
            "tags": In(_TagSignature(wbits)),
            "fail": Out(1),
            "error": Out(1),
        })

    def _decode(self, off):
        is_ram = (off >= RAM_OFFSET) & (off < RAM_OFFSET + 8 * self.words)
        is_reg = off < 8 * (REG_ERRORS + 1)
        return is_ram, is_reg, off[3:WINDOW_BITS]

    @staticmethod
    def _offset(h, i):
        return (h.body.mem.addr[:WINDOW_BITS] + (i << 3))[:WINDOW_BITS]

    def elaborate(self, platform):
        m = Module()
        rx, req = self.rx, self.request
        # Posted writes and responses are always taken (they complete in place, one beat per
        # cycle).  A non-posted read waits while the previous read's response is still pending,
        # which is the only reason to refuse a VC here: posted writes and responses pass it.
        m.d.comb += [rx.ready.eq(Cat(Const(1), ~req.pending, Const(1), Const(1))),
                     rx.ready2.eq(Cat(Const(1), Const(0), Const(1), Const(1)))]

        hdr = Signal(HtaxHeader)            # the header of the packet whose data beats arrive
        beat_idx = Signal(4)
        drop = Signal()
        in_pkt = Signal()
        # the response has left: the next READ may come (a READ header below in the same cycle wins)
        with m.If(req.done):
            m.d.sync += req.pending.eq(0)
        with m.If(rx.transfer()):
            with m.If(rx.payload.first):
                m.d.sync += [hdr.eq(rx.payload.word.header), beat_idx.eq(0), in_pkt.eq(~rx.payload.last)]
                self._header(m, drop)
            with m.Else():
                m.d.sync += [beat_idx.eq(beat_idx + 1), in_pkt.eq(~rx.payload.last)]
                self._data_beat(m, hdr, beat_idx, drop)
        return m

    def _header(self, m, drop):
        """A header beat moved: remember the READ to answer, check a RESPONSE against the tags."""
        rx, req, tags = self.rx, self.request, self.tags
        h = rx.payload.word.header
        bad = malformed(h)
        m.d.sync += drop.eq(bad)
        with m.If(bad):
            m.d.comb += self.error.eq(1)
            # Well-formed READs wait on the NONPOSTED VC while a response is pending.  A malformed one on
            # another VC then is only counted: recording it would replace the pending READ, which may
            # still wait for the transmitter (busy with a DMA packet), and that READ would never be
            # answered.
            with m.If((h.cmd == HtaxCmd.READ) & (~req.pending | req.done)):
                m.d.sync += [req.pending.eq(1), req.header.eq(h), req.source.eq(0),
                             req.header.status.eq(HtaxStatus.MALFORMED)]
        with m.Elif(h.cmd == HtaxCmd.READ):
            is_ram, is_reg, reg_index = self._decode(self._offset(h, 0))
            last_ram, _, _ = self._decode(self._offset(h, h.body.mem.length - 1))
            m.d.sync += [req.pending.eq(1), req.header.eq(h)]
            with m.If(is_ram & last_ram):
                m.d.sync += [req.source.ram.eq(1), req.source.reg.eq(0), req.header.status.eq(HtaxStatus.OK)]
            with m.Elif(is_reg & (h.body.mem.length == 1)):
                m.d.sync += [req.source.ram.eq(0), req.source.reg.eq(1), req.header.status.eq(HtaxStatus.OK),
                             req.reg_data.eq(self.reg_read.data)]
                m.d.comb += self.reg_read.index.eq(reg_index)
            with m.Else():
                m.d.comb += self.error.eq(1)
                m.d.sync += [req.source.eq(0), req.header.status.eq(HtaxStatus.NO_TARGET)]
        with m.Elif(h.cmd == HtaxCmd.ATS):
            m.d.comb += self.error.eq(1)                  # no ATS client here
        with m.Elif((h.cmd == HtaxCmd.RESPONSE) & (h.status != HtaxStatus.OK)):
            # a failed DMA read: free the tag, mark the job failed
            with m.If(tags.busy.bit_select(h.tag, 1)):
                m.d.comb += [tags.free.eq(1), tags.free_tag.eq(h.tag), self.fail.eq(1)]
            with m.Else():
                m.d.comb += self.error.eq(1)
        with m.Elif((h.cmd == HtaxCmd.RESPONSE) & ~tags.busy.bit_select(h.tag, 1)):
            m.d.comb += self.error.eq(1)                  # a response nobody asked for
            m.d.sync += drop.eq(1)
        with m.Elif((h.cmd == HtaxCmd.RESPONSE) & rx.payload.last):
            # an OK response without data cannot fill the scratch words: the job fails
            m.d.comb += [tags.free.eq(1), tags.free_tag.eq(h.tag), self.fail.eq(1), self.error.eq(1)]

    def _data_beat(self, m, hdr, beat_idx, drop):
        """A data beat of the packet in ``hdr`` moved: write it where the packet goes."""
        beat, tags = self.rx.payload, self.tags
        be = Mux(beat_idx == 0, hdr.body.mem.first_be,
                 Mux(beat_idx == hdr.body.mem.length - 1, hdr.body.mem.last_be, 0xFF))
        with m.If(~drop & (hdr.cmd == HtaxCmd.WRITE)):
            off = self._offset(hdr, beat_idx)
            is_ram, is_reg, reg_index = self._decode(off)
            with m.If(is_ram):
                m.d.comb += [self.ram.addr.eq((off - RAM_OFFSET)[3:]), self.ram.data.eq(beat.word.data),
                             self.ram.en.eq(be)]
            with m.Elif(is_reg):
                m.d.comb += [self.reg_write.en.eq(1), self.reg_write.index.eq(reg_index),
                             self.reg_write.data.eq(beat.word.data), self.reg_write.be.eq(be)]
            with m.Else():
                m.d.comb += self.error.eq(1)
        with m.Elif(~drop & (hdr.cmd == HtaxCmd.RESPONSE)):
            m.d.comb += [self.ram.addr.eq(tags.local[hdr.tag] + beat_idx), self.ram.data.eq(beat.word.data),
                         self.ram.en.eq(0xFF)]
            with m.If(beat.last):
                m.d.comb += [tags.free.eq(1), tags.free_tag.eq(hdr.tag)]


class ScratchRegisters(wiring.Component):
    """The scratch target's register bank (the address map of this module) and its error counter.

    Writes merge their byte enables; ``DMA_HOST`` and ``MSI_ADDR`` keep 8-byte aligned addresses.  A
    write to ``DMA_CTRL`` (byte 0 enabled) strobes ``dma.start_read`` / ``dma.start_write``; a write
    to a read-only register is refused and counted.

    Parameters
    ----------
    words : int
        Scratch RAM size in 64-bit words (read back in ``ID``).

    Members
    -------
    write : In(_RegWriteSignature)
    read : In(_RegReadSignature)
        ``data`` is the value of register ``index`` in this cycle.
    dma : Out(_DmaConfigSignature)
        The DMA registers and the start strobes.
    status : In(_DmaStatusSignature)
        The DMA engine's state, read through ``DMA_CTRL`` and ``DMA_STATUS``.
    error : In(1)
        A refusal elsewhere in this cycle (counted with this block's own).
    errors : Out(16)
        Refused requests (saturating).
    """

    def __init__(self, *, words):
        self.words = words
        super().__init__({
            "write": In(_RegWriteSignature()),
            "read": In(_RegReadSignature()),
            "dma": Out(_DmaConfigSignature()),
            "status": In(_DmaStatusSignature()),
            "error": In(1),
            "errors": Out(16),
        })

    def elaborate(self, platform):
        m = Module()
        wr, st = self.write, self.status
        regs = {n: Signal(64, name=f"reg_{n}") for n in _WRITABLE}
        m.d.comb += [self.dma.host.eq(regs["dma_host"]), self.dma.local.eq(regs["dma_local"]),
                     self.dma.length.eq(regs["dma_len"]), self.dma.msi_addr.eq(regs["msi_addr"])]

        refused = Signal()
        with m.If(wr.en):
            for name, index in _WRITABLE.items():
                with m.If(wr.index == index):
                    new = _merge(regs[name], wr.data, wr.be)
                    if name in ("dma_host", "msi_addr"):
                        new = Cat(Const(0, 3), new[3:52])     # 8-byte aligned host addresses
                    m.d.sync += regs[name].eq(new)
            with m.If((wr.index == REG_DMA_CTRL) & wr.be[0]):
                m.d.comb += [self.dma.start_read.eq(wr.data[0]), self.dma.start_write.eq(wr.data[1])]
            with m.If(~wr.index.matches(*_WRITABLE.values(), REG_DMA_CTRL)):
                m.d.comb += refused.eq(1)                    # a read-only register

        errors = self.errors
        with m.If((self.error | refused) & (errors != 0xFFFF)):
            m.d.sync += errors.eq(errors + 1)

        index = self.read.index
        m.d.comb += self.read.data.eq(
            Mux(index == REG_ID, (ID_MAGIC << 48) | self.words,
            Mux(index == REG_SCRATCH, regs["scratch"],
            Mux(index == REG_DMA_HOST, regs["dma_host"],
            Mux(index == REG_DMA_LOCAL, regs["dma_local"],
            Mux(index == REG_DMA_LEN, regs["dma_len"],
            Mux(index == REG_DMA_CTRL, st.busy,
            Mux(index == REG_DMA_STATUS, Cat(st.done, st.failed),
            Mux(index == REG_MSI_ADDR, regs["msi_addr"], errors)))))))))
        return m


class ScratchDma(wiring.Component):
    """The scratch target's DMA engine: one job at a time, host -> scratch or scratch -> host.

    A job moves ``DMA_LEN`` words in chunks that never cross a 64-byte line (ch. 6.4.4); reads are in
    flight under up to ``max_outstanding`` tags at once, each remembering where its data goes.  A job
    whose scratch range exceeds the RAM moves nothing and fails; one whose reads fail completes with
    the failure bit.  A job completes when its last chunk has left and every tag has come back; then,
    if ``MSI_ADDR`` is set, it asks for the completion interrupt.

    Parameters
    ----------
    words : int
        Scratch RAM size in 64-bit words.
    max_outstanding : int
        Reads in flight (one tag each, tags ``0 .. max_outstanding - 1``).

    Members
    -------
    config : In(_DmaConfigSignature)
        The DMA registers and the start strobes.
    status : Out(_DmaStatusSignature)
    tags : Out(_TagSignature)
    packets : Out(_DmaPacketsSignature)
        What is due on the transmit link, and the transmitter's answers.
    fail : In(1)
        A read came back failed.
    error : Out(1)
        A start refused (while busy, or both directions at once).
    """

    def __init__(self, *, words, max_outstanding):
        self.words = words
        self.max_outstanding = max_outstanding
        wbits = _word_bits(words)
        super().__init__({
            "config": In(_DmaConfigSignature()),
            "status": Out(_DmaStatusSignature()),
            "tags": Out(_TagSignature(wbits)),
            "packets": Out(_DmaPacketsSignature(wbits)),
            "fail": In(1),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        wbits = _word_bits(self.words)
        cfg, st, pk = self.config, self.status, self.packets
        # indexed by the whole 5-bit tag space, so a response with a tag never issued finds a
        # clear busy bit (and is refused) instead of indexing past the end
        tag_busy, tag_local = self.tags.busy, self.tags.local
        write_dir = Signal()            # 0: host -> scratch, 1: scratch -> host
        host = Signal(ADDR_BITS)
        local = Signal(wbits + 1)
        left = Signal(17)
        msi_pending = Signal()

        chunk = Signal(4)
        m.d.comb += chunk.eq(Mux(left < (MAX_DATA_WORDS - host[3:6]), left, MAX_DATA_WORDS - host[3:6]))
        free_tag = Signal(range(self.max_outstanding))
        have_tag = Signal()
        for t in reversed(range(self.max_outstanding)):     # only the first max_outstanding tags are issued
            with m.If(~tag_busy[t]):
                m.d.comb += [free_tag.eq(t), have_tag.eq(1)]
        m.d.comb += [
            pk.msi.eq(msi_pending), pk.msi_addr.eq(cfg.msi_addr[:ADDR_BITS]), pk.msi_data.eq(st.done),
            pk.write.eq(st.busy & (left != 0) & write_dir),
            pk.read.eq(st.busy & (left != 0) & ~write_dir & have_tag),
            pk.host.eq(host), pk.local.eq(local[:wbits]), pk.chunk.eq(chunk), pk.tag.eq(free_tag),
            pk.idle.eq(st.busy & (left == 0) & (tag_busy == 0)),
        ]

        with m.If(self.tags.free):
            m.d.sync += tag_busy.bit_select(self.tags.free_tag, 1).eq(0)
        with m.If(cfg.start_read | cfg.start_write):
            with m.If(st.busy | (cfg.start_read & cfg.start_write)):
                m.d.comb += self.error.eq(1)
            with m.Else():
                length = cfg.length[:16]
                in_range = (cfg.local + length) <= self.words
                m.d.sync += [st.busy.eq(1), write_dir.eq(cfg.start_write), st.failed.eq(~in_range),
                             host.eq(cfg.host[:ADDR_BITS]), local.eq(cfg.local[:wbits + 1]),
                             left.eq(Mux(in_range, length, 0))]
        with m.If(self.fail):
            m.d.sync += st.failed.eq(1)
        with m.If(pk.took_write | pk.took_read):
            m.d.sync += [host.eq(host + (chunk << 3)), local.eq(local + chunk), left.eq(left - chunk)]
        with m.If(pk.took_read):
            m.d.sync += [tag_busy.bit_select(free_tag, 1).eq(1), tag_local[free_tag].eq(local)]
        with m.If(pk.took_msi):
            m.d.sync += msi_pending.eq(0)
        with m.If(pk.finish):
            m.d.sync += [st.busy.eq(0), st.done.eq(st.done + 1), msi_pending.eq(cfg.msi_addr != 0)]
        return m


class ScratchTransmit(wiring.Component):
    """The scratch target's transmit side: one packet at a time on the transmit link (ch. 7.1).

    When the link is free it starts, in this order, the response to the pending READ (responses must
    always progress), the completion interrupt, a DMA write chunk, a DMA read chunk, or completes the
    DMA job.  Data beats come from the scratch RAM (read one beat ahead; the read port's output holds
    while a beat is stalled) or from the one register value of a register response or an interrupt.

    Parameters
    ----------
    words : int
        Scratch RAM size in 64-bit words.
    port : int
        This target's HTAX port (``src`` of what it sends).
    host_port : int
        The host's HTAX port (destination of DMA traffic and interrupts).

    Members
    -------
    tx : Out(HtaxLinkSignature)
        The transmit link.
    ram : In(ReadPort.Signature)
        The scratch RAM's read port.
    request : In(_RequestSignature)
        The READ to answer; ``done`` when its response's last beat moved.
    dma : In(_DmaPacketsSignature)
        What the DMA engine asks for; the answers in the cycle a packet starts.
    """

    def __init__(self, *, words, port, host_port):
        self.port = port
        self.host_port = host_port
        wbits = _word_bits(words)
        super().__init__({
            "tx": Out(HtaxLinkSignature()),
            "ram": In(ReadPort.Signature(addr_width=wbits, shape=64)),
            "request": In(_RequestSignature()),
            "dma": In(_DmaPacketsSignature(wbits)),
        })

    def elaborate(self, platform):
        m = Module()
        tx, rd, req, dma = self.tx, self.ram, self.request, self.dma
        wbits = len(rd.addr)
        out_valid = Signal()
        out_data_phase = Signal()
        out_left = Signal(4)            # data beats still to send after the current beat
        out_hdr = Signal(HtaxHeader)
        out_src = Signal(_TxSource)
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
                    m.d.comb += req.done.eq(1)

        with m.If(~out_valid):
            # responses first (they must always progress), then the interrupt, then DMA traffic
            with m.If(req.pending):
                h = req.header
                ok = h.status == HtaxStatus.OK
                ram_word = (h.body.mem.addr[:WINDOW_BITS] - RAM_OFFSET)[3:3 + wbits]
                # echo the request's address, aligned: the answer to a malformed request is well formed
                addr = Cat(Const(0, 3), h.body.mem.addr[3:])
                m.d.sync += start_packet(HtaxCmd.RESPONSE, h.src, h.tag, addr, Mux(ok, h.body.mem.length, 0),
                                         status=h.status, ram=ok & req.source.ram, reg=ok & req.source.reg,
                                         ram_addr=ram_word, first_be=h.body.mem.first_be,
                                         last_be=h.body.mem.last_be)
                m.d.sync += out_reg_data.eq(req.reg_data)
                m.d.comb += rd.addr.eq(ram_word)
            with m.Elif(dma.msi):
                m.d.sync += [start_packet(HtaxCmd.WRITE, self.host_port, 0, dma.msi_addr, 1, reg=1),
                             out_reg_data.eq(dma.msi_data)]
                m.d.comb += dma.took_msi.eq(1)
            with m.Elif(dma.write):
                m.d.sync += start_packet(HtaxCmd.WRITE, self.host_port, 0, dma.host, dma.chunk, ram=1,
                                         ram_addr=dma.local)
                m.d.comb += [rd.addr.eq(dma.local), dma.took_write.eq(1)]
            with m.Elif(dma.read):
                m.d.sync += start_packet(HtaxCmd.READ, self.host_port, dma.tag, dma.host, dma.chunk)
                m.d.comb += dma.took_read.eq(1)
            with m.Elif(dma.idle):
                m.d.comb += dma.finish.eq(1)

        if platform == "formal":
            # the link rules on what this block sends, and (inductive strengthening) the checker's
            # view of the link is this block's own
            checker = {}
            link_rules(m, tx, Assert, name="tx", state=checker)
            m.d.comb += [
                Assert(checker["in_packet"] == out_data_phase),
                Assert(~out_data_phase | out_valid),
                Assert(~checker["in_packet"] | (checker["remaining"] == out_left + 1)),
            ]
        return m


class HtaxScratch(wiring.Component):
    """Scratch-memory HTAX target with a DMA engine (this module's address map).

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
        m.submodules.ram = ram = Memory(shape=64, depth=self.words, init=[])
        m.submodules.receive = rx = ScratchReceive(words=self.words)
        m.submodules.registers = regs = ScratchRegisters(words=self.words)
        m.submodules.dma = dma = ScratchDma(words=self.words, max_outstanding=self.max_outstanding)
        m.submodules.transmit = tx = ScratchTransmit(words=self.words, port=self.port, host_port=self.host_port)

        wiring.connect(m, wiring.flipped(self.htax.rx), rx.rx)
        wiring.connect(m, tx.tx, wiring.flipped(self.htax.tx))
        wiring.connect(m, rx.ram, ram.write_port(granularity=8))
        wiring.connect(m, tx.ram, ram.read_port())
        wiring.connect(m, rx.reg_write, regs.write)
        wiring.connect(m, rx.reg_read, regs.read)
        wiring.connect(m, rx.request, tx.request)
        wiring.connect(m, dma.tags, rx.tags)
        wiring.connect(m, regs.dma, dma.config)
        wiring.connect(m, dma.status, regs.status)
        wiring.connect(m, dma.packets, tx.dma)
        m.d.comb += [dma.fail.eq(rx.fail), regs.error.eq(rx.error | dma.error),
                     self.errors.eq(regs.errors), self.dma_busy.eq(dma.status.busy)]
        return m


#: the scratch target as a harness unit (``make report UNIT=scratch``; not written by ``make verilog``)
UNITS = {
    "scratch": lambda cfg: HtaxScratch(words=cfg["scratch"]["words"],
                                       max_outstanding=cfg["scratch"]["max_outstanding"]),
}
