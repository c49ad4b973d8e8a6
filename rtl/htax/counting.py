"""Counter helpers of the HTAX's input blocks: an up/down counter, and "below a limit after this
cycle's events" without an adder in front of the comparison."""

from amaranth.hdl import Cat, Const, Mux, Signal

__all__ = ["up_down", "below_after"]


def below_after(m, name, value, limit, up, down, take):
    """``value + up - down + take < limit`` (``up``, ``down``, ``take``: 1-bit events) without an
    adder in front of the comparison: ``value`` is compared with the four constants ``limit - d``
    (``d`` = -1 .. 2), and the events choose among the results."""
    lt = {d: (value < limit - d) if limit - d > 0 else Const(0) for d in (-1, 0, 1, 2)}
    flags = Signal(4, name=f"{name}_lt")
    m.d.comb += flags.eq(Cat(lt[d] for d in (-1, 0, 1, 2)))
    ok = Signal(name=name)
    m.d.comb += ok.eq(Mux(up, Mux(down, Mux(take, flags[2], flags[1]), Mux(take, flags[3], flags[2])),
                          Mux(down, Mux(take, flags[1], flags[0]), Mux(take, flags[2], flags[1]))))
    return ok


def up_down(m, counter, up, down, *, lut=False):
    """``counter`` counts one up on ``up`` alone and one down on ``down`` alone (it wraps at its ends;
    the callers' counts stay within its range).

    ``lut``: the next value from LUTs only: bit ``k`` flips when the bits below it are all 1 (counting
    up) or all 0 (counting down), and the register's enable is ``up ^ down``.  Yosys maps ``counter + 1``
    and ``counter - 1`` to two carry chains (CCU2C) and a multiplexer on ECP5; this form has none
    (the 8-port ``HtaxPipelined``: 314 CCU2C instead of 2106, for 1178 more LUT4), and ``down``
    reaches only the enable, not a carry chain.
    """
    if lut:
        flip = Cat(Mux(up, counter[:k].all(), ~counter[:k].any()) if k else Const(1)
                   for k in range(len(counter)))
        with m.If(up ^ down):
            m.d.sync += counter.eq(counter ^ flip)
    else:
        with m.If(up & ~down):
            m.d.sync += counter.eq(counter + 1)
        with m.Elif(down & ~up):
            m.d.sync += counter.eq(counter - 1)
