"""Registers of the board's SerDes PHYs on the UART bridge's word port: the PC sets each lane's mode,
pattern, loopback and polarities, pulses its strobes and reads its status and counters.

Not a unit of the dissertation: bring-up access to :class:`rtl.phy.SerdesPhy` (issue 47) on a board
without a host CPU.  Deviation from STYLE.md rule 9: these registers are not in ``rdl/nic_regs.rdl``,
because they are not the NIC's (they sit on the bridge's MEM space, not in the device window); the
:class:`LaneWords` struct is their single source instead, and :func:`register_table` gives the
documentation's table from it.

A lane has :data:`WORDS_PER_LANE` 64-bit words at word addresses ``lane * 16 + word`` (the struct
:class:`LaneWords`, the table :func:`register_table`):

* word 0, :class:`ControlWord`: mode and pattern (byte 0), loopback and polarities (byte 1), the
  strobes ``prbs_clear`` and ``restart`` (byte 2);
* word 1, :class:`StatusWord`: ``tx_ready``, ``rx_ready``, ``rx_prbs_locked`` and the retry counters;
* words 2 .. 6: the counters, two 32-bit counters per word (``rx_realigns`` and ``rx_dropped``, 16
  bits each, share one half);
* words 7 .. 15: reserved, read 0, writes ignored.

A word is read in one cycle, so the two counters of a word are one snapshot (``rx_prbs_errors``
beside ``rx_prbs_words`` gives a consistent bit error rate).
"""

from amaranth.hdl import Cat, Module, Mux, Shape, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.common.params import check_int

from .formats import MEM_DATA, mem_request
from .uart import COUNTER_BITS

__all__ = ["PhyRegs", "PhyControl", "PhyStatus", "PhyTxCounters", "PhyRxCounters", "LaneWords", "ControlWord",
           "StatusWord", "WORDS_PER_LANE", "MAX_LANES", "MAX_WORD_BITS", "ACCESS", "LEVELS", "STROBES",
           "status_fields", "register_table"]

MAX_LANES = 4           # the ECP5-5G's two DCUs, two channels each
WORDS_PER_LANE = 16
WORD_BITS = 64
MAX_WORD_BITS = 56      # the bridge's word address (BridgeCommand.addr)

#: control fields that hold their value
LEVELS = ("mode", "pattern", "loopback", "tx_polarity", "rx_polarity")
#: control fields that are one-cycle strobes: a write of 1 pulses them, they read 0
STROBES = ("prbs_clear", "restart")


class PhyControl(data.Struct):
    """The inputs of one :class:`rtl.phy.SerdesPhy` (its members of the same names).

    ``mode`` is a ``PhyMode`` (0 LINK, 1 PRBS) and ``pattern`` a ``PrbsPattern`` (0 PRBS7, 1 PRBS31);
    they are plain bits here because a board block may not import :mod:`rtl.phy` (STYLE.md rule 24),
    and the board top assigns them to the PHY's enum members field by field.
    """
    mode: 1
    pattern: 1
    loopback: 1
    tx_polarity: 1
    rx_polarity: 1
    prbs_clear: 1       # strobe: one cycle per write of 1
    restart: 1          # strobe: one cycle per write of 1


class PhyTxCounters(data.Struct):
    """:class:`rtl.phy.TxCounters` again (same fields, widths and order)."""
    cycles: 32
    skips: 32


class PhyRxCounters(data.Struct):
    """:class:`rtl.phy.RxCounters` again (same fields, widths and order)."""
    cycles: 32
    symbol_errors: 32
    framing_errors: 32
    realigns: 16
    dropped: 16
    prbs_errors: 32
    prbs_words: 32
    prbs_locked: 1


class PhyStatus(data.Struct):
    """The status outputs of one :class:`rtl.phy.SerdesPhy`, under their names there.

    A board block may not import :mod:`rtl.phy` (STYLE.md rule 24), so this struct repeats the PHY's
    members (``tests/board/test_phy_regs.py`` checks names, widths and order against them); the board
    top fills it field by field from the PHY's members of the same names (``tx`` and ``rx`` whole:
    their layouts are the same).
    """
    tx_ready: 1
    rx_ready: 1
    tx_retries: 16
    rx_retries: 16
    tx_dropped: 32
    rx_underflows: 32
    tx: PhyTxCounters
    rx: PhyRxCounters


