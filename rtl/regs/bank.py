"""The register file's counter banks: plain event counters kept in block RAM (ch. 7.2, "arrays of
registers as RAM blocks", applied to the counters; docs/regs.md, "Counter banks").

A counter in flip-flops costs about three logic cells per bit (the adder, the saturation, the software
write); the NIC's link, crossbar, network-port and ATU counters are some 3,000 such bits.  A bank keeps
the words of one counter layout in one memory and only a short event accumulator per counter in
flip-flops, so a counter costs about ten cells whatever its width.

Each memory entry holds, per field, the value ``v`` and the accumulator reading ``l`` it was last
brought up to date with.  A field's accumulator ``p`` (``pend_bits`` wide, wrapping) adds the field's
``_incr`` strobe every cycle, so the counter's value is always ``sat(v + (p - l) mod 2^pend_bits)``.
One operation per cycle (a software write to a word of the bank, else a software read of one, else the
next word of a scan) reads an entry, brings it up to date (``v``, and ``l`` := the accumulator reading
when the operation was issued) and, for a write, merges the written bytes; its result is written back
three cycles after issue and forwarded to the two operations behind it.  A read is such an operation:
the read engine holds the word in stage A until its result is there (4 cycles when no write is in the
way).  At least one cycle in nine has no software write (a WRITE packet's header beat carries no word),
and reads and the scan take turns in those cycles, so every entry is brought up to date at least once
every ``18 * words + 3`` cycles: ``pend_bits`` covers that many events.  Entries not yet written since reset
read as zero (a flag per word), so the reset clears the counters although it does not clear block RAM.

Timing: the units' strobes are registered on their way in, so a bank counts an event a cycle later
than a flip-flop counter would (an event in the cycle before a software write counts after it); a
write takes effect for a read filled two cycles after its data beat, as in flip-flops.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.rr import one_hot_index

from .slots import FetchSignature, WriteSignature, expand_be

__all__ = ["CounterBank", "bank_layout", "BANK_MIN_WORDS"]

#: a layout shared by fewer words stays in flip-flops (a bank's fixed logic would cost more)
BANK_MIN_WORDS = 8


def bank_layout(reg):
    """The counter layout ``((lsb, width, saturate), ...)`` of a register that a bank may hold, or
    ``None``: flip-flop storage, every field a software read-write counter with no other software or
    hardware effect, reset value 0."""
    if reg.storage != "flops" or not reg.fields:
        return None
    for f in reg.fields:
        if not (f.counter and f.sw == "rw" and f.hw == "na" and f.onread is None and f.onwrite is None
                and f.reset == 0 and f.role is None and not (f.intr or f.we or f.hwset or f.hwclr
                                                              or f.singlepulse or f.swmod)):
            return None
    return tuple(sorted((f.lsb, f.width, f.saturate) for f in reg.fields))


class CounterBank(wiring.Component):
    """The counters of every register in ``slots`` (one layout) in one memory.

    Parameters
    ----------
    slots : list of ``(index, FlopSlot)``
        The words of the bank and their bits in ``write.fsel``/``fetch.fsel``; all of one
        :func:`bank_layout`.
    flops, arrays : int
        The register file's flip-flop registers (bank words included) and arrays (signature widths).
    wbits : int
        Word-address bits of the window.

    Members
    -------
    write : In(WriteSignature(...))
    fetch : In(FetchSignature(...))
    read_data : Out(64)
        The word in stage B if it is one of the bank's, else 0.
    wait : Out(1)
        A word of the bank is in stage A and its value is not there yet: it may not move to stage B.
    """

    def __init__(self, *, slots, flops, arrays, wbits):
        layouts = {bank_layout(fl.reg) for _, fl in slots}
        if len(layouts) != 1 or None in layouts:
            raise ValueError("a counter bank holds words of one counter layout")
        self._slots = slots
        self._fields = sorted(slots[0][1].reg.fields, key=lambda f: f.lsb)
        #: accumulator bits: the events of the longest interval between two updates of an entry
        self.pend_bits = (18 * len(slots) + 3).bit_length()
        super().__init__({
            "write": In(WriteSignature(flops=flops, arrays=arrays, wbits=wbits)),
            "fetch": In(FetchSignature(flops=flops, wbits=wbits)),
            "read_data": Out(64), "wait": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        wr, fetch = self.write, self.fetch
        n, K, fields = len(self._slots), self.pend_bits, self._fields
        entry = data.StructLayout({**{f"v{j}": unsigned(f.width) for j, f in enumerate(fields)},
                                   **{f"l{j}": unsigned(K) for j in range(len(fields))}})
        # no_rw_check: an entry read in the cycle it is written is taken from the forwarded results
        m.submodules.mem = mem = Memory(shape=entry, depth=n, init=[],
                                        attrs={"ram_style": "block", "no_rw_check": 1})
        w_port, op_port = mem.write_port(), mem.read_port()

        # the accumulators, one per field of every word
        pend = [[Signal(K, name=f"w{i}_{f.name}_pend") for f in fields] for i in range(n)]
        # the units' strobes, registered first: a strobe reaches the bank a cycle after its unit raised
        # it, so no path runs from a unit's logic into the accumulators (the bank counts as of then)
        events = [[Signal(name=f"w{i}_{f.name}_event") for f in fields] for i in range(n)]
        for i, (_, fl) in enumerate(self._slots):
            for j, f in enumerate(fields):
                strobe = getattr(fl.port, next(g.name for g in fl.reg.fields if g.lsb == f.lsb) + "_incr")
                m.d.sync += events[i][j].eq(strobe)
        for i in range(n):
            for j in range(len(fields)):
                m.d.sync += pend[i][j].eq(pend[i][j] + events[i][j])
        written = Signal(n)                     # the entry was written since reset (else it reads 0)

        # results of the last two operations: (valid, index, entry), newest first
        res = [(Signal(name=f"res{k}_valid"), Signal(range(n), name=f"res{k}_idx"),
                Signal(entry, name=f"res{k}")) for k in range(2)]

        def counted(base, snap, j):
            f = fields[j]
            total = Signal(f.width + 1, name=f"{f.name}_total")
            m.d.comb += total.eq(base[f"v{j}"] + (snap[j * K:(j + 1) * K] - base[f"l{j}"])[:K])
            return Mux(total[f.width], (1 << f.width) - 1, total[:f.width]) if f.saturate else total[:f.width]

        # software reads: a word of the bank in stage A asks for an operation (it waits there for the
        # result); a_in: a word is in stage A (the read engine's select holds after it left)
        hsel = Cat(fetch.fsel[k] for k, _ in self._slots)
        a_in, a_issued, a_done = Signal(), Signal(), Signal()
        with m.If(fetch.fill):
            m.d.sync += a_in.eq(1)
        with m.Elif(fetch.load):
            m.d.sync += a_in.eq(0)
        hit_a = a_in & hsel.any()
        rd_req = Signal()
        m.d.comb += [rd_req.eq(hit_a & ~a_issued), self.wait.eq(hit_a & ~a_done)]

        # issue (cycle c): a software write to a bank word, else a read's word or the scan's next word,
        # taking turns (a read does not take two cycles without a write in a row from the scan)
        wsel = Cat(wr.fsel[k] for k, _ in self._slots)
        scan = Signal(range(n))
        read_turn = Signal()                    # the last cycle without a write went to a read
        rd_go = Signal()
        m.d.comb += rd_go.eq(rd_req & ~wsel.any() & ~read_turn)
        with m.If(~wsel.any()):
            m.d.sync += read_turn.eq(rd_go)
            with m.If(~rd_go):
                m.d.sync += scan.eq(Mux(scan == n - 1, 0, scan + 1))
        idx = Signal(range(n))
        m.d.comb += idx.eq(Mux(wsel.any(), one_hot_index(m, wsel, name="w_idx"),
                               Mux(rd_go, one_hot_index(m, hsel, name="r_idx"), scan)))
        with m.If(rd_go):
            m.d.sync += a_issued.eq(1)
        op = [dict(idx=Signal(range(n), name=f"op{s}_idx"), write=Signal(name=f"op{s}_write"),
                   read=Signal(name=f"op{s}_read"), data=Signal(64, name=f"op{s}_data"),
                   mask=Signal(64, name=f"op{s}_mask"), events=Signal(len(fields), name=f"op{s}_events"))
              for s in (1, 2)]
        m.d.sync += [op[0]["idx"].eq(idx), op[0]["write"].eq(wsel.any()), op[0]["read"].eq(rd_go),
                     op[0]["data"].eq(wr.data), op[0]["mask"].eq(expand_be(wr.be)),
                     op[0]["events"].eq(Array(Cat(*e) for e in events)[idx])]
        # read (c + 1): the memory, the accumulators less the events of cycle c (they count after a
        # write issued in c), "written", and which result in flight (if any) will be newer than the memory
        snap = Signal(K * len(fields))
        known = Signal()
        m.d.comb += [op_port.addr.eq(op[0]["idx"]), op_port.en.eq(1)]
        m.d.sync += [op[1][k].eq(v) for k, v in op[0].items()]
        acc = Array(Cat(*p) for p in pend)[op[0]["idx"]]
        m.d.sync += [snap[j * K:(j + 1) * K].eq(acc[j * K:(j + 1) * K] - op[0]["events"][j])
                     for j in range(len(fields))]
        m.d.sync += known.eq(written.bit_select(op[0]["idx"], 1))
        fwd = [Signal(name="fwd0"), Signal(name="fwd1")]        # res[0], res[1] in cycle c + 2
        m.d.sync += [fwd[0].eq(op[0]["idx"] == op[1]["idx"]), fwd[1].eq(res[0][0] & (op[0]["idx"] == res[0][1]))]
        # update (c + 2): the entry brought up to date, the written bytes merged
        o = op[1]
        base = entry(Mux(fwd[0], res[0][2].as_value(), Mux(fwd[1], res[1][2].as_value(),
                                                             Mux(known, op_port.data.as_value(), 0))))
        result = Signal(entry)
        word = Const(0, 64)
        for j, f in enumerate(fields):
            value = counted(base, snap, j)
            wd, wm = o["data"][f.lsb:f.lsb + f.width], o["mask"][f.lsb:f.lsb + f.width]
            m.d.comb += [result[f"v{j}"].eq(Mux(o["write"], (value & ~wm) | (wd & wm), value)),
                         result[f"l{j}"].eq(snap[j * K:(j + 1) * K])]
            word = word | (value.as_unsigned() << f.lsb)
        m.d.sync += [res[0][0].eq(1), res[0][1].eq(o["idx"]), res[0][2].eq(result),
                     res[1][0].eq(res[0][0]), res[1][1].eq(res[0][1]), res[1][2].eq(res[0][2]),
                     written.bit_select(o["idx"], 1).eq(1)]
        # write back (c + 3)
        m.d.comb += [w_port.en.eq(res[0][0]), w_port.addr.eq(res[0][1]), w_port.data.eq(res[0][2])]

        # the read's value, from its operation
        a_held = Signal(64)
        with m.If(o["read"]):
            m.d.sync += [a_held.eq(word), a_done.eq(1)]
        with m.If(fetch.load):
            m.d.sync += [a_issued.eq(0), a_done.eq(0)]
        rdq = Signal(64)
        with m.If(fetch.load):
            m.d.sync += rdq.eq(Mux(hit_a, a_held, 0))
        m.d.comb += self.read_data.eq(rdq)
        return m
