"""The crossbar side of an output port of :class:`rtl.htax.HtaxPipelined`: which input it takes from."""

from amaranth.hdl import Array, Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS, HtaxBeat

from .layouts import BEATS, booking_layout, crossbar_state_signature, event_signature, offer_signature

__all__ = ["HtaxOutputSelect"]


class HtaxOutputSelect(wiring.Component):
    """Takes an output's beats from one input at a time (``docs/htax.md``, "Pipelined switch").

    A booking (``booked``, one cycle after the accept) waits in ``obk`` until the output has taken the
    last beat of the packet it takes (``wsel``, while ``wact``); then the booked input becomes the
    writer.  Every beat taken is registered in ``ow`` (with its VC one-hot in ``ow_vc``) on its way
    into the output buffers.  The output may be granted (``open``) when it has no booking and takes no
    packet, or takes one of which at most ``OUT_AHEAD`` data beats are still to come (the flag of the
    last beat taken, made by the input: ``near``).

    Parameters
    ----------
    ports : int
    port : int
        This output's number.

    Members
    -------
    inputs : In(offer_signature(ports)).array(ports)
        Every input's write register.
    booked : In(event_signature(booking_layout(ports)))
    state : Out(crossbar_state_signature(ports))
        To every input.
    open : Out(1)
    ow : Out(HtaxBeat)
    ow_vc : Out(NUM_VCS)
        The VC of the beat in ``ow``, one-hot; 0: ``ow`` is empty.
    booked_nb : Out(BEATS)
        The data beats of the booked input's looked-up packet.
    """

    def __init__(self, *, port, ports):
        self._port, self._n = port, ports
        super().__init__({
            "inputs": In(offer_signature(ports)).array(ports),
            "booked": In(event_signature(booking_layout(ports))),
            "state": Out(crossbar_state_signature(ports)),
            "open": Out(1),
            "ow": Out(HtaxBeat),
            "ow_vc": Out(NUM_VCS),
            "booked_nb": Out(BEATS),
        })

    def elaborate(self, platform):
        m = Module()
        n, o = self._n, self._port
        inputs, booked = self.inputs, self.booked
        obk = Signal(name="booked")                 # a booking waits for wsel
        obk_in = Signal(range(n), name="booked_in")
        wact = Signal(name="wact")                  # wsel is taking a packet
        wsel = Signal(range(n), name="wsel")
        # one-hot copies of wsel and obk_in for the control paths (the data multiplexers use wsel)
        wsel_oh = Signal(n, name="wsel_oh")
        obk_in_oh = Signal(n, name="booked_in_oh")
        with m.If(booked.valid):
            m.d.sync += [obk.eq(1), obk_in.eq(booked.payload.input), obk_in_oh.eq(booked.payload.inputs)]

        # Take the beats of input wsel (registered into ow, then written to the buffer).
        w_ok = Signal(name="w_ok")
        m.d.comb += w_ok.eq(wact & (wsel_oh & Cat(x.valid & x.dst[o] for x in inputs)).any())
        w_beat = Signal(HtaxBeat, name="w_in")
        m.d.comb += w_beat.eq(Array(x.beat.as_value() for x in inputs)[wsel])
        # Whether at most OUT_AHEAD data beats of the writer's packet are still to come (wnear), once
        # its header has been taken (whdr): the flag of the last beat taken, made by the input.
        whdr = Signal(name="whdr")
        wnear = Signal(name="wnear")
        with m.If(w_ok):
            m.d.sync += [whdr.eq(1), wnear.eq(Array(x.near for x in inputs)[wsel])]
        # w_end: w_ok & w_beat.last, from the inputs' end flags
        w_end = Signal(name="w_end")
        m.d.comb += w_end.eq(wact & (wsel_oh & Cat(x.end[o] for x in inputs)).any())
        with m.If(~wact | w_end):
            m.d.sync += whdr.eq(0)
            with m.If(obk):
                m.d.sync += [wact.eq(1), wsel.eq(obk_in), wsel_oh.eq(obk_in_oh), obk.eq(0)]
            with m.Else():
                m.d.sync += wact.eq(0)
        m.d.comb += self.open.eq(~obk & (~wact | (whdr & wnear)))
        # (obk_in names the booked input from the cycle after the booking on; the output's next booking
        # comes three cycles later at the earliest)
        m.d.comb += self.booked_nb.eq(Array(x.booked_nb for x in inputs)[obk_in])

        # ow: the beat taken from the writer, with its VC one-hot (ow_vc = 0: ow is empty), so the link
        # engine's "VC v has a beat" does not start with a comparison
        ow_vc = Signal(NUM_VCS, name="ow_vc")
        ow = Signal(HtaxBeat, name="ow")
        m.d.sync += [ow_vc.eq(Mux(w_ok, Const(1, NUM_VCS) << w_beat.vc.as_value(), 0)), ow.eq(w_beat)]
        m.d.comb += [
            self.ow.eq(ow), self.ow_vc.eq(ow_vc),
            self.state.wact.eq(wact), self.state.wsel_oh.eq(wsel_oh), self.state.w_end.eq(w_end),
            self.state.obk.eq(obk), self.state.obk_in_oh.eq(obk_in_oh),
        ]

        if platform == "formal":
            # the one-hot copies of wsel and obk_in name the same input as the binary ones
            with m.If(wact):
                m.d.comb += Assert(wsel_oh == (1 << wsel))
            with m.If(obk):
                m.d.comb += Assert(obk_in_oh == (1 << obk_in))
        return m
