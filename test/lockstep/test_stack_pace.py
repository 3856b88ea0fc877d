"""StackPace's arithmetic: the requests end on a timer's ticks, and what it owes is what it fired.

`RclTimer` models an rcl timer on simulated time as rcl_timer_call keeps it: due at k * period
from its creation at time 0; it fires once on a clock at or past its due time, and a clock that
has passed the next due time too skips that tick.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acres_bridge.lockstep.stack_pace import Shortfall, StackPace, tick_step, timer_period_ns

NS_PER_S = 1_000_000_000
PHYSICS_HZ = 120
ULC = "/vehicle/ulc/cmd"
STEERING = "/vehicle/steering/cmd"


def grid_ns(step: int) -> int:
    return step * NS_PER_S // PHYSICS_HZ


class RclTimer:
    """An rcl timer created at simulated time 0, woken by the last clock of each request."""

    def __init__(self, rate_hz: float) -> None:
        self.period_ns = timer_period_ns(rate_hz)
        self.next_ns = self.period_ns
        self.fired = 0
        self.skipped = 0

    def wake(self, now_ns: int) -> None:
        if now_ns < self.next_ns:
            return
        self.fired += 1
        self.next_ns += self.period_ns
        while self.next_ns <= now_ns:  # rcl skips the ticks the clock has passed
            self.next_ns += self.period_ns
            self.skipped += 1


def test_a_timer_period_is_rounded_as_rclpy_rounds_it():
    assert timer_period_ns(50.0) == 20_000_000
    assert timer_period_ns(30.0) == 33_333_333
    assert timer_period_ns(120.0) == 8_333_333


@pytest.mark.parametrize(("tick", "step"), [(1, 3), (2, 5), (3, 8), (4, 10), (5, 12), (50, 120)])
def test_a_50_hz_tick_falls_on_the_first_step_at_or_past_it(tick, step):
    assert tick_step(tick, 20_000_000, PHYSICS_HZ) == step
    assert grid_ns(step) >= tick * 20_000_000 > grid_ns(step - 1)


def test_requests_end_on_the_ticks_of_every_declared_rate_and_no_later_than_asked():
    pace = StackPace({ULC: 50.0, STEERING: 20.0}, PHYSICS_HZ)
    done, ends = 0, []
    while done < 24:
        done += pace.request_steps(done, most=12)
        ends.append(done)
    assert ends == [3, 5, 6, 8, 10, 12, 15, 17, 18, 20, 22, 24]
    assert StackPace({}, PHYSICS_HZ).request_steps(0, most=12) == 12
    assert StackPace({ULC: 5.0}, PHYSICS_HZ).request_steps(0, most=12) == 12
    assert StackPace({ULC: 50.0}, PHYSICS_HZ).request_steps(0, most=2) == 2


@given(
    rates=st.lists(
        st.sampled_from([1.0, 7.0, 10.0, 20.0, 30.0, 33.0, 50.0, 60.0, 100.0, 120.0]), min_size=1, max_size=3
    ),
    most=st.integers(1, 40),
)
def test_stepped_this_way_no_timer_skips_and_each_owes_exactly_what_it_fired(rates, most):
    topics = {f"/t{i}": rate for i, rate in enumerate(rates)}
    pace = StackPace(topics, PHYSICS_HZ)
    timers = {topic: RclTimer(rate) for topic, rate in topics.items()}
    done = 0
    while done < 3 * PHYSICS_HZ:
        done += pace.request_steps(done, most)
        for topic, timer in timers.items():
            before = timer.fired
            timer.wake(grid_ns(done))
            for _ in range(timer.fired - before):
                pace.sent(topic, done)
        assert pace.behind(done) == []
        for topic, timer in timers.items():
            assert timer.skipped == 0
            assert pace.owed(topic, done) == timer.fired == pace.ticks_by(topic, done)


def test_a_topic_owes_a_message_a_tick_from_its_first():
    pace = StackPace({ULC: 50.0}, PHYSICS_HZ)
    assert pace.owed(ULC, 120) == 0  # never sent: owes nothing (a stack may wait for its inputs)
    assert pace.unstarted()
    pace.sent(ULC, 10)  # first at the 4th tick (step 10)
    assert not pace.unstarted()
    assert pace.owed(ULC, 10) == 1
    assert pace.owed(ULC, 11) == 1
    assert pace.owed(ULC, 12) == 2
    assert pace.owed(ULC, 120) == 47


def test_behind_names_each_topic_short_of_its_count_and_not_one_never_started():
    pace = StackPace({ULC: 50.0, STEERING: 50.0}, PHYSICS_HZ)
    pace.sent("/vehicle/gear/cmd", 3)  # no rate declared: not counted
    done = 0
    while done < PHYSICS_HZ:
        done += pace.request_steps(done, 12)
        if done % 5:  # the stack skips some ticks
            pace.sent(ULC, done)
    assert pace.counts[ULC] == 40
    (shortfall,) = pace.behind(PHYSICS_HZ)
    assert shortfall == Shortfall(ULC, owed=50, sent=40, rate_hz=50.0, now_s=1.0)
    assert str(shortfall) == f"{ULC} sent 40 of the 50 its 50 Hz timer owes by 1.000 s of simulated time"
    assert pace.owed(STEERING, PHYSICS_HZ) == 0


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan"), float("inf"), 121.0])
def test_a_rate_is_above_zero_and_at_most_the_physics_rate(rate):
    with pytest.raises(ValueError, match="above 0 and at most the physics rate"):
        StackPace({ULC: rate}, PHYSICS_HZ)
