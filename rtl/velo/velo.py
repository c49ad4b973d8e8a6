"""The VELO unit (dissertation ch. 7.4): requester, completer and WPLT on one HTAX port."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import exact_log2

from rtl.common.htax import HtaxPortSignature
from rtl.common.net import NODE_BITS, NetStreamSignature
from rtl.common.params import check_int, check_port, check_pow2

from .completer import VeloCompleter
from .requester import VeloRequester
from .wplt import VeloWritePointers

__all__ = ["Velo", "VeloRegsSignature", "connect_regs"]


class VeloRegsSignature(wiring.Signature):
    """The register-file side of VELO, seen from the unit: inputs are register values and the WPLT's
    software port, outputs the read-port addresses, counter strobes and interrupt events."""

    def __init__(self, vpids):
        a = range(vpids)
        super().__init__({
            "node_id": In(NODE_BITS), "enable": In(vpids),
            "mslt_addr": Out(a), "mslt_data": In(64), "balt_addr": Out(a), "balt_data": In(40),
            "rp_addr": Out(a), "rp_data": In(32),
            "wplt_r_addr": In(a), "wplt_r_en": In(1), "wplt_r_data": Out(32),
            "wplt_w_addr": In(a), "wplt_w_en": In(1), "wplt_w_data": In(32), "wplt_w_be": In(8),
            "sent_incr": Out(1), "received_incr": Out(1), "discarded_incr": Out(1), "rejected_incr": Out(1),
            "dropped_incr": Out(1), "irq": Out(vpids),
        })


class Velo(wiring.Component):
    """The VELO unit (dissertation ch. 7.4): requester, completer and write-pointer table on one HTAX port
    and one pair of FU streams of the network port, as in the prototype ("they share one bidirectional
    port of the HTAX crossbar ... the same holds true for the Networkport interface").

    * :class:`~rtl.velo.requester.VeloRequester`: HTAX ``rx`` -> ``net_tx`` (stateless);
    * :class:`~rtl.velo.completer.VeloCompleter`: ``net_rx`` -> HTAX ``tx``;
    * :class:`~rtl.velo.wplt.VeloWritePointers`: the WPLT storage (``velo.wplt`` is external in the RDL).

    Every other register of table 7-1 lives in the register file; ``regs`` carries their ports
    (:class:`VeloRegsSignature`) and :func:`connect_regs` wires them to the generated register file.

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
    regs : Out(VeloRegsSignature)
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
                          "net_rx": In(NetStreamSignature()), "regs": Out(VeloRegsSignature(vpids))})

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
        m.d.comb += [
            req.node_id.eq(r.node_id), r.sent_incr.eq(req.sent_incr), r.dropped_incr.eq(req.dropped_incr),
            r.mslt_addr.eq(cpl.vpid), r.balt_addr.eq(cpl.vpid), r.rp_addr.eq(cpl.vpid), wplt.addr.eq(cpl.vpid),
            cpl.enable.eq(r.enable), cpl.mslt.eq(r.mslt_data), cpl.balt.eq(r.balt_data), cpl.rp.eq(r.rp_data),
            cpl.wp.eq(wplt.data), wplt.w_en.eq(cpl.wp_we), wplt.w_addr.eq(cpl.vpid), wplt.w_data.eq(cpl.wp_next),
            wplt.sw_r_addr.eq(r.wplt_r_addr), wplt.sw_r_en.eq(r.wplt_r_en), r.wplt_r_data.eq(wplt.sw_r_data),
            wplt.sw_w_addr.eq(r.wplt_w_addr), wplt.sw_w_en.eq(r.wplt_w_en), wplt.sw_w_data.eq(r.wplt_w_data),
            wplt.sw_w_be.eq(r.wplt_w_be),
            r.received_incr.eq(cpl.received_incr), r.discarded_incr.eq(cpl.discarded_incr),
            r.rejected_incr.eq(cpl.rejected_incr), r.irq.eq(cpl.irq),
        ]
        return m


def connect_regs(m, velo, rf):
    """Wire ``velo.regs`` to the generated register file ``rf`` (its ``hw`` ports)."""
    hw, r = rf.hw, velo.regs
    v = hw.velo
    m.d.comb += [
        r.node_id.eq(hw.net.node.id), r.enable.eq(v.mbox_enable.enable),
        v.mslt.addr.eq(r.mslt_addr), r.mslt_data.eq(v.mslt.data.size),
        v.balt.addr.eq(r.balt_addr), r.balt_data.eq(v.balt.data.addr),
        hw.velo_user.rp.addr.eq(r.rp_addr), r.rp_data.eq(hw.velo_user.rp.data.rp),
        r.wplt_r_addr.eq(v.wplt.r_addr), r.wplt_r_en.eq(v.wplt.r_en), v.wplt.r_data.wp.eq(r.wplt_r_data),
        r.wplt_w_addr.eq(v.wplt.w_addr), r.wplt_w_en.eq(v.wplt.w_en), r.wplt_w_data.eq(v.wplt.w_data.wp),
        r.wplt_w_be.eq(v.wplt.w_be),
        v.counters.sent_incr.eq(r.sent_incr), v.counters.received_incr.eq(r.received_incr),
        v.counters.discarded_incr.eq(r.discarded_incr), v.counters.rejected_incr.eq(r.rejected_incr),
        v.req_drops.dropped_incr.eq(r.dropped_incr), hw.irq.velo_status.vpid_event.eq(r.irq),
    ]
