# amaranth: UnusedElaboratable=no
"""The generator flow: parameters, one RDL change reaching every output, the C header, bad input."""

import re
import shutil
import subprocess

import pytest

from rtl.config import ROOT, Config, load
from rtl.regs.exporter import AmaranthExporter, ExportError
from rtl.regs.generate import RDL, compile_rdl, generate, load_module, rdl_parameters
from sim.regs_model import RegModel


def _cfg(**changes):
    cfg = load()
    out = Config({k: type(v)(dict(v)) for k, v in cfg.items()})
    for key, value in changes.items():
        section, name = key.split("__")
        out[section][name] = value
    return out


@pytest.mark.parametrize("change, message", [
    ({"system__vpids": 24}, "vpids must be a power of two, not 24"),
    ({"system__nodes": 48}, "nodes must be a power of two, not 48"),
    ({"atu__gat_entries": 1000}, "gat_entries must be a power of two, not 1000"),
    ({"regs__link_ports": 0}, "[regs] link_ports must be between 1 and 16, not 0"),
    ({"regs__revision": "xyz"}, "[regs] revision must be at most 14 hex digits, not 'xyz'"),
])
def test_parameter_errors(change, message):
    with pytest.raises(ValueError) as e:
        rdl_parameters(_cfg(**change), revision=(0, False))
    assert str(e.value) == message


def test_sizes_follow_the_configuration():
    p = rdl_parameters(_cfg(system__vpids=16, system__nodes=128, atu__gat_entries=256), revision=(0, False))
    m = RegModel(p)
    assert len([r for r in m.registers() if r.port == "hw__net__route"]) == 128
    assert len([r for r in m.registers() if r.port == "hw__velo_user__rp"]) == 16
    assert len([r for r in m.registers() if r.port == "hw__atu__gat_base"]) == 256
    assert m.reg("irq.velo_status").field("vpid").width == 16


def test_revision_defaults_to_git_head():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    p = rdl_parameters(_cfg(regs__revision=""))
    assert p["REVISION"] == int(head[:14], 16)
    assert rdl_parameters(_cfg(regs__revision="abc123"))["REVISION"] == 0xABC123


def test_read_pointers_alone_on_their_pages():
    """Table 7-1 / 7-8: each read pointer is the only register on its 4 KB page."""
    from rtl.common.addrmap import RMA_RP_PAGES, USER_PAGE_SIZE, VELO_RP_PAGES
    cfg = load()
    m = RegModel(rdl_parameters(cfg, revision=(0, False)))
    for base, port in ((VELO_RP_PAGES, "hw__velo_user__rp"), (RMA_RP_PAGES, "hw__rma_user__rp")):
        for vpid in range(cfg["system"]["vpids"]):
            page = base + vpid * USER_PAGE_SIZE
            on_page = [r for r in m.registers() if page <= r.addr < page + USER_PAGE_SIZE]
            assert [(r.addr, r.port, r.index) for r in on_page] == [(page, port, vpid)]


def test_one_rdl_change_regenerates_everything(tmp_path):
    """Add a register to a copy of the RDL: it appears in the RTL, the header, the docs and the model."""
    rdl = tmp_path / "nic_regs.rdl"
    text = RDL.read_text()
    anchor = "    } driver_flags @0x18;\n"
    assert anchor in text
    rdl.write_text(text.replace(anchor, anchor + "    reg { field { sw = rw; hw = r; } spare[8] = 0x5a; } "
                                                 "spare @0x20;\n"))
    cfg = load()
    paths = generate(cfg, rdl=rdl, out=tmp_path / "out", revision=(0, False), update_docs=False)
    assert "'spare'" in paths["py"].read_text()
    assert "NIC_REGS__RF__SPARE__SPARE_reset 0x5a" in paths["h"].read_text()
    assert "spare" in paths["md"].read_text()
    assert (paths["html"] / "index.html").exists()
    mod = load_module(paths["py"])
    dut = mod.NicRegs(window_base=0, htax_port=1, host_port=0)
    assert [(a, p) for a, p, *_ in dut.address_map if p.endswith(".spare")] == [(0x20, "nic_regs.rf.spare")]
    assert hasattr(dut.hw.rf.spare, "spare")
    model = RegModel(paths["parameters"], rdl=rdl)
    assert model.reg("rf.spare").reset == 0x5A
    # the repository's outputs are untouched by the copy
    assert "spare" not in (ROOT / "docs" / "registers.md").read_text()


def test_docs_follow_a_generation_without_them(tmp_path):
    """A first call without documentation (as the RTL tests make it) does not keep a later call of the
    same key from writing it."""
    cfg, out = load(), tmp_path / "out"
    first = generate(cfg, out=out, revision=(0, False), docs=False, update_docs=False)
    assert first["py"].exists() and not first["md"].exists()
    second = generate(cfg, out=out, revision=(0, False), update_docs=False)
    assert second["key"] == first["key"]
    assert "atu_flush_done" in second["md"].read_text() and (second["html"] / "index.html").exists()


def test_docs_are_generated_from_the_rdl():
    paths = generate(load(), revision=(0, False))
    assert (ROOT / "docs" / "registers.md").read_text() == paths["md"].read_text()


def test_c_header_compiles(tmp_path):
    """The generated header compiles with gcc -Wall -Werror and its layout matches the model."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is not installed")
    cfg = load()
    paths = generate(cfg, revision=(0x0123456789ABCD, True))
    model = RegModel(paths["parameters"])
    lines = [f'#include "{paths["h"]}"', "#include <stddef.h>"]
    for r in model.registers():
        if r.storage != "flops" and r.index not in (0, 1):
            continue
        cpath = r.path
        lines.append(f'_Static_assert(offsetof(nic_regs_t, {cpath}) == {r.addr:#x}, "{r.path}");')
        for f in r.fields:
            macro = "NIC_REGS__" + re.sub(r"\[\d+\]", "X", r.path).replace(".", "__").upper() + \
                    f"__{f.name.upper()}"
            lines.append(f'_Static_assert({macro}_bp == {f.lsb} && {macro}_bw == {f.width}, "{macro}");')
    lines.append("int main(void) { return (int)sizeof(nic_regs_t) == 0; }")
    src = tmp_path / "t.c"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run([gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "t"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
    assert len(lines) > 100


def test_exporter_rejects_unsupported_rdl(tmp_path):
    rdl = tmp_path / "bad.rdl"
    rdl.write_text("addrmap bad { reg { regwidth = 32; field { sw = rw; } x[8] = 0; } rg @0x0; };\n")
    root = compile_rdl({}, rdl, top="bad")
    with pytest.raises(ExportError) as e:
        AmaranthExporter().export(root.top, tmp_path / "bad.py")
    assert str(e.value) == "bad.rg: registers must be 64 bits wide, not 32"
    rdl.write_text("addrmap bad2 { reg { regwidth = 64; field { sw = rw; onwrite = wzc; } x[8] = 0; } "
                   "rg @0x0; };\n")
    root = compile_rdl({}, rdl, top="bad2")
    with pytest.raises(ExportError) as e:
        AmaranthExporter().export(root.top, tmp_path / "bad.py")
    assert str(e.value) == "bad2.rg.x: onwrite=wzc is not supported (woclr, woset)"
