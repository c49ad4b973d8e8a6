"""The registry of measured figures: what ``docs/performance.md`` shows, with goals and sources.

``python -m fpga.perfdoc`` renders one table row per :class:`Metric`, in this order, grouped by
``section``.  A metric names the JSON file that holds it (a key of :data:`SOURCES`: ``bench/<name>``
is ``build/bench/<name>.json``, ``reports/<unit>`` is ``build/reports/<unit>.json``) and its key
there.  A new unit adds its sources and metrics here; the generator stays as it is.

Goals come from the issues that asked for each unit; dissertation figures from M. Nüßle's
dissertation (tables 3-1, 5-7, 5-8; ch. 5.5, 7.1, 7.3).  Tables 7-9 (resources of the whole design),
9-1/9-2 (latencies of VELO and RMA operations) and 9-3 (message rates) hold the figures for the units
still to come, for example::

    Metric("VELO", "bench/velo", "message_rate_per_cycle", "messages sent per cycle", "",
           None, "> 5 million/s (table 9-3)"),
"""

from dataclasses import dataclass

__all__ = ["Goal", "Metric", "SOURCES", "METRICS", "NOTES", "at_least", "at_most"]


@dataclass(frozen=True)
class Goal:
    """``value op target``: ``op`` is ``">="`` or ``"<="``; ``target`` a number or a function of the
    source's JSON document (for goals that depend on the configuration); ``text`` says how the
    target is derived when it is not a constant."""
    op: str
    target: object
    text: str = ""

    def __post_init__(self):
        if self.op not in (">=", "<="):
            raise ValueError(f"goal op must be '>=' or '<=', not {self.op!r}")


def at_least(target, text=""):
    return Goal(">=", target, text)


def at_most(target, text=""):
    return Goal("<=", target, text)


@dataclass(frozen=True)
class Metric:
    """One row of ``docs/performance.md``.

    ``key`` is a key of the source's JSON object; ``a.b`` reaches into a nested object or list
    (``ecp5_fmax_by_seed.1``).  A value that is a list or an object is shown whole, and meets the
    goal when every element does (Fmax at every nextpnr seed)."""
    section: str
    source: str
    key: str
    label: str
    unit: str = ""
    goal: Goal | None = None
    dissertation: str = ""


#: source -> the command that writes it
SOURCES = {
    "bench/host": "python bench/host.py",
    "bench/htax": "python bench/htax.py --design htax",
    "bench/htax_pipelined": "python bench/htax.py --design htax_pipelined",
    "bench/regfile": "python bench/regs.py",
    "bench/link": "python bench/link.py",
    "bench/atu": "python bench/atu.py",
    "bench/network": "python bench/network.py",
    "bench/xbar_matching": "python bench/xbar_matching.py",
    "bench/velo": "python bench/velo.py",
    "bench/rma": "python bench/rma.py",
    "reports/scratch": "make report UNIT=scratch",
    "reports/htax_pipelined": "make report UNIT=htax_pipelined",
    "reports/regs": "make report UNIT=regs",
    "reports/link": "make report UNIT=link",
    "reports/atu": "make report UNIT=atu",
    "reports/xbar": "make report UNIT=xbar",
    "reports/netport": "make report UNIT=netport",
    "reports/velo": "make report UNIT=velo",
    "reports/rma": "make report UNIT=rma",
    "bench/system": "python bench/system.py",
    "bench/system_record": "python bench/system.py --record",
    "reports/nic": "make report UNIT=nic PLACER=static",
    "bench/hostbus": "python bench/hostbus.py",
    "bench/system_axi": "python bench/system.py --axi",
    "bench/system_atu": "python bench/system.py --atu",
    "reports/hostbus": "make report UNIT=hostbus",
    "bench/system_phy": "python bench/system.py --phy",
    "bench/board": "python bench/board.py",
}

_FMAX = at_least(200)
_CORE_CLOCK = "core clock 156.25 MHz (table 3-1)"


