"""Run every generator on the SystemRDL register description (ch. 7.2: one RDL, many outputs).

``python -m rtl.regs.generate`` (and ``make verilog``, through the ``regs`` unit factory) compiles
``rdl/nic_regs.rdl`` with the parameters of the configuration and writes, into
``build/regs/<key>/`` (``key`` hashes the RDL text, the parameters and the generator sources):

* ``nic_regs.py``: the Amaranth register file (:mod:`rtl.regs.exporter`);
* ``nic_regs.h``: the C header (``peakrdl-cheader``);
* ``nic_regs.md`` and ``html/``: the reference (``peakrdl-markdown``, ``peakrdl-html``).

For the default configuration the Markdown reference is also written to ``docs/registers.md``; the
documents are generated with revision 0 so they change only when the registers do.  The Python
register model (:mod:`sim.regs_model`) compiles the same RDL with the same parameters itself.

The version register's reset value is the revision the sources were built from:
``[regs] revision`` if set (hex), else ``git rev-parse HEAD`` plus a dirty flag for uncommitted
changes under ``rdl/``, ``rtl/regs/`` and the register-map modules of ``rtl/common``.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from rtl.common import regmap, regspec
from rtl.common.addrmap import RMA_RP_PAGES, USER_PAGE_SIZE, VELO_RP_PAGES, AddressMap
from rtl.common.params import check_int, check_pow2
from rtl.common.regmap import RDL, TOP, compile_rdl
from rtl.config import DEFAULT_PATH, ROOT, load

__all__ = ["RDL", "TOP", "rdl_parameters", "source_revision", "compile_rdl", "generate", "load_module",
           "build"]

OUT = ROOT / "build" / "regs"
DOCS = ROOT / "docs" / "registers.md"
_GEN_SOURCES = tuple(Path(__file__).parent / name for name in ("exporter.py", "generate.py", "regfile.py")) \
    + (Path(regmap.__file__), Path(regspec.__file__))
_modules = {}


def source_revision():
    """``(56-bit commit prefix, dirty)`` of the sources, or ``(0, True)`` outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "rdl", "rtl/regs",
                                 "rtl/common/regspec.py", "rtl/common/regmap.py"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 0, True
    return int(head[:14], 16), bool(dirty)


def _check_regs_config(regs):
    for key in ("htax_port", "host_port", "link_ports"):
        if key not in regs:
            raise ValueError(f"[regs] {key} is missing")
    check_int("[regs] link_ports", regs["link_ports"], 1, 16)
    rev = regs.get("revision", "")
    if rev and (not isinstance(rev, str) or not all(c in "0123456789abcdefABCDEF" for c in rev)
                or len(rev) > 14):
        raise ValueError(f"[regs] revision must be at most 14 hex digits, not {rev!r}")


def rdl_parameters(cfg, *, revision=None):
    """The top-level RDL parameters for configuration ``cfg``.

    ``revision``: ``(value, dirty)`` for the version register; default from ``[regs] revision`` or
    :func:`source_revision`.
    """
    amap = AddressMap.from_config(cfg)        # validates vpids/nodes (powers of two) and the windows
    s, regs = cfg["system"], cfg["regs"]
    _check_regs_config(regs)
    gat = cfg["atu"]["gat_entries"]
    check_pow2("gat_entries", gat)
    if revision is None:
        revision = (int(regs["revision"], 16), False) if regs.get("revision") else source_revision()
    rev, dirty = revision
    if s["vpids"] * USER_PAGE_SIZE > RMA_RP_PAGES - VELO_RP_PAGES:
        raise ValueError(f"vpids must be at most {(RMA_RP_PAGES - VELO_RP_PAGES) // USER_PAGE_SIZE} "
                         f"for one read-pointer page each, not {s['vpids']}")
    del amap
    return {
        "REVISION": rev, "DIRTY": bool(dirty),
        "VPIDS": s["vpids"], "NODES": s["nodes"], "GAT_ENTRIES": gat, "LINK_PORTS": regs["link_ports"],
        "XBAR_PORTS": cfg["xbar"]["link_ports"] + cfg["xbar"]["net_ports"],
        "MSI_ADDRESS": s["msi_address"], "VELO_RP_PAGES": VELO_RP_PAGES, "RMA_RP_PAGES": RMA_RP_PAGES,
        "PAGE": USER_PAGE_SIZE,
    }


