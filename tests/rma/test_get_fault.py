"""A get whose local NLA fails translation at the origin (``docs/rma.md``, "ATU faults"): without
``cpl_notify`` the origin's completer still writes one ``ATU_FAULT`` completer notification and writes no
data; the two cross-connected units of ``test_rma.py`` and :class:`sim.rma_model.RmaNetworkModel` must
both do so (the expected outcome comes from the rule, not from either run)."""

import random

from rtl.rma.formats import PAGE_BYTES, RmaCommand, RmaError, RmaNotifyClass
from sim.rma_model import RmaNetworkModel, RmaNodeModel, descriptor
from tests.rma.test_rma import LOCKS, MEM, NQ, NQ_SIZE, VPIDS, FlatMemory, Gates, notes_of, queues_for, simulate

ORIGIN_VPID = 2                 # translated (test_rma.VIRTUAL)
LOCAL, REMOTE = 0x4_0000, 0x5_0000


def test_get_local_fault_without_cpl_notify():
    seed = random.randrange(1 << 31)
    print(f"seed {seed}")
    rng = random.Random(seed)
    init = [bytearray(rng.randbytes(MEM)) for _ in range(2)]
    for m in init:                              # empty queues: a written entry is non-zero
        m[NQ:NQ + VPIDS * PAGE_BYTES] = bytes(VPIDS * PAGE_BYTES)
    gates = [Gates(), Gates()]
    local = gates[0].register(ORIGIN_VPID, LOCAL, write=0)      # readable only: the get's write faults
    fields = {"command": RmaCommand.GET.value, "req_notify": 1, "cpl_notify": 0, "rsp_notify": 0,
              "cache_line": 0, "vpid": ORIGIN_VPID, "irq": 0}
    desc = descriptor(command=RmaCommand.GET, dst_node=1, dst_vpid=1, local=local, remote=REMOTE, units=4)

    mems, _, shared = simulate(rng, [bytes(x) for x in init], gates, [(0, fields, desc)], ready_p=0.7, reorder=True)
    models = [RmaNodeModel(node=n, memory=FlatMemory(bytes(init[n])), vpids=VPIDS, nq_size=NQ_SIZE, lock_base=LOCKS,
                           lock_size=VPIDS * PAGE_BYTES, queues=queues_for(), translate=gates[n].atu.translate)
              for n in range(2)]
    RmaNetworkModel(models).post(0, ORIGIN_VPID, fields, desc)

    for name, ms, faults in (("rtl", mems, shared["counts"][0]["atu_fault"]),
                             ("model", [mod.memory for mod in models], models[0].counters["atu_fault"])):
        written = [(n, v, x) for n in range(2) for v in range(VPIDS) for x in notes_of(ms[n], v)]
        assert len(written) == 1, (name, written)
        n, v, note = written[0]
        assert (n, v) == (0, ORIGIN_VPID), (name, written)
        assert (note["cls"], note["command"], note["error"]) == (RmaNotifyClass.COMPLETER.value, RmaCommand.GET.value,
                                                                 RmaError.ATU_FAULT.value), (name, note)
        assert note["value"] == local and note["size_m1"] == 3, (name, note)
        assert faults == 1, (name, faults)
        for k in range(2):          # no data written anywhere
            got = bytearray(ms[k].b)
            got[NQ:NQ + VPIDS * PAGE_BYTES] = init[k][NQ:NQ + VPIDS * PAGE_BYTES]
            assert got == init[k], (name, k)
