"""The send registers of an input port of :class:`rtl.htax.HtaxPipelined`: the beats the outputs take."""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import HtaxBeat

from .layouts import crossbar_state_signature, offer_signature, read_register_signature

__all__ = ["HtaxSendRegisters"]


class HtaxSendRegisters(wiring.Component):
    """The write register ``w`` an input's beats leave from, with a skid register ``s`` between it and
    the read register (``docs/htax.md``, "Pipelined switch").

    The read register is emptied whenever ``s`` is empty (``taken``, a register), so an output's take,
    which comes from the outputs' state across the switch, ends at ``w`` and ``s`` and does not reach
    into the read engine.  Beats leave in order: ``w``, then ``s``, then the read register.  Which
    output takes from this input is a register here too (``sel``, bit *o*: output *o* takes beats from
    this input), kept with the outputs' own next-state rule, so the take (and the enables of ``w`` and
    ``s``) starts at this input's registers.

    Parameters
    ----------
    port : int
        This input's number.
    ports : int

    Members
    -------
    rd : In(read_register_signature(ports))
        The read engine's read register.
    rd_near : In(1)
        At most ``OUT_AHEAD`` data beats follow the read register's beat.
    taken : Out(1)
        The read register is emptied now.
    outputs : In(crossbar_state_signature(ports)).array(ports)
        Every output's state.
    offer : Out(offer_signature(ports))
        The write register (``booked_nb`` is not driven here).
    """

    def __init__(self, *, port, ports):
        self._port, self._n = port, ports
        super().__init__({
            "rd": In(read_register_signature(ports)),
            "rd_near": In(1),
            "taken": Out(1),
            "outputs": In(crossbar_state_signature(ports)).array(ports),
            "offer": Out(offer_signature(ports)),
        })

    def elaborate(self, platform):
        m = Module()
        n, i = self._n, self._port
        rd = self.rd
        sel = Signal(n, name="wsel_by")
        for o, out in enumerate(self.outputs):
            with m.If(~out.wact | out.w_end):
                m.d.sync += sel[o].eq(out.obk & out.obk_in_oh[i])

        w_valid = Signal(name="w_valid")
        w_dst = Signal(n, name="w_dst")                 # the beat's output, one-hot
        w_beat = Signal(HtaxBeat, name="w_beat")
        # w_end bit o: w holds the last beat of its packet, for output o (w_valid & w_dst & last, a
        # register here so an output's "the writer's packet ends" is an AND-OR over registers, not the
        # crossbar's last bit behind its wsel)
        w_end = Signal(n, name="w_end")
        w_near = Signal(name="w_near")
        s_valid = Signal(name="s_valid")
        s_dst = Signal(n, name="s_dst")
        s_beat = Signal(HtaxBeat, name="s_beat")
        s_near = Signal(name="s_near")
        w_take = Signal(name="w_take")
        w_free = Signal(name="w_free")
        m.d.comb += [w_take.eq(w_valid & (sel & w_dst).any()), w_free.eq(~w_valid | w_take)]

        rd_dst = Signal(n, name="rd_dst_oh")
        m.d.comb += rd_dst.eq(Const(1, n) << rd.dst)
        with m.If(w_free):
            # w takes s's beat, else the read register's (s is empty then)
            m.d.sync += [
                w_valid.eq(s_valid | rd.valid), s_valid.eq(0),
                w_dst.eq(Mux(s_valid, s_dst, rd_dst)),
                w_beat.eq(Mux(s_valid, s_beat.as_value(), rd.beat.as_value())),
                w_near.eq(Mux(s_valid, s_near, self.rd_near)),
                w_end.eq(Mux(s_valid, Mux(s_beat.last, s_dst, 0), Mux(rd.valid & rd.beat.last, rd_dst, 0))),
            ]
        with m.Elif(~s_valid):
            # w stays: the read register's beat waits in s
            m.d.sync += [s_valid.eq(rd.valid), s_dst.eq(rd_dst), s_beat.eq(rd.beat), s_near.eq(self.rd_near)]
        m.d.comb += [
            self.taken.eq(~s_valid),
            self.offer.valid.eq(w_valid), self.offer.dst.eq(w_dst), self.offer.beat.eq(w_beat),
            self.offer.end.eq(w_end), self.offer.near.eq(w_near),
        ]

        if platform == "formal":
            def one_hot(v):
                return (v != 0) & ((v & (v - 1)) == 0)
            # the write register names one output, and so does the skid register, which holds a beat
            # only behind one in w
            with m.If(w_valid):
                m.d.comb += Assert(one_hot(w_dst))
            with m.If(s_valid):
                m.d.comb += [Assert(w_valid), Assert(one_hot(s_dst))]
            # w_end is the write register's output when it holds a packet's last beat, else 0
            m.d.comb += Assert(w_end == Mux(w_valid & w_beat.last, w_dst, 0))
            # sel is the outputs' "output o takes from this input"
            m.d.comb += Assert(sel == Cat(out.wact & out.wsel_oh[i] for out in self.outputs))
        return m
