"""The VC queues of a crossbar output: one block RAM for all of them, a register stage per VC.

Dissertation ch. 7.3 (the crossbar's output buffers, one per VC); rules in ``docs/network.md``.  The
``vcs`` queues of an output share one memory of ``vcs x depth`` beats (queue ``u`` at addresses
``u * depth ..``), with a write pointer, a read pointer and a count per VC, so they cost block RAM
instead of LUT RAM.  The output writes at most one beat per cycle (it takes one packet at a time), and
the memory is read at most once per cycle.

Every VC's output stream comes from registers (``prefetch`` of them per VC, the head one drives the
stream), so nothing combinational runs from the memory or the writer to the VC's sink:

- A beat for a VC whose memory queue is empty, with no read of it in flight and room in its registers
  (counting the beat leaving in this cycle), goes straight into the registers: an empty queue passes
  a beat written in cycle ``t`` out in ``t + 1``, like a LUT RAM FIFO.  Not while a read lands for any
  VC (the registers of all VCs share one input multiplexer); the beat is then written to the memory.
- A VC whose memory queue holds beats and whose registers will have room for the beat (counting the
  beats in them and in flight and the one leaving) asks for a read; the asking VCs are read round
  robin, so a VC whose sink stops never delays another's reads (the VCs stay independent, as the
  deadlock argument needs).  The read beat lands in the VC's registers in the next cycle.

Rate from the memory: with ``prefetch = 2`` a VC streams one beat per cycle; with 1, one beat every
second cycle (enough for a link port, whose beat is two or four phits, at less register cost).
"""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.net import NetBeat, NetStreamSignature
from rtl.common.params import check_choice, check_int
from rtl.common.rr import one_hot_select, past, past_mask, round_robin_mask

__all__ = ["VcQueues"]


