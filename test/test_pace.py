"""The real-time factor as a reader of /clock measures it, with wall times the test gives."""

from __future__ import annotations

import pytest

from acres_bridge.pace import PaceMeter, describe_pace

NS = 1_000_000_000
STEP_NS = NS // 120


def feed(meter: PaceMeter, wall_start_ns: int, sim_start_ns: int, seconds: float, factor: float) -> int:
    """Clock messages at 120 per simulated second for `seconds` of wall time at `factor`; the end."""
    steps = int(seconds * 120 * factor)
    for k in range(steps):
        sim = sim_start_ns + k * STEP_NS
        meter.record(wall_start_ns + int((k * STEP_NS) / factor), sim)
    return wall_start_ns + int(seconds * NS)


def test_real_time_reads_one() -> None:
    meter = PaceMeter(window_s=5.0)
    end = feed(meter, 0, 0, 10.0, 1.0)
    assert meter.factor(end) == pytest.approx(1.0, abs=0.01)


def test_the_factor_follows_the_last_window_only() -> None:
    meter = PaceMeter(window_s=5.0)
    end = feed(meter, 0, 0, 10.0, 1.0)
    end = feed(meter, end, 10 * NS, 10.0, 0.5)
    assert meter.factor(end) == pytest.approx(0.5, abs=0.02)


def test_a_stopped_clock_reads_as_a_falling_factor() -> None:
    meter = PaceMeter(window_s=5.0)
    end = feed(meter, 0, 0, 5.0, 1.0)
    assert meter.factor(end + 5 * NS) == pytest.approx(0.5, abs=0.02)


def test_clocks_that_arrived_late_never_read_as_faster_than_real_time() -> None:
    # A real-time simulator whose reader was off the CPU from 4.5 s to 5.1 s: the clocks made then
    # arrive in a burst from 5.1 s on, 0.2 ms apart, the rest on time. Read at every clock as the
    # burst's clocks, one after the other, become the oldest of the window.
    meter = PaceMeter(window_s=5.0)
    factors = []
    for k in range(120 * 12):
        made = k * STEP_NS
        meter.record(5_100_000_000 + (k - 540) * 200_000 if 540 <= k < 612 else made, made)
        if k >= 120 * 10:
            factors.append(meter.factor(made))
    assert max(f for f in factors if f is not None) <= 1.0 + 1e-6


def test_time_that_goes_back_starts_again() -> None:
    meter = PaceMeter(window_s=5.0)
    feed(meter, 0, 100 * NS, 5.0, 1.0)
    meter.record(6 * NS, 0)
    assert meter.factor(6 * NS) is None


def test_the_words_for_it() -> None:
    assert describe_pace(None) == "real-time factor: not measured yet"
    assert describe_pace(0.834).startswith("real-time factor 0.83 ")
    with pytest.raises(ValueError, match="window"):
        PaceMeter(window_s=0.0)
