"""The bridge's DMA read responses: a completed AXI read becomes an HTAX RESPONSE (``docs/hostbus.md``)."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxBeat, HtaxCmd, HtaxHeader, HtaxStatus, HtaxVC

from .read_collect import done_layout
from .read_issue import release_signature

__all__ = ["ReadRespond"]

_DEPTH = 4      # output queue: covers the data memory's read latency at one beat per cycle


class ReadRespond(wiring.Component):
    """Sends the RESPONSE of every completed read: the header from the stored READ (its ``src`` as
    ``dst``, its tag, address and byte enables), then the words from the data memory, one per cycle.
    A read that failed at the subordinate (``SLVERR``/``DECERR``) or returned another number of beats
    than it asked for is answered with status TARGET_ERROR and no data.  The ID is released as its
    last word is read.  The next response's header follows the last word directly (after a failed read's
    header, a cycle later), so a stream of 8-word reads leaves at 8 words per 9 cycles (the header beat).

    Parameters
    ----------
    host_port : int
        The ``src`` of every response.
    id_bits : int

    Members
    -------
    done : In(stream.Signature(done_layout(id_bits)))
    table : In(memory.ReadPort.Signature(addr_width=id_bits, shape=HtaxHeader))
    data : In(memory.ReadPort.Signature(addr_width=id_bits + 3, shape=64))
    o : Out(stream.Signature(HtaxBeat))
        RESPONSE packets to the NIC.
    release : Out(release_signature(id_bits))
    """

    def __init__(self, *, host_port, id_bits):
        self._host_port, self._id_bits = host_port, id_bits
        super().__init__({
            "done": In(stream.Signature(done_layout(id_bits))),
            "table": In(memory.ReadPort.Signature(addr_width=id_bits, shape=HtaxHeader)),
            "data": In(memory.ReadPort.Signature(addr_width=id_bits + 3, shape=64)),
            "o": Out(stream.Signature(HtaxBeat)),
            "release": Out(release_signature(id_bits)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = queue = fifo.SyncFIFO(width=HtaxBeat.as_shape().size, depth=_DEPTH)
        cur = Signal(done_layout(self._id_bits))
        head = Signal()             # the table word of ``cur`` is on the read port: send the header now
        words = Signal(4)           # words of ``cur`` still to read
        word = Signal(3)
        # one pipeline register in front of the queue: the header, or a word being read from memory
        pipe = Signal()
        pipe_head = Signal()
        pipe_last = Signal()
        pipe_beat = Signal(HtaxBeat)

        room = Signal()
        m.d.comb += room.eq(queue.level + pipe + 1 <= _DEPTH)
        req = HtaxHeader(self.table.data)
        ok = ~cur.error & (cur.beats == req.body.mem.length)
        rsp = Signal(HtaxBeat)
        hdr = HtaxHeader(rsp.word.as_value())
        m.d.comb += [
            hdr.cmd.eq(HtaxCmd.RESPONSE), hdr.vc.eq(HtaxVC.RESPONSE),
            hdr.status.eq(Mux(ok, HtaxStatus.OK, HtaxStatus.TARGET_ERROR)),
            hdr.src.eq(self._host_port), hdr.dst.eq(req.src), hdr.tag.eq(req.tag),
            hdr.body.mem.addr.eq(req.body.mem.addr), hdr.body.mem.length.eq(Mux(ok, req.body.mem.length, 0)),
            hdr.body.mem.first_be.eq(req.body.mem.first_be),
            hdr.body.mem.last_be.eq(Mux(ok, req.body.mem.last_be, 0)),
            rsp.vc.eq(HtaxVC.RESPONSE), rsp.first.eq(1), rsp.last.eq(~ok),
        ]

        # the last read of a response takes the next one at once
        send_head = head & room
        read_word = ~head & (words != 0) & room
        finishing = (send_head & ~ok) | (read_word & (words == 1))
        idle = ~head & (words == 0)
        # The next read is taken while the last word is read, or when idle: never in the cycle of a
        # failed read's header, so that taking it (and the table address) does not wait for ``ok``,
        # which comes from the table read (the bridge's longest path otherwise).
        m.d.comb += [self.done.ready.eq(idle | (read_word & (words == 1))),
                     # (the table is read at the ID that may be taken now; it holds the word while not)
                     self.table.en.eq(self.done.ready), self.table.addr.eq(self.done.payload.id),
                     self.data.en.eq(read_word), self.data.addr.eq((cur.id << 3) | word),
                     self.release.valid.eq(finishing), self.release.id.eq(cur.id)]
        m.d.sync += [pipe.eq(send_head | read_word), pipe_head.eq(send_head), pipe_last.eq(words == 1)]
        with m.If(send_head):
            m.d.sync += [pipe_beat.eq(rsp), head.eq(0), words.eq(Mux(ok, req.body.mem.length, 0)), word.eq(0)]
        with m.If(read_word):
            m.d.sync += [words.eq(words - 1), word.eq(word + 1)]
        with m.If(self.done.valid & self.done.ready):
            m.d.sync += [cur.eq(self.done.payload), head.eq(1)]

        data_beat = Signal(HtaxBeat)
        m.d.comb += [data_beat.word.data.eq(self.data.data), data_beat.vc.eq(HtaxVC.RESPONSE),
                     data_beat.last.eq(pipe_last)]
        m.d.comb += [queue.w_en.eq(pipe), queue.w_data.eq(Mux(pipe_head, pipe_beat, data_beat)),
                     self.o.valid.eq(queue.r_rdy), self.o.payload.eq(queue.r_data), queue.r_en.eq(self.o.ready)]
        return m
