"""The HTAX packet and the HTAX link: the format every on-chip unit speaks (dissertation ch. 7.1, 5.2.9).

A packet is one header beat followed by ``length`` data beats of 64 bits (at most 8: one 64-byte cache
line).  An ATS message (:mod:`rtl.common.ats`) rides inside the header beat, so an ATS packet is a
single beat.  Every beat is 96 bits wide on the wire (:class:`HtaxBeat`): the 92-bit header or a 64-bit
data word, the packet's virtual channel, and ``first``/``last``.

Field widths (``docs/architecture.md`` draws the layout):

* ``cmd`` 3 bits: the four commands the HTAX carries plus reserved codes that are rejected as
  malformed, so a unit can add a command without widening the header.
* ``vc`` 2 bits: four virtual channels (posted, non-posted, response, ATS; ch. 5.2.9).
* ``status`` 2 bits: completion status of a response; zero in every request.
* ``src``/``dst`` 4 bits: up to 16 HTAX ports, the HTAX issue's upper bound.
* ``tag`` 5 bits: the HyperTransport source-tag space the EXTOLL units use for split transactions
  (ch. 7.1).
* ``addr`` 52 bits: the host physical address space (40-bit page number + 12-bit offset).  Byte address,
  8-byte aligned: the byte enables give byte granularity.
* ``length`` 4 bits: 0..8 data words.
* ``first_be``/``last_be`` 8 bits each: byte enables of the first and the last data word.

Rules every unit obeys and every checker enforces (:func:`malformed_reason`,
:func:`malformed`):

* ``vc`` follows ``cmd``: WRITE on POSTED, READ on NONPOSTED, RESPONSE on RESPONSE, ATS on ATS.
* A WRITE carries 1..8 data beats; a READ asks for 1..8 words and carries none; a RESPONSE with status
  OK carries the ``length`` words that were read, one with an error status carries none
  (``length == 0``); an ATS packet is the header beat alone (``length == 0``).
* ``addr[2:0] == 0`` and the words ``addr[5:3] .. addr[5:3] + length - 1`` stay inside one 64-byte
  line, so a packet never touches two cache lines.
* For ``length == 1`` only ``first_be`` applies (``last_be`` is ignored); a WRITE's ``first_be`` and
  ``last_be`` (when ``length > 1``) are non-zero; words between first and last are written whole.
* Requests carry ``status == OK``.
* A RESPONSE goes to the request's ``src`` with the request's ``tag`` and echoes its address with
  bits 2:0 cleared (so the answer to a malformed request is itself well formed).

The link (:class:`HtaxLinkSignature`) is a stream with one ``ready`` per virtual channel, so a sink
can refuse one VC while accepting the others: posted writes and responses always pass a stalled
non-posted request (the HyperTransport ordering rule behind the deadlock of fig. 6-7).  A beat moves
when ``valid & ready[payload.vc]``.  ``ready`` must not depend on ``valid`` or ``payload`` (a source may
wait for ``ready[vc]`` before raising ``valid``); once ``valid`` is raised, ``payload`` and ``valid`` hold
until the beat moves; the beats of a packet are never interleaved with another packet's on one link.

``ready2`` (per VC, from the sink like ``ready``) is an optional promise: a sink that raises
``ready2[v]`` in a cycle in which a beat of VC ``v`` moves is ready for ``v`` in the next cycle too (it
has room for two beats).  ``ready2[v]`` implies ``ready[v]``; a sink that cannot promise it drives 0.
The HTAX uses it to start a packet right behind the last beat of a packet on the same VC
(``docs/htax.md``, "Fresh ready rule"); sources other than the switch may ignore it.
"""

from amaranth.hdl import Cat, Const
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .ats import AtsMessage

__all__ = [
    "HtaxCmd", "HtaxVC", "HtaxStatus",
    "HtaxMem", "HtaxBody", "HtaxHeader", "HtaxWord", "HtaxBeat",
    "HtaxLinkSignature", "HtaxLinkInterface", "HtaxPortSignature", "HtaxPacketSignature",
    "malformed", "malformed_reason", "vc_for_cmd", "expose_port",
    "DATA_BITS", "MAX_DATA_WORDS", "PORT_BITS", "TAG_BITS", "ADDR_BITS", "NUM_VCS",
]

DATA_BITS = 64
MAX_DATA_WORDS = 8
PORT_BITS = 4
TAG_BITS = 5
ADDR_BITS = 52
NUM_VCS = 4


class HtaxCmd(enum.Enum, shape=3):
    WRITE = 0       # posted write
    READ = 1        # non-posted read, answered by a RESPONSE with the same tag
    RESPONSE = 2    # read data (or error status) for a READ
    ATS = 3         # one ATS message in the header beat