class ControlWord(data.Struct):
    """Word 0: the lane's :class:`PhyControl`, one byte per kind of field so that byte enables can
    change the mode, the line settings and the strobes alone."""
    mode: 1
    pattern: 1
    reserved_0: 6
    loopback: 1
    tx_polarity: 1
    rx_polarity: 1
    reserved_1: 5
    prbs_clear: 1
    restart: 1
    reserved_2: 46


class StatusWord(data.Struct):
    """Word 1: the lane's state and its reset sequence's retries."""
    tx_ready: 1
    rx_ready: 1
    rx_prbs_locked: 1
    reserved_0: 13
    tx_retries: 16
    rx_retries: 16
    reserved_1: 16


class CyclesWord(data.Struct):
    """Word 2: the word clocks' cycle counters (both alive means both SerDes clocks run)."""
    tx_cycles: 32
    rx_cycles: 32


class CrossingWord(data.Struct):
    """Word 3: the link port's phits lost between the core and the word clocks."""
    tx_dropped: 32
    rx_underflows: 32


class LineWord(data.Struct):
    """Word 4: line-level counters."""
    tx_skips: 32
    rx_symbol_errors: 32


class FramingWord(data.Struct):
    """Word 5: receive framing counters."""
    rx_framing_errors: 32
    rx_realigns: 16
    rx_dropped: 16


class PrbsWord(data.Struct):
    """Word 6: the PRBS checker's counters, read together (bit error rate = errors / (16 * words))."""
    rx_prbs_errors: 32
    rx_prbs_words: 32


class LaneWords(data.Struct):
    """The words of one lane in address order (word ``k`` is bits ``64k .. 64k + 63``); the words after
    the last one up to :data:`WORDS_PER_LANE` are reserved.  Fields named ``reserved_*`` read 0 and
    ignore writes; the others of words 1.. are the :func:`status_fields` of the same names."""
    control: ControlWord
    status: StatusWord
    cycles: CyclesWord
    crossing: CrossingWord
    line: LineWord
    framing: FramingWord
    prbs: PrbsWord


_MEANING = {
    "mode": "0 LINK: the link port's flits; 1 PRBS: send and check the PRBS pattern",
    "pattern": "0 PRBS7, 1 PRBS31 (PRBS mode)",
    "loopback": "near-end serial loopback in the SerDes; a change restarts the reset sequence",
    "tx_polarity": "invert the transmitted bits",
    "rx_polarity": "invert the received bits",
    "prbs_clear": "write 1: zero rx_prbs_errors and rx_prbs_words",
    "restart": "write 1: restart the reset sequence of both sides",
    "tx_ready": "the transmit side is out of reset and locked",
    "rx_ready": "the receive side is out of reset and locked",
    "rx_prbs_locked": "the PRBS checker is locked to the received pattern",
    "tx_retries": "transmit reset sequences restarted (no lock, or lock lost; saturates)",
    "rx_retries": "receive reset sequences restarted (no lock, or lock lost; saturates)",
    "tx_cycles": "transmit word clock cycles (wraps)",
    "rx_cycles": "receive word clock cycles (wraps)",
    "tx_dropped": "link port phits dropped: not LINK mode, transmit side not ready, crossing full (saturates)",
    "rx_underflows": "gaps inside a received flit: its phits came too late (saturates)",
    "tx_skips": "SKIP words sent inside flits (saturates)",
    "rx_symbol_errors": "LINK mode: words with a code violation or disparity error (saturates)",
    "rx_framing_errors": "flits broken off, data outside flits (saturates)",
    "rx_realigns": "byte alignment changes (saturates)",
    "rx_dropped": "received phits the receive crossing had no room for (saturates)",
    "rx_prbs_errors": "PRBS bit errors since the last prbs_clear (saturates)",
    "rx_prbs_words": "PRBS words checked since the last prbs_clear (saturates)",
}


