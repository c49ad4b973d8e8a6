"""The RTL loop (two link ports, LFSR channel, generators and checkers) at length: short in the
default suite, >= 10**6 flits at a 1e-3 per-flit error rate under ``make soak``."""

import pytest

from sim.runner import run_cocotb
from sim.tops.link import LinkLoop


@pytest.mark.cocotb
def test_loop_short():
    """Default configuration (four VCs, 1500 packets on each), 1e-3 per-flit errors plus dropped
    phits and bursts, backpressure."""
    loop = LinkLoop()
    run_cocotb(loop, name="link_loop", test_module="tests.link.tb_link_loop",
               params=dict(vcs=loop.params.vcs, packets=1500, cycles=600_000, flit_error=1e-3, drop=2e-5,
                           burst=1e-5, src_stall=0.1, dst_stall=0.1))


@pytest.mark.soak
@pytest.mark.cocotb
def test_loop_soak():
    """>= 10**6 data flits (both directions) at a 1e-3 per-flit error rate: nothing lost,
    duplicated, reordered or corrupted.  16-phit flits (3 beats) so that a million flits take
    ~7 M cycles instead of 31 M with 64-phit flits."""
    import json
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        loop = LinkLoop(flit_phits=16)
        run_cocotb(loop, name="link_loop_f16", test_module="tests.link.tb_link_loop",
                   params=dict(vcs=loop.params.vcs, packets=0, cycles=7_500_000, flit_error=1e-3,
                               flit_phits=14, step=500_000, out=f.name))
        with open(f.name) as g:
            s = json.load(g)
    flits = s["a_data_flits"] + s["b_data_flits"]
    print(f"soak: {flits} data flits, {s['a_crc_errors'] + s['b_crc_errors']} CRC errors")
    assert flits >= 10**6, s
