"""The link's per-flit CRC (see ``docs/link.md``, "CRC"): a combinational update step and the running
flit CRC that the transmitter and the receiver both keep.

The update equations are derived here from the CRC's public definition: a CRC register is a linear
map over GF(2), so the next state is ``F·state ⊕ G·data``, and column ``j`` of ``F`` (``G``) is the next
state for a state (data word) that is the unit vector ``j``, which
:meth:`amaranth.lib.crc.Parameters.compute` gives for an algorithm without reflection or output XOR.
"""

from functools import cache

from amaranth.hdl import Cat, Mux, Signal
from amaranth.lib.crc import Algorithm

from .params import PhitCtl

__all__ = ["crc_step", "flit_crc", "update_matrices"]


@cache
def update_matrices(algorithm, data_width):
    """``(f, g)``: ``f[j]`` is the next raw CRC register (an integer) for the register holding only bit
    ``j`` and a zero data word, ``g[j]`` for an empty register and a data word holding only bit ``j``.

    Input reflection, output reflection, the initial value and the output XOR are not part of the
    update; :func:`crc_step` applies them.
    """
    def raw(initial, word):
        plain = Algorithm(crc_width=algorithm.crc_width, polynomial=algorithm.polynomial, initial_crc=initial,
                          reflect_input=False, reflect_output=False, xor_output=0)
        return plain(data_width).compute([word])
    return (tuple(raw(1 << j, 0) for j in range(algorithm.crc_width)),
            tuple(raw(0, 1 << j) for j in range(data_width)))


def crc_step(algorithm, state, data):
    """One CRC update as combinational logic: ``(next_state, crc)``.

    ``algorithm`` is an :class:`amaranth.lib.crc.Algorithm`, ``state`` the raw CRC register (initial value
    ``algorithm.initial_crc``), ``data`` one input word (its width is the data width), ``crc`` the CRC of
    everything including ``data`` (output reflection and XOR applied).  Unlike
    :class:`amaranth.lib.crc.Processor` there is no register, so that the CRC of a flit is known in the
    cycle of its last header or beat phit: the transmitter registers its phits before the CRC logic and
    still sends the CRC right after them, the receiver compares the CRC phit a cycle ahead (timing).
    """
    width, dw = algorithm.crc_width, len(data)
    f, g = update_matrices(algorithm, dw)
    # Index the operands' own bits (a slice of a reversed value, or of the Cat below, nests the whole
    # expression into every bit: minutes in Amaranth's checks and RTLIL backend at 64 bits).
    data_bits = [data[dw - 1 - j] if algorithm.reflect_input else data[j] for j in range(dw)]
    bits = []
    for i in range(width):
        terms = [state[j] for j in range(width) if (f[j] >> i) & 1]
        terms += [data_bits[j] for j in range(dw) if (g[j] >> i) & 1]
        bits.append(Cat(*terms).xor())
    nxt = Cat(*bits)
    out = Cat(*(bits[::-1] if algorithm.reflect_output else bits)) ^ algorithm.xor_output
    return nxt, out


def flit_crc(m, link_params, ctl, phit):
    """The CRC of the flit in progress, including ``phit``, as combinational logic on a CRC register.

    ``ctl``/``phit`` is a registered phit stream: an SOF phit restarts the CRC, SOF and BODY phits
    enter the register.  The value is that of every SOF/BODY phit up to and including the current one,
    so it is ready in the cycle of the flit's last header or beat phit.
    """
    algorithm = link_params.crc_algorithm
    crc_reg = Signal(link_params.crc_bits)
    crc_base = Signal(link_params.crc_bits)
    m.d.comb += crc_base.eq(Mux(ctl == PhitCtl.SOF, algorithm.initial_crc, crc_reg))
    crc_next, crc_value = crc_step(algorithm, crc_base, phit)
    with m.If((ctl == PhitCtl.SOF) | (ctl == PhitCtl.BODY)):
        m.d.sync += crc_reg.eq(crc_next)
    return crc_value
