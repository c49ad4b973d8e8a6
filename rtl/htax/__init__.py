"""The HTAX on-chip crossbar (dissertation ch. 7.1, 5.2.9); see ``docs/htax.md``.

Two switches with the same interface, composed of the same input blocks: :class:`Htax` (2 cycles from
header in to header out) and :class:`HtaxPipelined` (registered matching and output buffers, for the
clock).  ``[htax] variant`` of the configuration chooses between them (:func:`from_config`).
"""

from rtl.common.params import check_choice
from rtl.common.rr import RoundRobin

from .layouts import Timing, Variant
from .pipelined import HtaxPipelined
from .switch import Htax

__all__ = ["Htax", "HtaxPipelined", "RoundRobin", "Timing", "Variant", "UNITS", "from_config"]

_PARAMETERS = ("ports", "slots_per_vc", "shared_slots", "counter_bits", "out_depth")


def from_config(cfg, **overrides):
    """The switch ``[htax]`` of ``cfg`` describes: ``variant = "pipelined"`` (:class:`HtaxPipelined`)
    or ``"direct"`` (:class:`Htax`, which has no ``out_depth``).  ``overrides`` replace single keys
    of the section (``ports=4``, ``variant="direct"``).

    Raises
    ------
    ValueError
        ``variant`` is neither, or ``overrides`` names a key the section does not have.
    """
    section = dict(cfg["htax"])
    for key in overrides:
        if key not in section:
            raise ValueError(f"[htax] has no key {key!r}")
    section.update(overrides)
    variant = Variant(check_choice("variant", section["variant"], [v.value for v in Variant]))
    params = {k: section[k] for k in _PARAMETERS}
    if variant is Variant.PIPELINED:
        return HtaxPipelined(**params)
    params.pop("out_depth")
    return Htax(**params)


UNITS = {
    "htax": from_config,
    "htax_pipelined": lambda cfg: from_config(cfg, variant=Variant.PIPELINED.value),
}
