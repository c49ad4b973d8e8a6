"""Scoreboard tests: two link ports through sim.channel with every error kind (cocotb + Verilator).

Each case sends random network-side packets on every VC (four by default) in both directions with
random source stalls and sink backpressure and checks that every packet arrives exactly once, in
order, intact, on its VC, plus the counters the error kind must move.  ``SEED=<n>`` replays a run.
"""

import pytest

from sim.runner import run_cocotb
from sim.tops.link import LinkPair

# Small flits and short timers so that every error kind happens many times in a short run.
SMALL = dict(phit_bits=16, flit_phits=16, replay_flits=8, rx_buffer_beats=16)

CASES = {
    "clean": dict(packets=60, errors={}, expect_zero=["a.crc_errors", "b.crc_errors",
                                                      "a.retransmissions", "b.retransmissions",
                                                      "a.replay_timeouts", "b.replay_timeouts"]),
    "bit_flip": dict(errors={"bit_flip": 2e-3}, expect=["any.crc_errors", "any.retransmissions",
                                                        "any.naks_sent", "any.naks_received"]),
    "drop_phit": dict(errors={"drop_phit": 2e-3}, expect=["any.crc_errors", "any.retransmissions"]),
    "burst": dict(errors={"burst": 1e-3}, expect=["any.crc_errors", "any.retransmissions"]),
    "ack_corrupt": dict(errors={"ack_corrupt": 0.05}, src_stall=0.6,
                        expect=["any.crc_errors"]),
    # Acks from b to a almost all lost and b sending no data: only the replay timer recovers.
    "ack_drop": dict(errors={}, errors_ba={"ack_drop": 0.98}, one_way=True, max_replays=15,
                     max_cycles=150000, expect=["a.replay_timeouts", "a.retransmissions"]),
    # Random bursts lose their last flit; recovered by a NAK on the next burst's gap or the timer.
    "drop_last": dict(errors={"drop_last": 0.2}, latency=24, src_stall=0.6, max_replays=15,
                      expect=["any.retransmissions"]),
    # The very last data flit of the run is lost: nothing follows it, only the replay timer helps.
    "drop_final": dict(errors={}, latency=24, drop_final=True,
                       expect=["a.replay_timeouts", "a.retransmissions"]),
    "backpressure": dict(dst_stall=0.85, errors={"bit_flip": 1e-3}, max_cycles=120000,
                         expect_zero=["a.protocol_errors"]),
    "link_error": dict(scenario="link_error", packets=20, replay_timeout=64, max_replays=3,
                       expect=["a.replay_timeouts"]),
    "malformed": dict(scenario="malformed", packets=30, errors={"bit_flip": 1e-3}),
}


@pytest.mark.cocotb
@pytest.mark.parametrize("case", sorted(CASES))
def test_link_pair_small(case):
    params = dict(packets=40, latency=8, replay_timeout=160, vcs=4)
    params.update(CASES[case])
    run_cocotb(LinkPair(**SMALL), name="link_pair_small", test_module="tests.link.tb_link_pair",
               params=params)


@pytest.mark.cocotb
@pytest.mark.parametrize("case", ["bit_flip", "malformed"])
def test_link_pair_two_vcs(case):
    """The two-VC variant (``vcs=2``: a one-bit vc field, two credit counters) against the same
    scoreboard."""
    params = dict(packets=40, latency=8, replay_timeout=160, vcs=2)
    params.update(CASES[case])
    run_cocotb(LinkPair(**SMALL, vcs=2), name="link_pair_small_vcs2", test_module="tests.link.tb_link_pair",
               params=params)


@pytest.mark.cocotb
@pytest.mark.parametrize("case", ["clean", "bit_flip", "burst"])
def test_link_pair_default(case):
    """The default configuration (16-bit phits, 64-phit flits, 32-flit replay buffer, four VCs).

    A bit flip in 2e-3 of the phits corrupts 12 % of the 62-phit flits, so the default four failed
    replays in a row happen in about 2e-4 of the error episodes (a few per thousand runs) and rightly
    end in the link-error state; this test is about delivery under errors, so it allows 15."""
    params = dict(packets=40, latency=16, max_replays=15, vcs=4)
    params.update(CASES[case])
    if case == "burst":
        # 40 packets take ~3300 cycles here: ~3 bursts per direction at 1e-3, and all of them may miss
        # the data flits (seed 15: nothing retransmitted).  80 packets at 3e-3: ~30 bursts, each
        # missing with probability ~1/2.
        params.update(packets=80, errors={"burst": 3e-3})
    run_cocotb(LinkPair(), name="link_pair_default", test_module="tests.link.tb_link_pair",
               params=params)
