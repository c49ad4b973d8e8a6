"""How fast can a crossbar decide in one cycle on ECP5?  The clock ceiling of the HTAX's 2-cycle design.

The HTAX (``rtl/htax/switch.py``) gets its 2-cycle latency by deciding which stored packet every
output takes next in the cycle after a header is stored.  These probes synthesise that decision and
nothing else, with the switch's own arbiter (:func:`rtl.htax.rr.round_robin`), registers on both
sides; so their Fmax bounds from above what any switch deciding that way can reach:

``islip``
    One packet-mode iSLIP round (the switch's matching): registered request bits ``req[i][o]`` in,
    every output grants one requesting input, every input accepts one granting output, pointers move
    on acceptance, registered matches out.  No virtual channels, buffers, read engines or sink
    handshake.  ``--stages 2`` registers the grants between the two arbiters (a pipelined match).
``output``
    The decision of one output in a switch without matching, where every output can read every
    input's buffer (a buffer copy per input and output): per input a round-robin among the VCs whose
    queue for this output is not empty (write pointers from the inputs, registered, against this
    output's read pointers) and the sink is ready for, a round-robin among the inputs, the head slot
    of the chosen queue read from a per-input LUT-RAM FIFO of slot numbers, and the read address and
    pointers registered.
``datapath``
    The data path of that organisation, without any decision logic: every input writes each word
    (registered address, data and enable) into its ``ports`` block-RAM copies (one per output, 272 x
    64 bits: 17 slots of 16 words), every output reads its copy of one input (registered address and
    input number) and registers the word it selects.  This is the block-RAM cost and the wiring of
    the copies.  ``--copies 1``: the data path of today's switch for comparison, one buffer per input
    read at an address of its own, every output selecting among the inputs' words.  ``--read-reg``:
    the words are registered at each buffer before the outputs select (one more cycle).

Run: ``python -m fpga.match_probe [--probe islip|output|datapath] [--ports 8] [--stages 1|2]
[--copies N|1] [--read-reg] [--seeds 1 2 3]``;
it uses the same ECP5 flow as ``make report`` (LFE5UM5G-85F, speed 8, out of context) and prints one
line per seed.  Results are in docs/htax.md ("Clock frequency").
"""

import argparse

from amaranth.hdl import Array, Cat, Const, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from rtl.htax.rr import one_hot_index, past, round_robin
from sim.runner import emit_verilog

from .report import REPORTS, ecp5


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
                m.d.sync += aptr[i].eq(past(index, n))
            accepts.append(a)
        for o in range(n):
            acc = Cat(a[o] for a in accepts)
            index = one_hot_index(m, acc, name=f"o{o}_accepted_idx")
            with m.If(acc.any()):
                m.d.sync += gptr[o].eq(past(index, n))
        out = Signal(n * n)
        m.d.sync += out.eq(Cat(a[o] for i, a in enumerate(accepts) for o in range(n)))
        m.d.comb += self.acc_out.eq(out)
        return m


class OutputDecision(wiring.Component):
    """One output's one-cycle decision among ``ports`` inputs x 4 VCs (probe ``output``).

    ``wptr_in``: the inputs' write pointers per (input, VC) queue for this output; ``fifo_*``: the
    inputs' writes into their FIFOs of slot numbers; ``ready``: the sink's per-VC ready; ``addr_out``:
    the registered read address (slot, word 0) into the chosen input's buffer copy.
    """

    VCS = 4

    def __init__(self, *, ports, depth=32):
        self._n, self._depth = ports, depth
        self._pw = (depth - 1).bit_length()
        self._sw = (depth - 1).bit_length()
        super().__init__({
            "wptr_in": In(ports * self.VCS * self._pw),
            "fifo_en": In(ports), "fifo_addr": In((self.VCS * depth - 1).bit_length()),
            "fifo_data": In(self._sw),
            "ready": In(self.VCS),
            "addr_out": Out(self._sw + 4), "input_out": Out(range(ports)),
        })

    def elaborate(self, platform):
        m = Module()
        n, nv, pw = self._n, self.VCS, self._pw
        wptr = Signal(len(self.wptr_in))
        ready = Signal(nv)
        m.d.sync += [wptr.eq(self.wptr_in), ready.eq(self.ready)]
        rptr = [[Signal(pw, name=f"i{i}_vc{v}_rptr") for v in range(nv)] for i in range(n)]
        vc_ptr = Signal(2)
        gptr = Signal(range(n))
        heads, requests, vc_choice = [], [], []
        for i in range(n):
            fifo = memory.Memory(shape=self._sw, depth=nv * self._depth, init=[])
            m.submodules[f"i{i}_fifo"] = fifo
            wp = fifo.write_port()
            rp = fifo.read_port(domain="comb")
            m.d.comb += [wp.en.eq(self.fifo_en[i]), wp.addr.eq(self.fifo_addr), wp.data.eq(self.fifo_data)]
            has = Signal(nv, name=f"i{i}_has")
            m.d.comb += has.eq(Cat(wptr[(i * nv + v) * pw:][:pw] != rptr[i][v] for v in range(nv)) & ready)
            vc = one_hot_index(m, round_robin(m, has, vc_ptr, name=f"i{i}_vcrr"), name=f"i{i}_vc")
            m.d.comb += rp.addr.eq(Cat(Array(rptr[i])[vc], vc))
            heads.append(rp.data)
            requests.append(has.any())
            vc_choice.append(vc)
        grant = round_robin(m, Cat(requests), gptr, name="in_rr")
        index = one_hot_index(m, grant, name="in_idx")
        vc = Array(vc_choice)[index]
        addr = Signal(len(self.addr_out))
        chosen = Signal(range(n))
        with m.If(grant.any()):
            m.d.sync += [addr.eq(Cat(Const(0, 4), Array(heads)[index])), chosen.eq(index),
                         gptr.eq(past(index, n)), vc_ptr.eq(vc + 1)]
            for i in range(n):
                for v in range(nv):
                    with m.If((index == i) & (vc == v)):
                        m.d.sync += rptr[i][v].eq(rptr[i][v] + 1)
        m.d.comb += [self.addr_out.eq(addr), self.input_out.eq(chosen)]
        return m


