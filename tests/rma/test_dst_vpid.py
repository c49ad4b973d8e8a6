"""An operation whose destination VPID is beyond ``vpids`` (``docs/rma.md``, "Requester errors" and
"Targets"): ``vpids`` is 8, the descriptor's 5-bit field names VPID 12.

A put, an immediate put and a notification put end at the requester: nothing is sent, a requester
notification with ``ATU_FAULT`` goes to the origin VPID's queue whatever the modifier bits say, and
``req_error`` counts.  A get and a lock go to the target, whose responder refuses them: the origin's
completer writes a ``DISABLED`` notification and the target counts ``rsp_refused``.  Each command runs
alone on the two cross-connected units of ``test_rma.py`` and, separately, on
:class:`sim.rma_model.RmaNetworkModel`; both must give the outcome stated above (the expected values
come from the rule, not from either run)."""

import random

import pytest

from rtl.rma.formats import PAGE_BYTES, RmaCommand, RmaError, RmaNotifyClass
from sim.rma_model import RmaNetworkModel, RmaNodeModel, descriptor
from tests.rma.test_rma import LOCKS, MEM, NQ, NQ_SIZE, VPIDS, FlatMemory, Gates, notes_of, queues_for, simulate

BEYOND = 12                     # < 32 (the field), >= VPIDS
ORIGIN_VPID = 1                 # physical, enabled
LOCAL, REMOTE = 0x4_0000, 0x4_0000

CASES = {
    # command: (notification class at the origin, its error, (node, counter) that counts it)
    RmaCommand.PUT: (RmaNotifyClass.REQUESTER, RmaError.ATU_FAULT, (0, "req_error")),
    RmaCommand.IMMEDIATE_PUT: (RmaNotifyClass.REQUESTER, RmaError.ATU_FAULT, (0, "req_error")),
    RmaCommand.NOTIFICATION_PUT: (RmaNotifyClass.REQUESTER, RmaError.ATU_FAULT, (0, "req_error")),
    RmaCommand.GET: (RmaNotifyClass.COMPLETER, RmaError.DISABLED, (1, "rsp_refused")),
    RmaCommand.LOCK: (RmaNotifyClass.COMPLETER, RmaError.DISABLED, (1, "rsp_refused")),
}
#: model counter names of the RTL counters checked here
MODEL_COUNTER = {"req_error": "req_errors", "req_put": "req_put", "req_get": "req_get", "cpl_put": "cpl_put",
                 "rsp_refused": "cpl_dropped"}


def operation(cmd):
    # no notification bit asked for: the error notification is written anyway
    fields = {"command": cmd.value, "req_notify": 0, "cpl_notify": 0, "rsp_notify": 0, "cache_line": 0,
              "vpid": ORIGIN_VPID, "irq": 0}
    desc = descriptor(command=cmd, dst_node=1, dst_vpid=BEYOND, local=LOCAL, remote=REMOTE, units=4,
                      payload=0x1234_5678_9ABC_DEF0, lock=3, compare=100, add=1)
    return fields, desc


def initial(seed):
    rng = random.Random(seed)
    init = [bytearray(rng.randbytes(MEM)) for _ in range(2)]
    for m in init:                              # empty queues: a written entry is non-zero
        m[NQ:NQ + VPIDS * PAGE_BYTES] = bytes(VPIDS * PAGE_BYTES)
    return init


def check(cmd, mems, init, counts):
    """The outcome the rule states, on memories (RTL or model) and counters by RTL name."""
    cls, error, (node, counter) = CASES[cmd]
    notes = [notes_of(mems[n], v) for n in range(2) for v in range(VPIDS)]
    written = [(n, v, x) for n in range(2) for v in range(VPIDS) for x in notes[n * VPIDS + v]]
    assert len(written) == 1, written
    n, v, note = written[0]
    assert (n, v) == (0, ORIGIN_VPID), written
    assert (note["cls"], note["command"], note["error"]) == (cls.value, cmd.value, error.value), note
    assert (note["peer_node"], note["peer_vpid"]) == (1, BEYOND), note
    # nothing but that one queue entry was written on either node (no data, no lock write-back)
    for k in range(2):
        got = bytearray(mems[k].b)
        got[NQ:NQ + VPIDS * PAGE_BYTES] = init[k][NQ:NQ + VPIDS * PAGE_BYTES]
        assert got == init[k], f"node {k}: memory written"
    assert counts[node][counter] == 1, counts
    assert counts[0]["req_put"] == 0 and counts[1]["cpl_put"] == 0, counts


@pytest.mark.parametrize("cmd", list(CASES), ids=[c.name.lower() for c in CASES])
def test_destination_vpid_beyond_vpids(cmd):
    seed = random.randrange(1 << 31)
    print(f"seed {seed}")
    fields, desc = operation(cmd)
    init = initial(seed)
    rng = random.Random(seed)
    mems, _, shared = simulate(rng, [bytes(x) for x in init], [Gates(), Gates()], [(0, fields, desc)], ready_p=0.7,
                               reorder=True)
    check(cmd, mems, init, shared["counts"])

    models = [RmaNodeModel(node=n, memory=FlatMemory(bytes(init[n])), vpids=VPIDS, nq_size=NQ_SIZE, lock_base=LOCKS,
                           lock_size=VPIDS * PAGE_BYTES, queues=queues_for()) for n in range(2)]
    RmaNetworkModel(models).post(0, ORIGIN_VPID, fields, desc)
    counts = [{k: mod.counters[v] for k, v in MODEL_COUNTER.items()} for mod in models]
    check(cmd, [mod.memory for mod in models], init, counts)
