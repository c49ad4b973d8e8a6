"""What an input of :class:`rtl.htax.HtaxPipelined` keeps of its read engine's progress: the look-ahead
flags and the slot release."""

from amaranth.hdl import Assert, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .engine import issue_layout
from .layouts import (
    BEATS,
    IN_AHEAD,
    OUT_AHEAD,
    engine_state_signature,
    release_signature,
    start_layout,
)

__all__ = ["HtaxReadTracker"]


class HtaxReadTracker(wiring.Component):
    """Registers that follow an input's read engine (``docs/htax.md``, "Pipelined switch").

    * The look-ahead of the matching: ``near`` (fewer than ``IN_AHEAD`` beats of the engine's packet
      are still to read; 1 while the engine is idle), from a register of the beats still to read, so
      the grant step does not start with a subtraction; and ``rd_near`` (at most ``OUT_AHEAD`` data
      beats follow the beat in the read register), which travels with the beat to the output.
    * The slot release: a slot is released in the cycle after its last beat is read (a register cut
      between the read engine and the slot accounting); until then the head lookup still skips it
      (``busy``).  The released slot one-hot is a register of the slot being read, gated by the
      release behind the register, so the engine's issue reaches one flip-flop, not a synchronous reset
      of every slot's bit.

    Parameters
    ----------
    ports, slots : int

    Members
    -------
    engine : In(engine_state_signature(ports, slots))
    issue, last : In(1)
        The engine issues a beat now; it is its packet's last.
    sel : In(issue_layout(ports, slots))
        The issued beat.
    load : In(1)
        The engine loads packet ``next`` now.
    next : In(start_layout(ports, slots))
    near, near_next : Out(1)
        ``near`` now and in the next cycle.
    rd_near : Out(1)
    release : Out(release_signature(slots))
    busy : Out(slots)
        The slots being read or released now (one-hot).
    """

    def __init__(self, *, ports, slots):
        self._n, self._slots = ports, slots
        super().__init__({
            "engine": In(engine_state_signature(ports, slots)),
            "issue": In(1),
            "last": In(1),
            "sel": In(issue_layout(ports, slots)),
            "load": In(1),
            "next": In(start_layout(ports, slots)),
            "near": Out(1),
            "near_next": Out(1),
            "rd_near": Out(1),
            "release": Out(release_signature(slots)),
            "busy": Out(slots),
        })

    def elaborate(self, platform):
        m = Module()
        nslots = self._slots
        issue, load, nx_nb = self.issue, self.load, self.next.nb

        # erem: the engine's beats still to read after the next one (nb - k), a register, so the flags
        # below compare registers with constants instead of a difference behind the engine's choice
        # between the new packet (nx_nb) and the current one (rem = Mux(load, nx_nb, erem); every
        # function of it below is a choice between the functions of nx_nb and of erem, so the
        # comparisons do not wait for load)
        erem = Signal(BEATS, name="erem")
        with m.If(issue):
            m.d.sync += erem.eq(Mux(load, nx_nb - 1, erem - 1))
        with m.Elif(load):
            m.d.sync += erem.eq(nx_nb)
        near = Signal(init=1, name="near")
        near_next = Signal(name="near_next")
        m.d.comb += near_next.eq(Mux(issue, Mux(load, nx_nb < IN_AHEAD + 1, erem < IN_AHEAD + 1),
                                     Mux(load, nx_nb < IN_AHEAD, near)))
        m.d.sync += near.eq(near_next)
        rd_near = Signal(name="rd_near")
        with m.If(issue):
            m.d.sync += rd_near.eq(Mux(load, nx_nb <= OUT_AHEAD, erem <= OUT_AHEAD))
        m.d.comb += [self.near.eq(near), self.near_next.eq(near_next), self.rd_near.eq(rd_near)]

        cur = Signal(nslots, name="cur")          # one-hot: the slot being read (while act)
        with m.If(load):
            m.d.sync += cur.eq(1 << self.next.slot)
        # (rel_cur: cur, or the slot loaded now, as a header-only packet may end in the cycle of its load)
        release = Signal(name="release")
        rel_slot = Signal(range(nslots), name="rel_slot")
        rel_cls = Signal.like(self.sel.cls, name="rel_cls")
        rel_cur = Signal(nslots, name="rel_cur")
        m.d.sync += [release.eq(issue & self.last), rel_slot.eq(self.sel.slot), rel_cls.eq(self.sel.cls),
                     rel_cur.eq(Mux(load, Const(1, nslots) << self.next.slot, cur))]
        m.d.comb += [self.release.valid.eq(release), self.release.cls.eq(rel_cls),
                     self.release.slots.eq(Mux(release, rel_cur, 0)),
                     self.busy.eq(Mux(self.engine.act | release, cur, 0))]

        if platform == "formal":
            eng = self.engine
            with m.If(eng.act):
                # the look-ahead flag: fewer than IN_AHEAD beats still to read; the registered rest
                m.d.comb += [Assert(near == (eng.nb - eng.k < IN_AHEAD)), Assert(erem == eng.nb - eng.k)]
            with m.Else():
                m.d.comb += Assert(near)
            # the registered released-slot one-hot decodes release and rel_slot
            m.d.comb += Assert(self.release.slots == Mux(release, Const(1, nslots) << rel_slot, 0))
        return m
