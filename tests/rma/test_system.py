# amaranth: UnusedElaboratable=no
"""RMA in its system: register-file wiring checks and the cocotb system testbench ``tb_system.py``
(Verilator): host models, drivers, two nodes cross-connected or one node to itself."""

import pytest

from sim.runner import run_cocotb
from sim.tops.configs import rma_config
from sim.tops.rma import RmaSystem


def test_system_port_checks():
    cfg = rma_config()
    cfg["atu"]["fu_ports"] = [2, 3]
    with pytest.raises(ValueError, match=r"^\[atu\] fu_ports must be \[3\]"):
        RmaSystem(cfg)
    cfg = rma_config()
    cfg["rma"]["htax_port"] = 2
    with pytest.raises(ValueError, match="must be distinct"):
        RmaSystem(cfg)


@pytest.mark.long_build
@pytest.mark.parametrize("testcase, nodes, params", [
    ("random_ops", 2, {"nodes": 2, "ops": 32, "ready_p": 0.6}),
    ("lock_contention", 1, {}),
    ("bad_input", 2, {}),
])
def test_rma_system_cocotb(testcase, nodes, params):
    run_cocotb(RmaSystem(rma_config(), nodes=nodes), name=f"rma_system{nodes}",
               test_module="tests.rma.tb_system", testcase=testcase, params=params)


@pytest.mark.soak
def test_rma_system_soak():
    """`make soak`: 300 random operations between the two nodes, 50 % host backpressure."""
    run_cocotb(RmaSystem(rma_config(), nodes=2), name="rma_system2", test_module="tests.rma.tb_system",
               testcase="random_ops", params={"nodes": 2, "ops": 300, "ready_p": 0.5})
