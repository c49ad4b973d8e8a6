"""AXI4 channel formats and the AXI4 interface of the host bus bridge (``docs/hostbus.md``) and of the
board blocks (``rtl/board``) that stand for the host on an FPGA board.

An AXI4 interface is five streams (:class:`amaranth.lib.stream.Signature`, ``valid``/``ready``/
``payload``, the AXI handshake rules are the stream rules): ``aw`` and ``ar`` (:func:`axi_addr`),
``w`` (:func:`axi_wdata`), ``b`` (:func:`axi_bresp`) and ``r`` (:func:`axi_rdata`).  The bridge
speaks 64-bit data, INCR and FIXED bursts of at most 256 beats (it maps at most 8), no locks, caches,
QoS or user signals (an FPGA tool ties them off).

An integration top exposes the interface as flat ports in the usual naming (``m_axi_awaddr``,
``s_axi_wdata``) with :func:`flat_members` and :func:`connect_flat`, so that Vivado's IP integrator
and LiteX infer the bus.
"""

from amaranth.hdl import Shape
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = [
    "AxiBurst", "AxiResp", "DATA_BITS", "STRB_BITS", "SIZE_8B",
    "axi_addr", "axi_wdata", "axi_bresp", "axi_rdata", "AxiSignature", "flat_members", "connect_flat",
    "wire_axi",
]

DATA_BITS = 64
STRB_BITS = DATA_BITS // 8
SIZE_8B = 3                 # AxSIZE of a full 64-bit beat


class AxiBurst(enum.Enum, shape=2):
    FIXED = 0
    INCR = 1
    WRAP = 2


class AxiResp(enum.Enum, shape=2):
    OKAY = 0
    EXOKAY = 1
    SLVERR = 2
    DECERR = 3


def axi_addr(id_bits, addr_bits):
    """The AW and AR channel payload."""
    return data.StructLayout({"id": id_bits, "addr": addr_bits, "len": 8, "size": 3, "burst": AxiBurst})


def axi_wdata():
    """The W channel payload."""
    return data.StructLayout({"data": DATA_BITS, "strb": STRB_BITS, "last": 1})


def axi_bresp(id_bits):
    """The B channel payload."""
    return data.StructLayout({"id": id_bits, "resp": AxiResp})


def axi_rdata(id_bits):
    """The R channel payload."""
    return data.StructLayout({"id": id_bits, "data": DATA_BITS, "resp": AxiResp, "last": 1})


class AxiSignature(wiring.Signature):
    """An AXI4 manager interface (flip it for a subordinate).

    Parameters
    ----------
    id_bits : int
    addr_bits : int

    Members
    -------
    aw, w, ar : Out(stream.Signature(...))
    b, r : In(stream.Signature(...))
    """

    def __init__(self, *, id_bits, addr_bits):
        self.id_bits, self.addr_bits = id_bits, addr_bits
        super().__init__({
            "aw": Out(stream.Signature(axi_addr(id_bits, addr_bits))),
            "w": Out(stream.Signature(axi_wdata())),
            "b": In(stream.Signature(axi_bresp(id_bits))),
            "ar": Out(stream.Signature(axi_addr(id_bits, addr_bits))),
            "r": In(stream.Signature(axi_rdata(id_bits))),
        })

    def __eq__(self, other):
        return type(other) is AxiSignature and (other.id_bits, other.addr_bits) == (self.id_bits, self.addr_bits)

    def __hash__(self):
        return hash((AxiSignature, self.id_bits, self.addr_bits))

    def __repr__(self):
        return f"AxiSignature(id_bits={self.id_bits}, addr_bits={self.addr_bits})"


def _fields(sig):
    """``(channel, field, shape, manager_drives)`` of every flat AXI port, in the conventional order."""
    for ch in ("aw", "w", "b", "ar", "r"):
        member = sig.members[ch]
        manager_drives = member.flow == Out
        layout = member.signature.members["payload"].shape
        for name, field in layout:
            yield ch, name, Shape.cast(field.shape).width, manager_drives
        yield ch, "valid", 1, manager_drives
        yield ch, "ready", 1, not manager_drives


def flat_members(prefix, sig, *, manager):
    """Top-level members ``{prefix}_{channel}{field}`` (``m_axi_awaddr``) for an AXI interface of ``sig``
    that the top presents as a manager (``manager=True``) or a subordinate."""
    members = {}
    for ch, name, width, manager_drives in _fields(sig):
        members[f"{prefix}_{ch}{name}"] = Out(width) if manager_drives == manager else In(width)
    return members


def connect_flat(m, top, prefix, iface, *, manager):
    """Drive the flat members of ``top`` (made by :func:`flat_members`) from the AXI interface ``iface``
    of an inner component (its ``AxiSignature`` as the top presents it), and ``iface`` from them."""
    for ch, name, _, manager_drives in _fields(_sig(iface)):
        port = getattr(top, f"{prefix}_{ch}{name}")
        stream_ = getattr(iface, ch)
        inner = getattr(stream_, name) if name in ("valid", "ready") else getattr(stream_.payload, name)
        if manager_drives == manager:
            m.d.comb += port.eq(inner)
        else:
            m.d.comb += inner.eq(port)


def _sig(iface):
    sig = iface.signature
    return sig.flip() if isinstance(sig, wiring.FlippedSignature) else sig


def wire_axi(m, manager, m_prefix, subordinate, s_prefix):
    """Join the flat AXI ports ``{m_prefix}_*`` of the component ``manager`` (``NicAxi``'s ``m_axi``, the
    bridge's ``m_axi``) to the flat ports ``{s_prefix}_*`` of ``subordinate`` (:class:`HostMemory`'s
    ``s_axi``, ``NicAxi``'s ``s_axi``), each signal from the side that drives it.

    Raises
    ------
    ValueError
        If a port is missing on either side, if both ports of a signal have the same direction, or if
        they differ in width (ID widths must agree: 5 bits from ``NicAxi.m_axi`` into ``HostMemory``,
        4 from the bridge into ``NicAxi.s_axi``).
    """
    m_names = {n[len(m_prefix) + 1:]: n for n in manager.signature.members if n.startswith(m_prefix + "_")}
    s_names = {n[len(s_prefix) + 1:]: n for n in subordinate.signature.members if n.startswith(s_prefix + "_")}
    if set(m_names) != set(s_names) or not m_names:
        raise ValueError(f"{m_prefix}_* and {s_prefix}_* do not have the same signals")
    for suffix in m_names:
        mp, sp = getattr(manager, m_names[suffix]), getattr(subordinate, s_names[suffix])
        m_flow = manager.signature.members[m_names[suffix]].flow
        if m_flow == subordinate.signature.members[s_names[suffix]].flow:
            raise ValueError(f"{m_names[suffix]} and {s_names[suffix]} are both {m_flow.name} ports")
        if len(mp) != len(sp):
            raise ValueError(f"{m_names[suffix]} is {len(mp)} bits wide, {s_names[suffix]} {len(sp)}")
        if m_flow == Out:
            m.d.comb += sp.eq(mp)
        else:
            m.d.comb += mp.eq(sp)

