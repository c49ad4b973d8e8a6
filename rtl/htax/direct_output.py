"""An output port of the 2-cycle HTAX (:class:`rtl.htax.Htax`): the owner of the port and its link."""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.htax import NUM_VCS, HtaxLinkSignature

from .layouts import event_signature, read_register_signature

__all__ = ["HtaxDirectOutput", "direct_status_signature", "owner_state_signature"]


def direct_status_signature():
    """What an output of :class:`rtl.htax.Htax` tells the matching: it ``can`` take a new packet, on
    the VCs ``vcs`` (the fresh-``ready`` rule), and its sink's ``ready``."""
    return wiring.Signature({"can": Out(1), "vcs": Out(NUM_VCS), "ready": Out(NUM_VCS)})


def owner_state_signature(ports):
    """The inputs an output takes beats from: its ``owner`` (while ``busy``) and the input matched
    next (``nxt``, while ``nxt_valid``), which takes over once the owner's last beat has moved."""
    return wiring.Signature({"busy": Out(1), "owner": Out(range(ports)), "nxt_valid": Out(1),
                             "nxt": Out(range(ports))})


class HtaxDirectOutput(wiring.Component):
    """An output port of :class:`rtl.htax.Htax` (dissertation ch. 7.1: overlapping arbitration).

    The output offers the beat in its owner's read register when it is for this output, and never
    interleaves packets: it stays with the owner from header to ``last``.  It takes part in the
    matching (``status.can``) while idle or once its packet's last beat waits in the owner's read
    register; an input matched then (``nxt``) takes over in the cycle after that beat moves, so packets
    leave back to back.  The VCs it may start on (``status.vcs``) follow the fresh-``ready`` rule:
    not the VC of the packet it is finishing (that packet's last beat may fill the sink, so the
    ``ready`` of this cycle is stale) unless the sink promises room for two beats (``ready2``).

    Parameters
    ----------
    port : int
        This output's number.
    ports : int

    Members
    -------
    rx : Out(HtaxLinkSignature())
        The output link.
    inputs : In(read_register_signature(ports)).array(ports)
        Every input's read register.
    accepted : In(event_signature(range(ports)))
        The matching matched input ``payload`` to this output now.
    status : Out(direct_status_signature())
    move : Out(ports)
        Bit ``i``: input ``i``'s read register is taken now.
    state : Out(owner_state_signature(ports))
    """

    def __init__(self, *, port, ports):
        self._port, self._n = port, ports
        super().__init__({
            "rx": Out(HtaxLinkSignature()),
            "inputs": In(read_register_signature(ports)).array(ports),
            "accepted": In(event_signature(range(ports))),
            "status": Out(direct_status_signature()),
            "move": Out(ports),
            "state": Out(owner_state_signature(ports)),
        })

    def elaborate(self, platform):
        m = Module()
        n, o = self._n, self._port
        port, inputs = self.rx, self.inputs
        busy = Signal(name="busy")
        owner = Signal(range(n), name="owner")
        nxt_valid = Signal(name="nxt_valid")
        nxt = Signal(range(n), name="nxt")
        acc, acc_in = self.accepted.valid, self.accepted.payload

        # The owner's read register.
        rd_valid = Array(x.valid for x in inputs)[owner]
        rd_last = Array(x.last for x in inputs)[owner]
        rd_dst = Array(x.dst for x in inputs)[owner]
        rd_vc = Array(x.vc for x in inputs)[owner]
        # can: idle, or the packet's last beat is already fetched.  vcs: not the VC of the packet it
        # is finishing unless the sink promises room for two beats of it (ready2).
        m.d.comb += [
            self.status.can.eq(~nxt_valid & (~busy | (rd_valid & rd_last & (rd_dst == o)))),
            self.status.vcs.eq(~Mux(busy & ~port.ready2.bit_select(rd_vc, 1), Const(1, NUM_VCS) << rd_vc, 0)),
            self.status.ready.eq(port.ready),
        ]

        valid = Signal(name="valid")
        out_move = Signal(name="out_move")
        m.d.comb += [
            valid.eq(busy & rd_valid & (rd_dst == o)),
            port.valid.eq(valid),
            port.payload.eq(Array(x.beat.as_value() for x in inputs)[owner]),
            out_move.eq(port.transfer()),
            self.move.eq(Cat(out_move & (owner == i) for i in range(n))),
        ]
        last_move = Signal(name="last_move")
        m.d.comb += last_move.eq(out_move & port.payload.last)
        with m.If(acc):
            with m.If(busy & ~last_move):
                m.d.sync += [nxt.eq(acc_in), nxt_valid.eq(1)]
            with m.Else():
                m.d.sync += [owner.eq(acc_in), busy.eq(1)]
        with m.Elif(last_move):
            with m.If(nxt_valid):
                m.d.sync += [owner.eq(nxt), nxt_valid.eq(0)]
            with m.Else():
                m.d.sync += busy.eq(0)
        m.d.comb += [self.state.busy.eq(busy), self.state.owner.eq(owner), self.state.nxt_valid.eq(nxt_valid),
                     self.state.nxt.eq(nxt)]
        return m
