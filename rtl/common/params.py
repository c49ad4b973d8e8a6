"""Parameter checks for every unit: one message format, raised before anything is built.

Each check returns the value it accepted and raises ``TypeError`` (not an integer) or ``ValueError``
(out of range) with a message that names the parameter and the value, in one of these forms (tests
assert them exactly)::

    ports must be an integer, not 4.0
    ports must be between 2 and 16, not 20
    rx_buffer_beats must be at least 4, not 2
    tlb_entries must be a power of two, not 1000
    tlb_ways must be 1, 2 or 4, not 3
    fu_ports must be distinct, not [3, 3]

A component that rejects its parameters in ``__init__`` is never returned to anybody, and Amaranth
warns when such an object is collected without having been elaborated.  Test files that construct
components with bad parameters (or only to inspect their signatures) therefore start with the line
``# amaranth: UnusedElaboratable=no``, Amaranth's own switch for that warning.
"""

from amaranth.utils import exact_log2

__all__ = ["check_int", "check_pow2", "check_choice", "check_port", "check_distinct", "MAX_HTAX_PORTS"]

MAX_HTAX_PORTS = 16     # the 4-bit src/dst fields of the HTAX header


def check_int(name, value, lo=None, hi=None):
    """``value`` if it is an integer (not a bool) within ``lo``..``hi`` (either bound may be ``None``)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if lo is not None and hi is not None:
        if not lo <= value <= hi:
            raise ValueError(f"{name} must be between {lo} and {hi}, not {value}")
    elif lo is not None and value < lo:
        raise ValueError(f"{name} must be at least {lo}, not {value}")
    elif hi is not None and value > hi:
        raise ValueError(f"{name} must be at most {hi}, not {value}")
    return value


def check_pow2(name, value, lo=None, hi=None):
    """``value`` if it is an integer power of two within ``lo``..``hi``
    (:func:`amaranth.utils.exact_log2` decides what a power of two is)."""
    check_int(name, value)
    try:
        exact_log2(value)
    except ValueError:
        raise ValueError(f"{name} must be a power of two, not {value}") from None
    return check_int(name, value, lo, hi)


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices`` (integers or strings)."""
    choices = tuple(choices)
    if isinstance(value, bool) or value not in choices:
        shown = [repr(c) if isinstance(c, str) else str(c) for c in choices]
        listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        raise ValueError(f"{name} must be {listed}, not {value!r}")
    return value


def check_port(name, value):
    """``value`` if it is an HTAX port number."""
    return check_int(name, value, 0, MAX_HTAX_PORTS - 1)


def check_distinct(name, values):
    """``values`` as a tuple if no value occurs twice."""
    values = tuple(values)
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must be distinct, not {list(values)}")
    return values
