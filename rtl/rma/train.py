"""The completer's packet trains (:class:`RmaTrainTable`): where the next data packet of an operation
goes when it arrives without command words (dissertation ch. 7.5.6; ``docs/rma.md``, "Rules").

A put's data (from the origin's requester) and a get's response data (from the target's responder)
travel as a train of one-line packets.  Only the first carries a command word (``dst_qw``,
``size_m1``, ``offset_qw``); the others carry none and continue where the previous one ended.  The
network keeps the packets of one source node and message class in order (one path, FIFO VCs, the
links' in-order retransmission), and one source sends one such train per class at a time (its
requester and its responder each serve one operation at a time), so the completer keeps one train
per (source node, class): put data and get responses.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from rtl.common.net import NODE_BITS
from rtl.common.params import check_pow2

from .formats import QW_BITS

__all__ = ["RmaTrain", "RmaTrainTable"]

#: one train: ``valid`` (an operation's packets are still to come), its start at this node, its size
#: and where its next packet's payload starts (quadwords after ``dst_qw``)
RmaTrain = data.StructLayout({"valid": 1, "dst_qw": QW_BITS, "size_m1": 6, "next_qw": 9})


class RmaTrainTable(wiring.Component):
    """The trains of ``nodes`` source nodes in two classes: a memory of ``2 * nodes`` :data:`RmaTrain`
    entries, read with a header as it arrives and written as a packet is accepted.

    A source node at or above ``nodes`` has no entry: it reads as no train (``valid`` 0) and a write
    for it is ignored.  The memory starts with no train; a reset does not clear it (a train is only
    read by a packet that follows its first, and every first packet writes its entry).

    Parameters
    ----------
    nodes : int
        Source nodes (power of two, 1 .. 2**NODE_BITS).

    Members
    -------
    read_node : In(NODE_BITS) ; read_get : In(1)
        The entry to read: the source node and the class (1: get responses, 0: put data).
    train : Out(RmaTrain)
        That entry, one cycle after the read.
    write : In(1) ; write_node : In(NODE_BITS) ; write_get : In(1) ; write_train : In(RmaTrain)
        Write the entry of (``write_node``, ``write_get``).
    """

    def __init__(self, *, nodes):
        self.nodes = check_pow2("nodes", nodes, 1, 1 << NODE_BITS)
        super().__init__({"read_node": In(NODE_BITS), "read_get": In(1), "train": Out(RmaTrain),
                          "write": In(1), "write_node": In(NODE_BITS), "write_get": In(1),
                          "write_train": In(RmaTrain)})

    def elaborate(self, platform):
        m = Module()
        bits = exact_log2(self.nodes)
        m.submodules.mem = mem = Memory(shape=RmaTrain, depth=2 * self.nodes, init=[], attrs={"ram_style": "block"})
        rd, wr = mem.read_port(transparent_for=()), mem.write_port()
        m.d.comb += rd.addr.eq(Cat(self.read_get, self.read_node[:bits]))
        in_range = Signal()
        m.d.sync += in_range.eq((self.read_node >> bits) == 0)
        m.d.comb += [self.train.eq(rd.data), self.train.valid.eq(rd.data.valid & in_range)]
        m.d.comb += [wr.addr.eq(Cat(self.write_get, self.write_node[:bits])), wr.data.eq(self.write_train),
                     wr.en.eq(self.write & ((self.write_node >> bits) == 0))]
        return m