def _named(layout):
    """``(name, field)`` of the fields of ``layout`` that are not reserved."""
    return [(name, f) for name, f in data.Layout.cast(layout) if not name.startswith("reserved_")]


def _status_paths():
    """``{name: path}`` of every :class:`PhyStatus` field, the ``tx`` and ``rx`` counters flattened as
    ``tx_<name>`` and ``rx_<name>``."""
    paths = {}
    for name, f in data.Layout.cast(PhyStatus):
        if isinstance(f.shape, data.ShapeCastable):
            paths.update({f"{name}_{sub}": (name, sub) for sub, _ in data.Layout.cast(f.shape)})
        else:
            paths[name] = (name,)
    return paths


def status_fields(status):
    """``{name: value}`` of every field of a :class:`PhyStatus` view ``status``, the ``tx`` and ``rx``
    counters flattened as ``tx_<name>`` and ``rx_<name>``: the names :class:`LaneWords` uses."""
    fields = {}
    for name, path in _status_paths().items():
        value = status
        for part in path:
            value = value[part]
        fields[name] = value
    return fields


#: the software access of every named field of :class:`LaneWords`: ``rw`` read/write, ``w1p`` write 1
#: for a one-cycle strobe (reads 0), ``r`` read only
ACCESS = {**dict.fromkeys(LEVELS, "rw"), **dict.fromkeys(STROBES, "w1p"), **dict.fromkeys(_status_paths(), "r")}


