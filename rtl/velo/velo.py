"""The VELO unit (dissertation ch. 7.4): requester, completer and WPLT on one HTAX port."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import exact_log2

from rtl.common.htax import HtaxPortSignature
from rtl.common.net import NODE_BITS, NetStreamSignature
from rtl.common.params import check_int, check_port, check_pow2
from rtl.common.regview import RegisterView

from .completer import VeloCompleter
from .requester import VeloRequester
from .wplt import VeloWritePointers

__all__ = ["Velo", "REGISTERS"]


#: the parts of the register map (``rdl/nic_regs.rdl``) VELO owns: its block, the mailbox read pointers,
#: its interrupt status bits, and the node id it reads
REGISTERS = ("velo", "velo_user", "irq.velo_status.vpid", "net.node.id")


class Velo(wiring.Component):
    """The VELO unit (dissertation ch. 7.4): requester, completer and write-pointer table on one HTAX port
    and one pair of FU streams of the network port, as in the prototype ("they share one bidirectional
    port of the HTAX crossbar ... the same holds true for the Networkport interface").

    * :class:`~rtl.velo.requester.VeloRequester`: HTAX ``rx`` -> ``net_tx`` (stateless);
    * :class:`~rtl.velo.completer.VeloCompleter`: ``net_rx`` -> HTAX ``tx``;
    * :class:`~rtl.velo.wplt.VeloWritePointers`: the WPLT storage (``velo.wplt`` is external in the RDL).

    Every other register of table 7-1 lives in the register file; ``regs`` carries the ports of
    :data:`REGISTERS` (:class:`rtl.common.regview.RegisterView`) and :func:`rtl.common.regview.connect_regs`
    wires them to the generated register file.

    Parameters
    ----------
    vpids : int
        Mailboxes (power of two, 2..32: the header's VPID fields are 5 bits, fig. 8-3).
    nodes : int
        Addressable nodes (power of two, 2..2**18): width of the destination-node address field.
    window_base : int
        Absolute base address of the ``velo`` window (:class:`rtl.common.addrmap.AddressMap`).
    htax_port, host_port : int
        The unit's HTAX port (``src`` of slot writes) and the host's (their ``dst``).

    Members
    -------
    htax : Out(HtaxPortSignature)
        The unit's HTAX port: stores into the ``velo`` window in, slot writes out.
    net_tx : Out(stream.Signature(NetBeat))
        To the network port (one FU source).
    net_rx : In(stream.Signature(NetBeat))
        From the network port (the VELO sink).
    regs : Out(RegisterView(REGISTERS, VPIDS=vpids))
        Register values in, look-up addresses, counter strobes and interrupt events out.
    """

    def __init__(self, *, vpids, nodes, window_base, htax_port, host_port):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.nodes = check_pow2("nodes", nodes, 2, 1 << NODE_BITS)
        check_int("window_base", window_base, 0)
        self.window_base = window_base
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        if htax_port == host_port:
            raise ValueError(f"host_port must differ from htax_port, both are {htax_port}")
        self.window_bits = 12 + 2 * exact_log2(vpids) + exact_log2(nodes)
        if window_base % (1 << self.window_bits):
            raise ValueError(f"window_base must be aligned to {1 << self.window_bits:#x}, not {window_base:#x}")
        super().__init__({"htax": Out(HtaxPortSignature()), "net_tx": Out(NetStreamSignature()),
                          "net_rx": In(NetStreamSignature()), "regs": Out(RegisterView(REGISTERS, VPIDS=vpids))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.requester = req = VeloRequester(
            vpid_bits=exact_log2(self.vpids), node_bits=exact_log2(self.nodes), window_base=self.window_base)
        m.submodules.completer = cpl = VeloCompleter(vpids=self.vpids, htax_port=self.htax_port,
                                                     host_port=self.host_port)
        m.submodules.wplt = wplt = VeloWritePointers(vpids=self.vpids)
        r = self.regs
        wiring.connect(m, flipped(self.htax.rx), req.rx)
        wiring.connect(m, cpl.tx, flipped(self.htax.tx))
        connect(m, req.net_tx, flipped(self.net_tx))
        connect(m, flipped(self.net_rx), cpl.net_rx)
        b = r.velo
        m.d.comb += [
            req.node_id.eq(r.net.node.id), b.counters.sent_incr.eq(req.sent_incr),
            b.req_drops.dropped_incr.eq(req.dropped_incr),
            b.mslt.addr.eq(cpl.vpid), b.balt.addr.eq(cpl.vpid), r.velo_user.rp.addr.eq(cpl.vpid),
            wplt.addr.eq(cpl.vpid),
            cpl.enable.eq(b.mbox_enable.enable), cpl.mslt.eq(b.mslt.data.size), cpl.balt.eq(b.balt.data.addr),
            cpl.rp.eq(r.velo_user.rp.data.rp),
            cpl.wp.eq(wplt.data), wplt.w_en.eq(cpl.wp_we), wplt.w_addr.eq(cpl.vpid), wplt.w_data.eq(cpl.wp_next),
            wplt.sw_r_addr.eq(b.wplt.r_addr), wplt.sw_r_en.eq(b.wplt.r_en), b.wplt.r_data.wp.eq(wplt.sw_r_data),
            wplt.sw_w_addr.eq(b.wplt.w_addr), wplt.sw_w_en.eq(b.wplt.w_en), wplt.sw_w_data.eq(b.wplt.w_data.wp),
            wplt.sw_w_be.eq(b.wplt.w_be),
            b.counters.received_incr.eq(cpl.received_incr), b.counters.discarded_incr.eq(cpl.discarded_incr),
            b.counters.rejected_incr.eq(cpl.rejected_incr), r.irq.velo_status.vpid_event.eq(cpl.irq),
        ]
        return m
