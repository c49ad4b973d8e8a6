"""The RMA unit (dissertation ch. 7.5): put, get, immediate and notification put, FCAA lock.

``docs/rma.md`` describes the unit; :func:`connect_regs` wires it to the generated register file
(``rdl/nic_regs.rdl``, blocks ``rma``, ``rma_user`` and ``irq.rma_status``).
"""

from amaranth.hdl import Cat

from rtl.common.addrmap import AddressMap

from .rma import COUNTERS, Rma, RmaRegsSignature

__all__ = ["Rma", "RmaRegsSignature", "COUNTERS", "REGISTER_COUNTERS", "rma_from_config", "connect_regs",
           "UNITS"]

#: where each counter strobe of :data:`COUNTERS` counts: (register, field) of the ``rma`` block
REGISTER_COUNTERS = {
    "req_put": ("requester_counters", "put"), "req_get": ("requester_counters", "get"),
    "req_error": ("errors", "requester"),
    "rsp_get": ("responder_counters", "get"), "rsp_lock": ("responder_counters", "lock"),
    "rsp_refused": ("errors", "refused"),
    "rsp_dropped": ("errors", "responder_dropped"),
    "cpl_put": ("completer_counters", "put"), "cpl_get": ("completer_counters", "get"),
    "cpl_dropped": ("errors", "completer_dropped"),
    "nq_dropped": ("drops", "notifications"), "rx_dropped": ("drops", "htax"),
    "atu_fault": ("drops", "atu_faults"), "atu_flush": ("drops", "atu_flushes"),
}


def rma_from_config(cfg, **overrides):
    """The RMA unit the configuration describes (``[system]`` vpids and address map, ``[rma]`` ports,
    ``[atu] htax_port`` as the destination of its translation requests)."""
    amap = AddressMap.from_config(cfg)
    kw = dict(vpids=cfg["system"]["vpids"], window_base=amap["rma"].base, htax_port=cfg["rma"]["htax_port"],
              host_port=cfg["rma"]["host_port"], atu_port=cfg["atu"]["htax_port"])
    kw.update(overrides)
    return Rma(**kw)


def connect_regs(m, rma, rf):
    """Wire ``rma.regs`` to the generated register file ``rf`` (its ``hw`` ports).

    The notification queue's base (``rma.nq_base``, RAM) and read pointer (``rma_user.rp``, RAM) share
    the notifier's look-up address; the write pointers (``rma.nq_wp``, external) live in the notifier.
    """
    if set(REGISTER_COUNTERS) != set(COUNTERS):
        raise ValueError(f"counters without a register: {sorted(set(COUNTERS) ^ set(REGISTER_COUNTERS))}")
    hw, r = rf.hw, rma.regs
    b = hw.rma
    v = rma.vpids
    m.d.comb += [
        r.node_id.eq(hw.net.node.id),
        r.enable.eq(Cat(e.enable for e in b.completer_enable)[:v]),
        r.phys.eq(Cat(p.phys for p in b.phys_mode)[:v]),
        r.nq_size.eq(b.nq_size.size), r.lock_base.eq(b.lock_base.addr), r.lock_size.eq(b.lock_size.size),
        b.nq_base.addr.eq(r.nq_addr), hw.rma_user.rp.addr.eq(r.nq_addr),
        r.nq_base.eq(b.nq_base.data.addr), r.nq_rp.eq(hw.rma_user.rp.data.rp),
        r.wp_r_addr.eq(b.nq_wp.r_addr), r.wp_r_en.eq(b.nq_wp.r_en), b.nq_wp.r_data.wp.eq(r.wp_r_data),
        r.wp_w_addr.eq(b.nq_wp.w_addr), r.wp_w_en.eq(b.nq_wp.w_en), r.wp_w_data.eq(b.nq_wp.w_data.wp),
        r.wp_w_be.eq(b.nq_wp.w_be),
        hw.irq.rma_status.vpid_event.eq(r.irq),
    ]
    for strobe, (reg, field) in REGISTER_COUNTERS.items():
        m.d.comb += getattr(getattr(b, reg), f"{field}_incr").eq(getattr(r, f"{strobe}_incr"))


UNITS = {"rma": rma_from_config}
