"""Two NICs back to back through the drivers (issue 37): ``build/bench/system.json`` and three plots in
``docs/`` (``nic_latency_vs_size.png``, ``nic_bandwidth_vs_size.png``, ``nic_latency_breakdown.png``).

:class:`sim.tops.nic.NicSystem` of ``configs/test_nic.toml`` ``nic_config`` (the default configuration
with a five-port direct HTAX, one link port, 8 VPIDs; cable 2 cycles each way), each node with the host
model and the driver (:mod:`sim.driver.nic`), Verilator at ``EXTOLL_CXX_OPT`` (``-O2`` unless set, as
``make bench`` sets it).  Definitions of every measurement: ``tests/nic/tb_nic_bench.py``.  Cycles are
counted at the NICs' host ports; nanoseconds are those cycles at 156.25 MHz (6.4 ns) plus the host's
share from table 3-1 (:class:`sim.host_timing.HostTiming`: ``t_cd`` for the CPU store, ``t_dm / 2`` and
``t_cm`` for the write the CPU polls for: 310 ns per one-way operation); ``*_with_software`` adds table
9-2's 300 ns of software overhead, which the dissertation's measured figures contain.

Figures, each beside the dissertation's (ch. 9, table 7-10):

* ``pingpong_{velo,put}_{cycles,ns}``: half round trip of a ping-pong per size (fig. 9-1), and
  ``get_{cycles,ns}``: one get, post to the origin's completer notification;
* ``stream_{velo,put,get}_MBps``: streaming bandwidth per size (fig. 9-5), MB = 10^6 bytes;
* ``message_rate_Mps``: VELO 8 B, notification put, put 8 B (table 9-3);
* ``<op>_<sub-operation>`` and ``<op>_<sub-operation>_table_9_1``: table 9-1's composition measured
  through the whole NIC; ``startup_{cycles,ns,ns_with_software}``: its last column;
* ``breakdown_{velo,put}_{cycles,ns}``: where an 8-byte operation's time goes (fig. 7-15);
* ``dma_read_port_cycles``: the calibration check (table 3-1's t_dm, 44 cycles);
* ``sim_cycles_per_s``: simulation speed of the 2-node system and of an 8-node ring.

* ``phit32_*``: the same two nodes over ``configs/phit32.toml`` (32-bit phits, ch. 7.8): latency,
  streaming and message-rate figures; ``link_efficiency`` (both widths): put and get at 4 KiB over the raw link
  bandwidth (``phit_bits / 8`` bytes per cycle).

``--axi``: only the host-bus comparison (issue 46), ``build/bench/system_axi.json``: VELO, put and get
latency and streaming on two NICs with the HTAX host port and on two ``nic_axi`` (:mod:`rtl.hostbus`)
behind cocotbext-axi, each figure with both values and their difference (about 6 minutes with the two builds).

``--atu``: only translation from a cold TLB (issue 48), ``build/bench/system_atu.json``: on the NIC of
record (``configs/test_record.toml``, as ``--record``), 64 KiB put and get as 16 page-sized operations
posted back to back, each from a cold TLB (fresh regions, flushed) and again warm, with 4 KiB pages
without look-ahead (a second build with ``[atu] lookahead = 0``), 4 KiB pages with look-ahead (the NIC
as configured) and one 2 MiB page: ``atu_{put,get}_64k_{4k,4k_lookahead,2m}_*``, each node's TLB misses
(``misses_origin``: node 0, a put's requester or a get's completer; ``misses_target``: node 1, a put's
completer or a get's responder), ``misses_per_op`` (both nodes' misses per 4 KiB operation: an engine
translates an operation side as it starts it, so each miss delays that side), look-ahead GATEs
``la_filled``/``la_used``, and the cycles and MB/s from the first post to the last write into the
sink's memory, ``cycles_cold``/``MBps_cold`` and ``cycles_warm``/``MBps_warm``
(``tests/nic/tb_nic_atu_bench.py``; about 10 minutes with the two builds, 2.5 when they are cached).

``--record``: only the NIC of record, ``build/bench/system_record.json``: ``configs/test_record.toml``,
the default NIC as ``make report UNIT=nic`` synthesizes it (5-port ``HtaxPipelined``, 6 link ports, the
default link) with only its tables shrunk; every figure of ``system.json`` at fewer sizes.  The figures
of record of the throughput issue (44) come from here.

``--quick``: a few sizes, nothing written (a check of the testbench).  ``--no-ring``: without the
8-node ring; ``--no-phit32``: without the 32-bit-phit NIC.  ``--from-raw``: no simulation, the JSON
and the plots from the testbenches' raw results of the last run (``build/bench/system_raw/``).  Run
time on the two-core project machine: each 2-node bench about 2.5 minutes with its build, the 8-node
ring about 5 (most of it the elaboration of eight NICs); the builds are cached in ``build/sim/``.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH_DIR, DOCS_DIR, SUB, TABLE_9_1, write_bench  # noqa: E402

from rtl.config import load  # noqa: E402
from sim.host_timing import HostTiming  # noqa: E402
from sim.runner import run_cocotb  # noqa: E402
from sim.tops.configs import CONFIGS, nic_config, record_config, ring_config  # noqa: E402
from sim.tops.nic import NicSystem  # noqa: E402

SOFTWARE_NS = 300                   # table 9-2, software overhead per operation
#: table 9-3, messages per second
TABLE_9_3 = {"velo_8B": 5.5e6, "notification_put": 2.6e6, "put_8B": 1.375e6}
#: fig. 9-1 as the text gives it: VELO's ping-pong half round trip 1.3 us (ch. 9.1, 9.4, table 9-1),
#: put (virtual addresses) 1.99 us minimum (table 7-7), get 2.82 us (table 9-1)
FIG_9_1_NS = {"velo_8B": 1300, "put_8B": 1990, "get_8B": 2820}
#: fig. 9-5 / ch. 9.1 / tables 7-7 and 7-10: maximum bandwidth 275 MB/s (put, virtual addressing;
#: 274 MB/s in table 7-10), reached at ~4 KiB; VELO's maximum at 64 B with n_1/2 = 32 B; put passes
#: VELO's maximum at 384 B, get at 512 B
FIG_9_5 = {"max_MBps": 275, "velo_n_half_bytes": 32, "put_passes_velo_bytes": 384, "get_passes_velo_bytes": 512}
VELO_SIZES = (8, 16, 32, 64)
RAW_DIR = BENCH_DIR / "system_raw"      # the testbenches' raw results, for --from-raw
STREAM_VELO_SIZES = (8, 16, 32, 56, 64)
RMA_SIZES = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


def cxx_opt():
    return os.environ.get("EXTOLL_CXX_OPT", "-O2")


def phit32_config():
    """:func:`nic_config` over ``configs/phit32.toml``, with the ``[link]`` section that file gives the NIC
    (``configs/test_nic.toml``'s smaller receive and replay buffers are enough for 16-bit phits, but
    their credit loop would bound a 32-bit link: 32 beats per round trip)."""
    cfg = nic_config(CONFIGS / "phit32.toml")
    cfg["link"].update(load(CONFIGS / "phit32.toml")["link"])
    return cfg


def run_pair(params, cfg=None, name="nic_system2", bus="htax", phy=False, test_module="tests.nic.tb_nic_bench"):
    """The 2-node testbench ``test_module`` on ``cfg`` (default :func:`nic_config`), host side ``bus``,
    cables through the SerDes PHY and its model if ``phy``."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "system.json"
        t = time.perf_counter()
        run_cocotb(NicSystem(cfg or nic_config(), bus=bus, phy=phy), name=name, test_module=test_module,
                   params={"out": str(out), **params}, seed=1, cxx_opt=cxx_opt())
        print(f"2-node bench ({name}): {time.perf_counter() - t:.0f} s (build included)")
        return json.loads(out.read_text())


