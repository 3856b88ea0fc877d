"""ClockHold: while a step request runs, each agent's newest clock waits for the steps' data; the
clocks before it go on as newer ones come, so /clock runs on through a long request."""

from __future__ import annotations

from acres_bridge.ingest.clock_hold import ClockHold
from acres_bridge.wire import Clock


def clock(step: int) -> Clock:
    return Clock(step=step, stamp_ns=step * 1_000_000_000 // 120)


def test_clocks_go_at_once_outside_a_request_and_the_last_of_a_request_after_it():
    published: list[tuple[int, int]] = []
    hold = ClockHold(lambda agent, sample: published.append((agent, sample.step)))
    assert not hold.take(0, clock(1))  # free running: publish now
    hold.hold()
    assert hold.take(0, clock(2))
    assert published == []
    assert hold.take(0, clock(3))
    assert hold.take(1, clock(3))  # a second agent's clock is held on its own
    assert published == [(0, 2)]  # the one before the newest goes on
    assert hold.release() == 2
    assert published == [(0, 2), (0, 3), (1, 3)]
    assert not hold.take(0, clock(4))
    assert hold.release() == 0  # a release without a hold publishes nothing
