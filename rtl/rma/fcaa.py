"""The FCAA datapath (dissertation ch. 7.5.4): fetch-compare-and-add on one 32-bit lock word."""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .formats import RmaLockOperands

__all__ = ["RmaFcaa"]


class RmaFcaa(wiring.Component):
    """``if (int32)old <= (int32)compare: new = old + add`` (two's complement, wrapping), else
    ``new = old``; combinational.

    Members
    -------
    word : In(64)
        The quadword read from memory; ``high`` selects its upper half as the lock word.
    high : In(1)
    ops : In(RmaLockOperands)
    old, new : Out(32)
    success : Out(1)
    """

    word: In(64)
    high: In(1)
    ops: In(RmaLockOperands)
    old: Out(32)
    new: Out(32)
    success: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.old.eq(Mux(self.high, self.word[32:], self.word[:32])),
                     self.success.eq(self.old.as_signed() <= self.ops.compare.as_signed()),
                     self.new.eq(Mux(self.success, self.old + self.ops.add, self.old))]
        return m