class HtaxVC(enum.Enum, shape=2):
    POSTED = 0
    NONPOSTED = 1
    RESPONSE = 2
    ATS = 3


class HtaxStatus(enum.Enum, shape=2):
    OK = 0
    NO_TARGET = 1       # the destination port or address decodes to nothing
    MALFORMED = 2       # the request broke a format rule
    TARGET_ERROR = 3    # the target could not complete the request


class HtaxMem(data.Struct):
    addr: ADDR_BITS
    length: 4
    first_be: 8
    last_be: 8


class HtaxBody(data.Union):
    mem: HtaxMem
    ats: AtsMessage


class HtaxHeader(data.Struct):
    cmd: HtaxCmd
    vc: HtaxVC
    status: HtaxStatus
    src: PORT_BITS
    dst: PORT_BITS
    tag: TAG_BITS
    body: HtaxBody


class HtaxWord(data.Union):
    header: HtaxHeader
    data: DATA_BITS


class HtaxBeat(data.Struct):
    word: HtaxWord
    vc: HtaxVC      # the packet's VC on every beat, so a transfer is decided without packet state
    first: 1
    last: 1


assert HtaxHeader.as_shape().size == 92
assert HtaxBeat.as_shape().size == 96


_VC_FOR_CMD = {
    HtaxCmd.WRITE: HtaxVC.POSTED,
    HtaxCmd.READ: HtaxVC.NONPOSTED,
    HtaxCmd.RESPONSE: HtaxVC.RESPONSE,
    HtaxCmd.ATS: HtaxVC.ATS,
}


def expose_port(m, ext, port):
    """Drive the integration top's host-side member ``ext`` (``Out(HtaxPortSignature())``, in the
    orientation :class:`sim.host.HostModel` expects: ``ext.tx`` carries what the switch sends to the
    port) from switch port ``port``, both directions, ``ready2`` included."""
    for a, b in ((ext.tx, port.rx), (port.tx, ext.rx)):
        m.d.comb += [a.valid.eq(b.valid), a.payload.eq(b.payload), b.ready.eq(a.ready), b.ready2.eq(a.ready2)]


def vc_for_cmd(cmd):
    """The virtual channel a command travels on."""
    return _VC_FOR_CMD[HtaxCmd(cmd)]


class HtaxLinkSignature(wiring.Signature):
    """One direction of an HTAX link: ``valid``, a :class:`HtaxBeat` ``payload``, per-VC ``ready``.

    Its interface (:meth:`create`) is an :class:`HtaxLinkInterface`, which carries the protocol
    helpers.

    Members
    -------
    valid : Out(1)
    payload : Out(HtaxBeat)
    ready : In(4)
        ``ready[v]``: the sink accepts a beat of virtual channel ``v``.
    ready2 : In(4)
        ``ready2[v]``: the sink accepts a beat of ``v`` now and, if one moves now, another in the next
        cycle (0 if the sink cannot promise that).
    """

    def __init__(self):
        super().__init__({
            "valid": Out(1),
            "payload": Out(HtaxBeat),
            "ready": In(NUM_VCS),
            "ready2": In(NUM_VCS),
        })

    def __eq__(self, other):
        return type(other) is HtaxLinkSignature

    def __hash__(self):
        return hash(HtaxLinkSignature)

    def __repr__(self):
        return "HtaxLinkSignature()"

    def create(self, *, path=None, src_loc_at=0):
        return HtaxLinkInterface(self, path=path, src_loc_at=1 + src_loc_at)


class HtaxLinkInterface(wiring.PureInterface):
    """The signals of an :class:`HtaxLinkSignature`, with the link's protocol helpers."""

    def transfer(self):
        """Amaranth expression: a beat moves on this link in this cycle (``valid & ready[vc]``)."""
        return self.valid & self.ready.bit_select(self.payload.vc.as_value(), 1)

    def header_moves(self):
        """Amaranth expression: the first beat of a packet moves in this cycle."""
        return self.transfer() & self.payload.first


class HtaxPortSignature(wiring.Signature):
    """An HTAX port as a unit sees it: ``tx`` into the switch, ``rx`` out of it.

    Members
    -------
    tx : Out(HtaxLinkSignature)
    rx : In(HtaxLinkSignature)
    """

    def __init__(self):
        super().__init__({
            "tx": Out(HtaxLinkSignature()),
            "rx": In(HtaxLinkSignature()),
        })

    def __eq__(self, other):
        return type(other) is HtaxPortSignature

    def __hash__(self):
        return hash(HtaxPortSignature)

    def __repr__(self):
        return "HtaxPortSignature()"


