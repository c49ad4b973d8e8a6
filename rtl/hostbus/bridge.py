"""The HTAX to AXI4 host bus bridge (``docs/hostbus.md``)."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from rtl.common.axi import AxiSignature
from rtl.common.htax import ADDR_BITS, HtaxPortSignature
from rtl.common.params import check_int, check_pow2
from rtl.common.regview import RegisterView

from .port import HostPort
from .reader import HostReader
from .target_read import TargetRead
from .target_write import TargetWrite
from .writer import HostWriter

__all__ = ["HtaxAxiBridge", "bridge_events", "REGISTERS"]

#: the part of the register map (``rdl/nic_regs.rdl``) the bridge owns: its event counters
REGISTERS = ("hostbus",)


def bridge_events():
    """One-cycle events of the bridge, for counters: ``cpu_refused`` (an AXI request of the CPU answered
    with SLVERR or DECERR by the bridge), ``cpu_dropped`` (a RESPONSE from the NIC that answers no CPU
    read, or the wrong length), ``dma_write_error`` (a B other than OKAY: a NIC write is lost, or a B
    without a write), ``dma_read_error`` (an R beat without a read), ``ats_dropped`` (an ATS packet at the
    host port), ``msi_consumed`` (an interrupt write taken by the ``irq`` wire)."""
    names = ("cpu_refused", "cpu_dropped", "dma_write_error", "dma_read_error", "ats_dropped", "msi_consumed")
    return wiring.Signature({n: Out(1) for n in names})


class HtaxAxiBridge(wiring.Component):
    """Joins the NIC's HTAX host port to an AXI4 manager (``m_axi``: the NIC's DMA reads, posted writes and
    interrupt writes into host memory) and an AXI4 subordinate (``s_axi``: the CPU's stores and reads in
    the device window).  The manager side is a :class:`~rtl.hostbus.writer.HostWriter` and a
    :class:`~rtl.hostbus.reader.HostReader`, the subordinate side a
    :class:`~rtl.hostbus.target_write.TargetWrite` and a :class:`~rtl.hostbus.target_read.TargetRead`,
    the port a :class:`~rtl.hostbus.port.HostPort`.

    Deviation from the dissertation: the prototype's host interface is HyperTransport (ch. 7.1, the HT
    core and its HTAX bridge); AXI4 is the bus the FPGA hosts of today offer.  The HTAX ordering rules
    the units rely on are kept (``docs/hostbus.md``, "Ordering").

    Parameters
    ----------
    devmap : DeviceMap
    host_port : int
        The host's HTAX port.
    read_ids : int
        AXI read IDs of the manager (DMA reads in flight), a power of two, 1..32.
    write_entries : int
        DMA writes in flight (B outstanding), 1..32.
    cpu_reads : int
        CPU reads in flight, 1..32.
    s_id_bits : int
        ID width of the subordinate, 1..16.
    msi_address : int
    msi : bool
        Forward interrupt writes to ``m_axi`` (else the ``irq`` wire carries them).

    Members
    -------
    htax : In(HtaxPortSignature())
        The NIC's host port (``htax.tx``: packets to the host).
    m_axi : Out(AxiSignature(id_bits=log2(read_ids), addr_bits=ADDR_BITS))
    s_axi : In(AxiSignature(id_bits=s_id_bits, addr_bits=ADDR_BITS))
    events : Out(bridge_events())
    regs : Out(RegisterView(REGISTERS))
        The counters of ``hostbus.errors`` and ``hostbus.events`` (``docs/registers.md``), one increment
        per event.
    """

    def __init__(self, *, devmap, host_port, read_ids=32, write_entries=8, cpu_reads=4, s_id_bits=4,
                 msi_address, msi=False):
        check_pow2("read_ids", read_ids, 1, 32)
        check_int("write_entries", write_entries, 1, 32)
        check_int("cpu_reads", cpu_reads, 1, 32)
        check_int("s_id_bits", s_id_bits, 1, 16)
        self._map, self._host_port = devmap, host_port
        self._read_ids, self._entries, self._cpu_reads = read_ids, write_entries, cpu_reads
        self._msi_address, self._msi = msi_address, msi
        self.m_id_bits = max(1, (read_ids - 1).bit_length())
        self.s_id_bits = s_id_bits
        super().__init__({
            "htax": In(HtaxPortSignature()),
            "m_axi": Out(AxiSignature(id_bits=self.m_id_bits, addr_bits=ADDR_BITS)),
            "s_axi": In(AxiSignature(id_bits=s_id_bits, addr_bits=ADDR_BITS)),
            "events": Out(bridge_events()),
            "regs": Out(RegisterView(REGISTERS)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.port = port = HostPort()
        m.submodules.writer = writer = HostWriter(entries=self._entries, msi_address=self._msi_address,
                                                  msi=self._msi, id_bits=self.m_id_bits)
        m.submodules.reader = reader = HostReader(ids=self._read_ids, entries=self._entries,
                                                  host_port=self._host_port)
        m.submodules.twrite = twrite = TargetWrite(devmap=self._map, host_port=self._host_port,
                                                   id_bits=self.s_id_bits)
        m.submodules.tread = tread = TargetRead(devmap=self._map, host_port=self._host_port,
                                                id_bits=self.s_id_bits, tags=self._cpu_reads)
        m_axi, s_axi = self.m_axi, self.s_axi

        connect(m, nic=flipped(self.htax.tx), port=port.tx)
        connect(m, port=port.rx, nic=flipped(self.htax.rx))
        connect(m, port=port.posted, writer=writer.i)
        connect(m, port=port.nonposted, reader=reader.i)
        connect(m, port=port.response, target=tread.i)
        connect(m, reader=reader.o, port=port.responses)
        connect(m, target=twrite.o, port=port.writes)
        connect(m, target=tread.o, port=port.reads)
        connect(m, writer=writer.hazard, reader=reader.hazard)
        connect(m, writer=writer.aw, axi=flipped(m_axi.aw))
        connect(m, axi=flipped(m_axi.b), writer=writer.b)
        connect(m, writer=writer.w, axi=flipped(m_axi.w))
        connect(m, reader=reader.ar, axi=flipped(m_axi.ar))
        connect(m, axi=flipped(m_axi.r), reader=reader.r)
        connect(m, axi=flipped(s_axi.aw), target=twrite.aw)
        connect(m, axi=flipped(s_axi.w), target=twrite.w)
        connect(m, target=twrite.b, axi=flipped(s_axi.b))
        connect(m, axi=flipped(s_axi.ar), target=tread.ar)
        connect(m, target=tread.r, axi=flipped(s_axi.r))
        ev = self.events
        m.d.comb += [ev.cpu_refused.eq(twrite.refused | tread.refused), ev.cpu_dropped.eq(tread.dropped),
                     ev.dma_write_error.eq(writer.b_error), ev.dma_read_error.eq(reader.r_error),
                     ev.ats_dropped.eq(port.dropped), ev.msi_consumed.eq(writer.msi_dropped)]
        errors, events = self.regs.hostbus.errors, self.regs.hostbus.events
        m.d.comb += [errors.cpu_refused_incr.eq(ev.cpu_refused), errors.cpu_dropped_incr.eq(ev.cpu_dropped),
                     errors.dma_write_errors_incr.eq(ev.dma_write_error),
                     errors.dma_read_errors_incr.eq(ev.dma_read_error),
                     events.ats_dropped_incr.eq(ev.ats_dropped), events.msi_consumed_incr.eq(ev.msi_consumed)]
        return m
