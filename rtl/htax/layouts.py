"""Formats and signatures shared by the HTAX's blocks (``docs/htax.md``, "Structure").

The blocks of an input port (writer, slots, queues, accounting, read engine) and of an output port talk
through the signatures defined here; the packet, beat and link formats are :mod:`rtl.common.htax`'s.
An *event* is a one-cycle pulse with a payload (``valid``, ``payload``): it cannot be refused, so it
has no ``ready`` (it is not a stream).
"""

import enum

from amaranth.hdl import Cat, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import Out
from amaranth.utils import ceil_log2

from rtl.common.htax import MAX_DATA_WORDS, NUM_VCS, HtaxBeat, HtaxHeader, HtaxVC

__all__ = [
    "Variant", "Timing", "ERR_CLASS", "NUM_CLASSES", "BEATS",
    "slot_count", "reservations", "request_vcs",
    "event_signature", "slot_record", "alloc_layout", "short_layout", "queue_event", "start_layout", "take_layout",
    "slot_state_signature", "queue_state_signature", "writer_state_signature", "link_state_signature",
    "release_signature", "drop_signature", "read_register_signature", "engine_state_signature",
    "data_memory_shape", "data_memory_depth", "data_memory", "data_address", "word_address",
    "data_write_signature", "data_read_signature",
    "RESERVE", "OUT_AHEAD", "IN_AHEAD", "BufferEntry", "booking_layout", "offer_signature",
    "crossbar_state_signature",
]


class Variant(enum.Enum):
    """Which switch ``rtl.htax.from_config`` builds (``[htax] variant``)."""
    #: :class:`rtl.htax.Htax`: matching and read in the cycle after a header is stored (2 cycles).
    DIRECT = "direct"
    #: :class:`rtl.htax.HtaxPipelined`: registered matching and output buffers (9 cycles).
    PIPELINED = "pipelined"


class Timing(enum.Enum):
    """Where an input block's decisions are registered: the one parameter by which the shared blocks
    of the two switches differ.

    ``DIRECT`` (:class:`rtl.htax.Htax`): the link's ``ready``, the request flags and the lowest free
    slot are functions of this cycle's state; headers sit in registers beside the data memory; the
    writer stores a beat in the cycle it moves; counters count with adders.

    ``REGISTERED`` (:class:`rtl.htax.HtaxPipelined`): the link's beat is registered where it arrives and
    stored one cycle later; ``ready``, the request flags, the lowest free slot, the class flags and the
    released slot come from registers set from next values; headers sit in the data memory beside
    their data words; counters count in LUTs (:func:`rtl.htax.counting.up_down`).  Each such register
    is set from the next values of what it stands for, so it holds that value without the logic in
    front (the blocks state the equalities for the formal proofs); only the input register and the
    registered ``ready`` (which counts the header moving now as taking a slot) shift decisions by a
    cycle.
    """
    DIRECT = "direct"
    REGISTERED = "registered"


#: The slot accounting class of the switch's own error responses (classes 0..3 are the VCs).
ERR_CLASS = NUM_VCS
NUM_CLASSES = NUM_VCS + 1
#: Beats of a packet: the header and up to ``MAX_DATA_WORDS`` data words (counts 0..8).
BEATS = range(MAX_DATA_WORDS + 1)


def reservations(slots_per_vc):
    """Reserved slots per accounting class: ``slots_per_vc`` per VC, one for the error responses."""
    return [slots_per_vc] * NUM_VCS + [1]


def slot_count(slots_per_vc, shared_slots):
    """Packet slots per input port."""
    return sum(reservations(slots_per_vc)) + shared_slots


def event_signature(layout):
    """A one-cycle event with a payload: ``valid``, ``payload`` (no ``ready``: never refused)."""
    return wiring.Signature({"valid": Out(1), "payload": Out(layout)})


def slot_record(ports):
    """What the switch keeps of a stored packet beside its header: output, VC, error response, data
    beats (0 for an error response), and the data words that arrive (``got``: ``nb``, unless the
    packet's ``last`` came early; the read engine sends zeros for the missing words)."""
    return data.StructLayout({"dst": range(ports), "vc": 2, "err": 1, "nb": BEATS, "got": BEATS})


def alloc_layout(ports, timing):
    """A header the writer stores: its slot record, its accounting class and (``Timing.DIRECT``,
    whose headers live in registers) the header itself."""
    fields = {"dst": range(ports), "vc": 2, "err": 1, "nb": BEATS, "got": BEATS, "cls": range(NUM_CLASSES)}
    if timing is Timing.DIRECT:
        fields["hdr"] = HtaxHeader
    return data.StructLayout(fields)


def short_layout(slots):
    """A packet whose ``last`` came early: its slot and the data words that arrived."""
    return data.StructLayout({"slot": range(slots), "words": BEATS})


def queue_event(ports):
    """A packet taken out of a virtual output queue: its VC and output."""
    return data.StructLayout({"vc": 2, "dst": range(ports)})


def take_layout(ports):
    """A match: the output and VC whose queue head an input sends next."""
    return data.StructLayout({"dst": range(ports), "vc": 2})


