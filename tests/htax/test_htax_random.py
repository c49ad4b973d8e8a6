"""Random all-to-all traffic on Verilator, swept over port counts (cocotb: tb_htax_random.py)."""

import pytest

from rtl.htax import Htax
from sim.runner import run_cocotb


@pytest.mark.cocotb
@pytest.mark.parametrize("ports,slots,packets", [(2, 2, 400), (4, 4, 600), (8, 2, 800), (16, 1, 800)])
def test_random_traffic(ports, slots, packets):
    run_cocotb(Htax(ports=ports, slots_per_vc=slots), name=f"htax_p{ports}_s{slots}",
               test_module="tests.htax.tb_htax_random", params={"ports": ports, "packets": packets})
