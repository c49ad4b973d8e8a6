"""Random all-to-all traffic on Verilator, swept over port counts, for ``Htax`` and ``HtaxPipelined``
(cocotb: tb_htax_random.py).

The 5-port pipelined case is the default configuration (the 8-port one runs in ``make soak``).  Each
design is compiled once and cached under ``build/sim``; the 8- and 16-port switches take about two
minutes to compile and run (``-O0``, see ``sim.runner.CXX_OPT``) and are collected first; the long runs
are soak tests.
"""

import pytest

from rtl.htax import Htax, HtaxPipelined
from sim.runner import run_cocotb

# (ports, reserved slots per VC, shared slots, packets)
# the direct switch is the optional variant: its 4-, 8- and 16-port random runs are in ``make soak`` only
# (tests/htax/test_htax_directed.py keeps a 4-port direct switch in the default suite)
CASES = [(2, 1, 1, 400), pytest.param(4, 2, 3, 600, marks=pytest.mark.soak),
         pytest.param(8, 1, 12, 800, marks=pytest.mark.soak),
         pytest.param(16, 1, 0, 800, marks=pytest.mark.soak),
         pytest.param(16, 1, 0, 4000, marks=pytest.mark.soak),
         pytest.param(8, 1, 12, 6000, marks=pytest.mark.soak)]
# the pipelined switch: (ports, reserved slots per VC, shared slots, out_depth, packets); the 4-port
# design is the one of test_htax_directed.py (a shared build)
PIPELINED = [(2, 1, 0, 9, 400), (4, 1, 3, 32, 600),
             pytest.param(5, 1, 12, 16, 800, marks=pytest.mark.long_build),
             pytest.param(16, 1, 0, 16, 4000, marks=pytest.mark.soak),
             pytest.param(8, 1, 12, 16, 6000, marks=pytest.mark.soak)]


@pytest.mark.cocotb
@pytest.mark.parametrize("ports,slots,shared,packets", CASES)
def test_random_traffic(ports, slots, shared, packets):
    run_cocotb(Htax(ports=ports, slots_per_vc=slots, shared_slots=shared),
               name=f"htax_p{ports}_s{slots}_sh{shared}",
               test_module="tests.htax.tb_htax_random", params={"ports": ports, "packets": packets})


@pytest.mark.cocotb
@pytest.mark.parametrize("ports,slots,shared,depth,packets", PIPELINED)
def test_random_traffic_pipelined(ports, slots, shared, depth, packets):
    run_cocotb(HtaxPipelined(ports=ports, slots_per_vc=slots, shared_slots=shared, out_depth=depth),
               name=f"htaxp_p{ports}_s{slots}_sh{shared}_d{depth}",
               test_module="tests.htax.tb_htax_random", params={"ports": ports, "packets": packets})
