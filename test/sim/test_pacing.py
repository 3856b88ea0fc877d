"""Free run never runs faster than real time, gives up a large lag instead of bursting, and says
how slow it is. Judged with a clock the test moves, never with the machine's."""

from __future__ import annotations

import pytest

from acres_bridge.pace import PacingReport, parse_pacing_line
from acres_sim.server.pacing import RealTimePacer

PERIOD = 1.0 / 120.0


def steps_made(pacer: RealTimePacer, start: float, end: float, tick: float) -> list[float]:
    """Run the pacer as the server does, polling every `tick` s of wall time from start to end: the
    wall times at which it stepped."""
    made = []
    now = start
    while now < end:
        while pacer.due(now):
            made.append(now)
            pacer.stepped(now)
        now += tick
    return made


def test_a_punctual_simulator_makes_120_steps_per_second_and_no_more() -> None:
    pacer = RealTimePacer(PERIOD)
    pacer.start(0.0)
    made = steps_made(pacer, 0.0, 10.0, 0.0005)
    assert len(made) == 1200
    assert pacer.lost_s == 0.0
    assert pacer.real_time_factor(10.0) == pytest.approx(1.0, abs=0.01)


def test_the_simulated_clock_never_runs_ahead_of_wall_time() -> None:
    pacer = RealTimePacer(PERIOD)
    pacer.start(0.0)
    now = 0.0
    while now < 3.0:
        while pacer.due(now):
            pacer.stepped(now)
            # step n covers simulated time up to n periods; it is made no earlier than slot n - 1
            assert (pacer.steps - 1) * PERIOD <= now + 1e-9
        now += 0.003


def test_a_stall_is_not_caught_up_in_a_burst() -> None:
    pacer = RealTimePacer(PERIOD)
    pacer.start(0.0)
    steps_made(pacer, 0.0, 1.0, 0.001)
    before = pacer.steps
    # the process gets no CPU for 0.5 s; then at most a step is made at once, not 60
    assert pacer.due(1.5)
    pacer.stepped(1.5)
    assert not pacer.due(1.5)
    assert pacer.steps == before + 1
    assert pacer.lost_s == pytest.approx(0.5, abs=2 * PERIOD)
    made = steps_made(pacer, 1.5, 2.5, 0.001)
    assert len(made) == pytest.approx(120, abs=1)


def test_a_small_lag_is_made_up_step_by_step() -> None:
    pacer = RealTimePacer(PERIOD, max_lag_steps=3)
    pacer.start(0.0)
    pacer.stepped(0.0)
    late = 0.0 + 2.5 * PERIOD  # a wake-up 1.5 periods late: within the lag that is made up
    made = []
    while pacer.due(late):
        made.append(late)
        pacer.stepped(late)
    assert len(made) == 2  # slots 1 and 2, back to back, never more than max_lag_steps
    assert pacer.lost_s == 0.0


def test_a_slow_simulator_reports_its_factor_at_a_limited_rate() -> None:
    pacer = RealTimePacer(PERIOD, window_s=5.0, report_interval_s=10.0)
    pacer.start(0.0)
    # every step takes 2 periods of wall time: half real time
    now = 0.0
    reports: list[PacingReport] = []
    while now < 30.0:
        pacer.stepped(now)
        now += 2 * PERIOD
        report = pacer.report(now, skipped_perception_steps=0)
        if report is not None:
            reports.append(report)
    assert len(reports) == 3  # at 5 s (the first full window), 15 s, 25 s
    assert reports[0].real_time_factor == pytest.approx(0.5, abs=0.01)
    assert reports[-1].lost_s == pytest.approx(12.5, abs=4 * PERIOD)  # wall 25 s, simulated 12.5 s


def test_a_punctual_simulator_reports_only_new_perception_skips() -> None:
    pacer = RealTimePacer(PERIOD, window_s=5.0, report_interval_s=1.0)
    pacer.start(0.0)
    steps_made(pacer, 0.0, 6.0, 0.001)
    assert pacer.report(6.0, skipped_perception_steps=0) is None
    report = pacer.report(6.0, skipped_perception_steps=4)
    assert report is not None
    assert report.skipped_perception_steps == 4
    steps_made(pacer, 6.0, 8.0, 0.001)
    assert pacer.report(8.0, skipped_perception_steps=4) is None


def test_a_pause_is_not_lost_time() -> None:
    pacer = RealTimePacer(PERIOD)
    pacer.start(0.0)
    steps_made(pacer, 0.0, 1.0, 0.001)
    pacer.stop()
    assert not pacer.due(5.0)
    assert pacer.timeout_s(5.0) is None
    pacer.start(5.0)
    steps_made(pacer, 5.0, 6.0, 0.001)
    assert pacer.lost_s == 0.0
    assert pacer.steps == pytest.approx(240, abs=1)


def test_the_report_line_reads_back() -> None:
    report = PacingReport(
        real_time_factor=0.8234, window_s=5.0, lost_s=1.5, skipped_perception_steps=7, sim_ns=12_500_000_000
    )
    parsed = parse_pacing_line(f"acres_sim WARNING: {report.line()} (slower than real time)")
    assert parsed is not None
    assert parsed.real_time_factor == pytest.approx(0.823)
    assert parsed.skipped_perception_steps == 7
    assert parsed.sim_ns == 12_500_000_000
    assert parse_pacing_line("acres_sim INFO: listening on 127.0.0.1:1") is None


@pytest.mark.parametrize(("period", "lag", "window"), [(0.0, 3, 5.0), (PERIOD, 0, 5.0), (PERIOD, 3, 0.0)])
def test_bad_settings_are_refused(period: float, lag: int, window: float) -> None:
    with pytest.raises(ValueError, match="RealTimePacer needs"):
        RealTimePacer(period, max_lag_steps=lag, window_s=window)