def run_ring(nodes=8):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "ring.json"
        t = time.perf_counter()
        run_cocotb(NicSystem(ring_config(nodes), nodes=nodes, topology="ring"), name=f"nic_ring{nodes}",
                   test_module="tests.nic.tb_nic_ring_speed", params={"out": str(out)}, seed=1,
                   cxx_opt=cxx_opt())
        res = json.loads(out.read_text())
        res["wall_s"] = round(time.perf_counter() - t)
        return res


def first_size(curve, threshold):
    """The smallest size (key ``<n>B``) whose value exceeds ``threshold``, or 0."""
    for k, v in curve.items():
        if v > threshold:
            return int(k[:-1])
    return 0


def n_half(curve):
    """The smallest size reaching half of the curve's maximum."""
    top = max(curve.values())
    return next(int(k[:-1]) for k, v in curve.items() if v >= top / 2)


def derive(raw, t, ring, phit_bits):
    """The JSON's figures from the testbench's raw cycle counts, for a link of ``phit_bits``."""
    mhz = 1000 / t.cycle_ns
    one_way = t.host_ns(stores=1, polls=1)
    res = {}

    def curve(prefix, sizes, scale=1.0, digits=1):
        return {f"{n}B": round(raw[f"{prefix}_{n}B"] * scale, digits) for n in sizes if f"{prefix}_{n}B" in raw}

    velo_sizes = [n for n in VELO_SIZES if f"pingpong_velo_{n}B" in raw]
    rma_sizes = [n for n in RMA_SIZES if f"pingpong_put_{n}B" in raw]
    for name, prefix, sizes in (("pingpong_velo", "pingpong_velo", velo_sizes),
                                ("pingpong_put", "pingpong_put", rma_sizes), ("get", "pingpong_get", rma_sizes)):
        cyc = curve(prefix, sizes)
        res[f"{name}_cycles"] = cyc
        res[f"{name}_ns"] = {k: round(v * t.cycle_ns + one_way) for k, v in cyc.items()}
        res[f"{name}_ns_with_software"] = {k: v + SOFTWARE_NS for k, v in res[f"{name}_ns"].items()}
    res["pingpong_ns_fig_9_1"] = FIG_9_1_NS

    # streaming bandwidth: bytes per cycle -> MB/s at the core clock
    for kind, sizes in (("velo", STREAM_VELO_SIZES), ("put", rma_sizes), ("get", rma_sizes)):
        res[f"stream_{kind}_bytes_per_cycle"] = curve(f"stream_{kind}", sizes, digits=4)
        res[f"stream_{kind}_MBps"] = {k: round(v * mhz, 1) for k, v in res[f"stream_{kind}_bytes_per_cycle"].items()}
    velo_max = max(res["stream_velo_MBps"].values())
    res["stream_summary"] = {
        "max_MBps_put": max(res["stream_put_MBps"].values()), "max_MBps_get": max(res["stream_get_MBps"].values()),
        "max_MBps_velo": velo_max, "velo_n_half_bytes": n_half(res["stream_velo_MBps"]),
        "put_n_half_bytes": n_half(res["stream_put_MBps"]), "get_n_half_bytes": n_half(res["stream_get_MBps"]),
        "put_passes_velo_bytes": first_size(res["stream_put_MBps"], velo_max),
        "get_passes_velo_bytes": first_size(res["stream_get_MBps"], velo_max)}
    res["stream_summary_dissertation"] = FIG_9_5
    res.update(link_figures(res, mhz, phit_bits))

    rates = {"velo_8B": raw["rate_velo_8B"], "notification_put": raw["rate_notification_put"],
             "put_8B": raw["rate_put_8B"]}
    res["message_rate_per_cycle"] = rates
    res["message_rate_Mps"] = {k: round(v * mhz, 3) for k, v in rates.items()}
    res["message_rate_Mps_table_9_3"] = {k: v / 1e6 for k, v in TABLE_9_3.items()}

    ops = [op for op in TABLE_9_1 if f"startup_{op}" in raw]
    for op in ops:
        counts, _ = TABLE_9_1[op]
        for s, v in zip(SUB, counts, strict=True):
            res[f"{op}_{s}"] = raw[f"{op}_{s}"]
            res[f"{op}_{s}_table_9_1"] = v
        res[f"{op}_gat_reads"] = raw[f"{op}_gat_reads"]
    res["composition_matches_table_9_1"] = sum(
        all(raw[f"{op}_{s}"] == c for s, c in zip(SUB, TABLE_9_1[op][0], strict=True)) for op in ops)
    res["startup_cycles"] = {op: raw[f"startup_{op}"] for op in ops}
    res["startup_ns"] = {op: round(raw[f"startup_{op}"] * t.cycle_ns + one_way) for op in ops}
    res["startup_ns_with_software"] = {op: v + SOFTWARE_NS for op, v in res["startup_ns"].items()}
    res["startup_ns_table_9_1"] = {op: TABLE_9_1[op][1] for op in ops}

    for op in ("velo", "put"):
        if f"breakdown_{op}_total" not in raw:
            continue
        seg = {k: raw[f"breakdown_{op}_{k}"] for k in ("host_model_send", "sender_nic", "cable", "receiver_nic")}
        res[f"breakdown_{op}_cycles"] = {**seg, "total": raw[f"breakdown_{op}_total"],
                                         "self_loop": raw[f"breakdown_{op}_self_loop"]}
        nic = raw[f"breakdown_{op}_self_loop"]
        res[f"breakdown_{op}_ns"] = {
            "cpu_store_t_cd": t.store_ns,
            "sender_nic_and_network": round((seg["host_model_send"] + seg["sender_nic"]) * t.cycle_ns, 1),
            "cable": round(seg["cable"] * t.cycle_ns, 1),
            "receiver_nic_and_network": round(seg["receiver_nic"] * t.cycle_ns, 1),
            "write_to_memory_t_dm_half": t.dma_write_ns, "poll_t_cm": t.poll_ns,
            "nic_alone_self_loop": round(nic * t.cycle_ns, 1),
            "network_beyond_nic": round((raw[f"breakdown_{op}_total"] - nic) * t.cycle_ns, 1),
            "total": round(raw[f"breakdown_{op}_total"] * t.cycle_ns + one_way, 1)}
    res["breakdown_total_ns_table_7_10"] = 1300

    res["dma_read_port_cycles"] = raw["dma_read_port_cycles"]
    res["dma_read_port_cycles_table_3_1"] = t.dma_read_cycles
    res["register_read_port_cycles"] = raw["register_read_port_cycles"]
    res["register_read_ns"] = round(t.cpu_read_ns(raw["register_read_port_cycles"]), 1)
    res["host_share_ns"] = {"cpu_store_t_cd": t.store_ns, "write_to_memory_t_dm_half": t.dma_write_ns,
                            "poll_t_cm": t.poll_ns, "one_way_total": one_way, "cpu_read_2_t_cd": 2 * t.cpu_device_ns}

    speed = {"2node_idle": raw["sim_cycles_per_s_idle"], "2node_busy": raw["sim_cycles_per_s_busy"]}
    if ring:
        speed["8node_ring_idle"] = ring["idle_cycles_per_s"]
        speed["8node_ring_busy"] = ring["busy_cycles_per_s"]
        res["ring8_build_and_run_s"] = ring["wall_s"]
    res["sim_cycles_per_s"] = speed
    res["sim_2node_cycles"] = raw["sim_cycles_total"]
    res["sim_2node_wall_s"] = raw["sim_wall_s"]
    return res


