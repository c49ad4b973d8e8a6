"""The HTAX link rules as formal properties, for any unit's proofs (``make formal``).

:func:`link_rules` adds the rules of :mod:`rtl.common.htax` for one link to a module, as ``Assert``
(to prove a unit's output obeys them) or ``Assume`` (to constrain an input the environment drives):

* once ``valid`` is raised, ``valid`` and ``payload`` hold until the beat moves;
* packets are framed: ``first`` exactly on the header beat, ``last`` exactly on the beat the header's
  length says, the VC constant within a packet;
* every header is well formed (:func:`rtl.common.htax.malformed` is false).

:func:`sink_rules` adds the sink's promise behind ``ready2``: ``ready2[v]`` implies ``ready[v]``, and
after a cycle with ``ready2[v]`` in which a ``v`` beat moved, ``ready[v]`` is high.
"""

from amaranth.hdl import Const, Mux, Signal

from .htax import NUM_VCS, HtaxCmd, HtaxStatus, malformed

__all__ = ["link_rules", "sink_rules", "data_beats"]


def data_beats(header):
    """Amaranth expression: how many data beats follow ``header``."""
    cmd = header.cmd.as_value()
    carries = ((cmd == HtaxCmd.WRITE.value)
               | ((cmd == HtaxCmd.RESPONSE.value) & (header.status.as_value() == HtaxStatus.OK.value)))
    return carries.as_unsigned() * header.body.mem.length


def link_rules(m, link, check, *, well_formed=True, name="link", state=None):
    """Add the link rules for ``link`` to ``m`` using ``check`` (``Assert`` or ``Assume``).

    Returns the ``in_packet`` signal (high between a moved header and its moved last beat).  If
    ``state`` is a dict, the checker's registers are stored in it (``in_packet``, ``remaining``,
    ``vc``, ``held``), so a k-induction proof can relate them to the unit's own state.
    """
    moved = link.transfer()
    beat = link.payload
    hdr = beat.word.header

    held = Signal(name=f"{name}_held")          # valid was up and the beat did not move
    prev = Signal.like(beat.as_value(), name=f"{name}_prev")
    m.d.sync += [held.eq(link.valid & ~moved), prev.eq(beat.as_value())]
    m.d.comb += [
        check(~held | link.valid),
        check(~held | (beat.as_value() == prev)),
    ]

    in_packet = Signal(name=f"{name}_in_packet")
    remaining = Signal(4, name=f"{name}_remaining")
    pkt_vc = Signal(2, name=f"{name}_vc")
    with m.If(link.valid):
        with m.If(~in_packet):
            m.d.comb += [
                check(beat.first),
                check(beat.vc.as_value() == hdr.vc.as_value()),
                check(beat.last == (data_beats(hdr) == 0)),
            ]
            if well_formed:
                m.d.comb += check(~malformed(hdr))
        with m.Else():
            m.d.comb += [
                check(~beat.first),
                check(beat.vc.as_value() == pkt_vc),
                check(beat.last == (remaining == 1)),
            ]
    with m.If(moved):
        with m.If(~in_packet):
            m.d.sync += [
                remaining.eq(data_beats(hdr)),
                pkt_vc.eq(beat.vc.as_value()),
                in_packet.eq(~beat.last),
            ]
        with m.Else():
            m.d.sync += [remaining.eq(remaining - 1), in_packet.eq(~beat.last)]
    if state is not None:
        state.update(in_packet=in_packet, remaining=remaining, vc=pkt_vc, held=held)
    return in_packet


def sink_rules(m, link, check, *, name="link"):
    """Add the ``ready2`` promise of ``link``'s sink to ``m`` using ``check``.

    Returns the register ``promised`` (bit ``v``: in the previous cycle ``ready2[v]`` was high and a
    ``v`` beat moved, so ``ready[v]`` must be high now).
    """
    moved = link.transfer()
    vc = link.payload.vc.as_value()
    promised = Signal(NUM_VCS, name=f"{name}_promised")
    m.d.sync += promised.eq(Mux(moved, link.ready2 & (Const(1, NUM_VCS) << vc)[:NUM_VCS], 0))
    m.d.comb += [
        check((link.ready2 & ~link.ready) == 0),
        check((promised & ~link.ready) == 0),
    ]
    return promised
