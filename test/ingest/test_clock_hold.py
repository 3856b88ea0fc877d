"""ClockHold: while a step request runs, the clocks wait for the steps' data, then go in order."""

from __future__ import annotations

from acres_bridge.ingest.clock_hold import ClockHold
from acres_bridge.wire import Clock


def test_clocks_go_at_once_outside_a_request_and_after_it_in_order_inside_one():
    published: list[tuple[int, int]] = []
    hold = ClockHold(lambda agent, clock: published.append((agent, clock.step)))
    assert not hold.take(0, Clock(step=1, stamp_ns=8_333_333))  # free running: publish now
    hold.hold()
    assert hold.take(0, Clock(step=2, stamp_ns=16_666_666))
    assert hold.take(0, Clock(step=3, stamp_ns=25_000_000))
    assert published == []
    assert hold.release() == 2
    assert published == [(0, 2), (0, 3)]
    assert not hold.take(0, Clock(step=4, stamp_ns=33_333_333))
    assert hold.release() == 0  # a release without a hold publishes nothing
