"""HTAX packets in Python: build, check, and convert to and from the 96-bit beats of the RTL.

The layout comes from :mod:`rtl.common.htax` through :mod:`sim.layout`; the header rules are
:func:`rtl.common.htax.malformed_reason`.
"""

from dataclasses import dataclass, field

from rtl.common.htax import (
    MAX_DATA_WORDS,
    HtaxBeat,
    HtaxCmd,
    HtaxStatus,
    HtaxVC,
    malformed_reason,
    vc_for_cmd,
)

from .layout import fields, pack

__all__ = ["HtaxPacket", "line_write_packet", "byte_enables", "beat_field", "beat_replace", "BEAT_BITS",
           "HtaxProtocolError"]

BEAT_BITS = HtaxBeat.as_shape().size
_F = fields(HtaxBeat)
_HDR = "word.header."
_MEM = "word.header.body.mem."


def _get(word, name):
    off, width = _F[name]
    return (word >> off) & ((1 << width) - 1)


class HtaxProtocolError(Exception):
    pass


@dataclass
class HtaxPacket:
    cmd: HtaxCmd
    src: int = 0
    dst: int = 0
    tag: int = 0
    addr: int = 0
    length: int = 0
    first_be: int = 0xFF
    last_be: int = 0xFF
    status: HtaxStatus = HtaxStatus.OK
    ats: int = 0                    # the 64-bit ATS message (cmd == ATS)
    data: list = field(default_factory=list)
    vc: HtaxVC | None = None        # None: the VC the command travels on

    def __post_init__(self):
        self.cmd = HtaxCmd(self.cmd) if isinstance(self.cmd, int) and self.cmd < 4 else self.cmd
        if self.vc is None:
            self.vc = vc_for_cmd(self.cmd)

    # -- header --------------------------------------------------------------------------------
    def header_fields(self):
        hdr = {
            "cmd": int(getattr(self.cmd, "value", self.cmd)),
            "vc": int(getattr(self.vc, "value", self.vc)),
            "status": int(getattr(self.status, "value", self.status)),
            "src": self.src, "dst": self.dst, "tag": self.tag,
        }
        if self.cmd == HtaxCmd.ATS:
            hdr["body.ats.raw"] = self.ats
        else:
            hdr.update({"body.mem.addr": self.addr, "body.mem.length": self.length,
                        "body.mem.first_be": self.first_be, "body.mem.last_be": self.last_be})
        return hdr

    def malformed_reason(self):
        cmd = int(getattr(self.cmd, "value", self.cmd))
        return malformed_reason({
            "cmd": cmd, "vc": int(getattr(self.vc, "value", self.vc)),
            "status": int(getattr(self.status, "value", self.status)),
            "addr": self.addr, "length": self.length, "first_be": self.first_be, "last_be": self.last_be,
        })

    @property
    def data_beats(self):
        if self.cmd == HtaxCmd.WRITE or (self.cmd == HtaxCmd.RESPONSE and self.status == HtaxStatus.OK):
            return self.length
        return 0

    # -- beats ---------------------------------------------------------------------------------
    def beats(self):
        """The packet as a list of integer beats (:class:`HtaxBeat` packed)."""
        if len(self.data) != self.data_beats:
            raise HtaxProtocolError(f"{self.cmd.name} with length {self.length} needs {self.data_beats} "
                                    f"data words, has {len(self.data)}")
        vc = int(getattr(self.vc, "value", self.vc))
        n = 1 + len(self.data)
        hdr = pack(HtaxBeat, {_HDR + k: v for k, v in self.header_fields().items()})
        out = [hdr | pack(HtaxBeat, {"vc": vc, "first": 1, "last": int(n == 1)})]
        for i, d in enumerate(self.data):
            out.append(pack(HtaxBeat, {"word.data": d, "vc": vc, "first": 0, "last": int(i == n - 2)}))
        return out

    @classmethod
    def from_header_beat(cls, beat):
        cmd = _get(beat, _HDR + "cmd")
        try:
            cmd = HtaxCmd(cmd)
        except ValueError:
            pass
        pkt = cls(cmd=cmd, vc=HtaxVC(_get(beat, _HDR + "vc")), status=HtaxStatus(_get(beat, _HDR + "status")),
                  src=_get(beat, _HDR + "src"), dst=_get(beat, _HDR + "dst"), tag=_get(beat, _HDR + "tag"))
        if cmd == HtaxCmd.ATS:
            pkt.ats = _get(beat, _HDR + "body.ats.raw")
            pkt.length = pkt.first_be = pkt.last_be = 0
        else:
            pkt.addr = _get(beat, _MEM + "addr")
            pkt.length = _get(beat, _MEM + "length")
            pkt.first_be = _get(beat, _MEM + "first_be")
            pkt.last_be = _get(beat, _MEM + "last_be")
        return pkt

    @classmethod
    def from_beats(cls, beats):
        """Decode a list of beats; framing errors raise :class:`HtaxProtocolError`."""
        if not beats:
            raise HtaxProtocolError("empty packet")
        if not _get(beats[0], "first"):
            raise HtaxProtocolError("packet does not start with a first beat")
        pkt = cls.from_header_beat(beats[0])
        for i, b in enumerate(beats):
            if i and _get(b, "first"):
                raise HtaxProtocolError(f"beat {i} has first set")
            if _get(b, "vc") != int(pkt.vc.value):
                raise HtaxProtocolError(f"beat {i} changes the virtual channel")
            if _get(b, "last") != (i == len(beats) - 1):
                raise HtaxProtocolError(f"last flag wrong on beat {i} of {len(beats)}")
        pkt.data = [_get(b, "word.data") for b in beats[1:]]
        return pkt

    # -- bytes ---------------------------------------------------------------------------------
    def byte_mask(self, i):
        """Byte enables of data word ``i``."""
        if i == 0:
            return self.first_be
        if i == self.length - 1:
            return self.last_be
        return 0xFF


