import sys

from cocotb_tools.runner import get_results, get_runner

runner = get_runner("verilator")
runner.build(sources=["link.v", "pair.v"], hdl_toplevel="pair", build_dir="sim_build",
             build_args=["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-CASEINCOMPLETE", "-Wno-PINMISSING"])
results = runner.test(hdl_toplevel="pair", test_module="test_pair", build_dir="sim_build")
sys.exit(1 if get_results(results)[1] else 0)      # runner.test does not raise when a test fails
