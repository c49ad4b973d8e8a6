"""The device window decoder and the burst check of the bridge's AXI4 subordinate (``docs/hostbus.md``)."""

from amaranth.hdl import Mux, Signal
from amaranth.lib import data

from rtl.common.addrmap import AddressMap
from rtl.common.axi import SIZE_8B, AxiBurst, AxiResp
from rtl.common.htax import PORT_BITS

__all__ = ["DeviceMap", "burst_check_layout"]


def burst_check_layout():
    """What the subordinate learns from an AW or AR: the HTAX port it goes to, and its AXI response if
    it is refused (``resp`` OKAY: it becomes one HTAX packet)."""
    return data.StructLayout({"dst": PORT_BITS, "resp": AxiResp})


class DeviceMap:
    """The device window of ``[system]`` (:class:`rtl.common.addrmap.AddressMap`) and the HTAX port of
    each unit window: ``rma`` and ``velo`` to their units, the rest of the window to the register file
    (it answers an unmapped access with an error), as the host's decoder :func:`sim.driver.nic.htax_route`.
    """

    def __init__(self, cfg, ports):
        self.amap = AddressMap.from_config(cfg)
        top = max(w.base + w.size for w in self.amap.windows.values()) - self.amap.device_base
        self.span_bits = (top - 1).bit_length()
        self.ports = {"rma": ports["rma"], "velo": ports["velo"]}
        self.regs = ports["regs"]

    def check(self, m, addr, *, burst, size, length, name):
        """A :func:`burst_check_layout` value for an AXI request: DECERR outside the device window;
        SLVERR for a burst that is not one HTAX packet (WRAP, FIXED of more than one beat, narrower than
        8 bytes and more than one beat, more than 8 beats, or crossing a 64-byte line); else OKAY and
        the unit's port."""
        out = Signal(burst_check_layout(), name=name)
        hit = (addr >> self.span_bits) == (self.amap.device_base >> self.span_bits)
        dst = self.regs
        for unit, port in self.ports.items():
            w = self.amap.windows[unit]
            bits = (w.size - 1).bit_length()
            dst = Mux((addr >> bits) == (w.base >> bits), port, dst)
        bad = ((burst == AxiBurst.WRAP) | ((burst == AxiBurst.FIXED) & (length != 0))
               | ((size != SIZE_8B) & (length != 0)) | (size > SIZE_8B)
               | (length > 7) | (addr[3:6] + length > 7))
        m.d.comb += [out.dst.eq(dst),
                     out.resp.eq(Mux(~hit, AxiResp.DECERR, Mux(bad, AxiResp.SLVERR, AxiResp.OKAY)))]
        return out
