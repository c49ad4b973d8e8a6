"""The register-file runtime: an HTAX target built from a :mod:`rtl.common.regspec` description (ch. 7.2).

The generated module (``build/regs/<key>/nic_regs.py``, written by :mod:`rtl.regs.exporter` from the
SystemRDL sources) subclasses :class:`RegisterFile` with the description of the NIC's registers; this
package holds the hand-written logic every register file shares.  It replaces the dissertation's
generated Verilog plus the hand-written HTAX wrapper with its MSI translation (ch. 7.2, last paragraph).

:class:`RegisterFile` unrolls the description into register slots (:mod:`rtl.regs.slots`) and joins
its blocks: :class:`~rtl.regs.rx.RegRx` (receive framing and write decode),
:class:`~rtl.regs.reader.RegReader` (the read being answered, fetched in two stages),
:class:`~rtl.regs.flops.RegFlops` (flip-flop registers and their field semantics),
:class:`~rtl.regs.bank.CounterBank` (one per shared counter layout: plain counters in block RAM),
:class:`~rtl.regs.arrays.RegArrays` (RAM and external arrays) and :class:`~rtl.regs.tx.RegTx`
(responses and MSI writes).  ``docs/regs.md`` states the HTAX behaviour, the field semantics and the
port names; each block's docstring points to the part it owns.
"""

from amaranth.hdl import Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out, flipped
from amaranth.utils import ceil_log2

from rtl.common.htax import ADDR_BITS, HtaxPortSignature
from rtl.common.params import check_port, check_pow2
from rtl.common.regspec import Block, port_members

from .arrays import RegArrays
from .bank import BANK_MIN_WORDS, CounterBank, bank_layout
from .flops import RegFlops
from .reader import RegReader
from .rx import RegRx
from .slots import ArraySlot, FlopSlot
from .tx import RegTx

__all__ = ["RegisterFile"]

WINDOW_BITS_MAX = ADDR_BITS


