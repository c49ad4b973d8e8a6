"""Reference model of the PHY's line format (``rtl/phy/line.py``, ``docs/phy.md``): phits to line
words and back, word by word, with the receiver's framing-error rules.

A phit is ``(data, ctl)`` with ``ctl`` a :class:`~rtl.link.params.PhitCtl` value; a word is
``(data, k)`` toward the line and ``(data, k, err)`` from it (``err`` true when either byte has a code
violation or disparity error).
"""

from rtl.common.phit import PhitCtl
from rtl.phy.line import IDLE_WORD, SKIP_WORD, START_WORD

__all__ = ["encode_flits", "LineDecoderModel", "shift_bytes"]

SOF, BODY, EOF, IDLE = (PhitCtl.SOF.value, PhitCtl.BODY.value, PhitCtl.EOF.value, PhitCtl.IDLE.value)


def encode_flits(flits):
    """The words of whole flits sent back to back without stalls (each flit a list of 16-bit
    phit data; its first phit is the SOF, its last the EOF); an IDLE word must follow the last."""
    words = []
    for flit in flits:
        words.append(START_WORD)
        words += [(d, 0) for d in flit]
    return words


def shift_bytes(words):
    """The word stream as a receiver sees it whose comma lands in byte 1: each word made of the
    previous word's byte 1 and this word's byte 0 (the first word's byte 0 is lost)."""
    out = []
    prev = (0, 0)
    for d, k in words:
        out.append(((prev[0] >> 8) | (d & 0xff) << 8, (prev[1] >> 1) | (k & 1) << 1))
        prev = (d, k)
    return out


class LineDecoderModel:
    """The receiver's rules, one aligned word at a time (:class:`rtl.phy.line.LineDecoder` with
    ``en`` high).  ``phits`` collects ``(data, ctl)``, with ``(0, IDLE)`` where a flit was broken off;
    ``framing_errors`` and ``symbol_errors`` count as the gateware's strobes do."""

    def __init__(self):
        self.state = "OUT"
        self.stray = False
        self.held = None        # (data, first) held until the next word
        self.phits = []
        self.framing_errors = 0
        self.symbol_errors = 0

    def word(self, data, k, err=False):
        if err:
            self.symbol_errors += 1
        kind = None if err else ("data" if k == 0 else {START_WORD: "start", SKIP_WORD: "skip",
                                                        IDLE_WORD: "idle"}.get((data, k)))
        if kind == "skip" and self.state != "OUT":
            return
        if kind == "data" and self.state == "OUT":
            self.framing_errors += not self.stray
            self.stray = True
        elif kind == "data":
            if self.state == "HELD":
                self.phits.append((self.held[0], SOF if self.held[1] else BODY))
            self.held = (data, self.state == "FIRST")
            self.state = "HELD"
        elif kind in ("start", "idle") and self.state == "HELD":
            self.phits.append((self.held[0], EOF))
            self.state, self.stray = ("FIRST" if kind == "start" else "OUT"), False
        elif kind == "start":
            self._break()
            self.state, self.stray = "FIRST", False
        else:
            self._break()
            self.state, self.stray = "OUT", False

    def _break(self):
        """A flit broken off: counted, and marked by an IDLE phit."""
        if self.state != "OUT":
            self.framing_errors += 1
            self.phits.append((0, IDLE))
