"""fpga.report: the command line's seed list, and the resources per block of a unit."""

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fpga.report import blocks, main


@pytest.mark.parametrize("text", ["1,1", "a", "1,,2"])
def test_bad_seed_lists_are_refused(text, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--seed", text, "--unit", "scratch"])
    assert exc.value.code == 2
    assert "seed" in capsys.readouterr().err


class _Add(wiring.Component):
    x: In(8)
    y: In(8)
    s: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.s.eq(self.x + self.y)
        return m


class _Reg(wiring.Component):
    d: In(4)
    q: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.q.eq(self.d)
        return m


class _Copy(wiring.Component):
    """A block whose registers sit one level further down (``inner``): they count in the block."""
    d: In(4)
    q: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = _Reg()
        m.d.comb += [inner.d.eq(self.d), self.q.eq(inner.q)]
        return m


class _Hier(wiring.Component):
    """Two blocks and a top-level register: 8 flip-flops and a carry chain in ``a``, 4 in ``b``, 1 in
    ``top``."""
    x: In(8)
    y: In(8)
    d: In(4)
    s: Out(8)
    q: Out(4)
    p: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.submodules.a = a = _Add()
        m.submodules.b = b = _Copy()
        m.d.comb += [a.x.eq(self.x), a.y.eq(self.y), self.s.eq(a.s), b.d.eq(self.d), self.q.eq(b.q)]
        m.d.sync += self.p.eq(self.d.xor())
        return m


def test_blocks_count_each_submodule_with_its_own_submodules(tmp_path):
    (tmp_path / "hier.v").write_text(verilog.convert(_Hier(), name="hier"))
    r = blocks("hier", tmp_path)
    rows = r["ecp5_blocks"]
    assert set(rows) == {"a", "b", "top"}
    assert (rows["a"]["ff"], rows["b"]["ff"], rows["top"]["ff"]) == (8, 4, 1)
    assert rows["a"]["ccu2c"] >= 1 and rows["b"]["lut4"] == 0 and rows["top"]["lut4"] >= 1
    assert r["ecp5_blocks_lut4_total"] == sum(row["lut4"] for row in rows.values())
    rows = blocks("hier", tmp_path, expand=("b",))["ecp5_blocks"]
    assert set(rows) == {"a", "b", "b.inner", "top"}
    assert (rows["b"]["ff"], rows["b.inner"]["ff"]) == (0, 4)


def test_a_unit_without_submodules_has_no_blocks(tmp_path):
    (tmp_path / "reg.v").write_text(verilog.convert(_Reg(), name="reg"))
    assert blocks("reg", tmp_path) == {}