class RegisterFile(wiring.Component):
    """Register file with an HTAX target port, generated from a register-map description.

    Parameters
    ----------
    regmap : :class:`rtl.common.regspec.Block`
        The top block; offsets are bytes inside the window.
    window_base : int
        Host physical address of the register window (``regs`` in :mod:`rtl.common.addrmap`).
    window_size : int
        Bytes in the window, a power of two.
    htax_port : int
        This unit's HTAX port: the ``src`` of its responses and interrupt writes.
    host_port : int
        The host's HTAX port: the ``dst`` of interrupt writes.

    Members
    -------
    htax : Out(HtaxPortSignature())
        ``tx`` into the switch (responses, interrupt writes), ``rx`` out of it (requests).
    hw : Out(Signature(port_members(regmap)))
        The units' view of the registers (:func:`rtl.common.regspec.port_members`; member names in
        docs/regs.md, "Field semantics").
    irq : Out(1)
        An enabled interrupt status bit is set (level; the interrupt wire of a host bus without MSI).

    Raises
    ------
    ValueError
        On a bad parameter or a register map that does not fit the window.
    """

    def __init__(self, regmap, *, window_base, window_size=1 << 24, htax_port, host_port):
        if not isinstance(regmap, Block):
            raise TypeError(f"regmap must be a Block, not {regmap!r}")
        check_pow2("window_size", window_size, 64)
        if window_base % window_size or not 0 <= window_base < 1 << ADDR_BITS:
            raise ValueError(f"window_base must be a multiple of window_size ({window_size:#x}) inside "
                             f"the {ADDR_BITS}-bit address space, not {window_base:#x}")
        check_port("htax_port", htax_port)
        check_port("host_port", host_port)
        if htax_port == host_port:
            raise ValueError(f"htax_port and host_port must differ, both are {htax_port}")
        self.regmap = regmap
        self.window_base = window_base
        self.window_size = window_size
        self.htax_port = htax_port
        self.host_port = host_port
        members = port_members(regmap)
        super().__init__({
            "htax": Out(HtaxPortSignature()),
            "hw": Out(wiring.Signature(members)),
            "irq": Out(1),
        })
        self._flops, self._arrays = [], []
        self._collect(regmap, 0, self.hw, regmap.name)
        self._check_layout()

    # -- description walking ------------------------------------------------------------------
    def _collect(self, block, base, port, path):
        for child in block.children:
            cport = getattr(port, child.name, None) if port is not None else None
            if isinstance(child, Block):
                for i in range(child.count):
                    p = cport[i] if (cport is not None and child.array) else cport
                    suffix = f"[{i}]" if child.array else ""
                    self._collect(child, base + child.offset + i * child.stride, p,
                                  f"{path}.{child.name}{suffix}")
            elif child.storage == "flops":
                for i in range(child.count):
                    p = cport[i] if (cport is not None and child.array) else cport
                    suffix = f"[{i}]" if child.array else ""
                    addr = base + child.offset + i * child.stride
                    self._flops.append(FlopSlot(child, addr // 8, f"{path}.{child.name}{suffix}", p))
            else:
                addr = base + child.offset
                idx_bits = ceil_log2(child.count)
                shift = ceil_log2(child.stride) - 3
                span = (1 << idx_bits) * child.stride
                if addr % span:
                    raise ValueError(f"{child.storage} array {path}.{child.name} at {addr:#x} must be "
                                     f"aligned to its span {span:#x}")
                self._arrays.append(ArraySlot(child, addr // 8, f"{path}.{child.name}", cport, shift, idx_bits))

    def _check_layout(self):
        spans = [(f.word * 8, f.word * 8 + 8, f.path) for f in self._flops]
        spans += [(a.word * 8, a.word * 8 + ((1 << a.idx_bits) * a.reg.stride), a.path) for a in self._arrays]
        spans.sort()
        for (lo, hi, p), (lo2, _, p2) in zip(spans, spans[1:], strict=False):
            if lo2 < hi:
                raise ValueError(f"{p2} at {lo2:#x} overlaps {p} ({lo:#x}..{hi - 1:#x})")
        if spans and spans[-1][1] > self.window_size:
            raise ValueError(f"{spans[-1][2]} ends at {spans[-1][1]:#x}, outside the "
                             f"{self.window_size:#x}-byte window")
        self._fields = {}
        for fl in self._flops:
            for f in fl.reg.fields:
                self._fields[f"{fl.path}.{f.name}"] = (fl, f)
        for fl in self._flops:
            for f in fl.reg.fields:
                if f.enable is not None:
                    key = ".".join((self.regmap.name,) + tuple(f.enable))
                    if key not in self._fields:
                        raise ValueError(f"{fl.path}.{f.name} enable refers to unknown field {key}")
                    if self._fields[key][1].width != f.width:
                        raise ValueError(f"{fl.path}.{f.name} enable {key} has a different width")

    @property
    def address_map(self):
        """``[(byte offset, path, Reg, count, stride)]`` of every register (flops unrolled)."""
        out = [(f.word * 8, f.path, f.reg, 1, 8) for f in self._flops]
        out += [(a.word * 8, a.path, a.reg, a.reg.count, a.reg.stride) for a in self._arrays]
        return sorted(out, key=lambda t: t[0])

    @property
    def counter_banks(self):
        """``[[(index in the flip-flop registers, FlopSlot), ...], ...]``: the registers kept in each
        counter bank (:mod:`rtl.regs.bank`), one bank per counter layout that at least
        ``BANK_MIN_WORDS`` registers share."""
        groups = {}
        for k, fl in enumerate(self._flops):
            layout = bank_layout(fl.reg)
            if layout is not None:
                groups.setdefault(layout, []).append((k, fl))
        return [slots for slots in groups.values() if len(slots) >= BANK_MIN_WORDS]

    # -- gateware -----------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        wbits = ceil_log2(self.window_size) - 3
        flops, arrays = self._flops, self._arrays
        m.submodules.rx = rx = RegRx(flops=flops, arrays=arrays, window_base=self.window_base, win_bits=wbits + 3)
        m.submodules.reader = reader = RegReader(flops=flops, wbits=wbits)
        banks = self.counter_banks
        banked = {k for slots in banks for k, _ in slots}
        m.submodules.flops = fl = RegFlops(flops=flops, arrays=len(arrays), fields=self._fields,
                                           top=self.regmap.name, wbits=wbits, banked=banked)
        m.submodules.arrays = ar = RegArrays(arrays=arrays, flops=len(flops), wbits=wbits)
        m.submodules.tx = tx = RegTx(htax_port=self.htax_port, host_port=self.host_port, msi=fl.has_msi)

        wiring.connect(m, flipped(self.htax.rx), rx.rx)
        wiring.connect(m, tx.tx, flipped(self.htax.tx))
        bank_blocks = []
        for i, slots in enumerate(banks):
            m.submodules[f"bank{i}"] = bank = CounterBank(slots=slots, flops=len(flops), arrays=len(arrays),
                                                          wbits=wbits)
            bank_blocks.append(bank)
        wiring.connect(m, rx.write, fl.write, ar.write, *(b.write for b in bank_blocks))
        wiring.connect(m, rx.read, reader.request)
        wiring.connect(m, reader.fetch, fl.fetch, ar.fetch, *(b.fetch for b in bank_blocks))
        array_data, a_wait = ar.read_data, Const(0, 1)
        for b in bank_blocks:
            array_data, a_wait = array_data | b.read_data, a_wait | b.wait
        wiring.connect(m, reader.response, tx.response)
        m.d.comb += [
            rx.busy.eq(reader.response.busy),
            reader.flop_data.eq(fl.read_data), reader.array_data.eq(array_data), reader.a_wait.eq(a_wait),
            fl.rx_dropped.eq(rx.dropped), fl.answered.eq(reader.response.load_header),
            fl.status.eq(reader.response.status),
            tx.pending.eq(fl.pending), tx.irq_written.eq(fl.irq_written),
            tx.msi_addr.eq(fl.msi_addr), tx.msi_data.eq(fl.msi_data), self.irq.eq(fl.pending),
        ]
        return m
