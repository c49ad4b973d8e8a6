"""The parameter checks every unit uses (rtl/common/params.py): accepted values and exact messages."""

import pytest

from rtl.common.params import check_choice, check_distinct, check_int, check_port, check_pow2


@pytest.mark.parametrize("call, exc, message", [
    (lambda: check_int("ports", 4.0), TypeError, "ports must be an integer, not 4.0"),
    (lambda: check_int("ports", True, 1, 4), TypeError, "ports must be an integer, not True"),
    (lambda: check_int("ports", 20, 2, 16), ValueError, "ports must be between 2 and 16, not 20"),
    (lambda: check_int("depth", 2, 4), ValueError, "depth must be at least 4, not 2"),
    (lambda: check_int("depth", 9, None, 8), ValueError, "depth must be at most 8, not 9"),
    (lambda: check_pow2("tlb_entries", 1000), ValueError, "tlb_entries must be a power of two, not 1000"),
    (lambda: check_pow2("tlb_entries", 0, 16), ValueError, "tlb_entries must be a power of two, not 0"),
    (lambda: check_pow2("tlb_entries", -4), ValueError, "tlb_entries must be a power of two, not -4"),
    (lambda: check_pow2("tlb_entries", 8, 16, 64), ValueError, "tlb_entries must be between 16 and 64, not 8"),
    (lambda: check_pow2("tlb_entries", "16"), TypeError, "tlb_entries must be an integer, not '16'"),
    (lambda: check_choice("tlb_ways", 3, (1, 2, 4)), ValueError, "tlb_ways must be 1, 2 or 4, not 3"),
    (lambda: check_choice("tlb_ways", True, (1, 2)), ValueError, "tlb_ways must be 1 or 2, not True"),
    (lambda: check_choice("variant", "x", ("direct", "pipelined")), ValueError,
     "variant must be 'direct' or 'pipelined', not 'x'"),
    (lambda: check_port("htax_port", 16), ValueError, "htax_port must be between 0 and 15, not 16"),
    (lambda: check_distinct("fu_ports", [3, 3]), ValueError, "fu_ports must be distinct, not [3, 3]"),
])
def test_messages(call, exc, message):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == message


def test_accepted_values_come_back():
    assert check_int("n", 5, 1, 8) == 5 and check_int("n", 0) == 0
    assert check_pow2("n", 64, 16, 64) == 64 and check_pow2("n", 1) == 1
    assert check_choice("w", 2, (1, 2, 4)) == 2 and check_port("p", 0) == 0
    assert check_distinct("p", [1, 2]) == (1, 2)
