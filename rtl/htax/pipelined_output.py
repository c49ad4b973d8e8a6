"""An output port of the pipelined HTAX (:class:`rtl.htax.HtaxPipelined`)."""

from amaranth.hdl import Assert, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.htax import NUM_VCS, HtaxLinkSignature

from .layouts import RESERVE, booking_layout, crossbar_state_signature, event_signature, offer_signature
from .link_engine import HtaxLinkEngine
from .output_buffers import HtaxOutputBuffers
from .output_select import HtaxOutputSelect
from .posted_order import HtaxPostedOrder

__all__ = ["HtaxPipelinedOutput", "output_status_signature"]


def output_status_signature():
    """What an output of :class:`rtl.htax.HtaxPipelined` tells the matching: it may be granted
    (``open``), and per VC its buffer has ``RESERVE`` beats unreserved (``space_ok``)."""
    return wiring.Signature({"open": Out(1), "space_ok": Out(NUM_VCS)})


class HtaxPipelinedOutput(wiring.Component):
    """An output port of :class:`rtl.htax.HtaxPipelined`: an :class:`~rtl.htax.output_select.HtaxOutputSelect`
    that takes beats from one input at a time, an :class:`~rtl.htax.output_buffers.HtaxOutputBuffers`
    with a buffer per VC and the space accounting for the bookings, an
    :class:`~rtl.htax.link_engine.HtaxLinkEngine` that sends whole packets from the buffers, and an
    :class:`~rtl.htax.posted_order.HtaxPostedOrder` that keeps non-posted packets behind older posted
    ones.  The
    output's space was reserved at the booking, so a transfer never waits for the sink.

    Parameters
    ----------
    port : int
        This output's number.
    ports : int
    depth : int
        Beats per VC buffer.

    Members
    -------
    rx : Out(HtaxLinkSignature())
        The output link.
    inputs : In(offer_signature(ports)).array(ports)
        Every input's write register.
    booked : In(event_signature(booking_layout(ports)))
        The output learns a booking now.
    state : Out(crossbar_state_signature(ports))
        To every input.
    status : Out(output_status_signature())
        To the matching.
    """

    def __init__(self, *, port, ports, depth):
        self._port, self._n, self._depth = port, ports, depth
        super().__init__({
            "rx": Out(HtaxLinkSignature()),
            "inputs": In(offer_signature(ports)).array(ports),
            "booked": In(event_signature(booking_layout(ports))),
            "state": Out(crossbar_state_signature(ports)),
            "status": Out(output_status_signature()),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        m.submodules.select = select = HtaxOutputSelect(port=self._port, ports=n)
        m.submodules.buffers = buffers = HtaxOutputBuffers(ports=n, depth=self._depth)
        m.submodules.link = link = HtaxLinkEngine()
        m.submodules.order = order = HtaxPostedOrder(depth=self._depth)
        for i in range(n):
            connect(m, input=flipped(self.inputs[i]), select=select.inputs[i])
        connect(m, matching=flipped(self.booked), select=select.booked, buffers=buffers.booked)
        connect(m, select=select.state, output=flipped(self.state))
        connect(m, link=link.rx, output=flipped(self.rx))
        m.d.comb += [
            buffers.ow.eq(select.ow), buffers.ow_vc.eq(select.ow_vc), buffers.booked_nb.eq(select.booked_nb),
            buffers.leave.eq(link.leave),
            order.arrive.eq(Mux(select.ow.first, select.ow_vc, 0)), order.start.eq(link.start),
            link.hold.eq(order.hold),
            link.ow.eq(select.ow), link.ow_vc.eq(select.ow_vc), link.buffered.eq(buffers.buffered),
            self.status.open.eq(select.open), self.status.space_ok.eq(buffers.space_ok),
        ]
        m.d.comb += [link.head[v].eq(buffers.head[v]) for v in range(NUM_VCS)]

        if platform == "formal":
            # the registered "room for a booking" flag is exact whenever the output may grant
            with m.If(select.open):
                for v in range(NUM_VCS):
                    m.d.comb += Assert(buffers.space_ok[v] == (buffers.space[v] >= RESERVE))
        return m