def _key(parameters, rdl):
    h = hashlib.sha256()
    h.update(Path(rdl).read_bytes())
    h.update(json.dumps(parameters, sort_keys=True).encode())
    for path in _GEN_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _write(path, text):
    path = Path(path)
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _markdown_exporter():
    from peakrdl_markdown import MarkdownExporter

    class CompactMarkdownExporter(MarkdownExporter):
        """peakrdl-markdown, with each register array documented once (not once per element)."""

        def _add_addrmap_regfile_mem(self, node, msg, depth):
            children = node.children

            def first_elements(unroll=False, skip_not_present=True):
                for c in children(unroll=False, skip_not_present=skip_not_present):
                    if getattr(c, "is_array", False):
                        c.current_idx = [0] * len(c.array_dimensions)
                    yield c

            node.children = first_elements
            try:
                return super()._add_addrmap_regfile_mem(node, msg, depth)
            finally:
                del node.children

    return CompactMarkdownExporter()


def _docs(root, md_path, html_dir, rdl):
    from peakrdl_html import HTMLExporter

    if html_dir is not None:
        HTMLExporter().export(root.top, str(html_dir), title="EXTOLL NIC registers")
    # the Markdown last: its presence says the documentation is complete
    tmp = Path(md_path).with_name(f".md.{os.getpid()}.md")
    _markdown_exporter().export(root.top, str(tmp), input_files=[os.path.relpath(rdl, ROOT)])
    _write(md_path, tmp.read_text())
    tmp.unlink()


def generate(cfg=None, *, rdl=RDL, out=None, revision=None, docs=True, update_docs=None):
    """Generate every output; return ``{"key", "dir", "py", "h", "md", "html", "parameters"}``.

    Outputs are regenerated only when the key (RDL text, parameters, generator sources) changed; the
    documentation (``docs``) also when an earlier call of the same key was made without it.
    ``update_docs``: also write ``docs/registers.md`` (default: when ``cfg`` is the default
    configuration and ``rdl`` the repository's RDL).
    """
    from peakrdl_cheader.exporter import CHeaderExporter

    from .exporter import AmaranthExporter

    cfg = cfg or load()
    params = rdl_parameters(cfg, revision=revision)
    key = _key(params, rdl)
    d = Path(out or OUT) / key
    paths = {"key": key, "dir": d, "py": d / f"{TOP}.py", "h": d / f"{TOP}.h", "md": d / f"{TOP}.md",
             "html": d / "html", "parameters": params}
    stamp = d / ".done"
    if not stamp.exists():
        d.mkdir(parents=True, exist_ok=True)
        root = compile_rdl(params, rdl)
        tmp_py = d / f".{TOP}.{os.getpid()}.py"
        AmaranthExporter().export(root.top, tmp_py, window_size=AddressMap.from_config(cfg)["regs"].size,
                                  source=os.path.relpath(rdl, ROOT), parameters=params)
        os.replace(tmp_py, paths["py"])
        tmp_h = d / f".{TOP}.{os.getpid()}.h"
        CHeaderExporter().export(root.top, str(tmp_h), generate_bitfields=False, reuse_typedefs=False)
        os.replace(tmp_h, paths["h"])
        stamp.write_text("ok\n")
    if docs and not paths["md"].exists():
        _docs(compile_rdl(dict(params, REVISION=0, DIRTY=False), rdl), paths["md"], paths["html"], rdl)
    if update_docs is None:
        update_docs = Path(rdl) == RDL and _is_default(cfg)
    if update_docs and docs and paths["md"].exists():
        _write(DOCS, paths["md"].read_text())
    return paths


def _is_default(cfg):
    default = load(DEFAULT_PATH)
    strip = lambda p: {k: v for k, v in p.items() if k not in ("REVISION", "DIRTY")}  # noqa: E731
    zero = (0, False)
    return strip(rdl_parameters(cfg, revision=zero)) == strip(rdl_parameters(default, revision=zero))


def load_module(path):
    """Import a generated module by path (cached per path)."""
    path = Path(path)
    if path not in _modules:
        name = f"_regs_gen_{path.parent.name}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _modules[path] = mod
    return _modules[path]


def build(cfg=None, *, revision=None, **kwargs):
    """Generate (if needed) and elaborate the register file for ``cfg``: the ``regs`` unit factory."""
    cfg = cfg or load()
    paths = generate(cfg, revision=revision, **kwargs)
    mod = load_module(paths["py"])
    regs = cfg["regs"]
    return mod.NicRegs(window_base=AddressMap.from_config(cfg)["regs"].base,
                       htax_port=regs["htax_port"], host_port=regs["host_port"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config")
    args = ap.parse_args(argv)
    paths = generate(load(args.config))
    for k in ("py", "h", "md", "html"):
        print(f"{k}: {os.path.relpath(paths[k], ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
