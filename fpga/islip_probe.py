"""How fast can one packet-mode iSLIP round be on ECP5?  The clock ceiling of the HTAX's 2-cycle design.

The HTAX (``rtl/htax/switch.py``) gets its 2-cycle latency by running a whole iSLIP round (every
free output grants one requesting input, every input accepts one granting output, pointers move on
acceptance) in the cycle after a header is stored.  This probe synthesises that round and nothing
else, with the switch's own arbiter (:func:`rtl.htax.rr.round_robin`): registered request bits in
(``req[i][o]``), the grant and accept arbiters, the pointer updates, registered accept bits out.  No
virtual channels, no buffers, no read engines, no sink handshake; so its Fmax bounds from above what
any switch that matches in one cycle can reach.  ``--stages 2`` registers the grants between the
two arbiters (a pipelined match).

Run: ``python -m fpga.islip_probe [--ports 8] [--stages 1|2] [--seeds 1 2 3]``; it uses the same
ECP5 flow as ``make report`` (LFE5UM5G-85F, speed 8, out of context) and prints one line per seed.
Results are in docs/htax.md ("Clock frequency").
"""

import argparse

from amaranth.back import verilog
from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.config import ROOT
from rtl.htax.rr import one_hot_index, round_robin

from .report import ecp5


class IslipRound(wiring.Component):
    """One iSLIP iteration between ``ports`` inputs and outputs, requests and accepts registered.

    ``req_in`` bit ``i * ports + o``: input ``i`` requests output ``o``; ``acc_out`` the same bit: the
    match.
    """

    def __init__(self, *, ports, stages):
        if stages not in (1, 2):
            raise ValueError(f"stages must be 1 or 2, not {stages!r}")
        self._n, self._stages = ports, stages
        super().__init__({"req_in": In(ports * ports), "acc_out": Out(ports * ports)})

    def elaborate(self, platform):
        m = Module()
        n = self._n
        req = Signal(n * n)
        m.d.sync += req.eq(self.req_in)
        gptr = [Signal(range(n), name=f"o{o}_gptr") for o in range(n)]
        aptr = [Signal(range(n), name=f"i{i}_aptr") for i in range(n)]
        grants = [round_robin(m, Cat(req[i * n + o] for i in range(n)), gptr[o], name=f"o{o}_grant")
                  for o in range(n)]
        if self._stages == 2:
            registered = [Signal(n, name=f"o{o}_grant_q") for o in range(n)]
            m.d.sync += [r.eq(g) for r, g in zip(registered, grants, strict=True)]
            grants = registered
        accepts = []
        for i in range(n):
            a = round_robin(m, Cat(grants[o][i] for o in range(n)), aptr[i], name=f"i{i}_accept")
            index = one_hot_index(m, a, name=f"i{i}_accept_idx")
            with m.If(a.any()):
                m.d.sync += aptr[i].eq(Mux(index == n - 1, 0, index + 1))
            accepts.append(a)
        for o in range(n):
            acc = Cat(a[o] for a in accepts)
            index = one_hot_index(m, acc, name=f"o{o}_accepted_idx")
            with m.If(acc.any()):
                m.d.sync += gptr[o].eq(Mux(index == n - 1, 0, index + 1))
        out = Signal(n * n)
        m.d.sync += out.eq(Cat(a[o] for i, a in enumerate(accepts) for o in range(n)))
        m.d.comb += self.acc_out.eq(out)
        return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--stages", type=int, default=1, choices=(1, 2))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    args = ap.parse_args(argv)
    name = f"islip_p{args.ports}_s{args.stages}"
    workdir = ROOT / "build" / "reports" / "probe" / name
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / f"{name}.v").write_text(
        verilog.convert(IslipRound(ports=args.ports, stages=args.stages), name=name))
    for seed in args.seeds:
        r = ecp5(name, workdir, 200.0, seed)
        print(f"{name} seed {seed}: {r['ecp5_fmax_mhz']} MHz, {r['ecp5_lut4']} LUT4, "
              f"{r['ecp5_ccu2c']} CCU2C, {r['ecp5_ff']} FF", flush=True)


if __name__ == "__main__":
    main()
