"""The cocotb runner's own parameter checks (no simulator needed)."""

import os

import pytest

from sim.runner import run_cocotb


@pytest.mark.parametrize("opt", ["-O9", "O2", "-Ofast", "-O2 -g"])
def test_bad_cxx_opt(opt):
    # Rejected before anything is elaborated or compiled (the component is never looked at).
    with pytest.raises(ValueError, match="cxx_opt"):
        run_cocotb(None, name="never_built", test_module="tests.sim.tb_host_selftest", cxx_opt=opt)


@pytest.mark.parametrize("testcase", [[], ["smoke", ""], ("smoke", 3)])
def test_bad_testcase_list(testcase):
    with pytest.raises(ValueError, match=r"^testcase must be a name or a non-empty list of names, not "):
        run_cocotb(None, name="never_built", test_module="tests.sim.tb_host_selftest", testcase=testcase)


@pytest.mark.parametrize("before", [None, "-j2"])
def test_verilator_make_scoped(monkeypatch, before):
    # The Verilator build's make variables hold inside the block only; MAKEFLAGS is restored after,
    # also when the build raises.
    from sim.toolchain import verilator_make
    if before is None:
        monkeypatch.delenv("MAKEFLAGS", raising=False)
    else:
        monkeypatch.setenv("MAKEFLAGS", before)
    with pytest.raises(RuntimeError, match="build failed"):
        with verilator_make("-O1"):
            flags = os.environ["MAKEFLAGS"].split()
            if before:
                assert flags[0] == before
            assert "CFG_CXXFLAGS_PCH_I=-include" in flags and "OPT_FAST=-O1" in flags
            raise RuntimeError("build failed")
    assert os.environ.get("MAKEFLAGS") == before


@pytest.mark.parametrize("public", [0, "-1", "some", "2x"])
def test_bad_public(public):
    with pytest.raises(ValueError, match=r"^public \(EXTOLL_PUBLIC\) must be 'all' or a depth of at least 1, not "):
        run_cocotb(None, name="never_built", test_module="tests.sim.tb_host_selftest", public=public)


def test_visibility_args():
    from sim.runner import visibility_args
    assert visibility_args("all") == []
    assert visibility_args(2) == ["--no-public-flat-rw", "--public-depth", "2"]
