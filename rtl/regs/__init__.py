"""The register file generated from SystemRDL (dissertation ch. 7.2); see docs/regs.md.

``rdl/nic_regs.rdl`` is the single source of truth.  :mod:`.generate` runs the generators (Amaranth
register file, C header, Markdown/HTML reference); :mod:`.regfile` is the hand-written runtime the
generated register file subclasses; :mod:`.exporter` is the ``peakrdl amaranth`` exporter.
"""

__all__ = ["UNITS"]


def _regs(cfg):
    from .generate import build
    return build(cfg)


UNITS = {"regs": _regs}
