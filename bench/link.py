"""``make bench`` for the link port: efficiency, throughput, retry recovery, goodput under errors.

Runs the RTL loop (sim.tops.link.LinkLoop: two default link ports, 16-cycle channel each way,
traffic generators and checkers on every VC) on Verilator without per-cycle Python, and the recovery
testbench (tests/link/tb_link_recovery.py) with the Python channel.  Definitions are in docs/link.md
("Performance"); results go to build/bench/link.json.

What counts as payload: a packet is a network header, command words and payload words
(docs/network.md).  To the link every one of them is payload (``link``: it cannot tell them apart); to
the network layer only the payload words are (``strict``: the checkers count beats of kind PAYLOAD),
the header and the command words are overhead.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_bench  # noqa: E402

from rtl.config import load  # noqa: E402
from rtl.link import LinkParams  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.link import (
    LinkLoop,  # noqa: E402
    LinkPair,  # noqa: E402
)

LATENCY = 16
CYCLES = 200_000


def loop(cfg, **params):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        top = LinkLoop(latency=LATENCY, **cfg)
        run_cocotb(top, name="link_loop", test_module="tests.link.tb_link_loop",
                   params=dict(params, vcs=top.params.vcs, out=f.name, check=True), seed=1)
        with open(f.name) as g:
            return json.load(g)


def shape_run(cfg, vcs, cw, pw):
    s = loop(cfg, packets=0, cycles=CYCLES, fixed_cw=cw, fixed_pw=pw)
    payload = sum(s[f"{x}{v}_payload"] for x in "ab" for v in range(vcs))
    packets = sum(s[f"{x}{v}_received"] for x in "ab" for v in range(vcs))
    raw = 2 * s["cycles"] * cfg["phit_bits"]          # both directions
    words = 1 + cw + pw        # network header, command words, payload words
    return {"strict": payload * 64 / raw, "link": packets * words * 64 / raw, "s": s}


def main():
    cfg = dict(load()["link"])
    p = LinkParams(**{k: v for k, v in cfg.items() if k not in ("replay_timeout", "max_replays")})
    metrics = {}

    # efficiency_max_packet is the link's own figure: every bit of the largest packet (network header,
    # 3 command words, 8 payload words: 12 words) is payload to the link.  The 56-byte and user-payload
    # figures name the network layer's overhead (the header), so there only the payload bytes count.
    big = shape_run(cfg, p.vcs, 0, 8)
    metrics["efficiency_max_packet_user_payload"] = round(big["strict"], 4)
    biggest = shape_run(cfg, p.vcs, 3, 8)
    metrics["efficiency_max_packet"] = round(biggest["link"], 4)
    small = shape_run(cfg, p.vcs, 0, 7)
    metrics["efficiency_56B"] = round(small["strict"], 4)
    metrics["link_efficiency_56B"] = round(small["link"], 4)
    single = p.data_flit_phits(1 + 7)   # network header + 7 payload words
    metrics["efficiency_56B_single_packet"] = round(56 * 8 / (single * p.phit_bits), 4)
    metrics["link_cycles_56B_single_packet"] = single

    s = big["s"]
    metrics["throughput_phits_per_cycle"] = round(min(s["a_busy_phits"], s["b_busy_phits"]) / s["cycles"], 4)
    metrics["data_phits_per_cycle"] = round(min(s["a_data_phits"], s["b_data_phits"]) / s["cycles"], 4)

    clean = loop(cfg, packets=0, cycles=4 * CYCLES)
    noisy = loop(cfg, packets=0, cycles=4 * CYCLES, flit_error=1e-3, flit_phits=p.data_flit_phits(p.max_beats))
    pay = [sum(r[f"{x}{v}_payload"] for x in "ab" for v in range(p.vcs)) for r in (clean, noisy)]
    metrics["goodput_at_1e-3"] = round(pay[1] / pay[0], 4)
    metrics["goodput_crc_errors"] = noisy["a_crc_errors"] + noisy["b_crc_errors"]

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run_cocotb(LinkPair(**cfg), name="link_pair_default", test_module="tests.link.tb_link_recovery",
                   params=dict(latency=LATENCY, seq_bits=p.seq_bits, seq_lsb=p.data_header["seq"].offset,
                               vcs=p.vcs, count=8, out=f.name), seed=1)
        with open(f.name) as g:
            events = json.load(g)
    over = [e["recovery"] - 2 * e["latency"] - e["flit_phits"] for e in events]
    metrics["retry_recovery_cycles_over_rtt"] = max(over)
    metrics["retry_recovery_cycles_over_rtt_mean"] = round(sum(over) / len(over), 1)
    metrics["retry_recovery_cycles"] = max(e["recovery"] for e in events)
    metrics["retry_rtt_cycles"] = 2 * events[0]["latency"]

    config = dict(cfg, channel_latency_cycles=LATENCY, measure_cycles=CYCLES, **{
        k: v for k, v in p.as_dict().items() if k not in cfg})
    write_bench("link", metrics, config)


if __name__ == "__main__":
    main()
