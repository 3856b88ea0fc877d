"""The protocol's timing rule: the steps that carry a sample, and their stamps."""

from __future__ import annotations

from acres_bridge.wire.clock import NS_PER_S, is_due, samples_through, step_stamp_ns


def test_20_hz_is_every_sixth_step_of_120_and_every_fifth_of_100() -> None:
    assert [s for s in range(1, 25) if is_due(s, 20, 120)] == [6, 12, 18, 24]
    assert [s for s in range(1, 11) if is_due(s, 20, 100)] == [5, 10]


def test_exactly_rate_samples_fall_in_every_second_of_steps() -> None:
    for rate_hz in (1, 10, 50, 100, 120):
        due = [s for s in range(1, 241) if is_due(s, rate_hz, 120)]
        assert len(due) == 2 * rate_hz
        assert samples_through(240, rate_hz, 120) == 2 * rate_hz
    assert not is_due(0, 120, 120)  # step 0 is the session start: no sample


def test_a_step_is_stamped_with_its_floored_nanoseconds() -> None:
    assert step_stamp_ns(0, 120) == 0
    assert step_stamp_ns(1, 120) == 8_333_333
    assert step_stamp_ns(120, 120) == NS_PER_S