def start_layout(ports, slots):
    """The packet a read engine loads: slot, data beats, output, VC, accounting class and ``last``
    (no data beats; ``Timing.REGISTERED`` only, from a register)."""
    return data.StructLayout({"slot": range(slots), "nb": BEATS, "dst": range(ports), "vc": 2,
                              "cls": range(NUM_CLASSES), "last": 1})


def slot_state_signature(ports, slots, timing):
    """The slots of an input port, as the blocks that read them see them.

    Members
    -------
    occ : Out(slots)
        Bit ``k``: slot ``k`` holds a packet.
    record : Out(slot_record(ports)).array(slots)
    header : Out(HtaxHeader).array(slots)
        ``Timing.DIRECT`` only: the slots' header registers.
    older : Out(slots).array(slots)
        The age matrix: ``older[k]`` bit ``j``: slot ``j`` holds an older packet of slot ``k``'s queue
        (meaningful while both are occupied).
    eligible : Out(slots)
        The heads of the virtual output queues (occupied, no older packet of the queue waits).
    low : Out(slots)
        The lowest free slot, one-hot (the slot the next header takes).
    free : Out(range(slots))
        ``low`` as an index.
    """
    members = {
        "occ": Out(slots),
        "record": Out(slot_record(ports)).array(slots),
        "older": Out(slots).array(slots),
        "eligible": Out(slots),
        "low": Out(slots),
        "free": Out(range(slots)),
    }
    if timing is Timing.DIRECT:
        members["header"] = Out(HtaxHeader).array(slots)
    return wiring.Signature(members)


def queue_state_signature(ports, slots):
    """The virtual output queues of an input: ``has[v]`` bit ``o``: queue (``v``, ``o``) has a packet
    to request with; ``count[v][o]``: its counter (packets not yet sent, or not yet booked)."""
    return wiring.Signature({
        "has": Out(ports).array(NUM_VCS),
        "count": Out(range(slots + 1)).array(NUM_VCS, ports),
    })


def request_vcs(has, o):
    """The VCs on which an input may request output ``o`` (a ``NUM_VCS``-bit value), from its queue
    flags ``has[v][o]``: the non-posted VC only while no posted packet of the input waits for ``o``
    (HyperTransport: a non-posted request does not pass a posted write; ``docs/htax.md``, "Ordering
    across VCs")."""
    posted, nonposted = HtaxVC.POSTED.value, HtaxVC.NONPOSTED.value
    return Cat(has[v][o] & ~has[posted][o] if v == nonposted else has[v][o] for v in range(NUM_VCS))


def writer_state_signature(slots):
    """The storing writer's state, which the read engine tests "the next word is stored" against.

    Members
    -------
    in_packet : Out(1)
        The writer stores the words of a packet (between its header and its ``last``).
    drop : Out(1)
        ... of a dropped packet (nothing is stored).
    slot : Out(range(slots))
    count : Out(BEATS)
        Data words stored so far.
    header : Out(1)
        A header is stored now (the writer takes the lowest free slot and starts at count 0).
    word : Out(1)
        A data word is stored now (count + 1).
    """
    return wiring.Signature({
        "in_packet": Out(1), "drop": Out(1), "slot": Out(range(slots)), "count": Out(BEATS),
        "header": Out(1), "word": Out(1),
    })


def link_state_signature():
    """The input link as the slot accounting needs it for ``ready``: the link is inside a packet
    (``in_packet``, of VC ``packet_vc``), a beat moves now (``moved``) with its ``vc`` and ``last``."""
    return wiring.Signature({"in_packet": Out(1), "packet_vc": Out(2), "moved": Out(1), "vc": Out(2),
                             "last": Out(1)})


def release_signature(slots):
    """A slot released after its last beat was read: ``valid``, its accounting class ``cls`` and the
    slot one-hot (``slots``, zero without a release)."""
    return wiring.Signature({"valid": Out(1), "cls": Out(range(NUM_CLASSES)), "slots": Out(slots)})


def drop_signature():
    """A dropped packet's header moved now: ``malformed`` or ``no_target``."""
    return wiring.Signature({"malformed": Out(1), "no_target": Out(1)})


def read_register_signature(ports):
    """A read engine's read register: a beat (``valid``, ``beat``) for output ``dst`` on VC ``vc``,
    ``first``/``last`` as in the beat."""
    return wiring.Signature({"valid": Out(1), "first": Out(1), "last": Out(1), "dst": Out(range(ports)),
                             "vc": Out(2), "beat": Out(HtaxBeat)})


def engine_state_signature(ports, slots):
    """A read engine's state: ``act`` (a packet is being read), its ``slot``, next beat ``k`` (0: the
    header), data beats ``nb``, output ``dst``, ``vc`` and accounting class ``cls``."""
    return wiring.Signature({"act": Out(1), "slot": Out(range(slots)), "k": Out(BEATS), "nb": Out(BEATS),
                             "dst": Out(range(ports)), "vc": Out(2), "cls": Out(range(NUM_CLASSES))})


def data_memory_shape(timing):
    """The data memory's word: a 64-bit data word, or (``Timing.REGISTERED``) 92 bits, as wide as a
    header, which lives in the memory beside its data words."""
    return 64 if timing is Timing.DIRECT else HtaxHeader.as_shape().size