def link_figures(res, mhz, phit_bits):
    """The raw link bandwidth (one phit per cycle each way) and the share of it put and get reach at
    their largest size (goal 0.91, issue 44)."""
    raw = phit_bits / 8 * mhz
    largest = {kind: list(res[f"stream_{kind}_MBps"].items())[-1] for kind in ("put", "get")}  # curves rise in size
    return {"link_raw_MBps": round(raw, 1),
            "link_efficiency": {f"{kind}_{size}": round(v / raw, 3) for kind, (size, v) in largest.items()}}


def xs_of(curve):
    return [int(k[:-1]) for k in curve]


#: the figures of the 32-bit-phit NIC that bench/system.json keeps (as ``phit32_<key>``)
PHIT32_KEYS = ("pingpong_velo_cycles", "pingpong_put_cycles", "get_cycles", "stream_velo_MBps", "stream_put_MBps",
               "stream_get_MBps", "stream_summary", "message_rate_Mps", "link_raw_MBps", "link_efficiency")


def derive_phit32(raw, t, phit_bits):
    """The 32-bit-phit NIC's figures (``configs/phit32.toml``, ch. 7.8), keys prefixed ``phit32_``."""
    full = derive(raw, t, None, phit_bits)
    return {f"phit32_{k}": full[k] for k in PHIT32_KEYS}