class HtaxPacketSignature(wiring.Signature):
    """A stream of whole HTAX packets inside a unit: the members of an ``amaranth.lib.stream`` of
    :class:`HtaxBeat` (so it connects to one), packets framed by the beats' ``first``/``last``.

    Unlike :class:`HtaxLinkSignature` it has one ``ready`` for all virtual channels and no ``ready2``:
    a unit's packet sources (the RMA engines) feed an arbiter that turns them into one link, and that
    arbiter drives each source's ``ready`` from the link's ``ready`` of the VC the source offers.  The
    stream rules apply (``payload`` and ``valid`` hold until the beat moves), and a packet's beats
    follow each other without another packet's in between.

    Members
    -------
    valid : Out(1)
    payload : Out(HtaxBeat)
    ready : In(1)
    """

    def __init__(self):
        super().__init__({"valid": Out(1), "payload": Out(HtaxBeat), "ready": In(1)})

    def __eq__(self, other):
        return type(other) is HtaxPacketSignature

    def __hash__(self):
        return hash(HtaxPacketSignature)

    def __repr__(self):
        return "HtaxPacketSignature()"


def _mem_reason(cmd, status, length, addr, first_be, last_be):
    if cmd == HtaxCmd.WRITE:
        if not 1 <= length <= MAX_DATA_WORDS:
            return "write length out of range"
        if first_be == 0 or (length > 1 and last_be == 0):
            return "write with empty byte enables"
    elif cmd == HtaxCmd.READ:
        if not 1 <= length <= MAX_DATA_WORDS:
            return "read length out of range"
    elif cmd == HtaxCmd.RESPONSE:
        if length > MAX_DATA_WORDS:
            return "response length out of range"
        if status != HtaxStatus.OK and length != 0:
            return "error response with data"
    if cmd != HtaxCmd.RESPONSE and status != HtaxStatus.OK:
        return "request with non-OK status"
    if addr & 0x7:
        return "address not 8-byte aligned"
    if ((addr >> 3) & 0x7) + length > MAX_DATA_WORDS:
        return "packet crosses a 64-byte line"
    return None


def malformed_reason(header):
    """Python reference of the header rules: ``None`` if well formed, else the first rule broken.

    ``header`` is a :class:`HtaxHeader` ``data.Const`` view or a mapping with the same field names (the
    body as ``addr``, ``length``, ``first_be``, ``last_be`` for memory commands).
    """
    if isinstance(header, dict):
        get = header.get
    else:
        get = lambda name: getattr(header, name)  # noqa: E731
    cmd = get("cmd")
    try:
        cmd = HtaxCmd(cmd)
    except ValueError:
        return "reserved command"
    if HtaxVC(get("vc")) != vc_for_cmd(cmd):
        return "virtual channel does not match command"
    status = HtaxStatus(get("status"))
    if cmd == HtaxCmd.ATS:
        if status != HtaxStatus.OK:
            return "request with non-OK status"
        return None
    if isinstance(header, dict):
        mem = header
        addr, length, first_be, last_be = (mem.get(k, 0) for k in ("addr", "length", "first_be", "last_be"))
    else:
        mem = header.body.mem
        addr, length, first_be, last_be = mem.addr, mem.length, mem.first_be, mem.last_be
    return _mem_reason(cmd, status, length, addr, first_be, last_be)


def malformed(header):
    """Amaranth expression: the :class:`HtaxHeader` view ``header`` breaks a format rule.

    The same rules as :func:`malformed_reason`; ``tests/common/test_htax_format.py`` checks the two
    agree on random headers.
    """
    cmd = header.cmd.as_value()
    mem = header.body.mem
    length = mem.length
    reserved = cmd >= 4
    vc_bad = Const(0)
    for c, v in _VC_FOR_CMD.items():
        vc_bad = vc_bad | ((cmd == c.value) & (header.vc.as_value() != v.value))
    status_ok = header.status.as_value() == HtaxStatus.OK.value
    is_write = cmd == HtaxCmd.WRITE.value
    is_read = cmd == HtaxCmd.READ.value
    is_rsp = cmd == HtaxCmd.RESPONSE.value
    is_mem = is_write | is_read | is_rsp
    len_1_8 = (length >= 1) & (length <= MAX_DATA_WORDS)
    mem_bad = (
        ((is_write | is_read) & ~len_1_8)
        | (is_write & ((mem.first_be == 0) | ((length > 1) & (mem.last_be == 0))))
        | (is_rsp & (length > MAX_DATA_WORDS))
        | (is_rsp & ~status_ok & (length != 0))
        | (mem.addr[0:3] != 0)
        | ((Cat(mem.addr[3:6], Const(0, 2)).as_unsigned() + length) > MAX_DATA_WORDS)
    )
    return reserved | vc_bad | (~is_rsp & ~status_ok) | (is_mem & mem_bad)