def _resources(section, unit, *, fmax_goal=None, ff_goal=None, lut_goal=None, diss=None):
    """The ``make report`` rows of one unit; ``diss`` maps a report key to the dissertation's figure.
    The counts share one row unless a goal needs LUT4 or flip-flops alone; the Fmax of every nextpnr
    seed is in the report (``ecp5_fmax_by_seed``), the page shows their median."""
    src, diss = f"reports/{unit}", diss or {}
    rows = [("ecp5_fmax_mhz", "ECP5 Fmax (median over the nextpnr seeds run)", "MHz", fmax_goal)]
    if lut_goal or ff_goal:
        rows += [("ecp5_lut4", "ECP5 LUT4", "", lut_goal), ("ecp5_ff", "ECP5 flip-flops", "", ff_goal),
                 ("ecp5_dp16kd+xc7_lut", "ECP5 DP16KD (18 kbit) / Xilinx 7-series LUT (synthesis only)", "",
                  None)]
    else:
        rows.append(("ecp5_lut4+ecp5_ff+ecp5_dp16kd+xc7_lut",
                     "ECP5 LUT4 / flip-flops / DP16KD (18 kbit) / Xilinx 7-series LUT (synthesis only)", "", None))
    for key, _, _, _ in rows[1:]:
        if "+" in key and diss.keys() & set(key.split("+")):
            diss = {**diss, key: " / ".join(diss.get(k, "-") for k in key.split("+"))}
    rows += [("ecp5_slices", "ECP5 slices (2 LUT4 + 2 FF each)", "", None)] if "ecp5_slices" in diss else []
    return [Metric(section, src, key, label, unit_, goal, diss.get(key, "")) for key, label, unit_, goal in rows]


def _switch(section, src):
    return [
        Metric(section, src, "zero_load_latency_cycles", "zero-load latency, header in to header out", "cycles",
               at_most(2), "9 (6 in + 3 out, ch. 7.1)"),
        Metric(section, src, "throughput_per_port_saturated", "saturated throughput, uniform traffic, 8 ports",
               "beats/cycle/output", at_least(0.9)),
        Metric(section, src, "throughput_per_port_saturated_no_ready2", "the same, sinks without `ready2`",
               "beats/cycle/output"),
        Metric(section, src, "throughput_per_port_saturated_4ports", "saturated throughput, 4 ports",
               "beats/cycle/output"),
        Metric(section, src, "fairness_min_share", "smallest share of a contended output", "",
               at_least(lambda doc: 0.9 / doc["config"]["ports"], "0.9 / ports")),
        Metric(section, src, "contended_output_beats_per_cycle", "contended output, all inputs to one",
               "beats/cycle"),
        Metric(section, src, "single_beat_one_input_per_cycle",
               "single-beat packets from one input to one output, outputs free", "packets/cycle", at_least(0.9)),
    ]


_HOST = "Host model and self-test target (`sim/host.py`, `sim/tops/scratch.py`, issue 2)"
_REGS = "Register file (`rtl/regs`, issue 4)"
_ATU = "ATU (`rtl/atu`, issue 5)"
_LINK = "Link port (`rtl/link`, issue 6)"
_NET = "Network layer (`rtl/xbar`, `rtl/netport`, `rtl/netlayer`, issue 34)"
_XBAR = "Network crossbar, 6 link ports + 2 network ports (`rtl/xbar`, issue 34)"
_VELO = "VELO (`rtl/velo`, issue 35)"
_RMA = "RMA (`rtl/rma`, two nodes, 4-port HTAX; definitions in `docs/rma.md`)"
_SYS = "Two NICs back to back (`bench/system.py`, issue 37)"
_NIC = "The NIC, `configs/default.toml` (6 link ports): its last place and route (`docs/nic.md`)"
_HOSTBUS = "AXI4 host bus bridge (`rtl/hostbus`, `nic_axi.v`, issue 46; definitions in `docs/hostbus.md`)"
_HTAX = "HTAX, `Htax` (2-cycle switch, issue 3)"
_HTAXP = "HTAX, `HtaxPipelined` (registered matching, issue 3)"

