"""Bring-up of a board's SerDes lanes from a PC (``docs/board.md``): the lanes' registers
(:mod:`rtl.board.phy_regs`) in the UART bridge's memory space above the host memory, read and written
through :class:`sim.uart_bridge.UartBridgeHost`; a pyserial transport for a real board; and a
command line::

    python -m sim.board --port /dev/ttyUSB1 status
    python -m sim.board --port /dev/ttyUSB1 prbs --pattern 31 --seconds 10 [--loopback]
    python -m sim.board --port /dev/ttyUSB1 link

The same :class:`PhyLanes` runs in simulation on a cocotb UART transport (``sim/uart_pins.py``).
"""

import argparse
import asyncio
import time

from amaranth.lib import data

from rtl.board.phy_regs import STROBES, WORDS_PER_LANE, ControlWord, LaneWords

from .uart_bridge import BridgeTransport, UartBridgeHost

__all__ = ["PHY_BASE", "PhyLanes", "SerialTransport", "main"]

PHY_BASE = 64 * 1024        # bytes: the PHY registers follow the board's 64 KiB of host memory
BAUD = 3_000_000


class PhyLanes:
    """The lanes' registers on ``host`` (a :class:`UartBridgeHost` whose ``mem_size`` covers them).

    Parameters
    ----------
    host : UartBridgeHost
    lanes : int
    base : int
        Byte address of lane 0's word 0 in the bridge's memory space.
    """

    def __init__(self, host, *, lanes=2, base=PHY_BASE):
        self.host, self.lanes, self.base = host, lanes, base

    def _addr(self, lane, word):
        if not 0 <= lane < self.lanes:
            raise ValueError(f"lane must be between 0 and {self.lanes - 1}, not {lane}")
        return self.base + (lane * WORDS_PER_LANE + word) * 8

    async def status(self, lane):
        """``{field: value}`` of every named field of the lane's words (:class:`LaneWords`)."""
        layout = data.Layout.cast(LaneWords)
        raw = await self.host.mem_read(self._addr(lane, 0), layout.size // 8)
        words = layout.from_bits(int.from_bytes(raw, "little"))
        out = {}
        for name, _ in layout:
            word = words[name]
            for field, _ in data.Layout.cast(word.shape()):
                if not field.startswith("reserved_"):
                    value = word[field]
                    out[field] = value.value if hasattr(value, "value") else int(value)
        return out

    async def control(self, lane, **levels):
        """Set the lane's control levels (``mode``, ``pattern``, ``loopback``, ``tx_polarity``,
        ``rx_polarity``) and pulse the strobes named with a true value (``prbs_clear``, ``restart``);
        fields not named keep their value."""
        layout = data.Layout.cast(ControlWord)
        bad = sorted(set(levels) - {name for name, _ in layout if not name.startswith("reserved_")})
        if bad:
            raise ValueError(f"no control field {bad[0]!r}")
        now = layout.from_bits(await self.host.mem_read64(self._addr(lane, 0)))
        fields = {name: int(now[name].value if hasattr(now[name], "value") else now[name])
                  for name, _ in layout if not name.startswith("reserved_") and name not in STROBES}
        fields.update({k: int(v.value if hasattr(v, "value") else v) for k, v in levels.items()})
        word = layout.const(fields).as_bits()
        await self.host.mem_write64(self._addr(lane, 0), word)
        await self.host.flush()


class SerialTransport(BridgeTransport):
    """The board's UART through pyserial (the FT2232H's second port, ``/dev/ttyUSB1`` on Linux)."""

    def __init__(self, port, *, baud=BAUD, timeout=2.0):
        import serial
        self.serial = serial.Serial(port, baud, timeout=timeout)

    async def send(self, data):
        self.serial.write(bytes(data))

    async def recv(self, n):
        got = self.serial.read(n)
        if len(got) != n:
            raise TimeoutError(f"{len(got)} of {n} bytes from the board before the timeout")
        return got


def _print_status(lane, s):
    print(f"lane {lane}: tx_ready {s['tx_ready']} rx_ready {s['rx_ready']} prbs_locked {s['rx_prbs_locked']} "
          f"retries {s['tx_retries']}/{s['rx_retries']} symbol_errors {s['rx_symbol_errors']} "
          f"framing_errors {s['rx_framing_errors']} realigns {s['rx_realigns']} "
          f"prbs {s['rx_prbs_errors']} errors / {s['rx_prbs_words']} words")


async def _run(args):
    host = UartBridgeHost(SerialTransport(args.port, baud=args.baud), mem_size=2 * PHY_BASE)
    await host.resync()
    lanes = PhyLanes(host)
    if args.command in ("prbs", "link"):
        for lane in range(lanes.lanes):
            await lanes.control(lane, mode=int(args.command == "prbs"),
                                pattern=int(getattr(args, "pattern", 7) == 31),
                                loopback=int(getattr(args, "loopback", False)))
    if args.command == "prbs":
        await asyncio.sleep(0.1)
        for lane in range(lanes.lanes):
            await lanes.control(lane, prbs_clear=1)
        time.sleep(args.seconds)
    for lane in range(lanes.lanes):
        s = await lanes.status(lane)
        _print_status(lane, s)
        if args.command == "prbs" and s["rx_prbs_words"]:
            print(f"lane {lane}: bit error rate <= {max(s['rx_prbs_errors'], 1) / (16 * s['rx_prbs_words']):.2e}")


def main(argv=None):
    ap = argparse.ArgumentParser(description="SerDes bring-up of the ECP5-5G board over its UART")
    ap.add_argument("--port", required=True)
    ap.add_argument("--baud", type=int, default=BAUD)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="every lane's state and counters")
    p = sub.add_parser("prbs", help="PRBS on every lane, then its error count")
    p.add_argument("--pattern", type=int, choices=(7, 31), default=31)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--loopback", action="store_true", help="the SerDes' internal loopback")
    sub.add_parser("link", help="every lane back to the link port's flits")
    asyncio.run(_run(ap.parse_args(argv)))


if __name__ == "__main__":
    main()
