"""The RMA unit (:class:`Rma`)."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import exact_log2

from rtl.common.arbiter import PacketArbiter
from rtl.common.htax import HtaxBeat, HtaxPortSignature
from rtl.common.net import NODE_BITS, NetStreamSignature
from rtl.common.params import check_int, check_port, check_pow2
from rtl.common.regview import RegisterView
from rtl.common.slice import RegisterSlice

from .ats_client import RmaAtsClient
from .completer import RmaCompleter
from .fence import RmaFence
from .notifier import RmaNoteRequest, RmaNotifier
from .reader import RmaRead, RmaReader
from .requester import RmaCommandIn, RmaRequester
from .responder import RmaResponder
from .rx import RmaRx
from .streams import RmaMerge, RmaNetSplit
from .txarb import RmaTxArbiter

__all__ = ["Rma", "REGISTERS"]

READ_SLOTS = 16          # reads in flight per engine: 16 lines cover a ~75-cycle read round trip
#: the parts of the register map (``rdl/nic_regs.rdl``) RMA owns: its block, the notification read
#: pointers, its interrupt status bits, and the node id it reads
REGISTERS = ("rma", "rma_user", "irq.rma_status.vpid", "net.node.id")


class Rma(wiring.Component):
    """The RMA unit (dissertation ch. 7.5, fig. 7-12): requester, completer and responder on one HTAX port,
    with one pair of network streams per message class.

    * :class:`~rtl.rma.rx.RmaRx`: descriptor stores -> command buffer; DMA read responses by tag; ATS
      messages to the ATS client;
    * :class:`~rtl.rma.requester.RmaRequester` with its :class:`~rtl.rma.reader.RmaReader` (tags 0..15);
    * :class:`~rtl.rma.responder.RmaResponder` with its reader (tags 16..31);
    * :class:`~rtl.rma.completer.RmaCompleter`;
    * :class:`~rtl.rma.notifier.RmaNotifier`, fed by all three (:class:`~rtl.rma.streams.RmaMerge`);
    * :class:`~rtl.rma.ats_client.RmaAtsClient`: the translations of requester, completer and responder
      (ch. 5.3, 7.5.5) and the answers to the ATU's flush requests;
    * :class:`~rtl.rma.txarb.RmaTxArbiter`: every HTAX packet the unit sends;
    * two :class:`~rtl.rma.fence.RmaFence`: the completer's notifications wait for its payload writes,
      the responder's reads for its lock write-backs (``docs/rma.md``, "Ordering").

    Network classes (``docs/network.md``): ``req_tx``/``req_rx`` carry packets for a responder (get and lock
    requests), ``rsp_tx``/``rsp_rx`` packets for a completer (put data, immediate and notification puts, get
    and lock responses), which a completer always drains without waiting for the network.

    A VPID with its ``phys`` bit uses physical addresses (table 7-7); every other VPID's NLAs are
    translated by the ATU at ``atu_port`` (docs/rma.md, "Translation").

    Parameters
    ----------
    vpids : int
        VPIDs (power of two, 2..32: 5-bit VPID fields).
    window_base : int
        Absolute base of the ``rma`` window (aligned to ``2**(12 + log2(vpids) + 1)``).
    htax_port, host_port, atu_port : int
        The unit's HTAX port, host memory's and the ATU's; distinct.
    nodes : int
        Network nodes (power of two, the configuration's ``[system] nodes``): the completer keeps a
        packet train per source node and class (:class:`~rtl.rma.train.RmaTrainTable`).

    Members
    -------
    htax : Out(HtaxPortSignature)
    req_tx, rsp_tx : Out(NetStreamSignature()) ; req_rx, rsp_rx : In(NetStreamSignature())
    regs : Out(RegisterView(REGISTERS, VPIDS=vpids))
        The register-file ports of :data:`REGISTERS` (:class:`rtl.common.regview.RegisterView`), wired
        to the register file by :func:`rtl.common.regview.connect_regs`.
    """

    def __init__(self, *, vpids, window_base, htax_port, host_port, atu_port, nodes=64):
        self.vpids = check_pow2("vpids", vpids, 2, 32)
        self.nodes = check_pow2("nodes", nodes, 1, 1 << NODE_BITS)
        check_int("window_base", window_base, 0)
        self.window_base = window_base
        self.htax_port = check_port("htax_port", htax_port)
        self.host_port = check_port("host_port", host_port)
        if htax_port == host_port:
            raise ValueError(f"host_port must differ from htax_port, both are {htax_port}")
        self.atu_port = check_port("atu_port", atu_port)
        if atu_port in (htax_port, host_port):
            raise ValueError(f"atu_port must differ from htax_port and host_port, not {atu_port}")
        bits = 12 + exact_log2(vpids) + 1
        if window_base % (1 << bits):
            raise ValueError(f"window_base must be aligned to {1 << bits:#x}, not {window_base:#x}")
        super().__init__({"htax": Out(HtaxPortSignature()), "req_tx": Out(NetStreamSignature()),
                          "rsp_tx": Out(NetStreamSignature()), "req_rx": In(NetStreamSignature()),
                          "rsp_rx": In(NetStreamSignature()), "regs": Out(RegisterView(REGISTERS, VPIDS=vpids))})

    def elaborate(self, platform):
        m = Module()
        v, ports = self.vpids, dict(htax_port=self.htax_port, host_port=self.host_port)
        m.submodules.rx = rx = RmaRx(vpid_bits=exact_log2(v), window_base=self.window_base, tag_split=16)
        m.submodules.requester = req = RmaRequester(vpids=v)
        m.submodules.responder = rsp = RmaResponder(vpids=v, **ports)
        m.submodules.completer = cpl = RmaCompleter(vpids=v, nodes=self.nodes, **ports)
        m.submodules.notifier = nt = RmaNotifier(vpids=v, **ports)
        m.submodules.req_reader = rq_rd = RmaReader(slots=READ_SLOTS, tag_base=0, **ports)
        m.submodules.rsp_reader = rs_rd = RmaReader(slots=READ_SLOTS, tag_base=16, **ports)
        m.submodules.split = split = RmaNetSplit()
        m.submodules.net_arb = net_arb = PacketArbiter(count=2, fallback=False)
        m.submodules.notes = notes = RmaMerge(shape=RmaNoteRequest, count=3)
        m.submodules.tx_arb = tx_arb = RmaTxArbiter(sources=6)
        m.submodules.ats = ats = RmaAtsClient(clients=3, htax_port=self.htax_port, atu_port=self.atu_port)

        wiring.connect(m, flipped(self.htax.rx), rx.rx)
        wiring.connect(m, tx_arb.tx, flipped(self.htax.tx))
        # register slices cut the ready/valid chains: the requester's command port from the
        # command buffer, and every source from the transmit arbiter (whose grant looks at all of them)
        m.submodules.cmd_slice = cmd_slice = RegisterSlice(shape=RmaCommandIn)
        connect(m, rx.cmds, cmd_slice.i)
        connect(m, cmd_slice.o, req.cmds)
        connect(m, rx.rsp0, rq_rd.rsp)
        connect(m, rx.rsp1, rs_rd.rsp)
        connect(m, req.reads, rq_rd.reads)
        connect(m, rq_rd.data, req.data)
        # FCAA atomicity: the responder's reads wait for its lock write-backs (RmaFence)
        m.submodules.lock_fence = lock_fence = RmaFence(shape=RmaRead)
        connect(m, rsp.reads, lock_fence.i)
        connect(m, lock_fence.o, rs_rd.reads)
        connect(m, rs_rd.data, rsp.data)
        connect(m, req.net_tx, split.i)
        connect(m, split.responder, flipped(self.req_tx))
        connect(m, split.completer, net_arb.i[0])
        connect(m, rsp.net_tx, net_arb.i[1])
        connect(m, net_arb.o, flipped(self.rsp_tx))
        connect(m, flipped(self.req_rx), rsp.net_rx)
        connect(m, flipped(self.rsp_rx), cpl.net_rx)
        # a put's data before its notification: the completer's notes wait for its writes (RmaFence)
        m.submodules.cpl_fence = cpl_fence = RmaFence(shape=RmaNoteRequest)
        connect(m, cpl.notes, cpl_fence.i)
        for k, src in enumerate((cpl_fence.o, rsp.notes, req.notes)):
            connect(m, src, notes.i[k])
        # and the notifier's look-up and full test from the three note sources
        m.submodules.note_slice = note_slice = RegisterSlice(shape=RmaNoteRequest)
        connect(m, notes.o, note_slice.i)
        connect(m, note_slice.o, nt.notes)
        # ATS messages reach the ATS client from a register (a cycle late; always ready, so no skid):
        # the receive framing does not run on into the client's order queue and the engines' states
        ats_valid, ats_msg = Signal(), Signal.like(rx.ats.payload)
        m.d.sync += [ats_valid.eq(rx.ats.valid), ats_msg.eq(rx.ats.payload)]
        m.d.comb += [ats.rx.valid.eq(ats_valid), ats.rx.payload.eq(ats_msg)]
        for k, client in enumerate((req, cpl, rsp)):
            connect(m, client.xreq, ats.req[k])
            connect(m, ats.rsp[k], client.xrsp)
        m.d.comb += [ats.busy.eq(Cat(req.xbusy, cpl.xbusy, rsp.xbusy)), cpl.flush.eq(ats.flush),
                     cpl.stale.eq(ats.stale[1])]
        # the fences count the completer's writes and the lock write-backs from the engine to the
        # arbiter, so the register slices on those paths keep the order (a slice holds at most two
        # last beats, within the fences' depth of 4)
        def last_moves(s):
            return s.valid & s.ready & s.payload.last
        m.d.comb += [cpl_fence.issued.eq(last_moves(cpl.tx)), cpl_fence.arrived.eq(last_moves(tx_arb.i[0])),
                     lock_fence.issued.eq(last_moves(rsp.tx)), lock_fence.arrived.eq(last_moves(tx_arb.i[4]))]
        # a register slice in front of every arbiter input whose source drives it from logic: the
        # arbiter's choice and the HTAX input's header decode behind it start from registers, not from
        # an engine's state (the responder's FCAA compare into the switch's slot allocation was the
        # NIC's critical path); the ATS client's output is a register already
        names = {0: "cpl", 1: "nt", 2: "req_rd", 3: "rsp_rd", 4: "rsp"}
        for k, src in ((0, cpl.tx), (1, nt.tx), (2, rq_rd.tx), (3, rs_rd.tx), (4, rsp.tx)):
            tx_slice = RegisterSlice(shape=HtaxBeat)
            m.submodules[f"tx_slice_{names[k]}"] = tx_slice
            connect(m, src, tx_slice.i)
            connect(m, tx_slice.o, tx_arb.i[k])
        connect(m, ats.tx, tx_arb.i[5])

        r, b = self.regs, self.regs.rma
        enable = Cat(e.enable for e in b.completer_enable)[:v]
        phys = Cat(p.phys for p in b.phys_mode)[:v]
        node_id = r.net.node.id
        m.d.comb += [
            req.phys.eq(phys), req.node_id.eq(node_id),
            rsp.enable.eq(enable), rsp.phys.eq(phys), rsp.node_id.eq(node_id),
            rsp.lock_base.eq(b.lock_base.addr), rsp.lock_size.eq(b.lock_size.size),
            cpl.enable.eq(enable), cpl.phys.eq(phys),
            # the notification queue's base and read pointer share the notifier's look-up address
            b.nq_base.addr.eq(nt.vpid), r.rma_user.rp.addr.eq(nt.vpid),
            nt.base.eq(b.nq_base.data.addr), nt.rp.eq(r.rma_user.rp.data.rp), nt.size.eq(b.nq_size.size),
            nt.sw_r_addr.eq(b.nq_wp.r_addr), nt.sw_r_en.eq(b.nq_wp.r_en), b.nq_wp.r_data.wp.eq(nt.sw_r_data),
            nt.sw_w_addr.eq(b.nq_wp.w_addr), nt.sw_w_en.eq(b.nq_wp.w_en), nt.sw_w_data.eq(b.nq_wp.w_data.wp),
            nt.sw_w_be.eq(b.nq_wp.w_be), r.irq.rma_status.vpid_event.eq(nt.irq),
            b.requester_counters.put_incr.eq(req.put_incr), b.requester_counters.get_incr.eq(req.get_incr),
            b.errors.requester_incr.eq(req.error_incr),
            b.responder_counters.get_incr.eq(rsp.get_incr), b.responder_counters.lock_incr.eq(rsp.lock_incr),
            b.errors.refused_incr.eq(rsp.refused_incr), b.errors.responder_dropped_incr.eq(rsp.dropped_incr),
            b.completer_counters.put_incr.eq(cpl.put_incr), b.completer_counters.get_incr.eq(cpl.get_incr),
            b.errors.completer_dropped_incr.eq(cpl.dropped_incr),
            b.drops.notifications_incr.eq(nt.dropped_incr), b.drops.htax_incr.eq(rx.dropped_incr | ats.dropped_incr),
            b.drops.atu_faults_incr.eq(ats.fault_incr), b.drops.atu_flushes_incr.eq(ats.flush_incr),
        ]
        return m
