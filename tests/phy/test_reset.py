# amaranth: UnusedElaboratable=no
"""The SerDes reset sequence (rtl/phy/reset.py) against a PLL/CDR that locks some cycles after its
reset falls: order of the releases, the lock-hold rule, retries on a lock that never comes or goes."""

import pytest
from amaranth.sim import Simulator

from rtl.phy.reset import SerdesReset


@pytest.mark.parametrize("kwargs, message", [
    (dict(pulse=0), "pulse must be between 1 and 65536, not 0"),
    (dict(stable=8, timeout=8), "timeout must be between 9 and 268435456, not 8"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        SerdesReset(**kwargs)


class _Serdes:
    """Lock ``pll_delay`` cycles after ``tx_pll_rst`` falls and ``cdr_delay`` after ``rx_serdes_rst``
    falls while there is a signal; ``pll_ok``/``signal`` switch the locks off."""

    def __init__(self, pll_delay=10, cdr_delay=20):
        self.pll_delay, self.cdr_delay = pll_delay, cdr_delay
        self.pll_ok, self.signal = True, True
        self.pll_ctr = self.cdr_ctr = 0
        self.log = []

    def step(self, ctx, dut, now):
        pll_rst, cdr_rst = ctx.get(dut.tx_pll_rst), ctx.get(dut.rx_serdes_rst)
        self.pll_ctr = 0 if pll_rst or not self.pll_ok else self.pll_ctr + 1
        self.cdr_ctr = 0 if cdr_rst or not self.signal else self.cdr_ctr + 1
        pll_lock, cdr_lock = self.pll_ctr >= self.pll_delay, self.cdr_ctr >= self.cdr_delay
        ctx.set(dut.tx_pll_lock, pll_lock)
        ctx.set(dut.rx_cdr_lock, cdr_lock)
        ctx.set(dut.rx_los, not self.signal)
        state = (pll_rst, ctx.get(dut.tx_pcs_rst), cdr_rst, ctx.get(dut.rx_pcs_rst),
                 ctx.get(dut.tx_ready), ctx.get(dut.rx_ready), pll_lock, cdr_lock)
        if not self.log or self.log[-1][1] != state:
            self.log.append((now, state))


def _run(dut, serdes, script):
    async def bench(ctx):
        now = 0
        for cycles, action in script:
            if action:
                action(ctx)
            for _ in range(cycles):
                serdes.step(ctx, dut, now)
                await ctx.tick()
                now += 1
                if ctx.get(dut.restart):
                    ctx.set(dut.restart, 0)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def _first(log, idx, value):
    return next(t for t, s in log if s[idx] == value)


def test_sequence_order():
    """PLL reset falls first, the TX PCS after the PLL lock held ``stable`` cycles, then the CDR's
    reset, then the RX PCS after the CDR lock held ``stable`` cycles; nothing retried."""
    dut = SerdesReset(pulse=8, stable=16, timeout=200)
    s = _Serdes()
    values = {}
    _run(dut, s, [(300, None), (1, _read_counters(dut, values))])
    log = s.log
    pll_rel, tx_pcs_rel = _first(log, 0, 0), _first(log, 1, 0)
    pll_lock, cdr_lock = _first(log, 6, 1), _first(log, 7, 1)
    cdr_rel, rx_pcs_rel = _first(log, 2, 0), _first(log, 3, 0)
    assert 8 <= pll_rel <= 12
    assert tx_pcs_rel >= pll_lock + 16
    assert cdr_rel > tx_pcs_rel and rx_pcs_rel >= cdr_lock + 16
    assert log[-1][1][4:6] == (1, 1)
    assert (values["tx_retries"], values["rx_retries"]) == (0, 0)


def _read_counters(dut, values):
    def action(ctx):
        values.update(tx_retries=ctx.get(dut.tx_retries), rx_retries=ctx.get(dut.rx_retries),
                       tx_ready=ctx.get(dut.tx_ready), rx_ready=ctx.get(dut.rx_ready))
    return action


def test_retries_and_relock():
    """A CDR that never locks (no signal) retries every ``timeout`` cycles; when the signal comes the
    receive side gets ready; losing it restarts the receive side only; losing the PLL restarts
    both; ``restart`` restarts both without counting a retry."""
    dut = SerdesReset(pulse=8, stable=16, timeout=100)
    s = _Serdes()
    s.signal = False

    def signal(on):
        def action(ctx):
            s.signal = on
        return action

    def pll(on):
        def action(ctx):
            s.pll_ok = on
        return action

    def restart(ctx):
        ctx.set(dut.restart, 1)

    _values = {}

    _run(dut, s, [
        (600, None), (1, _read_counters(dut, _values)),
    ])
    assert _values["tx_ready"] == 1 and _values["rx_ready"] == 0 and _values["rx_retries"] >= 3
    retries = _values["rx_retries"]
    dut = SerdesReset(pulse=8, stable=16, timeout=100)
    s = _Serdes()
    _values.clear()
    _run(dut, s, [
        (200, None), (1, _read_counters(dut, _values)),
        (0, lambda ctx: _values.update(ok1=(_values["tx_ready"], _values["rx_ready"]))),
        (0, signal(False)), (5, None), (1, _read_counters(dut, _values)),
        (0, lambda ctx: _values.update(lost=(_values["tx_ready"], _values["rx_ready"], _values["rx_retries"]))),
        (0, signal(True)), (200, None), (1, _read_counters(dut, _values)),
        (0, lambda ctx: _values.update(back=(_values["rx_ready"],))),
        (0, pll(False)), (5, None), (1, _read_counters(dut, _values)),
        (0, lambda ctx: _values.update(pll_lost=(_values["tx_ready"], _values["rx_ready"],
                                                 _values["tx_retries"]))),
        (0, pll(True)), (300, None), (1, restart), (3, _read_counters(dut, _values)),
        (0, lambda ctx: _values.update(restarted=(_values["tx_ready"], _values["tx_retries"]))),
        (300, _read_counters(dut, _values)), (1, _read_counters(dut, _values)),
    ])
    assert retries >= 3
    assert _values["ok1"] == (1, 1)
    assert _values["lost"] == (1, 0, 1)
    assert _values["back"] == (1,)
    assert _values["pll_lost"] == (0, 0, 1)
    assert _values["restarted"] == (0, 1)
    assert (_values["tx_ready"], _values["rx_ready"], _values["tx_retries"]) == (1, 1, 1)