#: section -> a note printed under its heading (definitions live on the unit pages)
NOTES = {
    _HOST: "Wall-clock figures depend on the machine's load; the scratch target is test equipment "
           "(no Fmax goal).",
    _HTAX: "8 ports unless named; definitions in `docs/htax.md`.  Its resources: `make report UNIT=htax` "
           "with `[htax] variant = \"direct\"` (unit `htax` is the switch the configuration selects).",
    _HTAXP: "8 ports unless named; definitions in `docs/htax.md`.",
    _REGS: "Measured in the Amaranth simulator at the register file's HTAX port (`bench/regs.py`).",
    _LINK: "Two default link ports, 16-cycle channel each way; definitions in `docs/link.md`.",
    _NET: "Crossbar figures on the 8-port crossbar (6 link + 2 network ports, 4 VCs, 8-beat packets); "
          "fabric figures with default link ports; definitions in `bench/network.py` and `docs/network.md`.",
    _VELO: "Latencies and rates at the requester's and completer's ports (outputs ready), loopback "
           "through the default five-port switch, host memory at 44 cycles; definitions in "
           "`docs/velo.md`.",
    _SYS: "NICs of `configs/test_nic.toml` (rows \"NIC of record\": the default NIC, tables shrunk), 2-cycle "
          "cable, virtual addresses; ns = cycles x 6.4 + table 3-1's "
          "host share (t_cd + t_dm/2 + t_cm = 310 ns); the dissertation's ns include its PHY and 300 ns of "
          "software.  Definitions in `docs/nic.md`.",
    _ATU: "Measured at the ATU's HTAX port in the ATU system (register file + ATU behind the switch "
          "`[htax]` selects: `HtaxPipelined` in configs/default.toml), host memory 44 cycles; definitions "
          "in `docs/atu.md`.",
}

