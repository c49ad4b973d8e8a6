"""The link's per-flit CRC (see ``docs/link.md``, "CRC"): a combinational update step and the running
flit CRC that the transmitter and the receiver both keep."""

from amaranth.hdl import Cat, Mux, Signal

from .params import PhitCtl

__all__ = ["crc_step", "flit_crc"]


def crc_step(parameters, state, data):
    """One CRC update as combinational logic: ``(next_state, crc)``.

    ``state`` is the raw CRC register (initial value ``parameters._initial_crc``), ``data`` one input
    word, ``crc`` the CRC value of everything including ``data`` (output reflection and XOR applied).
    The same equations as :class:`amaranth.lib.crc.Processor` (whose update matrices it uses), but
    without the register, so that the CRC of a flit is known in the cycle of its last header or beat
    phit: the transmitter registers its phits before the CRC logic and still sends the CRC right
    after them, the receiver compares the CRC phit a cycle ahead (timing).
    """
    width = parameters._crc_width
    matrix_f, matrix_g = parameters._matrices()
    # Index the operands' own bits (a slice of a reversed value, or of the Cat below, nests the whole
    # expression into every bit: minutes in Amaranth's checks and RTLIL backend at 64 bits).
    dw = parameters.data_width
    data_bits = [data[dw - 1 - j] if parameters._reflect_input else data[j] for j in range(dw)]
    bits = []
    for i in range(width):
        terms = [state[j] for j in range(width) if matrix_f[j][i]]
        terms += [data_bits[j] for j in range(dw) if matrix_g[j][i]]
        bits.append(Cat(*terms).xor())
    nxt = Cat(*bits)
    out = Cat(*(bits[::-1] if parameters._reflect_output else bits)) ^ parameters._xor_output
    return nxt, out


def flit_crc(m, link_params, ctl, phit):
    """The CRC of the flit in progress, including ``phit``, as combinational logic on a CRC register.

    ``ctl``/``phit`` is a registered phit stream: an SOF phit restarts the CRC, SOF and BODY phits
    enter the register.  The value is that of every SOF/BODY phit up to and including the current one,
    so it is ready in the cycle of the flit's last header or beat phit.
    """
    crc_params = link_params.crc_algorithm(data_width=len(phit))
    crc_reg = Signal(link_params.crc_bits)
    crc_base = Signal(link_params.crc_bits)
    m.d.comb += crc_base.eq(Mux(ctl == PhitCtl.SOF, crc_params._initial_crc, crc_reg))
    crc_next, crc_value = crc_step(crc_params, crc_base, phit)
    with m.If((ctl == PhitCtl.SOF) | (ctl == PhitCtl.BODY)):
        m.d.sync += crc_reg.eq(crc_next)
    return crc_value
