"""The harness gateware: tops that exist only to simulate or measure the NIC's units.

Nothing here is part of an FPGA build (``make verilog`` writes none of it).  Each module composes real
units from ``rtl/`` with what a testbench needs around them:

* :mod:`.atu`: ``AtuSystem`` (HTAX, register file, ATU, ports for host and FUs);
* :mod:`.velo`: ``VeloSystem``, ``VeloNetSystem`` (VELO behind a network port), ``VeloCompleterTop``;
* :mod:`.rma`: ``RmaSystem`` (HTAX, register file, ATU and RMA per node, network-stream loopback);
* :mod:`.nic`: ``NicSystem`` (2 to 8 NICs cabled in a topology through error-injecting channels);
* :mod:`.link`: ``LinkPair``, ``LinkLoop`` and the ``LfsrChannel`` with its traffic generators;
* :mod:`.fabric`, :mod:`.netport`, :mod:`.xbar`: network-layer tops with counting endpoints;
* :mod:`.scratch`: ``HtaxScratch``, the host model's self-test target (a harness unit for
  ``make report UNIT=scratch``);
* :mod:`.hostbus`: ``HostbusTop`` (the AXI4 host bus bridge with flat AXI ports);
* :mod:`.axi_loop`: ``AxiLoop`` (the AXI host model's self-test: ``s_axi`` wired to ``m_axi``);
* :mod:`.configs`: the configurations tests, benches and ``make demo`` elaborate (``configs/test_*.toml``).
"""