class VcQueues(wiring.Component):
    """``vcs`` beat queues of ``depth`` beats each in one memory.

    Parameters
    ----------
    vcs : int
        Queues, 1..4.
    depth : int
        Beats per queue, 2..64.
    prefetch : int
        Registers per queue in front of its output stream, 1 or 2 (the rate from memory, above).

    Members
    -------
    w_en : In(1)
        Write ``w_data`` to queue ``w_vc``.  The writer keeps a queue's ``level`` below ``depth`` before
        it writes (the crossbar output's reservation does).
    w_vc : In(range(vcs))
    w_data : In(NetBeat)
    o : Out(NetStreamSignature()).array(vcs)
        The queues' outputs, from registers.
    level : Out(range(depth + 1)).array(vcs)
        Beats held per queue: in the memory, read and in flight, and in the registers.

    Raises
    ------
    TypeError, ValueError
        A parameter is not an integer or out of range.
    """

    def __init__(self, *, vcs, depth, prefetch=2):
        self._vcs = check_int("vcs", vcs, 1, 4)
        self._depth = check_int("depth", depth, 2, 64)
        self._prefetch = check_choice("prefetch", prefetch, (1, 2))
        super().__init__({
            "w_en": In(1), "w_vc": In(range(vcs)), "w_data": In(NetBeat),
            "o": Out(NetStreamSignature()).array(vcs),
            "level": Out(range(depth + 1)).array(vcs),
        })

    def elaborate(self, platform):
        m = Module()
        V, D, N = self._vcs, self._depth, self._prefetch
        # ram_style: yosys would map a memory this small to LUT RAM on its own; no_rw_check: a beat is
        # never read in the cycle it is written (it is counted in `stored` from the next cycle), so
        # synth_ecp5 need not emulate read-before-write (a write register and a read-data bypass)
        m.submodules.mem = mem = Memory(shape=NetBeat, depth=V * D, init=[],
                                        attrs={"ram_style": "block", "no_rw_check": 1})
        wr, rd = mem.write_port(), mem.read_port()
        w_ptr = [Signal(range(D), name=f"vc{u}_w_ptr") for u in range(V)]
        r_ptr = [Signal(range(D), name=f"vc{u}_r_ptr") for u in range(V)]
        stored = [Signal(range(D + 1), name=f"vc{u}_stored") for u in range(V)]    # in memory, not read
        held = [Signal(range(N + 1), name=f"vc{u}_held") for u in range(V)]        # in the registers
        regs = [[Signal(NetBeat, name=f"vc{u}_reg{k}") for k in range(N)] for u in range(V)]
        landing = Signal(V)                 # one-hot: the VC whose read was issued in the previous cycle
        pops = Cat(o.valid & o.ready for o in self.o)
        room = Cat(held[u] + landing[u] < N + pops[u] for u in range(V))

        # Writes: into the registers (bypass) or the memory.
        mine = Cat(self.w_en & (self.w_vc == u) for u in range(V))
        bypass = Cat(mine[u] & (stored[u] == 0) & ~landing.any() & room[u] for u in range(V))
        to_mem = Signal()
        m.d.comb += [to_mem.eq(self.w_en & ~bypass.any()), wr.en.eq(to_mem),
                     wr.data.eq(self.w_data)]
        with m.Switch(self.w_vc):
            for u in range(V):
                with m.Case(u):
                    m.d.comb += wr.addr.eq(u * D + w_ptr[u])

        # Reads: round robin among the VCs whose registers will have room.
        wants = Cat((stored[u] != 0) & room[u] for u in range(V))
        mask = Signal(V, init=(1 << V) - 1)
        grant = round_robin_mask(m, wants, mask, name="read")
        with m.If(wants.any()):
            m.d.sync += mask.eq(past_mask(grant))
        m.d.comb += [rd.en.eq(wants.any()),
                     rd.addr.eq(one_hot_select(m, grant, [Const(u * D, len(rd.addr)) + r_ptr[u]
                                                          for u in range(V)], name="r_addr"))]
        m.d.sync += landing.eq(grant)

        for u in range(V):
            with m.If(mine[u] & to_mem):
                m.d.sync += w_ptr[u].eq(past(w_ptr[u], D))
            with m.If(grant[u]):
                m.d.sync += r_ptr[u].eq(past(r_ptr[u], D))
            m.d.sync += stored[u].eq(stored[u] + (mine[u] & to_mem) - grant[u])
        self._registers(m, regs, held, landing, bypass, pops, rd.data)
        for u in range(V):
            m.d.comb += [self.o[u].valid.eq(held[u] != 0), self.o[u].payload.eq(regs[u][0]),
                         self.level[u].eq(stored[u] + landing[u] + held[u])]

        if platform == "formal":
            with m.If(wr.en & rd.en):
                m.d.comb += Assert(wr.addr != rd.addr)
            for u in range(V):
                m.d.comb += Assert(held[u] + landing[u] <= N)
                with m.If(mine[u] & to_mem):
                    m.d.comb += Assert(stored[u] < D)
        return m

    def _registers(self, m, regs, held, landing, bypass, pops, read_data):
        """Each VC's register FIFO: a landing read or a bypassed write in, the head register out.  Both
        sources share one multiplexer: a bypass waits for a cycle in which no read lands."""
        data_in = Signal(NetBeat)
        m.d.comb += data_in.eq(Mux(landing.any(), read_data, self.w_data))
        for u in range(len(regs)):
            push, pop = landing[u] | bypass[u], pops[u]
            head = regs[u][0]
            m.d.sync += held[u].eq(held[u] + push - pop)
            if self._prefetch == 1:
                with m.If(push):
                    m.d.sync += head.eq(data_in)
                continue
            tail = regs[u][1]
            with m.If(pop):
                with m.If(held[u] == 2):
                    m.d.sync += head.eq(tail)
                with m.Elif(push):
                    m.d.sync += head.eq(data_in)
                with m.If((held[u] == 2) & push):
                    m.d.sync += tail.eq(data_in)
            with m.Elif(push):
                with m.If(held[u] == 0):
                    m.d.sync += head.eq(data_in)
                with m.Else():
                    m.d.sync += tail.eq(data_in)

