"""The cocotb runner's own parameter checks (no simulator needed)."""

import pytest

from sim.runner import run_cocotb


@pytest.mark.parametrize("opt", ["-O9", "O2", "-Ofast", "-O2 -g"])
def test_bad_cxx_opt(opt):
    # Rejected before anything is elaborated or compiled (the component is never looked at).
    with pytest.raises(ValueError, match="cxx_opt"):
        run_cocotb(None, name="never_built", test_module="tests.sim.tb_host_selftest", cxx_opt=opt)
