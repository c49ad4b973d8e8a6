"""fpga.budget: the register inputs above a LUT-level budget, on a hand-built netlist whose levels
follow from its construction and on one unit through ``synth_ecp5``."""

import json

import pytest

from fpga.budget import budget, format_budget, main, over_budget
from fpga.timing import logic_depth
from tests.fpga.test_timing import _cell, _ff, _netlist, _Paths


def _chain(n):
    """Register ``q`` behind a chain of ``n`` LUT4s from register ``a``; register ``c`` a copy of ``a``."""
    cells = {"a_TRELLIS_FF_Q": _ff(2, "0"), "c_TRELLIS_FF_Q": _ff(3, 2)}
    bit = 2
    for k in range(n):
        cells[f"l{k}"] = _cell("LUT4", {"Z": 10 + k}, A=bit, B=2)
        bit = 10 + k
    cells["q_TRELLIS_FF_Q"] = _ff(4, bit)
    return _netlist(cells)


@pytest.mark.parametrize("n,over", [(7, []), (8, ["q.DI"]), (12, ["q.DI"])])
def test_over_budget_lists_groups_deeper_than_the_budget(n, over):
    depth = logic_depth(_chain(n))
    assert [g["register"] for g in over_budget(depth, 7)] == over
    assert [g["register"] for g in over_budget(depth, 0)] == ["q.DI"]


def test_negative_budget_is_refused():
    with pytest.raises(ValueError, match="levels must be at least 0, not -1"):
        over_budget(logic_depth(_chain(1)), -1)


def test_command_line_refuses_a_negative_budget(capsys):
    with pytest.raises(SystemExit):
        main(["--levels", "-2", "--unit", "velo"])
    assert "--levels must be at least 0, not -2" in capsys.readouterr().err


def test_budget_of_a_synthesized_unit(tmp_path):
    # _Paths: the parity p of 32 register bits takes 2-3 LUT levels, the sum s one, the copy z none
    r = budget("paths", _Paths(), tmp_path / "paths", levels=1)
    groups = {g["register"]: g for g in r["groups_over"]}
    assert set(groups) == {"p.DI"} and 2 <= r["levels_max"] <= 3
    assert r["inputs_over"] == 1 and r["inputs"] == sum(r["histogram"].values())
    assert (tmp_path / "paths" / "paths_ecp5.json").exists()
    comb, avail, pct = r["fit"]["TRELLIS_COMB"]         # packed: at least the 32-bit sum's carry chain
    assert comb >= 32 and avail == 83640 and pct == round(100 * comb / avail, 1)
    assert budget("paths", _Paths(), tmp_path / "again", levels=3)["groups_over"] == []
    text = format_budget({"paths": {**r, "commit": "abc1234", "dirty": False}})
    assert "| paths | 1 |" in text and "| `p.DI` | 1 |" in text and f"| {comb} (" in text
    json.dumps(r)                                   # what budget.json stores
