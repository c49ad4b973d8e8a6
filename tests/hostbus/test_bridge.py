"""The host bus bridge (:mod:`rtl.hostbus`) on its own, against cocotbext-axi and the HTAX bus models."""

# amaranth: UnusedElaboratable=no

import pytest

from rtl.config import load
from sim.runner import run_cocotb
from sim.tops.hostbus import HostbusTop

pytestmark = pytest.mark.cocotb


@pytest.mark.parametrize("stall", [0.0, 0.3, 0.8])
def test_dma(stall):
    run_cocotb(HostbusTop(load()), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="dma_random",
               params=dict(stall=stall, ops=400))


@pytest.mark.parametrize("stall", [0.0, 0.5])
def test_cpu(stall):
    run_cocotb(HostbusTop(load()), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="cpu_access",
               params=dict(stall=stall, ops=80))


def test_bench_quick(tmp_path):
    """``bench/hostbus.py``'s testbench with fewer reads: the bridge's latencies are the ones
    ``docs/hostbus.md`` states, and the DMA read rate at t_dm is bound by the HTAX header beat only."""
    import json
    out = tmp_path / "hostbus.json"
    run_cocotb(HostbusTop(load()), name="hostbus", test_module="tests.hostbus.tb_bridge", testcase="bench",
               params={"out": str(out), "reads": 200})
    res = json.loads(out.read_text())
    assert res["store_8b_wlast_to_header_cycles"] <= 2 and res["store_64b_wlast_to_header_cycles"] <= 2, res
    assert res["read_header_to_arvalid_cycles"] <= 2, res
    assert 0.85 <= res["dma_read_words_per_cycle"] <= 0.889, res