def register_table():
    """The documentation's table of one lane: rows ``(word, bits, name, access, meaning)``, in address
    and bit order, for every named field of :class:`LaneWords` (``bits`` is ``"msb:lsb"`` or ``"bit"``;
    ``access`` as in :data:`ACCESS`).  Bits and words not listed read 0 and ignore writes.  Lane ``n``'s
    word ``w`` is at word address ``n * 16 + w``."""
    rows = []
    for _, word in data.Layout.cast(LaneWords):
        for name, f in _named(word.shape):
            msb = f.offset + f.width - 1
            bits = f"{msb}:{f.offset}" if f.width > 1 else str(f.offset)
            rows.append((word.offset // WORD_BITS, bits, name, ACCESS[name], _MEANING[name]))
    return rows


def _check_layouts():
    """Each word is 64 bits, the control word holds :class:`PhyControl`'s fields, and every status field
    is in exactly one word: an edit that breaks this fails at import, not in hardware."""
    words = data.Layout.cast(LaneWords)
    for name, word in words:
        assert word.width == WORD_BITS, f"{name} is {word.width} bits"
    assert words.size <= WORDS_PER_LANE * WORD_BITS
    control = sorted(name for name, _ in _named(ControlWord))
    assert control == sorted(name for name, _ in data.Layout.cast(PhyControl)) == sorted(LEVELS + STROBES)
    status = {name: f.width for word_name, word in words if word_name != "control" for name, f in _named(word.shape)}
    widths = {}
    for name, path in _status_paths().items():
        shape = PhyStatus
        for part in path:
            shape = data.Layout.cast(shape)[part].shape
        widths[name] = Shape.cast(shape).width
    assert status == widths, (status, widths)
    assert sorted(_MEANING) == sorted(ACCESS) == sorted([*status, *control])


_check_layouts()


class PhyRegs(wiring.Component):
    """The control and status registers of ``lanes`` SerDes PHYs on a 64-bit word port (the UART
    bridge's MEM space), laid out as :class:`LaneWords` per lane at word address ``lane * 16 + word``.

    The word port has :class:`~rtl.board.HostMemory`'s handshake: a request is taken when no response
    is waiting, and its one response is offered from the next cycle on: the word for a read (its value
    in the cycle the request was taken) and 0 for a write.  Without stalls that is a request every
    other cycle, plenty for a UART.

    * Word 0 (:class:`ControlWord`) is read/write, byte enables honoured.  Its levels drive ``ctrl``
      from the cycle after the write; a strobe bit written 1 (its byte enabled) raises that strobe of
      ``ctrl`` in that cycle only, and reads 0.
    * Words 1 .. 6 are read only: the lane's ``status`` (:func:`register_table`); writes are ignored.
    * Words 7 .. 15 of a lane, and reserved bits, read 0 and ignore writes.
    * A word address at or above ``lanes * 16`` reads 0, ignores writes and counts in
      ``bad_accesses``.

    After reset every level is 0: LINK mode, PRBS7, no loopback, no inversion.

    Parameters
    ----------
    lanes : int
        PHYs, 1 .. 4.
    word_bits : int
        Width of the word port's address: enough for ``lanes * 16`` words, at most 56 (the bridge's).

    Members
    -------
    word_req : In(stream.Signature(mem_request(word_bits)))
        Word port requests (:func:`~rtl.board.formats.mem_request`).
    word_rsp : Out(stream.Signature(64))
        One response per request, in order.
    ctrl : Out(PhyControl).array(lanes)
        To each lane's :class:`rtl.phy.SerdesPhy` inputs.
    status : In(PhyStatus).array(lanes)
        From each lane's :class:`rtl.phy.SerdesPhy` outputs.
    bad_accesses : Out(16)
        Requests to a word address at or above ``lanes * 16`` (saturating).

    Raises
    ------
    TypeError, ValueError
        For ``lanes`` outside 1 .. 4, or a ``word_bits`` outside what ``lanes * 16`` words need .. 56.
    """

    def __init__(self, *, lanes, word_bits):
        self.lanes = check_int("lanes", lanes, 1, MAX_LANES)
        self.word_bits = check_int("word_bits", word_bits, (lanes * WORDS_PER_LANE - 1).bit_length(),
                                   MAX_WORD_BITS)
        super().__init__({
            "word_req": In(stream.Signature(mem_request(word_bits))),
            "word_rsp": Out(stream.Signature(MEM_DATA)),
            "ctrl": Out(PhyControl).array(lanes),
            "status": In(PhyStatus).array(lanes),
            "bad_accesses": Out(COUNTER_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        req, rsp = self.word_req, self.word_rsp
        p = req.payload
        m.d.comb += req.ready.eq(~rsp.valid)
        take = req.valid & req.ready
        bad = p.addr >= self.lanes * WORDS_PER_LANE

        # strobes last one cycle: a write below overrides this (later statements win)
        m.d.sync += [ctrl[name].eq(0) for ctrl in self.ctrl for name in STROBES]
        layout = data.Layout.cast(LaneWords)
        read = Signal(WORD_BITS)        # the addressed word; 0 for reserved and bad addresses
        lane_words = []
        for lane in range(self.lanes):
            words = Signal(LaneWords, name=f"lane{lane}_words")
            ctrl, flat = self.ctrl[lane], status_fields(self.status[lane])
            m.d.comb += [words.control[name].eq(ctrl[name]) for name in LEVELS]     # strobes read 0
            for word_name, word in layout:
                if word_name != "control":
                    m.d.comb += [words[word_name][name].eq(flat[name]) for name, _ in _named(word.shape)]
            base = lane * WORDS_PER_LANE
            old = words.control.as_value()
            written = ControlWord(Cat(Mux(p.strb[i], p.data.word_select(i, 8), old.word_select(i, 8))
                                      for i in range(WORD_BITS // 8)))
            with m.If(take & p.write & (p.addr == base + layout["control"].offset // WORD_BITS)):
                m.d.sync += [ctrl[name].eq(written[name]) for name in LEVELS + STROBES]
            lane_words.append(words)
        with m.Switch(p.addr):
            for lane, words in enumerate(lane_words):
                for word_name, word in layout:
                    with m.Case(lane * WORDS_PER_LANE + word.offset // WORD_BITS):
                        m.d.comb += read.eq(words[word_name])

        with m.If(rsp.ready):
            m.d.sync += rsp.valid.eq(0)
        with m.If(take):
            m.d.sync += [rsp.valid.eq(1), rsp.payload.eq(Mux(p.write, 0, read))]
        with m.If(take & bad & ~self.bad_accesses.all()):
            m.d.sync += self.bad_accesses.eq(self.bad_accesses + 1)
        return m