#: the host-bus comparison (``--axi``): the sizes, and the phases the AXI host model supports
AXI_PARAMS = {"velo_sizes": [8, 64], "rma_sizes": [8, 512, 4096], "stream_velo_sizes": [8, 56], "phases": [],
              "idle_cycles": 2000}
#: (figure, raw key of tests/nic/tb_nic_bench.py, to MB/s) of the comparison
AXI_FIGURES = (("pingpong_velo_8B_cycles", "pingpong_velo_8B", False),
               ("pingpong_velo_64B_cycles", "pingpong_velo_64B", False),
               ("pingpong_put_8B_cycles", "pingpong_put_8B", False),
               ("get_8B_cycles", "pingpong_get_8B", False),
               ("get_4096B_cycles", "pingpong_get_4096B", False),
               ("stream_velo_56B_MBps", "stream_velo_56B", True),
               ("stream_put_4096B_MBps", "stream_put_4096B", True),
               ("stream_get_4096B_MBps", "stream_get_4096B", True))


def derive_axi(htax, axi, t):
    """The same figures on both host buses: ``{"htax": x, "axi": y, "axi_minus_htax": y - x}`` each."""
    mhz = 1000 / t.cycle_ns
    res = {}
    for fig, key, rate in AXI_FIGURES:
        h, a = ((round(raw[key] * mhz, 1) if rate else raw[key]) for raw in (htax, axi))
        res[fig] = {"htax": h, "axi": a, "axi_minus_htax": round(a - h, 1)}
    return res


def run_axi(cfg):
    """``build/bench/system_axi.json``: the 2-node bench on the HTAX host port and on two ``nic_axi``."""
    t = HostTiming.from_config(cfg)
    htax = run_pair(AXI_PARAMS, cfg)
    axi = run_pair({**AXI_PARAMS, "bus": "axi"}, cfg, "nic_system2_axi", bus="axi")
    res = derive_axi(htax, axi, t)
    write_bench("system_axi", res, {
        "config": "configs/test_nic.toml nic_config (as bench/system.json), on both host buses",
        "system": "sim.tops.nic.NicSystem(bus='htax') and NicSystem(bus='axi'): 2 nodes back to back, cable "
                  "2 cycles each way",
        "host": "htax: sim.host.HostModel; axi: sim.axi_host.AxiHostModel (cocotbext-axi AxiRam and "
                "AxiMaster, no stalls, reads answered t_dm after AR); both 44-cycle DMA reads",
        "clock_mhz": cfg["system"]["clock_mhz"], "cxx_opt": cxx_opt(),
        "units": {"*_cycles": "core clock cycles, driver call to the result in host memory (as bench/system.json)",
                  "*_MBps": "10^6 bytes per second at 156.25 MHz"},
        "measured_at": "tests/nic/tb_nic_bench.py with phases=[] (ping-pong and streaming)"})
    return res


