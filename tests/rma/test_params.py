# amaranth: UnusedElaboratable=no
"""RMA blocks reject bad parameters with exact messages."""

import pytest

from rtl.rma.ats_client import RmaAtsClient
from rtl.rma.reader import RmaReader
from rtl.rma.rma import Rma
from rtl.rma.rx import RmaRx
from rtl.rma.txarb import RmaTxArbiter

BASE = 0x8000_0100_0000


@pytest.mark.parametrize("make, msg", [
    (lambda: Rma(vpids=64, window_base=BASE, htax_port=3, host_port=0, atu_port=5),
     "vpids must be between 2 and 32, not 64"),
    (lambda: Rma(vpids=12, window_base=BASE, htax_port=3, host_port=0, atu_port=5),
     "vpids must be a power of two, not 12"),
    (lambda: Rma(vpids=32, window_base=BASE, htax_port=3, host_port=3, atu_port=5),
     "host_port must differ from htax_port, both are 3"),
    (lambda: Rma(vpids=32, window_base=BASE + 0x1000, htax_port=3, host_port=0, atu_port=5),
     "window_base must be aligned to 0x40000, not 0x800001001000"),
    (lambda: Rma(vpids=32, window_base=BASE, htax_port=16, host_port=0, atu_port=5),
     "htax_port must be between 0 and 15, not 16"),
    (lambda: RmaReader(slots=3, tag_base=0, htax_port=3, host_port=0), "slots must be a power of two, not 3"),
    (lambda: RmaReader(slots=4, tag_base=6, htax_port=3, host_port=0), "tag_base must be a multiple of slots, not 6"),
    (lambda: RmaReader(slots=4, tag_base=30, htax_port=3, host_port=0), "tag_base must be between 0 and 28, not 30"),
    (lambda: Rma(vpids=32, window_base=BASE, htax_port=3, host_port=0, atu_port=0),
     "atu_port must differ from htax_port and host_port, not 0"),
    (lambda: Rma(vpids=32, window_base=BASE, htax_port=3, host_port=0, atu_port=17),
     "atu_port must be between 0 and 15, not 17"),
    (lambda: RmaAtsClient(clients=5, htax_port=3, atu_port=2), "clients must be between 1 and 4, not 5"),
    (lambda: RmaTxArbiter(sources=9), "sources must be between 1 and 8, not 9"),
    (lambda: RmaRx(vpid_bits=5, window_base=BASE, tag_split=0), "tag_split must be between 1 and 31, not 0"),
])
def test_parameter_errors(make, msg):
    with pytest.raises(ValueError) as e:
        make()
    assert str(e.value) == msg
