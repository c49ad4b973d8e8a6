"""The device address map: which host physical addresses reach which NIC unit (docs/architecture.md).

The NIC decodes one device window at ``[system] device_base``.  Inside it:

========  =======================  =====================================================================
window    offset                   contents
========  =======================  =====================================================================
``regs``  0x0000_0000, 16 MiB      register file; version register at offset 0; from 0x0010_0000 the
                                   *user pages*: one 4 KiB page per VPID for the VELO read pointer
                                   (ch. 7.4) and, from 0x0020_0000, one per VPID for the RMA
                                   notification-queue read pointer (ch. 7.5), so system software can map
                                   exactly one process's pointers into that process.
``rma``   0x0100_0000              RMA requester (ch. 7.5, fig. 7-6): one 4 KiB page per VPID, an
                                   interrupt page set above it; size ``2**(12 + vpid_bits + 1)``.
``velo``  0x1000_0000              VELO requester (ch. 7.4, fig. 7-4): destination node, destination
                                   VPID and source VPID above bit 12; message length and MTT in bits
                                   6..11; size ``2**(12 + node_bits + 2 * vpid_bits)`` (256 MiB for 64
                                   nodes and 32 VPIDs, the prototype's BAR limit).
========  =======================  =====================================================================

Windows are aligned to their size.  The later unit issues refine the bit fields inside the ``rma`` and
``velo`` windows; the windows themselves are fixed here.
"""

from dataclasses import dataclass

from amaranth.utils import exact_log2

from .params import check_pow2

__all__ = ["Window", "AddressMap", "USER_PAGE_SIZE", "VELO_RP_PAGES", "RMA_RP_PAGES"]

USER_PAGE_SIZE = 4096
VELO_RP_PAGES = 0x0010_0000     # offset of the VELO read-pointer pages inside ``regs``
RMA_RP_PAGES = 0x0020_0000      # offset of the RMA notification read-pointer pages inside ``regs``


def _bits(n, what):
    return exact_log2(check_pow2(what, n))


@dataclass(frozen=True)
class Window:
    name: str
    base: int       # absolute host physical address
    size: int

    def __contains__(self, addr):
        return self.base <= addr < self.base + self.size


class AddressMap:
    """The device windows computed from the configuration's ``[system]`` section."""

    def __init__(self, *, device_base, vpids, nodes, phys_addr_bits=52):
        vpid_bits = _bits(vpids, "vpids")
        node_bits = _bits(nodes, "nodes")
        self.vpid_bits = vpid_bits
        self.node_bits = node_bits
        windows = [
            ("regs", 0x0000_0000, 1 << 24),
            ("rma", 0x0100_0000, 1 << (12 + vpid_bits + 1)),
            ("velo", 0x1000_0000, 1 << (12 + node_bits + 2 * vpid_bits)),
        ]
        top = max(off + size for _, off, size in windows)
        if device_base % (1 << (top - 1).bit_length()):
            raise ValueError(f"device_base must be aligned to {1 << (top - 1).bit_length():#x}, "
                             f"not {device_base:#x}")
        if device_base + top > 1 << phys_addr_bits:
            raise ValueError(f"device window {device_base:#x}+{top:#x} exceeds the "
                             f"{phys_addr_bits}-bit physical address space")
        self.windows = {}
        prev_end = 0
        for name, off, size in windows:
            if off % size or off < prev_end:
                raise ValueError(f"window {name} of {size:#x} bytes does not fit at offset {off:#x} "
                                 f"(too many VPIDs or nodes for the address map)")
            prev_end = off + size
            self.windows[name] = Window(name, device_base + off, size)
        self.device_base = device_base
        self.device_size = 1 << (top - 1).bit_length()

    @classmethod
    def from_config(cls, cfg):
        s = cfg["system"]
        return cls(device_base=s["device_base"], vpids=s["vpids"], nodes=s["nodes"],
                   phys_addr_bits=s["phys_addr_bits"])

    def decode(self, addr):
        """``(window name, offset)`` for a host physical address, or ``None`` outside every window."""
        for w in self.windows.values():
            if addr in w:
                return w.name, addr - w.base
        return None

    def __getitem__(self, name):
        return self.windows[name]

    def velo_rp_page(self, vpid):
        return self.windows["regs"].base + VELO_RP_PAGES + vpid * USER_PAGE_SIZE

    def rma_rp_page(self, vpid):
        return self.windows["regs"].base + RMA_RP_PAGES + vpid * USER_PAGE_SIZE
