# amaranth: UnusedElaboratable=no
"""Unit register views from the RDL (rtl/common/regview.py): a counter added to the RDL reaches a unit's
signature and the register file with no other edit; path errors and parameter mismatches with their
exact messages."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from rtl.atu import Atu
from rtl.common.regmap import RDL
from rtl.common.regview import RegisterView, connect_regs
from rtl.config import load
from rtl.regs.generate import generate, load_module
from rtl.rma import REGISTERS as RMA_REGISTERS
from rtl.rma import Rma
from rtl.velo import Velo

#: one RDL line: a counter in the free upper half of the RMA responder's counter register
EXTRA = "        field { sw = rw; hw = na; counter; } extra[47:32] = 0;\n"
ANCHOR = "        field { sw = rw; hw = na; counter; } lock[31:16] = 0;\n    } responder_counters @0x10;\n"


class _Unit(wiring.Component):
    """A unit that owns ``view`` and does nothing else."""

    def __init__(self, view):
        super().__init__({"regs": Out(view)})

    def elaborate(self, platform):
        return Module()


def _leaves(view):
    return {".".join(map(str, path)): member for path, member, _ in view.flatten(view.create())}


def _register_file(cfg, *, out, **kwargs):
    """The register file for ``cfg``, generated into ``out`` (without the documents, so not into the
    shared cache) and created here so that this module's ``UnusedElaboratable=no`` covers it."""
    paths = generate(cfg, revision=(0, False), docs=False, update_docs=False, out=out, **kwargs)
    return load_module(paths["py"]).NicRegs(window_base=0, htax_port=1, host_port=0)


def _rdl_with_counter(tmp_path):
    text = RDL.read_text()
    assert text.count(ANCHOR) == 1
    rdl = tmp_path / "nic_regs.rdl"
    rdl.write_text(text.replace(ANCHOR, ANCHOR.replace("        field { sw = rw; hw = na; counter; } lock",
                                                        EXTRA + "        field { sw = rw; hw = na; counter; } lock")))
    return rdl


def test_added_counter_grows_the_view(tmp_path):
    """The RMA view over a copy of the RDL with one more counter line has exactly one more port."""
    rdl = _rdl_with_counter(tmp_path)
    before = _leaves(RegisterView(RMA_REGISTERS, VPIDS=8))
    after = _leaves(RegisterView(RMA_REGISTERS, rdl=rdl, VPIDS=8))
    assert set(after) - set(before) == {"rma.responder_counters.extra_incr"}
    assert set(before) <= set(after)
    assert after["rma.responder_counters.extra_incr"] == Out(1)      # the unit drives it


def test_added_counter_reaches_the_register_file(tmp_path):
    """The register file generated from the same copy takes the new strobe from the unit through
    :func:`connect_regs`, and software reads the count at the new field's bits."""
    rdl = _rdl_with_counter(tmp_path)
    cfg = load()
    rf = _register_file(cfg, rdl=rdl, out=tmp_path / "out")
    unit = _Unit(RegisterView(RMA_REGISTERS, rdl=rdl, VPIDS=cfg["system"]["vpids"]))
    m = Module()
    m.submodules.rf, m.submodules.unit = rf, unit
    connect_regs(m, unit, rf)
    seen = []

    async def tb(ctx):
        for value in (1, 1, 0, 1, 0):
            ctx.set(unit.regs.rma.responder_counters.extra_incr, value)
            seen.append(ctx.get(rf.hw.rma.responder_counters.extra_incr))
            await ctx.tick()

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    assert seen == [1, 1, 0, 1, 0]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("regs")


def test_units_match_register_file(out):
    """The default configuration's RMA, VELO and ATU views are ports of its register file, width for
    width (:func:`connect_regs` checks each)."""
    cfg = load()
    rf = _register_file(cfg, out=out)
    v = cfg["system"]["vpids"]
    m = Module()
    for unit in (Rma(vpids=v, window_base=0, htax_port=3, host_port=0, atu_port=2),
                 Velo(vpids=v, nodes=cfg["system"]["nodes"], window_base=0, htax_port=6, host_port=0),
                 Atu(gat_entries=cfg["atu"]["gat_entries"])):
        connect_regs(m, unit, rf)


def test_parameter_mismatch_message(out):
    """A unit built for 8 VPIDs cannot be wired to a register file built for the default 32."""
    rf = _register_file(load(), out=out)
    rma = Rma(vpids=8, window_base=0, htax_port=3, host_port=0, atu_port=2)
    with pytest.raises(ValueError) as e:
        connect_regs(Module(), rma, rf)
    assert str(e.value) == ("rma.completer_enable.0.enable is unsigned(8) in the unit and unsigned(32) in the "
                            "register file: build both with the same RDL parameters")


def test_missing_port_message(out):
    rf = _register_file(load(), out=out)
    unit = _Unit(wiring.Signature({"rma": Out(wiring.Signature({"bogus_incr": Out(1)}))}))
    with pytest.raises(ValueError) as e:
        connect_regs(Module(), unit, rf)
    assert str(e.value) == "the register file has no port rma.bogus_incr"


def test_field_view():
    """One field of a register: only that field's ports."""
    view = RegisterView(("net.node.id", "irq.rma_status.vpid"), VPIDS=8)
    assert _leaves(view) == {"net.node.id": In(15), "irq.rma_status.vpid": In(8),
                             "irq.rma_status.vpid_event": Out(8)}


def test_atu_view_follows_gat_entries():
    assert len(Atu(gat_entries=64).regs.atu.gat_base.addr) == 6
    assert len(Atu(gat_entries=512).regs.atu.gat_base.addr) == 9


def test_equality_and_repr():
    assert RegisterView(("rma",), VPIDS=8) == RegisterView(["rma"], VPIDS=8)
    assert RegisterView(("rma",), VPIDS=8) != RegisterView(("rma",), VPIDS=16)
    assert repr(RegisterView(("rma", "net.node.id"), VPIDS=8)) == "RegisterView(('rma', 'net.node.id'), VPIDS=8)"


@pytest.mark.parametrize("paths, message", [
    ((), "paths must be a non-empty sequence of dotted names, not ()"),
    (("nope",), "the register map has no nope"),
    (("rma.nope",), "the register map has no rma.nope"),
    (("net.node.nope",), "the register map has no net.node.nope"),
    (("link.errors",), "link is an array: a view takes it whole, not link.errors"),
    (("rma.nq_base.addr",), "the register map has no rma.nq_base.addr: only a flip-flop register's field can "
                            "be taken alone"),
    (("rf.version",), "rf.version has no hardware port"),
    (("rf.scratch.value",), "rf.scratch.value has no hardware port"),
    (("irq", "irq.rma_status.vpid"), "paths overlap at irq: name the whole part once"),
    (("irq.rma_status", "irq.rma_status.vpid"), "irq.rma_status.vpid is named twice"),
])
def test_path_messages(paths, message):
    with pytest.raises(ValueError) as e:
        RegisterView(paths, VPIDS=8)
    assert str(e.value) == message
