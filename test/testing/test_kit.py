"""The test kit on a real session: the acres_sim fixture, Sim's stepping, waits and look-ups, and
the criteria as assertions, with what each says when it fails."""

from __future__ import annotations

import sys

import pytest

from acres_bridge.testing import (
    SessionSim,
    SimTimeoutError,
    assert_max_speed,
    assert_min_distance,
    assert_no_dbw_timeout,
    assert_within_route,
    judge,
)

pytestmark = pytest.mark.integration


def _stamp_s(message: object) -> float:
    stamp = message.header.stamp  # type: ignore[attr-defined]
    return stamp.sec + stamp.nanosec * 1e-9


def test_a_second_of_simulated_time_brings_a_second_of_odometry(acres_sim: SessionSim) -> None:
    acres_sim.step(seconds=1.0)
    assert acres_sim.now == pytest.approx(1.0)
    stamps = [_stamp_s(m) for m in acres_sim.messages("/vehicle/odom")]
    assert stamps[-1] == pytest.approx(1.0)
    assert len(stamps) > 50
    assert sum(0.5 < t <= 1.0 + 1e-9 for t in stamps) == 50  # 100 Hz, none lost
    assert _stamp_s(acres_sim.latest("/vehicle/odom")) == pytest.approx(1.0)
    assert len(acres_sim.messages("/vehicle/odom", since=0.5)) == 51  # 0.50 .. 1.00 s
    assert acres_sim.messages("/vehicle/ulc/cmd") == []  # no stack: no command


def test_a_wait_that_never_comes_true_ends_in_simulated_time_and_says_what_came(
    acres_sim: SessionSim,
) -> None:
    with pytest.raises(
        SimTimeoutError,
        match=r"the moon: not within 0\.5 s of simulated time; .*/vehicle/odom: \d+ messages, last at 0\.50",
    ):
        acres_sim.wait_for(lambda sim: False, sim_seconds=0.5, what="the moon")
    assert acres_sim.now == pytest.approx(0.5)
    held = acres_sim.wait_for(lambda sim: sim.now >= 0.7, sim_seconds=1.0)
    assert held == pytest.approx(0.7, abs=0.06)  # a chunk at a time


def test_an_assertion_names_the_criterion_the_topic_and_the_value(acres_sim: SessionSim) -> None:
    acres_sim.step(seconds=1.0)
    assert_within_route(acres_sim, max_xte=0.3)  # at rest on the route
    assert_no_dbw_timeout(acres_sim)  # never commanded: nothing timed out
    with pytest.raises(AssertionError, match=r"min_distance: 0\.\d+ on /sim/ground_truth/odom, wanted >= 5"):
        assert_min_distance(acres_sim, 5.0)


def test_an_assertion_on_no_data_is_never_a_pass(acres_sim: SessionSim) -> None:
    with pytest.raises(
        AssertionError, match=r"max_speed: not judged: no message on /sim/ground_truth/odom in 0 s"
    ):
        assert_max_speed(acres_sim, 3.0)  # nothing stepped: nothing to judge


def test_a_wrong_criterion_or_topic_is_a_clear_error(acres_sim: SessionSim) -> None:
    with pytest.raises(ValueError, match="max_mps"):
        judge(acres_sim, {"kind": "max_speed"})
    with pytest.raises(KeyError, match="/lidar/points is not watched by this Sim"):
        acres_sim.latest("/lidar/points")
    with pytest.raises(SimTimeoutError, match=r"no message on /vehicle/odom in 0\.00 s"):
        acres_sim.latest("/vehicle/odom")


@pytest.mark.acres_sim(vehicle="maxxum", seed=5)
def test_the_marker_chooses_the_vehicle(acres_sim: SessionSim) -> None:
    acres_sim.step(seconds=0.5)
    assert acres_sim.vehicle == "maxxum"
    assert _stamp_s(acres_sim.latest("/odom")) == pytest.approx(0.5)
    assert acres_sim.latest("/implement/state").data.startswith("{")


MUTE = "import time; print('mute stack: listening to nobody', flush=True); time.sleep(600)"


def test_a_stack_that_never_answers_is_named_with_the_last_lines_of_its_log(acres_sim: SessionSim) -> None:
    stack = acres_sim.start_stack([sys.executable, "-c", MUTE])
    stack.wait_for_line("mute stack: listening", 60.0)  # started, whatever the machine's load
    with pytest.raises(
        SimTimeoutError,
        match=r"(?s)no command within 1 s.*--- last lines of stack\.log ---\nmute stack: listening",
    ):
        acres_sim.wait_for_stack(timeout_s=1.0)
