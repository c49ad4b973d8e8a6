"""Round-robin arbitration for the HTAX crossbar (dissertation ch. 7.1: HTAX arbitration).

:func:`round_robin` is the combinational core the switch instantiates many times (one arbiter per
output among inputs, one per input among outputs, one per output among virtual channels);
:class:`RoundRobin` wraps it with its pointer register so it can be tested on its own.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

__all__ = ["round_robin", "round_robin_mask", "round_robin_select", "pointer_mask", "past_mask", "lowest",
           "one_hot_index", "one_hot_select", "past", "past_one_hot", "RoundRobin"]


def round_robin(m, requests, pointer, *, name="rr"):
    """One-hot grant: the first set bit of ``requests`` at or after index ``pointer``, wrapping around.

    ``requests`` is an ``n``-bit value, ``pointer`` a value in ``range(n)``.  The grant is zero when no
    bit is requested.

    Built from LUT trees only: the lowest set bit of a vector is ``x[k] & ~x[:k].any()`` per bit, not
    ``x & -x``, whose carry chain is slower on ECP5 (a one-cycle 8-port iSLIP round of two chained
    arbiters places at about 135 MHz this way and 96 MHz with the carry chain, docs/htax.md).
    """
    return round_robin_mask(m, requests, pointer_mask(pointer, len(requests)), name=name)


def pointer_mask(pointer, n):
    """The priority mask of ``pointer`` among ``n`` requesters: bit k is ``pointer <= k`` (constant 1
    where k is the pointer's largest value or above)."""
    top = (1 << len(pointer)) - 1
    return Cat(pointer <= k if k < top else Const(1) for k in range(n))


def round_robin_mask(m, requests, mask, *, name="rr"):
    """:func:`round_robin` with the pointer given as its :func:`pointer_mask`: kept in a register
    (updated with :func:`past_mask`), the mask needs no comparison in front of the priority logic."""
    n = len(requests)
    at_or_after = Signal(n, name=f"{name}_hi")
    m.d.comb += at_or_after.eq(requests & mask)
    grant = Signal(n, name=f"{name}_grant")
    m.d.comb += grant.eq(Mux(at_or_after.any(), lowest(at_or_after), lowest(requests)))
    return grant


def _first_value(requests, values):
    """(any, value of the lowest requester): a tree of 2:1 choices, log2(n) levels deep."""
    if len(values) == 1:
        return requests[0], values[0]
    h = len(values) // 2
    lo_any, lo_val = _first_value(requests[:h], values[:h])
    hi_any, hi_val = _first_value(requests[h:], values[h:])
    return lo_any | hi_any, Mux(lo_any, lo_val, hi_val)


def round_robin_select(m, requests, mask, values, *, name="rrsel"):
    """``values[k]`` of the requester :func:`round_robin_mask` grants (zero when none requests), without
    the one-hot grant in front: two trees of 2:1 choices (at or after the pointer, and from the start)
    and a choice between them, instead of a grant followed by an AND-OR select."""
    if len(values) != len(requests):
        raise ValueError(f"{len(values)} values for {len(requests)} requesters")
    width = max(len(Value.cast(v)) for v in values)
    values = [Value.cast(v) for v in values]
    at_or_after = Signal(len(requests), name=f"{name}_hi")
    m.d.comb += at_or_after.eq(requests & mask)
    hi_any, hi_val = _first_value(at_or_after, values)
    any_, val = _first_value(requests, values)
    result = Signal(width, name=name)
    m.d.comb += result.eq(Mux(hi_any, hi_val, Mux(any_, val, 0)))
    return result


def past_mask(one_hot):
    """The :func:`pointer_mask` of :func:`past_one_hot`: bit k is set unless the set bit of ``one_hot``
    is at k or above and not the last (all ones for the last requester, and for zero, like pointer 0)."""
    n = len(one_hot)
    return Cat(~one_hot[k:n - 1].any() if k < n - 1 else Const(1) for k in range(n))


def lowest(x):
    """The lowest set bit of ``x``, one-hot (zero when no bit is set).  Up to 4 bits a LUT each; wider,
    ``x & (~x + 1)``: the increment maps to a carry chain (``CCU2C`` on ECP5), a fixed two LUT levels
    and a fast carry where the prefix-OR form ``x[k] & ~x[:k].any()`` becomes a ripple of LUTs once
    synthesis shares its prefixes (ten levels for the 17 slots of an HTAX input)."""
    x = Value.cast(x)
    if len(x) <= 4:
        return Cat(x[k] & ~x[:k].any() if k else x[0] for k in range(len(x)))
    return (x & (~x + 1))[:len(x)]


def past(index, n):
    """The pointer value just past ``index`` among ``n`` requesters (wrapping to 0): after a grant
    to ``index``, that requester has the lowest priority."""
    return Mux(index == n - 1, 0, index + 1)


def past_one_hot(m, one_hot, *, name="past"):
    """:func:`past` of the index of the set bit of ``one_hot``, as one AND-OR tree of constants."""
    n = len(one_hot)
    width = len(Const(max(n - 1, 1)))
    return one_hot_select(m, one_hot, [Const((i + 1) % n, width) for i in range(n)], name=name)


def one_hot_index(m, one_hot, *, name="idx"):
    """The index of the set bit of ``one_hot`` (zero when no bit is set)."""
    n = len(one_hot)
    index = Signal(range(max(n, 2)), name=name)
    value = Const(0, len(index))
    for i in range(n):
        value = value | Mux(one_hot[i], i, 0)
    m.d.comb += index.eq(value)
    return index


def one_hot_select(m, one_hot, values, *, name="sel"):
    """``values[i]`` for the set bit ``i`` of ``one_hot`` (zero when no bit is set): an AND-OR tree,
    shallower than :func:`one_hot_index` followed by a multiplexer on the index."""
    if len(values) != len(one_hot):
        raise ValueError(f"{len(values)} values for a {len(one_hot)}-bit one-hot select")
    width = max(len(v) for v in values)
    result = Signal(width, name=name)
    value = Const(0, width)
    for i, v in enumerate(values):
        value = value | Mux(one_hot[i], v, 0)
    m.d.comb += result.eq(value)
    return result


class RoundRobin(wiring.Component):
    """A round-robin arbiter among ``count`` requesters.

    Parameters
    ----------
    count : int
        Number of requesters, at least 1.

    Members
    -------
    requests : In(count)
    grant : Out(count)
        One-hot: the first requester at or after the pointer; zero when nobody requests.
    index : Out(range(count))
        The index of the granted requester.
    advance : In(1)
        The grant was used: the pointer moves to one past the granted requester, so it has the
        lowest priority in the next round.

    Raises
    ------
    TypeError, ValueError
        ``count`` is not an integer, or below 1.
    """

    def __init__(self, *, count):
        self._count = check_int("count", count, 1)
        super().__init__({
            "requests": In(count),
            "grant": Out(count),
            "index": Out(range(max(count, 2))),
            "advance": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._count
        pointer = Signal(range(max(n, 2)))
        grant = round_robin(m, self.requests, pointer)
        index = one_hot_index(m, grant)
        m.d.comb += [self.grant.eq(grant), self.index.eq(index)]
        with m.If(self.advance & grant.any()):
            m.d.sync += pointer.eq(past(index, n))
        return m
