"""The host bus bridge: the NIC's HTAX host port on AXI4 (``docs/hostbus.md``)."""

from rtl.common.axi import AxiSignature, connect_flat, flat_members

from .bridge import HtaxAxiBridge, bridge_events
from .decode import DeviceMap

__all__ = ["HtaxAxiBridge", "AxiSignature", "DeviceMap", "bridge_events", "flat_members", "connect_flat",
           "bridge_from_config", "UNITS"]


def bridge_from_config(cfg):
    """The bridge of the configuration's ``[hostbus]`` section for the NIC's ports (``[rma] host_port``,
    ``[regs]``, ``[rma]`` and ``[velo] htax_port``)."""
    ports = {"regs": cfg["regs"]["htax_port"], "rma": cfg["rma"]["htax_port"], "velo": cfg["velo"]["htax_port"]}
    hb = cfg["hostbus"]
    return HtaxAxiBridge(devmap=DeviceMap(cfg, ports), host_port=cfg["rma"]["host_port"],
                         read_ids=hb["read_ids"], write_entries=hb["write_entries"], cpu_reads=hb["cpu_reads"],
                         s_id_bits=hb["s_id_bits"], msi_address=cfg["system"]["msi_address"], msi=hb["msi"])


UNITS = {"hostbus": bridge_from_config}