#: the configuration of record's run (``--record``): fewer sizes, every phase
RECORD_PARAMS = {"velo_sizes": [8, 64], "rma_sizes": [8, 64, 512, 4096], "stream_velo_sizes": [8, 56],
                 "idle_cycles": 2000}


def run_record():
    """``build/bench/system_record.json``: the 2-node bench on the NIC of record
    (:func:`~sim.tops.configs.record_config`), every figure of ``system.json`` at fewer sizes."""
    cfg, cfg32 = record_config(), record_config(CONFIGS / "phit32.toml")
    t = HostTiming.from_config(cfg)
    raw = run_pair({**RECORD_PARAMS, "config": "record"}, cfg, "nic_record2")
    res = derive(raw, t, None, cfg["link"]["phit_bits"])
    check(res)
    raw32 = run_pair({**RECORD_PARAMS, "config": "record_phit32"}, cfg32, "nic_record2_phit32")
    res.update(derive_phit32(raw32, t, cfg32["link"]["phit_bits"]))
    write_bench("system_record", res, {
        "config": "configs/test_record.toml: configs/default.toml (5-port HtaxPipelined, 6 link ports, 1 network "
                  "port, default link buffers) with 8 VPIDs, 4 nodes, 64 TLB and 16 GAT entries",
        "phit32": "the same NIC over configs/phit32.toml ([link] phit_bits = 32, ch. 7.8): the phit32_* figures",
        "system": "sim.tops.nic.NicSystem, 2 nodes back to back (b2b) on link port 0, cable latency 2 cycles each "
                  "way; the other link ports see an idle line",
        "htax_variant": cfg["htax"]["variant"], "address_mode": "virtual (ATU), TLBs warm",
        "clock_mhz": cfg["system"]["clock_mhz"], "cxx_opt": cxx_opt(),
        "units": "as build/bench/system.json",
        "measured_at": "tests/nic/tb_nic_bench.py (as build/bench/system.json)"})
    return res


#: ``--atu``: the builds of the NIC of record (``[atu]`` overrides, build name, page sizes measured) and
#: the cases they measure
ATU_BUILDS = (({"lookahead": 0}, "nic_record2_lookahead0", ["4k"]), ({}, "nic_record2", ["4k", "2m"]))
ATU_CASES = ("4k", "4k_lookahead", "2m")
ATU_BYTES, ATU_OPS = 64 * 1024, 16


def derive_atu(raw, mhz):
    """``atu_<kind>_64k_<case>_<figure>`` from the testbench's ``<kind>_<case>_<figure>``."""
    res = {}
    for kind in ("put", "get"):
        for case in ATU_CASES:
            src, dst = f"{kind}_{case}_", f"atu_{kind}_64k_{case}_"
            for k in ("misses_origin", "misses_target", "la_filled", "la_used"):
                res[dst + k] = raw[src + k]
            res[dst + "misses_per_op"] = round((raw[src + "misses_origin"] + raw[src + "misses_target"]) / ATU_OPS, 3)
            for temp in ("cold", "warm"):
                cycles = raw[f"{src}cycles_{temp}"]
                res[f"{dst}cycles_{temp}"] = cycles
                res[f"{dst}MBps_{temp}"] = round(ATU_BYTES / cycles * mhz, 1)
    return res


