"""Channel model between two link ports (dissertation ch. 7.3; issue 6).

A :class:`Channel` carries one direction: each cycle it takes the transmitter's phit ``(data, ctl)``
and returns the phit the receiver sees this cycle, ``latency`` cycles later.  It injects, each with
its own probability, the faults a SERDES link shows:

``bit_flip``     per phit: one random bit of the 16/32/64 data + 2 control bits inverted;
``drop_phit``    per phit: the phit is lost (the receiver sees IDLE in its place);
``burst``        per phit: a burst of ``burst_len`` phits (2 to ``max_burst``) replaced by noise;
``ack_corrupt``  per control flit: one bit of the flit inverted (acknowledgement, NAK, credits);
``ack_drop``     per control flit: the whole flit lost;
``drop_last``    per data flit that ends a burst of data flits (a control flit or IDLE follows it):
                 the whole flit lost.  The channel decides when the flit has passed its input, so it
                 needs ``latency`` of at least the flit length to remove it completely.

``stats`` counts what was injected, and the data flits seen (``data_flits``).  The model is
deterministic for a given ``random.Random``.
"""

import random
from collections import deque

__all__ = ["Channel", "ERROR_KINDS", "IDLE", "SOF", "BODY", "EOF"]

IDLE, SOF, BODY, EOF = range(4)          # rtl.link.params.PhitCtl
ERROR_KINDS = ("bit_flip", "drop_phit", "burst", "ack_corrupt", "ack_drop", "drop_last")


class Channel:
    """One direction of a link.

    Parameters
    ----------
    phit_bits : int
    latency : int
        Cycles from input to output, at least 1.
    rng : random.Random
    max_burst : int
        Longest burst error in phits.
    **rates
        Probability of each error kind in :data:`ERROR_KINDS` (default 0).
    """

    def __init__(self, *, phit_bits, latency, rng=None, max_burst=8, **rates):
        if latency < 1:
            raise ValueError(f"latency must be at least 1, not {latency}")
        unknown = set(rates) - set(ERROR_KINDS)
        if unknown:
            raise ValueError(f"unknown error kinds {sorted(unknown)}; known: {ERROR_KINDS}")
        self.phit_bits = phit_bits
        self.latency = latency
        self.rng = rng or random.Random(0)
        self.max_burst = max_burst
        self.rates = {k: float(rates.get(k, 0.0)) for k in ERROR_KINDS}
        self.enabled = True
        self.dead = False       # every phit lost (a broken cable), for link-error tests
        self.stats = dict.fromkeys(ERROR_KINDS, 0)
        self.stats["data_flits"] = 0    # data flits that passed the input (dropped ones included)
        self._q = deque([[0, IDLE]] * 0)
        for _ in range(latency):
            self._q.append([0, IDLE])
        self._burst_left = 0
        self._flit = []          # entries of the flit now entering: [entry, ...]
        self._flit_type = None   # "data" / "ctrl"
        self._flit_fault = None  # "corrupt" / "drop" decided at SOF for control flits
        self._last_data = None   # entries of the most recent complete data flit

    def _p(self, kind):
        return self.enabled and self.rng.random() < self.rates[kind]

    def step(self, data, ctl):
        """Feed this cycle's phit; return the phit delivered this cycle."""
        entry = [int(data), int(ctl)]
        self._track(entry)
        if self.dead:
            entry[0], entry[1] = 0, IDLE
        elif self._burst_left:
            self._burst_left -= 1
            entry[0], entry[1] = self.rng.getrandbits(self.phit_bits), self.rng.getrandbits(2)
        elif self._p("burst"):
            self.stats["burst"] += 1
            self._burst_left = self.rng.randint(2, self.max_burst) - 1
            entry[0], entry[1] = self.rng.getrandbits(self.phit_bits), self.rng.getrandbits(2)
        elif self._p("drop_phit"):
            self.stats["drop_phit"] += 1
            entry[0], entry[1] = 0, IDLE
        elif self._p("bit_flip"):
            self.stats["bit_flip"] += 1
            bit = self.rng.randrange(self.phit_bits + 2)
            if bit < self.phit_bits:
                entry[0] ^= 1 << bit
            else:
                entry[1] ^= 1 << (bit - self.phit_bits)
        self._q.append(entry)
        out = self._q.popleft()
        return out[0], out[1]

    def _track(self, entry):
        """Follow flits at the input for the flit-level faults (acts on entries still queued)."""
        data, ctl = entry
        if ctl == SOF:
            self._end_flit(next_is_data=not (data & 1))
            self._flit = [entry]
            self._flit_type = "ctrl" if data & 1 else "data"
            self._flit_fault = None
            if self._flit_type == "ctrl":
                if self._p("ack_drop"):
                    self.stats["ack_drop"] += 1
                    self._flit_fault = "drop"
                elif self._p("ack_corrupt"):
                    self.stats["ack_corrupt"] += 1
                    self._flit_fault = "corrupt"
        elif ctl in (BODY, EOF) and self._flit:
            self._flit.append(entry)
        elif ctl == IDLE:
            self._end_flit(next_is_data=False)
            self._flit = []
        if self._flit_fault == "drop":
            entry[0], entry[1] = 0, IDLE
        if ctl == EOF and self._flit:
            if self._flit_fault == "corrupt":
                victim = self.rng.choice(self._flit)
                victim[0] ^= 1 << self.rng.randrange(self.phit_bits)
            if self._flit_type == "data":
                self._last_data = self._flit
                self.stats["data_flits"] += 1
            self._flit = []
            self._flit_type = None

    def _end_flit(self, *, next_is_data):
        # A data flit followed by anything but another data flit ended a burst of data flits.
        if self._last_data is not None and not next_is_data and self._p("drop_last"):
            self.stats["drop_last"] += 1
            for e in self._last_data:
                e[0], e[1] = 0, IDLE
        self._last_data = None
