"""Host timing of dissertation table 3-1 (ch. 3) and the conversion of cycles measured at the NIC's host
port into the end-to-end nanoseconds of ch. 9.

The host model (:class:`sim.host.HostModel`) sits directly on the NIC's HTAX host port and plays only
one of table 3-1's delays itself: a device READ of host memory is answered ``t_dm`` after its header
moved (``[host] dma_read_latency_ns``, 280 ns = 44 cycles at 6.4 ns).  Everything on the CPU's side of
the HyperTransport link takes no time in the model: a CPU store or read is offered at the port as soon
as the program issues it, a device WRITE counts as landed when its header moves at the port, and a
poll of host memory sees the write in that cycle.  Cycle figures measured at the port therefore
exclude the host, and :class:`HostTiming` adds it back as constants (the bench adds them; the model's
timing, which every cocotb test depends on, stays as it is):

========================  =====================  ==================================================
path                      added                  table 3-1
========================  =====================  ==================================================
CPU store -> device       ``t_cd`` (100 ns)      CPU device access via HT, half round trip
CPU read of the device    ``2 t_cd`` (200 ns)    the same, a full round trip
device write -> memory    ``t_dm / 2`` (140 ns)  device to main memory, round trip 280 ns: one way
CPU poll sees the write   ``t_cm`` (70 ns)       the write invalidated the polled line: one miss
device read of memory     none (in the model)    ``t_dm`` = 280 ns = 44 cycles
CPU cache hit             ``t_cc`` (6 ns)        not added: one turn of the polling loop (< 1 cycle)
========================  =====================  ==================================================

So a one-way operation measured from the cycle its CPU store is issued at the port to the cycle its
last device write moves at the port, ``c`` cycles, takes ``t_cd + c t_cyc + t_dm / 2 + t_cm`` from the
store instruction to the poll that sees it (:meth:`HostTiming.end_to_end_ns`); a ping-pong round trip
adds that twice.  Software overhead (table 9-2: 300 ns per operation, library calls, descriptor
building) is not part of it.
"""

from dataclasses import dataclass

__all__ = ["HostTiming"]


@dataclass(frozen=True)
class HostTiming:
    """Table 3-1's host parameters in nanoseconds, and the core clock's cycle time.

    Parameters
    ----------
    cycle_ns : float
        ``t_cyc``, the NIC's clock period (6.4 ns at 156.25 MHz).
    cpu_cache_ns : float
        ``t_cc``, a CPU access that hits the L1/L2 cache (6 ns).
    cpu_memory_ns : float
        ``t_cm``, a CPU access of main memory (70 ns).
    cpu_device_ns : float
        ``t_cd``, a CPU access of the device via HyperTransport, half round trip (100 ns).
    dma_read_ns : float
        ``t_dm``, a device access of main memory, round trip (280 ns).
    """

    cycle_ns: float
    cpu_cache_ns: float
    cpu_memory_ns: float
    cpu_device_ns: float
    dma_read_ns: float

    def __post_init__(self):
        for name in ("cycle_ns", "cpu_cache_ns", "cpu_memory_ns", "cpu_device_ns", "dma_read_ns"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 \
                    or (name == "cycle_ns" and value == 0):
                raise ValueError(f"{name} must be a {'positive' if name == 'cycle_ns' else 'non-negative'} "
                                 f"number of nanoseconds, not {value!r}")

    @classmethod
    def from_config(cls, cfg):
        """From ``[system] clock_mhz`` and the ``[host]`` section of a configuration."""
        h = cfg["host"]
        return cls(cycle_ns=cfg.cycle_ns, cpu_cache_ns=h["cpu_cache_ns"], cpu_memory_ns=h["cpu_memory_ns"],
                   cpu_device_ns=h["cpu_device_ns"], dma_read_ns=h["dma_read_latency_ns"])

    def cycles(self, ns):
        """``ns`` in whole cycles (rounded, at least 1), as the host model converts ``t_dm``."""
        return max(1, round(ns / self.cycle_ns))

    def ns(self, cycles):
        """``cycles`` of the core clock in nanoseconds."""
        return cycles * self.cycle_ns

    @property
    def dma_read_cycles(self):
        """``t_dm`` in cycles: the host model's DMA read round trip at the port (44 at table 3-1)."""
        return self.cycles(self.dma_read_ns)

    @property
    def dma_write_ns(self):
        """A device write's way from the port to memory: half of ``t_dm``'s round trip."""
        return self.dma_read_ns / 2

    @property
    def store_ns(self):
        """A CPU store's way to the device: ``t_cd``."""
        return self.cpu_device_ns

    @property
    def poll_ns(self):
        """From a device write landing in memory to the CPU's poll seeing it: one miss, ``t_cm``."""
        return self.cpu_memory_ns

    def cpu_read_ns(self, port_cycles):
        """A CPU read of a device register: ``2 t_cd`` plus the NIC's ``port_cycles`` (READ header in to
        RESPONSE header out at the port)."""
        return 2 * self.cpu_device_ns + self.ns(port_cycles)

    def host_ns(self, *, stores=1, polls=1):
        """The host's share of an operation: ``stores`` CPU stores on the way in, ``polls`` device
        writes the CPU waits for on the way out (each: to memory, then seen by a poll)."""
        return stores * self.store_ns + polls * (self.dma_write_ns + self.poll_ns)

    def end_to_end_ns(self, port_cycles, *, stores=1, polls=1):
        """CPU store instruction to the poll that sees the result, for an operation that took
        ``port_cycles`` at the port (CPU store issued to the last device write moving)."""
        return self.ns(port_cycles) + self.host_ns(stores=stores, polls=polls)