def run_atu():
    """``build/bench/system_atu.json``: 64 KiB put and get from a cold TLB on the NIC of record, without
    and with look-ahead and with 2 MiB pages (:data:`ATU_BUILDS`)."""
    raw = {}
    for atu, name, pages in ATU_BUILDS:
        cfg = record_config()
        cfg["atu"].update(atu)
        raw.update(run_pair({"config": "record", "overrides": {"atu": atu}, "pages": pages}, cfg, name,
                            test_module="tests.nic.tb_nic_atu_bench"))
    res = derive_atu(raw, cfg["system"]["clock_mhz"])
    write_bench("system_atu", res, {
        "config": "configs/test_record.toml (as build/bench/system_record.json); the 4k case with [atu] "
                  "lookahead = 0, the others as configured",
        "system": "sim.tops.nic.NicSystem, 2 nodes back to back (b2b) on link port 0, cable latency 2 cycles each "
                  "way",
        "atu": {k: cfg["atu"][k] for k in ("tlb_entries", "tlb_ways", "large_tlb_entries", "lookahead")},
        "workload": "64 KiB as 16 operations of 4 KiB (one page each), posted back to back by node 0 without "
                    "notifications; cold: fresh regions on both nodes (4k: 64 KiB of 4 KiB pages; 2m: one "
                    "2 MiB page), their 16 pages flushed from the TLBs; warm: the same 64 KiB again",
        "clock_mhz": cfg["system"]["clock_mhz"], "cxx_opt": cxx_opt(),
        "units": {"*_misses_origin": "TLB misses at node 0 (put: requester; get: completer)",
                  "*_misses_target": "TLB misses at node 1 (put: completer; get: responder)",
                  "*_misses_per_op": "both nodes' misses per 4 KiB operation",
                  "*_la_filled": "look-ahead GATEs filled into the TLBs, both nodes",
                  "*_la_used": "TLB entries a look-ahead filled that were hit, both nodes",
                  "*_cycles_*": "core clock cycles, first post (CPU store) to the last write into the sink's memory",
                  "*_MBps_*": "65536 bytes over those cycles, 10^6 bytes per second at 156.25 MHz"},
        "measured_at": "tests/nic/tb_nic_atu_bench.py: atu.tlb_counters and atu.lookahead_counters of both nodes "
                       "read through the host before and after each run"})
    return res


#: the PHY run's phases: the ping-pongs and the smallest streams only
PHY_PARAMS = {"velo_sizes": [8, 64], "rma_sizes": [8, 64], "stream_velo_sizes": [8], "phases": [],
              "idle_cycles": 2000}


def run_phy():
    """``build/bench/system_phy.json``: the NIC of record, two nodes whose cable runs through two SerDes
    PHYs and the DCU model (``NicSystem(phy=True)``, ``configs/test_phy.toml``: ``idle_gap = 1``, an
    80 MHz core), beside the same nodes on a 2-cycle channel model: the PHY's share of the half round
    trips."""
    out = {}
    for label, phy in (("phy", True), ("channel", False)):
        cfg = record_config(CONFIGS / "test_phy.toml")
        raw = run_pair({**PHY_PARAMS, "config": f"record_{label}"}, cfg, f"nic_record2_{label}", phy=phy)
        t_cyc = 1000 / cfg["system"]["clock_mhz"]
        for key in ("pingpong_velo_8B", "pingpong_velo_64B", "pingpong_put_8B", "pingpong_put_64B",
                    "pingpong_get_8B"):
            out[f"{key}_{label}_cycles"] = raw[key]
            out[f"{key}_{label}_ns"] = round(raw[key] * t_cyc, 1)
    for key in ("pingpong_velo_8B", "pingpong_put_8B"):
        out[f"{key}_phy_share_ns"] = round(out[f"{key}_phy_ns"] - out[f"{key}_channel_ns"], 1)
    write_bench("system_phy", out, {
        "config": "configs/test_record.toml + configs/test_phy.toml ([link] idle_gap = 1, 80 MHz core)",
        "system": "sim.tops.nic.NicSystem(phy=True): 2 nodes, each link port behind a SerdesPhy, the cable two "
                  "DCU models in one 100 MHz word clock (4 + 6 words of SerDes latency); 'channel': the same "
                  "nodes on the 2-cycle LfsrChannel",
        "units": "cycles of the 80 MHz core at the host ports, ns = cycles x 12.5 (no host share)",
        "measured_at": "tests/nic/tb_nic_bench.py"})
    return out


def check(res):
    """The calibration the ns figures rest on: a DMA read's round trip at the port is t_dm."""
    if res["dma_read_port_cycles"] != res["dma_read_port_cycles_table_3_1"]:
        raise AssertionError(f"DMA read round trip at the host port is {res['dma_read_port_cycles']} cycles, "
                             f"table 3-1's t_dm is {res['dma_read_port_cycles_table_3_1']}")


