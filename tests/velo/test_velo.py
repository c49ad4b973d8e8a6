# amaranth: UnusedElaboratable=no
"""VELO: parameter checks and the cocotb system testbench ``tb_velo.py`` (Verilator)."""

import pytest

from rtl.velo import Velo, VeloRequester
from rtl.velo.system import VeloNetSystem, VeloSystem
from sim.runner import run_cocotb
from tests.velo.config import small_config

BASE = 0x8000_1000_0000


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(vpids=64), ValueError, "vpids must be between 2 and 32, not 64"),
    (dict(vpids=24), ValueError, "vpids must be a power of two, not 24"),
    (dict(nodes=1 << 19), ValueError, "nodes must be between 2 and 262144, not 524288"),
    (dict(window_base=-1), ValueError, "window_base must be at least 0, not -1"),
    (dict(host_port=6), ValueError, "host_port must differ from htax_port, both are 6"),
    (dict(htax_port=16), ValueError, "htax_port must be between 0 and 15, not 16"),
])
def test_parameter_errors(kw, exc, msg):
    args = dict(vpids=32, nodes=64, window_base=BASE, htax_port=6, host_port=0) | kw
    with pytest.raises(exc) as e:
        Velo(**args)
    assert str(e.value) == msg


def test_window_alignment():
    with pytest.raises(ValueError, match=r"^window_base must be aligned to 0x10000000, not 0x1000$"):
        VeloRequester(vpid_bits=5, node_bits=6, window_base=0x1000)


@pytest.mark.parametrize("testcase, nodes, params", [
    ("random_messages", 1, {"messages": 80}),
    ("random_messages", 2, {"messages": 80, "nodes": 2, "ready_p": 0.5}),
    ("splits_everywhere", 1, {}),
    ("ring_full", 1, {}),
    ("bad_input", 1, {}),
    ("interrupt", 1, {}),
    ("source_vpid_from_page", 1, {}),
    ("split_half_lost", 1, {}),
])
def test_velo_cocotb(testcase, nodes, params):
    run_cocotb(VeloSystem(small_config(), nodes=nodes), name=f"velo_system{nodes}", test_module="tests.velo.tb_velo",
               testcase=testcase, params=params)


def test_velo_no_route():
    """Stores to nodes without a route through the requester and a network port: dropped and counted
    at the port, nothing lands, stores to a routed node still arrive."""
    run_cocotb(VeloNetSystem(small_config()), name="velo_netport", test_module="tests.velo.tb_velo_netport",
               testcase="no_route")