def beat_field(beat, name):
    """One field of a packed beat (``"first"``, ``"last"``, ``"vc"``, ``"word.data"``, ...)."""
    return _get(beat, name)


def beat_replace(beat, values):
    """``beat`` with the fields named in ``values`` (``{"vc": 2, "last": 0, ...}``) replaced."""
    for name in values:
        off, width = _F[name]
        beat &= ~(((1 << width) - 1) << off)
    return beat | pack(HtaxBeat, values)


def byte_enables(offset, nbytes):
    """``(first_be, last_be, words)`` for ``nbytes`` starting at byte ``offset`` within a 64-byte line."""
    if not (0 <= offset < 64 and 1 <= nbytes and offset + nbytes <= 64):
        raise ValueError(f"bytes {offset}..{offset + nbytes - 1} do not lie in one 64-byte line")
    first_word, last_word = offset // 8, (offset + nbytes - 1) // 8
    words = last_word - first_word + 1
    lo, hi = offset % 8, (offset + nbytes - 1) % 8
    if words == 1:
        return ((0xFF << lo) & (0xFF >> (7 - hi))) & 0xFF, 0, 1
    return (0xFF << lo) & 0xFF, 0xFF >> (7 - hi), words


def line_write_packet(addr, payload, *, src, dst, tag=0):
    """A posted WRITE of ``payload`` (1..64 bytes inside one 64-byte line) at byte address ``addr``."""
    first_be, last_be, words = byte_enables(addr % 64, len(payload))
    base = addr & ~7
    buf = bytes(addr - base) + bytes(payload)
    buf = buf + bytes(words * 8 - len(buf))
    data = [int.from_bytes(buf[8 * i: 8 * i + 8], "little") for i in range(words)]
    if words > MAX_DATA_WORDS:
        raise ValueError("write longer than a line")
    return HtaxPacket(HtaxCmd.WRITE, src=src, dst=dst, tag=tag, addr=base, length=words,
                      first_be=first_be, last_be=last_be if words > 1 else 0, data=data)
