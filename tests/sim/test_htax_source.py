"""The HTAX source model's queue discipline (``sim/htax_bus.py``), without a simulator.

A host source (HyperTransport order, PassPW, offer only on a ready VC, withdraw what the sink did not
take) may let a response pass an older non-posted read; a withdrawn response must go back behind that
read.  Put back at the head instead, a read starved for good when the switch's ready mask alternated
between "responses only" (while it took a response's data beat) and "all but responses": the ATU
flush-storm soak, seed 121421370, saw a register read unanswered for 20,000 cycles.
"""

from types import SimpleNamespace

from rtl.common.htax import HtaxCmd, HtaxVC
from sim.htax_bus import HtaxSource, Order
from sim.htax_packet import HtaxPacket


def _source(order):
    dut = SimpleNamespace(**{f"p__{n}": SimpleNamespace(value=0) for n in ("valid", "payload", "ready", "ready2")})
    src = HtaxSource(dut, "p", None, period_ns=6.4, order=order, pass_pw=True, wait_ready=True)
    src.withdraw = True
    return src


def _rsp(tag):
    return HtaxPacket(HtaxCmd.RESPONSE, src=0, dst=2, tag=tag, addr=8 * tag, length=1, first_be=0xFF, data=[tag])


def _mask(*vcs):
    return sum(1 << vc.value for vc in vcs)


def _tags(src):
    return [item[2] for item in src._queue]


def test_withdrawn_packet_goes_back_behind_older_packets():
    src = _source(Order.HT)
    read = HtaxPacket(HtaxCmd.READ, src=0, dst=1, tag=24, addr=0x800000010000, length=1, first_be=0xFF)
    for tag, pkt in (("rsp a", _rsp(1)), ("read", read), ("rsp b", _rsp(2))):
        src.send(pkt, tag=tag)
    assert src._pick(_mask(HtaxVC.RESPONSE))[2] == "rsp a"          # taken by the sink
    # the sink takes only responses in this cycle: the younger response passes the read ...
    item = src._pick(_mask(HtaxVC.RESPONSE))
    assert item[2] == "rsp b"
    src._requeue(item)                                              # ... and is not taken: withdrawn
    assert _tags(src) == ["read", "rsp b"]
    # every VC but the responses' ready: the read goes first
    assert src._pick(_mask(HtaxVC.POSTED, HtaxVC.NONPOSTED, HtaxVC.ATS))[2] == "read"
    assert src._pick(_mask(HtaxVC.RESPONSE))[2] == "rsp b"


def test_withdrawn_packet_in_vc_order_stays_first_of_its_vc():
    src = _source(Order.VC)
    for tag in (1, 2):
        src.send(_rsp(tag), tag=tag)
    item = src._pick(_mask(HtaxVC.RESPONSE))
    assert item[2] == 1
    src._requeue(item)
    assert [i[2] for i in src._vcq[HtaxVC.RESPONSE.value]] == [1, 2] and not src._queue
