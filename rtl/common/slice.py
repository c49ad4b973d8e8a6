"""A register slice: a stream stage with every output from flip-flops (a timing cut between blocks)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["RegisterSlice"]


class RegisterSlice(wiring.Component):
    """A register slice: one stream in, the same stream out one cycle later, with ``i.ready`` and
    ``o.valid``/``o.payload`` driven from flip-flops only, so no combinational path crosses it in
    either direction.  It breaks long ready/valid chains between blocks (the RMA unit's, and every stream between the
    network layer's units and the network port, ``docs/nic.md``).

    An output register with a skid register behind it: ``i.ready`` is "the skid register is empty",
    and a beat taken while the output register stalls waits in the skid register.  Full throughput
    (one beat a cycle), one cycle of latency, two items of storage.

    Parameters
    ----------
    shape : shape-castable
        The payload.

    Members
    -------
    i : In(stream.Signature(shape)) ; o : Out(stream.Signature(shape))
    """

    def __init__(self, *, shape):
        self._shape = shape
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        skid = Signal.like(self.i.payload)
        skid_valid = Signal()
        m.d.comb += self.i.ready.eq(~skid_valid)
        with m.If(~self.o.valid | self.o.ready):        # the output register is free this cycle
            with m.If(skid_valid):
                m.d.sync += [self.o.payload.eq(skid), self.o.valid.eq(1), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid)]
        with m.Elif(self.i.valid & ~skid_valid):
            m.d.sync += [skid.eq(self.i.payload), skid_valid.eq(1)]
        return m
