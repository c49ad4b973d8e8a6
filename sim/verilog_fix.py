"""Make every combinational process of Amaranth's Verilog run at time zero in event-driven simulators.

Amaranth (``proc -nomux`` + ``write_verilog``) emits a combinational assignment that no ``If``/``Switch``
encloses as its own single-statement process, e.g. ``always @*  x[7:4] = 4'h1;``.  Yosys gives the
larger processes a trigger register (``reg \\$auto$verilog_backend...  = 0;`` read by ``if (...) begin
end``) so they run once at time zero, but not these: a process whose right-hand side is a constant has
an empty sensitivity list and never runs, so the bits keep their initial value in Verilator and Icarus
(synthesis is unaffected).  Amaranth issue #1629 reports the same class of bug.  Seen here as a header
field of a packet (``length``, ``first_be``) reading 0 in Verilog while the Amaranth simulator has the
constant.

:func:`trigger_processes` rewrites each such process as ``always @* begin if (<trigger>) begin end
<statement> end`` with a trigger register declared once per module, the same construction Yosys uses.
"""

import re

__all__ = ["trigger_processes", "TRIGGER"]

TRIGGER = r"\extoll$process_trigger "          # an escaped identifier ends at the space
_SINGLE = re.compile(r"^(\s*)always @\*\n(\s*)(?!begin\b)([^\n]*;)\n", re.M)
_MODULE = re.compile(r"^module [^;]*;\n", re.M)


def _module(body):
    if not _SINGLE.search(body):
        return body
    body = _SINGLE.sub(lambda m: f"{m[1]}always @* begin\n{m[2]}if ({TRIGGER}) begin end\n{m[2]}{m[3]}\n"
                                 f"{m[1]}end\n", body)
    head = _MODULE.match(body)
    return body[:head.end()] + f"  reg {TRIGGER} = 0;\n" + body[head.end():]


def trigger_processes(text):
    """``text`` (Verilog from :func:`amaranth.back.verilog.convert`) with every single-statement
    ``always @*`` process given a time-zero trigger."""
    parts = re.split(r"(?=^module )", text, flags=re.M)
    return "".join(_module(p) if p.startswith("module ") else p for p in parts)
