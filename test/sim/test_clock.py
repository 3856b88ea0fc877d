"""The physics clock: stamps in integer ns and the steps that carry a sample."""

from __future__ import annotations

import itertools

import pytest

from acres_sim.clock import INS_RATE_HZ, NS_PER_S, PHYSICS_RATE_HZ, ins_due, is_due, step_stamp_ns


@pytest.mark.parametrize(
    ("step", "stamp_ns"),
    [
        (0, 0),
        (1, 8_333_333),
        (2, 16_666_666),
        (120, NS_PER_S),
        (1405, 11_708_333_333),
        (3001, 25_008_333_333),
    ],
)
def test_step_stamp_ns(step: int, stamp_ns: int) -> None:
    assert step_stamp_ns(step) == stamp_ns


def test_stamps_increase_strictly() -> None:
    stamps = [step_stamp_ns(s) for s in range(10_000)]
    assert all(b > a for a, b in itertools.pairwise(stamps))


@pytest.mark.parametrize("first", [1, 2, 7, 119, 1000])
def test_ins_has_100_samples_in_any_120_steps(first: int) -> None:
    assert sum(ins_due(s) for s in range(first, first + PHYSICS_RATE_HZ)) == INS_RATE_HZ


def test_ins_due_pattern() -> None:
    # Five samples in every six steps; step 0 (the session start) is never sampled.
    assert [s for s in range(13) if ins_due(s)] == [2, 3, 4, 5, 6, 8, 9, 10, 11, 12]


@pytest.mark.parametrize("rate_hz", [1, 10, 20, 50, 100, 120])
def test_is_due_counts(rate_hz: int) -> None:
    assert sum(is_due(s, rate_hz) for s in range(1, 10 * PHYSICS_RATE_HZ + 1)) == 10 * rate_hz


def test_ten_hz_steps() -> None:
    assert [s for s in range(1, 40) if is_due(s, 10)] == [12, 24, 36]
