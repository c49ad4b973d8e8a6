"""Configuration loading and the device address map."""

import pytest

from rtl.common.addrmap import RMA_RP_PAGES, USER_PAGE_SIZE, VELO_RP_PAGES, AddressMap
from rtl.config import load


def test_defaults_and_cycle_conversion():
    cfg = load()
    assert cfg.system.clock_mhz == 156.25
    assert cfg.ns_to_cycles(cfg.host.dma_read_latency_ns) == 44      # 280 ns at 6.4 ns (table 3-1)


def test_override_and_unknown_keys(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("[system]\nvpids = 64\n")
    cfg = load(p)
    assert cfg.system.vpids == 64 and cfg.system.nodes == 64
    p.write_text("[system]\nvpid = 64\n")
    with pytest.raises(ValueError, match="unknown key 'vpid' in section \\[system\\]"):
        load(p)
    p.write_text("[nosuch]\nx = 1\n")
    with pytest.raises(ValueError, match="unknown section \\[nosuch\\]"):
        load(p)


def test_address_map_windows():
    amap = AddressMap.from_config(load())
    base = load().system.device_base
    assert amap["regs"].base == base
    assert amap["rma"].base == base + 0x0100_0000 and amap["rma"].size == 1 << 18
    assert amap["velo"].base == base + 0x1000_0000 and amap["velo"].size == 1 << 28
    assert amap.decode(base + 8) == ("regs", 8)
    assert amap.decode(base + 0x1000_0040) == ("velo", 0x40)
    assert amap.decode(base + 0x0200_0000) is None
    # each user-mappable read pointer sits alone on its page
    pages = {amap.velo_rp_page(v) for v in range(32)} | {amap.rma_rp_page(v) for v in range(32)}
    assert len(pages) == 64 and all(p % USER_PAGE_SIZE == 0 for p in pages)
    assert amap.velo_rp_page(1) - amap.velo_rp_page(0) == USER_PAGE_SIZE
    assert amap.rma_rp_page(0) == base + RMA_RP_PAGES and amap.velo_rp_page(0) == base + VELO_RP_PAGES


@pytest.mark.parametrize("kw,msg", [
    (dict(device_base=0x8000_0000_0000, vpids=24, nodes=64), "vpids must be a power of two, not 24"),
    (dict(device_base=0x8000_0000_0000, vpids=32, nodes=100), "nodes must be a power of two, not 100"),
    (dict(device_base=0x1234_0000, vpids=32, nodes=64), "device_base must be aligned to 0x20000000"),
    (dict(device_base=0x8000_0000_0000, vpids=32, nodes=64, phys_addr_bits=40), "exceeds the 40-bit"),
])
def test_address_map_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        AddressMap(**kw)
