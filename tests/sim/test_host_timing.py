"""Table 3-1 calibration of the host (``sim/host_timing.py``): the configuration's values, their cycles
at 156.25 MHz, and the conversion of port cycles into end-to-end nanoseconds.  The expected numbers
are table 3-1's, written out here, not read back from the code under test."""

import pytest

from rtl.config import load
from sim.host_timing import HostTiming

# table 3-1, HT400 column: t_cc, t_cm, t_cd (half round trip), t_dm (round trip), t_cyc
T_CC, T_CM, T_CD, T_DM, T_CYC = 6, 70, 100, 280, 6.4


def test_default_config_is_table_3_1():
    t = HostTiming.from_config(load())
    assert (t.cpu_cache_ns, t.cpu_memory_ns, t.cpu_device_ns, t.dma_read_ns) == (T_CC, T_CM, T_CD, T_DM)
    assert t.cycle_ns == pytest.approx(T_CYC)


def test_cycles_at_156_25_mhz():
    t = HostTiming.from_config(load())
    assert t.dma_read_cycles == 44                  # 280 / 6.4 = 43.75
    assert t.cycles(T_CD) == 16                     # 100 / 6.4 = 15.6
    assert t.cycles(T_CM) == 11                     # 70 / 6.4 = 10.9
    assert t.cycles(T_CC) == 1
    assert t.ns(44) == pytest.approx(281.6)


def test_end_to_end_conversion():
    t = HostTiming.from_config(load())
    # a one-way operation of 100 port cycles: store to the device, 640 ns in the NIC, write to memory,
    # the poll's miss
    assert t.end_to_end_ns(100) == pytest.approx(T_CD + 640 + T_DM / 2 + T_CM)
    assert t.end_to_end_ns(0) == pytest.approx(310)
    # two polled writes (data, then a notification the CPU waits for) cost the write's way once more
    assert t.end_to_end_ns(10, stores=1, polls=2) == pytest.approx(T_CD + 64 + 2 * (T_DM / 2 + T_CM))
    # a CPU read of a register the NIC answers in 5 cycles: one HT round trip plus 32 ns
    assert t.cpu_read_ns(5) == pytest.approx(2 * T_CD + 32)
    assert t.host_ns(stores=0, polls=0) == 0


@pytest.mark.parametrize("field, value, message", [
    ("cycle_ns", 0, r"^cycle_ns must be a positive number of nanoseconds, not 0$"),
    ("cpu_device_ns", -1, r"^cpu_device_ns must be a non-negative number of nanoseconds, not -1$"),
    ("dma_read_ns", "280", r"^dma_read_ns must be a non-negative number of nanoseconds, not '280'$"),
])
def test_bad_values(field, value, message):
    values = dict(cycle_ns=T_CYC, cpu_cache_ns=T_CC, cpu_memory_ns=T_CM, cpu_device_ns=T_CD, dma_read_ns=T_DM)
    values[field] = value
    with pytest.raises(ValueError, match=message):
        HostTiming(**values)