METRICS = [
    Metric(_HOST, "bench/host",
           "verilator_dma_cycles_per_s", "simulation speed, DMA-heavy, Verilator", "cycles/s"),
    Metric(_HOST, "bench/host",
           "verilator_idle_cycles_per_s", "simulation speed, idle port, Verilator", "cycles/s"),
    Metric(_HOST, "bench/host",
           "icarus_dma_cycles_per_s", "simulation speed, DMA-heavy, Icarus", "cycles/s"),
    Metric(_HOST, "bench/host",
           "dma_read_latency_cycles", "host model DMA read latency t_dm", "cycles", None,
           "280 ns (table 3-1)"),
    *_resources(_HOST, "scratch", diss={"ecp5_fmax_mhz": _CORE_CLOCK}),
    *_switch(_HTAX, "bench/htax"),
    *_switch(_HTAXP, "bench/htax_pipelined"),
    *_resources(_HTAXP, "htax_pipelined", fmax_goal=_FMAX),
    Metric(_REGS, "bench/regfile", "read_latency_cycles",
           "read latency, READ header in to RESPONSE header out", "cycles", at_most(3)),
    Metric(_REGS, "bench/regfile", "write_to_effect_cycles",
           "write to effect, data beat in to new value on `hw`", "cycles"),
    Metric(_REGS, "bench/regfile", "read8_cycles",
           "8-word line read, header in to last beat out", "cycles"),
    Metric(_REGS, "bench/regfile", "msi_latency_cycles",
           "interrupt event to MSI write header out", "cycles"),
    *_resources(_REGS, "regs", diss={"ecp5_fmax_mhz": _CORE_CLOCK}),
    Metric(_LINK, "bench/link", "efficiency_max_packet", "efficiency, largest network packets (link level)", "",
           at_least(0.95)),
    Metric(_LINK, "bench/link", "efficiency_max_packet_user_payload", "efficiency, 64-byte payloads", "", None,
           "~0.80 (ch. 7.3)"),
    Metric(_LINK, "bench/link", "efficiency_56B", "efficiency, 56-byte payloads back to back", "", at_least(0.83),
           "0.68 (ch. 7.3)"),
    Metric(_LINK, "bench/link", "link_cycles_56B_single_packet", "link cycles for one 56-byte VELO message",
           "cycles", None, "41 (ch. 7.3)"),
    Metric(_LINK, "bench/link", "throughput_phits_per_cycle", "throughput per direction, replay on",
           "phits/cycle", at_least(1.0)),
    Metric(_LINK, "bench/link", "retry_recovery_cycles_over_rtt", "retry recovery beyond the round trip (max)",
           "cycles", at_most(20)),
    Metric(_LINK, "bench/link", "goodput_at_1e-3", "goodput at 1e-3 flit error rate", "", at_least(0.9)),
    *_resources(_LINK, "link", fmax_goal=_FMAX),
    Metric(_ATU, "bench/atu", "tlb_hit_latency_cycles", "TLB hit latency", "cycles", at_most(3), "9 (table 5-8)"),
    Metric(_ATU, "bench/atu", "miss_latency_cycles_excl_memory", "TLB miss latency excluding memory", "cycles",
           at_most(8), "20 (table 5-8)"),
    Metric(_ATU, "bench/atu", "hit_throughput_per_cycle", "hit throughput", "translations/cycle", at_least(1.0),
           "<= 0.5"),
    Metric(_ATU, "bench/atu", "max_outstanding_misses", "outstanding misses (observed)", "", at_least(32)),
    Metric(_ATU, "bench/atu", "miss_throughput_per_cycle", "miss throughput, memory latency 44 cycles",
           "translations/cycle",
           at_least(lambda doc: round(0.9 * min(1, doc["max_outstanding_misses"] / doc["memory_latency_cycles"]), 4),
                    "0.9 x min(1, outstanding / latency)")),
    Metric(_ATU, "bench/atu", "flush_cycles", "flush, register write to status (TLB + ATS)", "cycles", at_most(5),
           "7 + FU time (table 5-8)"),
    Metric(_ATU, "bench/atu", "stream_64k_4k_misses+stream_64k_4k_lookahead_misses+stream_64k_2m_misses",
           "64 KiB from a cold TLB, 16 pages one at a time: misses, 4 KB / 4 KB + look-ahead / 2 MB pages", ""),
    Metric(_ATU, "bench/atu", "stream_64k_4k_cold_cycles+stream_64k_4k_lookahead_cold_cycles+"
           "stream_64k_2m_cold_cycles+stream_64k_4k_warm_cycles",
           "the same, first request to last answer: cold 4 KB / 4 KB + look-ahead / 2 MB, warm", "cycles"),
    Metric(_ATU, "bench/atu", "register_1g_4k_table_bytes+register_1g_4k_cpu_stores+deregister_1g_4k_gate_stores",
           "register 1 GiB of 4 KB pages: table bytes (2 GATs) / CPU stores / GATE stores to deregister", ""),
    Metric(_ATU, "bench/atu", "register_1g_2m_table_bytes+register_1g_2m_cpu_stores+deregister_1g_2m_gate_stores",
           "the same, 2 MB pages", ""),
    Metric(_ATU, "bench/atu", "flush_cycles_range_1g", "deregistration's one range flush, 1 GiB of 4 KB pages",
           "cycles"),
    Metric(_ATU, "bench/atu", "deregister_1g_4k_jobs", "bulk jobs to deregister 1 GiB of 4 KB pages (one GAT)", "",
           at_most(1)),
    Metric(_ATU, "bench/atu", "register_1g_4k_job_cpu_stores+deregister_1g_4k_job_cpu_stores+"
           "register_1g_2m_job_cpu_stores+deregister_1g_2m_job_cpu_stores",
           "CPU stores with bulk jobs (descriptor words and registers): register / deregister 1 GiB, 4 KB pages, "
           "then 2 MB pages", ""),
    Metric(_ATU, "bench/atu", "register_1g_4k_job_cycles+deregister_1g_4k_job_cycles+register_1g_2m_job_cycles+"
           "deregister_1g_2m_job_cycles",
           "the same, cycles from the driver's call to its return (ATU-bound: 262,144 GATE stores in 32,768 "
           "WRITEs for 4 KB pages)", "cycles"),
    *_resources(_ATU, "atu", fmax_goal=_FMAX, ff_goal=at_most(829), diss={
        "ecp5_fmax_mhz": "~250 (Virtex-4, ch. 5.5)", "ecp5_ff": "829 (table 5-7)",
        "ecp5_slices": "936 (table 5-7)", "ecp5_dp16kd": "8 (table 5-7)"}),
    Metric(_NET, "bench/network", "hop_latency_cycles", "crossbar hop latency, header in to header out (idle)",
           "cycles", at_most(3)),
    Metric(_NET, "bench/network", "node_to_node_latency_cycles",
           "node to neighbour: header out of the network port to the far unit (idle, no channel delay)", "cycles",
           at_most(40), "~101 incl. PHY and two crossbars (650 ns, ch. 7.3)"),
    Metric(_NET, "bench/network", "node_to_node_latency_cycles_56B", "the same, 56-byte payload, last beat",
           "cycles"),
    Metric(_NET, "bench/network", "crossbar_saturation_uniform", "crossbar saturation, uniform random, 4 VCs",
           "beats/cycle/output", at_least(0.85)),
    Metric(_NET, "bench/network", "crossbar_saturation_uniform_one_vc", "the same, one VC", "beats/cycle/output"),
    Metric(_NET, "bench/xbar_matching", "separable_saturation",
           "bound of the crossbar's separable matching, the same traffic, allocation without timing (model)",
           "beats/cycle/output"),
    Metric(_NET, "bench/xbar_matching", "maximum_saturation", "the same with a maximum matching every cycle (model)",
           "beats/cycle/output"),
    Metric(_NET, "bench/network", "fabric_saturation_packets_per_node",
           "2x2x2 torus saturation, uniform random", "packets/cycle/node"),
    Metric(_NET, "bench/network", "fabric_saturation_beats_per_node", "the same in unit-side beats",
           "beats/cycle/node"),
    Metric(_NET, "bench/network", "sim_cycles_per_s", "simulation speed, loaded 2x2x2 torus, Verilator",
           "cycles/s", at_least(20000)),
    *_resources(_XBAR, "xbar", fmax_goal=at_least(156.25), lut_goal=at_most(8000, "1,000 per port x 8")),
    Metric(_VELO, "bench/velo", "requester_latency_cycles", "requester, WRITE header in to network header out",
           "cycles", at_most(3)),
    Metric(_VELO, "bench/velo", "completer_latency_cycles", "completer, network header in to slot WRITE header out",
           "cycles", at_most(4)),
    *[Metric(_VELO, "bench/velo", f"message_rate_per_cycle_{side}_{n}B", f"{side} rate, {n}-byte messages",
             "messages/cycle", at_least(round(1 / (n // 8 + 1), 4), "1 / (payload beats + 1)"))
      for side in ("requester", "completer") for n in (8, 64)],
    Metric(_VELO, "bench/velo", "loopback_latency_cycles_8B", "loopback, CPU store to status word in memory, 8 B",
           "cycles"),
    Metric(_VELO, "bench/velo", "loopback_latency_cycles_56B", "the same, 56 B", "cycles"),
    Metric(_VELO, "bench/velo", "link_cycles_56B", "link cycles of one 56-byte message", "cycles", None,
           "41 (ch. 7.3)"),
    *_resources(_VELO, "velo", fmax_goal=at_least(156.25), diss={"ecp5_fmax_mhz": _CORE_CLOCK}),
    Metric(_RMA, "bench/rma", "composition_matches_table_9_1",
           "operations whose DMA reads, translations, trips, DMA writes, CPU stores equal table 9-1's", "of 7",
           at_least(7)),
    Metric(_RMA, "bench/rma", "latency_cycles", "latency, CPU store to last write in memory", "cycles", None,
           "1400 / 1470 / 1670 / 1990 / 2100 / 2820 / 2700 ns (table 9-1)"),
    Metric(_RMA, "bench/rma", "message_rate_per_cycle", "message rate, back to back", "ops/cycle", None,
           "0.0166 / 0.0088 (table 9-3 at 156.25 MHz)"),
    Metric(_RMA, "bench/rma", "put_words_per_cycle", "put streaming bandwidth", "words/cycle"),
    Metric(_RMA, "bench/rma", "get_words_per_cycle", "get streaming bandwidth", "words/cycle"),
    Metric(_RMA, "bench/rma", "words_per_cycle_4096B", "put and get bandwidth at 4 KiB (bound 8/9)", "words/cycle",
           at_least(0.85)),
    *_resources(_RMA, "rma", fmax_goal=at_least(156.25), diss={"ecp5_fmax_mhz": _CORE_CLOCK}),
    Metric(_SYS, "bench/system", "composition_matches_table_9_1",
           "operations whose DMA reads, translations, trips, DMA writes, CPU stores equal table 9-1's", "of 8",
           at_least(8)),
    Metric(_SYS, "bench/system", "startup_cycles", "start-up latency, CPU store to completion in memory",
           "cycles"),
    Metric(_SYS, "bench/system", "startup_ns", "the same in ns", "ns", None,
           "1300 / 1400 / 1470 / 1670 / 1990 / 2100 / 2820 / 2700 (table 9-1)"),
    Metric(_SYS, "bench/system", "pingpong_velo_cycles", "ping-pong half round trip, VELO", "cycles", None,
           "8 B: 1300 ns (fig. 9-1)"),
    Metric(_SYS, "bench/system", "pingpong_put_cycles.8B+pingpong_put_cycles.512B+pingpong_put_cycles.4096B",
           "the same, put 8 B / 512 B / 4 KiB", "cycles", None, "8 B: 1990 ns (table 7-7)"),
    Metric(_SYS, "bench/system", "get_cycles.8B+get_cycles.512B+get_cycles.4096B",
           "get latency 8 B / 512 B / 4 KiB", "cycles", None, "8 B: 2820 ns (table 9-1)"),
    Metric(_SYS, "bench/system", "stream_summary.max_MBps_put+stream_summary.max_MBps_get+stream_summary.max_MBps_velo",
           "streaming bandwidth, put / get / VELO at their largest size", "MB/s", None,
           "275 (table 7-7; fig. 9-5)"),
    Metric(_SYS, "bench/system", "link_efficiency",
           "put / get at 4 KiB over the raw link bandwidth (2 B per cycle at 16-bit phits)", "", at_least(0.91),
           "0.88 (275 of 312.5 MB/s, table 7-7)"),
    Metric(_SYS, "bench/system", "stream_summary.put_n_half_bytes+stream_summary.get_n_half_bytes",
           "n_1/2 of put / get: the smallest size reaching half their maximum", "bytes", at_most(512),
           "512 (ch. 2, 9)"),
    Metric(_SYS, "bench/system", "phit32_stream_summary.max_MBps_put+phit32_stream_summary.max_MBps_get",
           "32-bit phits (configs/phit32.toml): put / get at 4 KiB", "MB/s", at_least(570)),
    Metric(_SYS, "bench/system", "phit32_link_efficiency",
           "32-bit phits: put / get at 4 KiB over the raw link bandwidth (4 B per cycle)", "", at_least(0.91)),
    Metric(_SYS, "bench/system", "message_rate_Mps.velo_8B", "message rate, VELO 8 B", "M/s", at_least(5.5),
           "5.5 (table 9-3)"),
    Metric(_SYS, "bench/system", "message_rate_Mps.notification_put", "message rate, notification put", "M/s",
           at_least(2.6), "2.6 (table 9-3)"),
    Metric(_SYS, "bench/system", "message_rate_Mps.put_8B", "message rate, put 8 B", "M/s", at_least(1.375),
           "1.375 (table 9-3)"),
    Metric(_SYS, "bench/system_record", "startup_cycles",
           "NIC of record (`configs/test_record.toml`): start-up latency", "cycles"),
    Metric(_SYS, "bench/system_record", "pingpong_velo_cycles.8B+pingpong_put_cycles.8B+get_cycles.8B",
           "NIC of record: VELO 8 B / put 8 B half round trip / get 8 B", "cycles"),
    Metric(_SYS, "bench/system_atu", "atu_put_64k_4k_lookahead_misses_per_op+atu_put_64k_2m_misses_per_op+"
           "atu_get_64k_4k_lookahead_misses_per_op+atu_get_64k_2m_misses_per_op",
           "NIC of record, 64 KiB (16 x 4 KiB) from a cold TLB: TLB misses per operation (both nodes), put 4 KB + "
           "look-ahead / put 2 MB / get 4 KB + look-ahead / get 2 MB (4 KB without look-ahead: 2)", "", at_most(1)),
    Metric(_SYS, "bench/system_atu", "atu_put_64k_4k_MBps_cold+atu_put_64k_4k_lookahead_MBps_cold+"
           "atu_put_64k_2m_MBps_cold+atu_put_64k_4k_MBps_warm",
           "the same, put bandwidth: cold 4 KB / 4 KB + look-ahead / 2 MB, warm", "MB/s"),
    Metric(_SYS, "bench/system_atu", "atu_get_64k_4k_MBps_cold+atu_get_64k_4k_lookahead_MBps_cold+"
           "atu_get_64k_2m_MBps_cold+atu_get_64k_4k_MBps_warm", "the same, get bandwidth", "MB/s"),
    Metric(_SYS, "bench/system_record", "link_efficiency",
           "NIC of record: put / get at 4 KiB over the raw link bandwidth", "", at_least(0.91)),
    Metric(_SYS, "bench/system_record", "stream_summary.put_n_half_bytes+stream_summary.get_n_half_bytes",
           "NIC of record: n_1/2 of put / get (of the sizes 8, 64, 512, 4096 B)", "bytes", at_most(512),
           "512 (ch. 2, 9)"),
    Metric(_SYS, "bench/system_record", "phit32_stream_summary.max_MBps_put+phit32_stream_summary.max_MBps_get",
           "NIC of record, 32-bit phits: put / get at 4 KiB", "MB/s", at_least(570)),
    Metric(_SYS, "bench/system_record", "phit32_link_efficiency",
           "NIC of record, 32-bit phits: put / get at 4 KiB over the raw link bandwidth", "", at_least(0.91)),
    Metric(_SYS, "bench/system", "breakdown_velo_cycles", "breakdown, VELO 8 B one way (fig. 7-15)", "cycles"),
    Metric(_SYS, "bench/system_phy", "pingpong_velo_8B_phy_ns+pingpong_velo_8B_channel_ns",
           "NIC of record at 80 MHz, VELO 8 B half round trip over the SerDes PHY and its model / over the "
           "2-cycle channel (NIC and PHY only, no host share)", "ns"),
    Metric(_SYS, "bench/system_phy", "pingpong_velo_8B_phy_share_ns+pingpong_put_8B_phy_share_ns",
           "SerDes PHY's share of a half round trip (two PHYs, the model's 10 words), VELO 8 B / put 8 B "
           "(fig. 7-15's physical network layer)", "ns"),
    Metric(_SYS, "bench/board", "velo_8B_nic_to_nic_ns",
           "two board tops (EvnPair, NIC of record at 80 MHz, DCU models): VELO 8 B from the store entering "
           "one NIC to the other NIC's slot write, min / median of 8 (no host share)", "ns"),
    Metric(_SYS, "bench/board", "demo_velo_send_0_to_1_us+demo_rma_put_0_to_1_us+demo_rma_get_0_from_1_us",
           "two board tops driven through their simulated UARTs (10 Mbaud): demo's VELO 32 B / put 512 B / "
           "get 256 B, first store to the result seen by the host that waits for it", "us"),
    Metric(_SYS, "bench/system", "sim_cycles_per_s", "simulation speed, Verilator", "cycles/s"),
    Metric(_HOSTBUS, "bench/hostbus",
           "store_8b_wlast_to_header_cycles+store_64b_wlast_to_header_cycles+read_header_to_arvalid_cycles",
           "added latency: CPU store of 8 / 64 B (last W beat to HTAX header) / DMA read (READ to ARVALID)",
           "cycles", at_most(2)),
    Metric(_HOSTBUS, "bench/hostbus", "rlast_to_response_header_cycles+dma_read_round_trip_cycles",
           "DMA read of 8 words: RLAST to RESPONSE header / READ in to RESPONSE out at 44-cycle memory", "cycles"),
    Metric(_HOSTBUS, "bench/hostbus", "dma_read_words_per_cycle",
           "DMA read rate, 8-word reads, 32 IDs, 44-cycle memory (HTAX bound 8/9)", "words/cycle", at_least(0.9)),
    Metric(_HOSTBUS, "bench/system_axi",
           "pingpong_velo_8B_cycles.axi+pingpong_put_8B_cycles.axi+get_8B_cycles.axi",
           "two `nic_axi`: VELO 8 B / put 8 B half round trip / get 8 B", "cycles"),
    Metric(_HOSTBUS, "bench/system_axi",
           "pingpong_velo_8B_cycles.axi_minus_htax+pingpong_put_8B_cycles.axi_minus_htax"
           "+get_8B_cycles.axi_minus_htax+stream_put_4096B_MBps.axi_minus_htax",
           "the same and put 4 KiB streaming, AXI4 minus HTAX host port (cycles / MB/s)", ""),
    *_resources(_HOSTBUS, "hostbus", fmax_goal=at_least(156.25), diss={"ecp5_fmax_mhz": _CORE_CLOCK}),
    Metric(_NIC, "reports/nic", "ecp5_fmax_mhz", "ECP5 Fmax (median over the nextpnr seeds run)", "MHz",
           at_least(156.25), _CORE_CLOCK),
    Metric(_NIC, "reports/nic", "ecp5_lut4+ecp5_ff+ecp5_dp16kd", "ECP5 LUT4 / flip-flops / DP16KD (18 kbit)", "",
           None, "74,137 LUT / 27,063 / 139 BRAM (table 7-9, Virtex-4)"),
    Metric(_NIC, "reports/nic", "ecp5_utilization.TRELLIS_COMB+ecp5_utilization.DP16KD",
           "LFE5UM5G-85F logic cells / DP16KD used, available, %", ""),
    Metric(_NIC, "reports/nic", "ecp5_blocks",
           "per block (hierarchy kept at the blocks, so their LUT4 sum a few per cent above the NIC's): "
           "LUT4 / flip-flops / LUT RAM (16x4) / DP16KD / carry cells", ""),
]