def plots(res):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plots")
        return

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for name, label in (("pingpong_velo", "VELO (half round trip)"), ("pingpong_put", "put (half round trip)"),
                        ("get", "get")):
        c = res[f"{name}_ns_with_software"]
        ax.plot(xs_of(c), list(c.values()), "o-", label=label)
    ref = res["pingpong_ns_fig_9_1"]
    ax.plot([8, 8, 8], [ref["velo_8B"], ref["put_8B"], ref["get_8B"]], "kx", markersize=9,
            label="dissertation, 8 B (fig. 9-1, tables 7-7, 9-1)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("operation size [bytes]")
    ax.set_ylabel("latency [ns]")
    ax.set_title("Two NICs back to back: ping-pong latency\n(port cycles x 6.4 ns + table 3-1 host + 300 ns software)",
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(DOCS_DIR / "nic_latency_vs_size.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4.4))
    for k, kind in enumerate(("velo", "put", "get")):
        c = res[f"stream_{kind}_MBps"]
        ax.plot(xs_of(c), list(c.values()), "o-", color=f"C{k}", label=f"{kind}, 16-bit phits")
        if f"phit32_stream_{kind}_MBps" in res:
            c = res[f"phit32_stream_{kind}_MBps"]
            ax.plot(xs_of(c), list(c.values()), "s--", color=f"C{k}", label=f"{kind}, 32-bit phits")
    ax.axhline(res["stream_summary_dissertation"]["max_MBps"], color="k", ls="--", lw=1,
               label="dissertation maximum, 275 MB/s (table 7-7)")
    ax.axhline(res["link_raw_MBps"], color="grey", ls=":", lw=1, label="link, 16 bits per cycle")
    if "phit32_link_raw_MBps" in res:
        ax.axhline(res["phit32_link_raw_MBps"], color="grey", ls="-.", lw=1, label="link, 32 bits per cycle")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("operation size [bytes]")
    ax.set_ylabel("bandwidth [MB/s]")
    ax.set_title("Two NICs back to back: streaming bandwidth (fig. 9-5)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(DOCS_DIR / "nic_bandwidth_vs_size.png", dpi=100)
    plt.close(fig)

    parts = [("cpu_store_t_cd", "CPU store (t_cd)"), ("sender_nic_and_network", "sending NIC + network layer"),
             ("cable", "cable (channel model)"), ("receiver_nic_and_network", "receiving network layer + NIC"),
             ("write_to_memory_t_dm_half", "write to memory (t_dm/2)"), ("poll_t_cm", "CPU poll (t_cm)")]
    ops = [op for op in ("velo", "put") if f"breakdown_{op}_ns" in res]
    fig, ax = plt.subplots(figsize=(7, 1.9 + 0.5 * len(ops)))
    for i, op in enumerate(ops):
        left = 0
        for k, (key, label) in enumerate(parts):
            w = res[f"breakdown_{op}_ns"][key]
            ax.barh(i, w, left=left, color=f"C{k}", label=label if i == 0 else None)
            left += w
    ax.set_yticks(range(len(ops)), [f"{op} 8 B" for op in ops])
    ax.set_xlabel("ns (one way, no software)")
    ax.set_title("Where an 8-byte operation's time goes (cf. fig. 7-15)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=3)
    fig.tight_layout()
    fig.savefig(DOCS_DIR / "nic_latency_breakdown.png", dpi=100)
    plt.close(fig)
    print("wrote docs/nic_latency_vs_size.png, docs/nic_bandwidth_vs_size.png, docs/nic_latency_breakdown.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a few sizes, write nothing")
    ap.add_argument("--no-ring", action="store_true", help="without the 8-node ring's simulation speed")
    ap.add_argument("--no-phit32", action="store_true", help="without the 32-bit-phit NIC (configs/phit32.toml)")
    ap.add_argument("--axi", action="store_true",
                    help="only the host-bus comparison: HTAX and AXI4 NICs -> build/bench/system_axi.json")
    ap.add_argument("--atu", action="store_true",
                    help="only 64 KiB put/get from a cold TLB on the NIC of record -> build/bench/system_atu.json")
    ap.add_argument("--record", action="store_true",
                    help="only the NIC of record (configs/test_record.toml) -> build/bench/system_record.json")
    ap.add_argument("--phy", action="store_true",
                    help="only the cables through the SerDes PHY and its model -> build/bench/system_phy.json")
    ap.add_argument("--from-raw", action="store_true",
                    help="no simulation: the JSON and plots from the last run's build/bench/system_raw/")
    args = ap.parse_args()
    cfg, cfg32 = nic_config(), phit32_config()
    if args.axi:
        run_axi(cfg)
        return
    if args.record:
        run_record()
        return
    if args.atu:
        run_atu()
        return
    if args.phy:
        print(json.dumps(run_phy(), indent=1))
        return
    t = HostTiming.from_config(cfg)
    params = {}
    if args.quick:
        params = {"velo_sizes": [8, 64], "rma_sizes": [8, 4096], "stream_velo_sizes": [8, 64],
                  "ops": ["velo", "put", "get"], "idle_cycles": 2000}
    if args.from_raw:
        raw = json.loads((RAW_DIR / "pair.json").read_text())
        ring_path, p32_path = RAW_DIR / "ring.json", RAW_DIR / "pair_phit32.json"
        ring = json.loads(ring_path.read_text()) if ring_path.exists() and not args.no_ring else None
        raw32 = json.loads(p32_path.read_text()) if p32_path.exists() and not args.no_phit32 else None
    else:
        raw = run_pair(params)
        raw32 = (run_pair(params, cfg32, "nic_system2_phit32")
                 if not args.no_phit32 and not args.quick else None)
        ring = run_ring() if not args.no_ring and not args.quick else None
        if not args.quick:
            RAW_DIR.mkdir(parents=True, exist_ok=True)
            for fname, got in (("pair.json", raw), ("pair_phit32.json", raw32), ("ring.json", ring)):
                if got:
                    (RAW_DIR / fname).write_text(json.dumps(got, indent=1) + "\n")
    res = derive(raw, t, ring, cfg["link"]["phit_bits"])
    if raw32:
        res.update(derive_phit32(raw32, t, cfg32["link"]["phit_bits"]))
    check(res)
    if args.quick:
        print(json.dumps(res, indent=1))
        return
    write_bench("system", res, {
        "config": "configs/test_nic.toml nic_config: configs/default.toml with a 5-port direct HTAX, one link "
                  "port, 8 VPIDs, 4 nodes, 64 TLB entries",
        "system": "sim.tops.nic.NicSystem, 2 nodes back to back (b2b), cable latency 2 cycles each way",
        "ring": "NicSystem(ring_config(8), nodes=8, topology='ring'): two link ports per node",
        "phit32": "the same two nodes over configs/phit32.toml ([link] phit_bits = 32, ch. 7.8) with that "
                  "file's whole [link] section (128-beat receive buffers, 32 replay flits): the phit32_* figures",
        "htax_variant": cfg["htax"]["variant"], "address_mode": "virtual (ATU), TLBs warm",
        "clock_mhz": cfg["system"]["clock_mhz"], "cxx_opt": cxx_opt(),
        "host_timing_ns": {"t_cc": t.cpu_cache_ns, "t_cm": t.cpu_memory_ns, "t_cd": t.cpu_device_ns,
                           "t_dm": t.dma_read_ns, "t_cyc": t.cycle_ns},
        "units": {"*_cycles": "core clock cycles at the host ports", "*_ns": "ns end to end: cycles x t_cyc + "
                  "host share (t_cd + t_dm/2 + t_cm per one-way operation, sim/host_timing.py)",
                  "*_ns_with_software": "+ 300 ns software overhead (table 9-2)",
                  "*_MBps": "10^6 bytes per second at 156.25 MHz", "*_bytes_per_cycle": "payload bytes per cycle",
                  "message_rate_Mps": "10^6 operations per second", "sim_cycles_per_s": "simulated cycles per "
                  "wall-clock second"},
        "measured_at": "tests/nic/tb_nic_bench.py: ping-pong polling every cycle; streams and rates: the sink's "
                       "device writes; composition: both nodes' host models and NIC counters"},
        notes(res))
    plots(res)


def notes(res):
    out = {
        "latency": "the dissertation's figures are wall-clock on the HTX prototype: HT core, PHY (SERDES), "
                   "software; here the NIC is cycle-exact at its host port, the host is table 3-1's constants, "
                   "the cable a 2-cycle channel model without SERDES, and software is table 9-2's 300 ns",
        "bandwidth": "one 16-bit link at 156.25 MHz carries at most 312.5 MB/s raw; the prototype's 275 MB/s "
                     "is the same link's payload rate.  Here every RMA data packet carries one 64-byte line "
                     "behind a network header, the first of an operation a command word more: 8 of every 9 "
                     "beats are payload, and the link carries large packets at 0.955 of its raw bits "
                     "(bench/link.py efficiency_max_packet), a bound of 0.955 x 8 / 9 = 0.849.  What would "
                     "reach 0.91 of the raw rate: packets of three or more lines behind one header",
        "message_rate": "the host model issues CPU stores back to back at the port (t_cd is a latency, not an "
                        "occupancy), so the rates are the NIC's, not a CPU's: the prototype's rates include the "
                        "processor's cost per store and per poll",
        "sim_speed": "wall-clock figures depend on the machine's load (two shared cores, load average ~7 during "
                     "the run)",
        "breakdown": "fig. 7-15's numbers are in a figure only; the text gives the total (1300 ns start-up, "
                     "table 7-10). nic_alone_self_loop: the same operation sent by node 0 to itself (host "
                     "ports, HTAX, unit, network port, one crossbar pass); network_beyond_nic: the rest "
                     "(second crossbar, two link ports, cable)",
    }
    for op in TABLE_9_1:
        if f"{op}_dma_reads" not in res:
            continue
        diffs = [f"{s}: {res[f'{op}_{s}']} here, {res[f'{op}_{s}_table_9_1']} in table 9-1" for s in SUB
                 if res[f"{op}_{s}"] != res[f"{op}_{s}_table_9_1"]]
        if diffs:
            out[op] = "; ".join(diffs)
    return out


if __name__ == "__main__":
    main()
