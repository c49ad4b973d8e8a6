"""Combinational CRC update for the link's per-flit CRC (see ``docs/link.md``, "CRC")."""

from amaranth.hdl import Cat

__all__ = ["crc_step"]


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
    data_in = data[::-1] if parameters._reflect_input else data
    bits = []
    for i in range(width):
        terms = [state[j] for j in range(width) if matrix_f[j][i]]
        terms += [data_in[j] for j in range(parameters.data_width) if matrix_g[j][i]]
        bit = terms[0]
        for t in terms[1:]:
            bit = bit ^ t
        bits.append(bit)
    nxt = Cat(*bits)
    out = (nxt[::-1] if parameters._reflect_output else nxt) ^ parameters._xor_output
    return nxt, out