def data_memory_depth(slots, timing):
    """Words of the data memory: 8 per slot, or (``Timing.REGISTERED``) 16, the header at word 15."""
    return slots * (MAX_DATA_WORDS if timing is Timing.DIRECT else 16)


# The input data memories are never read at the address written in the same cycle with the data
# used: the read engine reads a data word once the writer has stored it (a cycle after its write at
# the earliest) and, with Timing.REGISTERED, a header four cycles after its write; a slot is written
# again only after its release, after its last read.  A read that does meet the write (the port
# reads whenever the read register is free, also while the engine is idle or waits for a word) is
# not issued, its data unused (formal: ``rtl.htax.engine.read_side_invariants``).  So yosys need not
# emulate Amaranth's read-before-write between the two ports (``no_rw_check``; without it synth_ecp5
# delays every write by a register and adds a bypass on the read data: 1560 flip-flops and 833 LUT4
# of the 8-port HtaxPipelined).
_NO_RW_CHECK = {"no_rw_check": 1}


def data_memory(slots, timing):
    """An input's data memory (block RAM; one write port for the writer, one synchronous read port for
    the read engine)."""
    return memory.Memory(shape=data_memory_shape(timing), depth=data_memory_depth(slots, timing), init=[],
                         attrs=_NO_RW_CHECK)


def data_write_signature(slots, timing):
    return memory.WritePort.Signature(addr_width=ceil_log2(data_memory_depth(slots, timing)),
                                      shape=data_memory_shape(timing))


def data_read_signature(slots, timing):
    return memory.ReadPort.Signature(addr_width=ceil_log2(data_memory_depth(slots, timing)),
                                     shape=data_memory_shape(timing))


def data_address(slots, timing):
    """A data-memory address: word ``word`` of slot ``slot`` (``Timing.REGISTERED``: of the slot's data
    words, or with ``header`` set, word 7 of its header half, where the header lives)."""
    if timing is Timing.DIRECT:
        return data.StructLayout({"word": 3, "slot": range(slots)})
    return data.StructLayout({"word": 3, "header": 1, "slot": range(slots)})


def word_address(m, slots, timing, *, slot, word, header, name):
    """The data-memory address of ``slot``'s data word ``word`` (0-based; its low 3 bits count) or,
    with ``header`` (``Timing.REGISTERED`` only), of its header."""
    addr = Signal(data_address(slots, timing), name=name)
    if timing is Timing.DIRECT:
        m.d.comb += [addr.word.eq(word), addr.slot.eq(slot)]
    else:
        m.d.comb += [addr.word.eq(word | Mux(header, 7, 0)), addr.header.eq(header), addr.slot.eq(slot)]
    return addr


# ---- HtaxPipelined's output side -------------------------------------------------------------------

#: Free beats an output buffer needs for a grant: the largest packet (header + 8 data words); the size
#: of the granted packet is known only after the accept (the input's head lookup).
RESERVE = MAX_DATA_WORDS + 1
#: Look-ahead of the matching.  An output that takes a packet may be granted again when at most
#: OUT_AHEAD of the packet's data beats are still to come: the booked header reaches the output 5 cycles
#: after the grant at the earliest, right behind the last beat.  An input whose engine reads a packet
#: may be granted when at most IN_AHEAD of its beats are still to read: the booked header is read 3
#: cycles after the grant at the earliest.  Matching earlier would leave the other side waiting (an
#: output idle behind a busy input, an input's engine held by a busy output); later, idle.
OUT_AHEAD = 5
IN_AHEAD = 3


class BufferEntry(data.Struct):
    """One beat in an output buffer (its VC is the buffer's)."""
    word: 92
    first: 1
    last: 1


def booking_layout(ports):
    """An accepted grant as the output learns it: the input (one-hot and as an index) and the VC."""
    return data.StructLayout({"inputs": ports, "input": range(ports), "vc": 2})


def offer_signature(ports):
    """What an input of :class:`rtl.htax.HtaxPipelined` offers every output: its write register (a beat
    ``valid`` for the outputs ``dst``, one-hot; ``end``: the beat is its packet's last, for the
    outputs ``end``, one-hot; ``near``: at most ``OUT_AHEAD`` data beats follow it) and the data beats
    of the packet it has looked up for its booking (``booked_nb``)."""
    return wiring.Signature({"valid": Out(1), "dst": Out(ports), "beat": Out(HtaxBeat), "end": Out(ports),
                             "near": Out(1), "booked_nb": Out(BEATS)})


def crossbar_state_signature(ports):
    """What an output of :class:`rtl.htax.HtaxPipelined` tells every input: it takes a packet
    (``wact``) from the input ``wsel_oh`` (one-hot), whose last beat it takes now (``w_end``); it has a
    booking (``obk``) of the input ``obk_in_oh`` (one-hot), which it takes beats from next."""
    return wiring.Signature({"wact": Out(1), "wsel_oh": Out(ports), "w_end": Out(1), "obk": Out(1),
                             "obk_in_oh": Out(ports)})
