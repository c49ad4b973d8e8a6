"""The configurations the harness tops are elaborated with (tests, benches, ``make demo``).

Each is ``configs/default.toml``, overridden by the user's file (``CONFIG=``) if one is given, then by one
file of ``configs/`` (``test_<name>.toml``), loaded through :func:`rtl.config.load` like any user
configuration, so an unknown key is an error there too.

* :func:`atu_config`: ``configs/test_atu.toml`` (three FUs);
* :func:`rma_config`: ``configs/test_rma.toml`` (four-port direct HTAX);
* :func:`velo_config`: ``configs/test_velo.toml`` (three-port HTAX);
* :func:`nic_config`: ``configs/test_nic.toml`` (two NICs back to back in an affordable model), over
  another configuration file if given (``configs/phit32.toml`` for the 32-bit-phit NIC);
  :func:`system_config` adds link ports and route-table entries, :func:`ring_config` is the ring of
  ``bench/system.py``'s 8-node simulation-speed run;
* :func:`board_config`: :func:`nic_config` (or :func:`record_config`) under ``configs/test_phy.toml``
  with two link ports, the NIC of two simulated board tops (:class:`sim.tops.evn_pair.EvnPair`,
  ``tests/boards``, ``bench/board.py``);
* :func:`record_config`: ``configs/test_record.toml``, the configuration of record (the default NIC
  that ``make report UNIT=nic`` synthesizes) with only its tables shrunk (``bench/system.py --record``).
"""

from rtl.config import ROOT, load

__all__ = ["atu_config", "rma_config", "velo_config", "nic_config", "system_config", "ring_config",
           "board_config", "record_config"]

CONFIGS = ROOT / "configs"


def _load(name, overlay=None):
    return load(overlays=([] if overlay is None else [overlay]) + [CONFIGS / f"test_{name}.toml"])


def atu_config():
    return _load("atu")


def rma_config():
    return _load("rma")


def velo_config():
    return _load("velo")


def nic_config(overlay=None):
    """``configs/test_nic.toml`` over the default, the user's file and then ``overlay`` (a path, e.g.
    ``configs/phit32.toml``) if given."""
    return _load("nic", overlay)


def system_config(link_ports, nodes=4):
    """:func:`nic_config` with ``link_ports`` link ports (``[xbar]`` and ``[regs]``) and ``nodes``
    route-table entries (``[system]``): 2 link ports for a ring, 6 for a 3-D torus (a 2 x 2 x 2 torus
    cables all six, :func:`sim.tops.nic.topology`)."""
    cfg = nic_config()
    cfg["system"]["nodes"] = nodes
    cfg["xbar"]["link_ports"] = link_ports
    cfg["regs"]["link_ports"] = link_ports
    return cfg


def ring_config(nodes=8):
    """:func:`system_config` of a ring of ``nodes`` nodes (two link ports)."""
    return system_config(2, max(nodes, 4))


def board_config(record=False):
    """The simulated boards' NIC: :func:`nic_config` (``record``: :func:`record_config`, the board's NIC
    with only its tables shrunk) with ``configs/test_phy.toml`` (the idle gap and the 80 MHz core of
    ``configs/board_evn.toml``) and the board's two link ports."""
    cfg = (record_config if record else nic_config)(CONFIGS / "test_phy.toml")
    cfg["xbar"]["link_ports"] = cfg["regs"]["link_ports"] = 2
    return cfg


def record_config(overlay=None):
    """``configs/test_record.toml`` over the default, the user's file and then ``overlay`` (a path, e.g.
    ``configs/phit32.toml``) if given: the NIC of record (switch, ports, crossbar and link as built) with
    fewer VPIDs, nodes, TLB and GAT entries."""
    return _load("record", overlay)