class CopyDatapath(wiring.Component):
    """Buffer copies per input and output, written together, each read by its output (probe ``datapath``).

    ``per_output=False``: one buffer per input instead, read at ``r_addr`` of that input.
    """

    def __init__(self, *, ports, per_output=True, read_reg=False, depth=272):
        self._n, self._depth, self._per_output, self._read_reg = ports, depth, per_output, read_reg
        aw = (depth - 1).bit_length()
        self._aw = aw
        super().__init__({
            "w_en": In(ports), "w_addr": In(ports * aw), "w_data": In(ports * 64),
            "r_addr": In(ports * aw), "r_src": In(ports * 4), "out": Out(ports * 64),
        })

    def elaborate(self, platform):
        m = Module()
        n, aw = self._n, self._aw
        w_en, w_addr, w_data = Signal(n), Signal(n * aw), Signal(n * 64)
        r_addr, r_src = Signal(n * aw), Signal(n * 4)
        m.d.sync += [w_en.eq(self.w_en), w_addr.eq(self.w_addr), w_data.eq(self.w_data),
                     r_addr.eq(self.r_addr), r_src.eq(self.r_src)]

        def buffer(i, reader):
            copy = memory.Memory(shape=64, depth=self._depth, init=[])
            m.submodules[f"i{i}_r{reader}_copy"] = copy
            wp = copy.write_port()
            rp = copy.read_port(domain="sync")
            m.d.comb += [wp.en.eq(w_en[i]), wp.addr.eq(w_addr[i * aw:][:aw]),
                         wp.data.eq(w_data[i * 64:][:64]), rp.addr.eq(r_addr[reader * aw:][:aw])]
            if not self._read_reg:
                return rp.data
            word = Signal(64, name=f"i{i}_r{reader}_word")
            m.d.sync += word.eq(rp.data)
            return word

        shared = None if self._per_output else [buffer(i, i) for i in range(n)]
        outs = []
        for o in range(n):
            words = [buffer(i, o) for i in range(n)] if self._per_output else shared
            src = Signal(range(n), name=f"o{o}_src")
            m.d.sync += src.eq(r_src[o * 4:][:len(src)])    # the input read in the previous cycle
            word = Signal(64, name=f"o{o}_word")
            m.d.sync += word.eq(Array(words)[src])
            outs.append(word)
        m.d.comb += self.out.eq(Cat(outs))
        return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", default="islip", choices=("islip", "output", "datapath"))
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--stages", type=int, default=1, choices=(1, 2))
    ap.add_argument("--copies", default="N", choices=("N", "1"),
                    help="datapath: a buffer copy per input and output (N) or one per input (1)")
    ap.add_argument("--read-reg", action="store_true",
                    help="datapath: register each buffer's word before the outputs select")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    args = ap.parse_args(argv)
    if args.probe == "islip":
        name = f"islip_p{args.ports}_s{args.stages}"
        dut = IslipRound(ports=args.ports, stages=args.stages)
    elif args.probe == "output":
        name = f"output_p{args.ports}"
        dut = OutputDecision(ports=args.ports)
    else:
        name = f"datapath_p{args.ports}_c{args.copies}{'_r' if args.read_reg else ''}"
        dut = CopyDatapath(ports=args.ports, per_output=args.copies == "N", read_reg=args.read_reg)
    workdir = REPORTS / "probe" / name
    emit_verilog(dut, name, workdir / f"{name}.v")
    for seed in args.seeds:
        r = ecp5(name, workdir, 200.0, seed)
        print(f"{name} seed {seed}: {r['ecp5_fmax_mhz']} MHz, {r['ecp5_lut4']} LUT4, "
              f"{r['ecp5_ccu2c']} CCU2C, {r['ecp5_ff']} FF", flush=True)


if __name__ == "__main__":
    main()
