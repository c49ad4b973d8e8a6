"""Link-layer parameters, phit control codes and flit header layouts (dissertation ch. 7.3).

Everything the transmitter, the receiver, the channel models and the tests must agree on is derived
here from six parameters, so no other module computes a field width or a header size by hand.
See ``docs/link.md`` for the wire format these definitions describe.
"""

from amaranth.lib import data, enum
from amaranth.lib.crc import catalog
from amaranth.utils import exact_log2

from rtl.common.net import NUM_NET_VCS
from rtl.common.params import check_choice, check_int, check_pow2
from rtl.common.phit import PhitCtl

__all__ = ["PhitCtl", "FlitType", "LinkParams", "require_params"]


class FlitType(enum.Enum, shape=1):
    DATA = 0
    CTRL = 1


class LinkParams:
    """Validated link parameters and everything derived from them.

    Parameters
    ----------
    phit_bits : int
        Data bits per phit, 16, 32 or 64 (plus two control bits).
    flit_phits : int
        Maximum phits in a data flit, header and CRC included (at most 64).
    replay_flits : int
        Replay buffer depth in flits, a power of two from 2 to 256.
    vcs : int
        Virtual channels, 2 or 4 (the network layer's four: ``docs/network.md``).
    rx_buffer_beats : int
        Receive buffer per virtual channel in 64-bit beats (the credit pool), a power of two >= 4.
    seq_bits : int or None
        Sequence number width; default and minimum ``log2(replay_flits) + 1``, at most 12.
    counter_bits : int
        Width of the saturating event counters, 1 to 32.
    idle_gap : int
        IDLE phits, 0 to 15, before every flit (0: flits follow each other directly).  A PHY whose
        line words carry framing and whose two ends run on clocks of their own (``docs/phy.md``)
        needs 1: an idle port's back-to-back control flits then fit its line, and the far end's
        core, up to a few hundred ppm slower, still keeps up with the phits (1/63 of the bandwidth
        of maximum flits).

    Raises
    ------
    TypeError, ValueError
        On a parameter out of range; the message names the parameter and the value.
    """

    def __init__(self, *, phit_bits=16, flit_phits=64, replay_flits=32, vcs=NUM_NET_VCS,
                 rx_buffer_beats=128, seq_bits=None, counter_bits=16, idle_gap=0):
        for name, value in (("phit_bits", phit_bits), ("flit_phits", flit_phits),
                            ("replay_flits", replay_flits), ("vcs", vcs),
                            ("rx_buffer_beats", rx_buffer_beats), ("counter_bits", counter_bits)):
            check_int(name, value)
        check_choice("phit_bits", phit_bits, (16, 32, 64))
        # Powers of two only: every value of the flit header's vc field is then a VC, so a receiver
        # never has to reject a flit for naming a VC it does not have.
        check_choice("vcs", vcs, (2, NUM_NET_VCS))
        check_pow2("replay_flits", replay_flits, 2, 256)
        check_pow2("rx_buffer_beats", rx_buffer_beats, 4)
        min_seq = exact_log2(replay_flits) + 1
        if seq_bits is None:
            seq_bits = min_seq
        check_int("seq_bits", seq_bits)
        if not min_seq <= seq_bits <= 12:
            raise ValueError(f"seq_bits must be between log2(replay_flits) + 1 = {min_seq} and 12, "
                             f"not {seq_bits}")
        check_int("counter_bits", counter_bits, 1, 32)
        self.idle_gap = check_int("idle_gap", idle_gap, 0, 15)
        self.phit_bits = phit_bits
        self.replay_flits = replay_flits
        self.vcs = vcs
        self.vc_bits = exact_log2(vcs)
        self.rx_buffer_beats = rx_buffer_beats
        self.seq_bits = seq_bits
        self.counter_bits = counter_bits
        self.credit_bits = exact_log2(rx_buffer_beats) + 1
        self.phits_per_beat = 64 // phit_bits

        self.data_header = data.StructLayout({
            "type": FlitType, "vc": self.vc_bits, "seq": seq_bits, "ack": seq_bits})
        self.ctrl_header = data.StructLayout({
            "type": FlitType, "nak": 1, "ack": seq_bits,
            "credit": data.ArrayLayout(self.credit_bits, vcs)})
        self.data_header_phits = -(-self.data_header.size // phit_bits)
        self.ctrl_header_phits = -(-self.ctrl_header.size // phit_bits)
        self.header_phits = max(self.data_header_phits, self.ctrl_header_phits)
        min_flit = self.data_header_phits + self.phits_per_beat + 1
        if not min_flit <= flit_phits <= 64:
            raise ValueError(f"flit_phits must be between {min_flit} (header, one beat, CRC) and 64, "
                             f"not {flit_phits}")
        self.flit_phits = flit_phits
        self.max_beats = (flit_phits - self.data_header_phits - 1) // self.phits_per_beat
        if self.max_beats > rx_buffer_beats:
            raise ValueError(f"rx_buffer_beats must hold one full flit ({self.max_beats} beats), "
                             f"not {rx_buffer_beats}")
        self.beat_idx_bits = max(1, (self.max_beats - 1).bit_length())
        self.beat_cnt_bits = self.max_beats.bit_length()
        self.slot_bits = exact_log2(replay_flits)      # replay-buffer slot: sequence number mod replay_flits
        # Per replay-buffer slot: the flit's VC and beat count (docs/link.md, "Replay buffer").
        self.replay_meta = data.StructLayout({"vc": self.vc_bits, "beats": self.beat_cnt_bits})
        # CRC on every flit: CRC-16/IBM-3740 (CRC-16/CCITT-FALSE) in one 16-bit phit, CRC-32/ISO-HDLC
        # (the IEEE 802.3 CRC) in a wider phit, where it costs no extra phit.
        if phit_bits == 16:
            self.crc_algorithm, self.crc_name = catalog.CRC16_IBM_3740, "CRC-16/IBM-3740"
        else:
            self.crc_algorithm, self.crc_name = catalog.CRC32_ISO_HDLC, "CRC-32/ISO-HDLC"
        self.crc_bits = self.crc_algorithm.crc_width

    def data_flit_phits(self, beats):
        """Phits on the wire for a data flit carrying ``beats`` beats."""
        return self.data_header_phits + beats * self.phits_per_beat + 1

    @property
    def ctrl_flit_phits(self):
        return self.ctrl_header_phits + 1

    def as_dict(self):
        return {k: getattr(self, k) for k in (
            "phit_bits", "flit_phits", "replay_flits", "vcs", "rx_buffer_beats", "seq_bits", "counter_bits",
            "credit_bits", "max_beats", "data_header_phits", "ctrl_header_phits")} | {
            "crc": self.crc_name}


def require_params(params):
    """``params`` if it is a :class:`LinkParams`; the shared check of every link component's
    constructor.  Raises ``TypeError`` otherwise."""
    if not isinstance(params, LinkParams):
        raise TypeError(f"params must be a LinkParams, not {params!r}")
    return params
