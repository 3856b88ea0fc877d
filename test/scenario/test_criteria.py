"""Each criterion judges from the messages of the bridge's topics, as a user's check would."""

from __future__ import annotations

import json
import math

import pytest
from ds_dbw_msgs.msg import SteeringReport, UlcReport
from nav_msgs.msg import Odometry
from std_msgs.msg import String

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.route import acre_loop
from acres_bridge.scenario.criteria import make_judges
from acres_bridge.scenario.schema import (
    GoalReached,
    ImplementState,
    MaxCrossTrackError,
    MaxSpeed,
    MinDistance,
    NoDbwOverride,
    NoDbwTimeout,
    TopicRate,
)

ODOM = "/sim/ground_truth/odom"
DBW_REPORT_TOPICS = (
    "/vehicle/steering/report",
    "/vehicle/throttle/report",
    "/vehicle/brake/report",
    "/vehicle/ulc/report",
)


def odometry(x: float, y: float, vx: float = 0.0) -> Odometry:
    """An odometry message at tile (x, y), in utm as the bridge publishes it."""
    message = Odometry()
    east, north, _ = ACRE_GEOREFERENCE.world_to_utm(x, y, 0.0)
    message.pose.pose.position.x, message.pose.pose.position.y = east, north
    message.twist.twist.linear.x = vx
    return message


def judge(spec, messages, end_s, vehicle="polaris"):
    (one,) = make_judges([spec], vehicle)
    for topic, message, time_s in messages:
        one.observe(topic, message, time_s)
    return one.finish(end_s)


def test_goal_reached_gives_the_first_time_inside_the_radius():
    spec = GoalReached(kind="goal_reached", x=10.0, y=0.0, radius_m=2.0, within_s=5.0)
    path = [(ODOM, odometry(x, 0.0), x / 2) for x in range(13)]
    result = judge(spec, path, 6.0)
    assert (result.passed, result.value) == (True, 4.0)  # x = 8 at 4 s is the first within 2 m
    late = GoalReached(kind="goal_reached", x=10.0, y=0.0, radius_m=2.0, within_s=3.9)
    assert not judge(late, path, 6.0).passed
    never = GoalReached(kind="goal_reached", x=50.0, y=0.0, within_s=5.0, frame="tile")
    assert (judge(never, path, 6.0).passed, judge(never, path, 6.0).value) == (False, None)


def test_goal_in_utm_is_the_same_place():
    east, north, _ = ACRE_GEOREFERENCE.world_to_utm(10.0, 0.0, 0.0)
    spec = GoalReached(kind="goal_reached", x=east, y=north, frame="utm", radius_m=0.5, within_s=9.0)
    assert judge(spec, [(ODOM, odometry(10.2, 0.0), 1.0)], 2.0).passed


def test_cross_track_error_is_the_largest_distance_from_the_route_after_the_grace():
    route = acre_loop()
    x, y, yaw = route.pose_at(30.0)
    left = (x - 0.4 * math.sin(yaw), y + 0.4 * math.cos(yaw))
    messages = [
        (ODOM, odometry(x, y), 0.0),
        (ODOM, odometry(*left), 2.0),
        (ODOM, odometry(x + 3 * math.cos(yaw + math.pi / 2), y), 0.5),
    ]
    strict = MaxCrossTrackError(kind="max_cross_track_error", max_m=0.3)
    after = MaxCrossTrackError(kind="max_cross_track_error", max_m=0.5, after_s=1.0)
    assert judge(strict, messages, 3.0).value == pytest.approx(3.0, abs=1e-3)
    result = judge(after, messages, 3.0)
    assert result.passed
    assert result.value == pytest.approx(0.4, abs=1e-6)


def test_max_speed_and_distance():
    messages = [(ODOM, odometry(float(i), 0.0, vx=1.0 + i), i * 0.1) for i in range(5)]
    speed = judge(MaxSpeed(kind="max_speed", max_mps=5.0), messages, 1.0)
    assert (speed.passed, speed.value) == (True, 5.0)
    assert not judge(MaxSpeed(kind="max_speed", max_mps=4.9), messages, 1.0).passed
    distance = judge(MinDistance(kind="min_distance", min_m=4.0), messages, 1.0)
    assert (distance.passed, distance.value) == (True, 4.0)
    assert not judge(MinDistance(kind="min_distance", min_m=4.1), messages, 1.0).passed


def test_drive_by_wire_flags_are_counted_on_every_report():
    quiet, timed_out, overridden = UlcReport(), SteeringReport(), UlcReport()
    timed_out.timeout = True
    overridden.override_latched = True
    messages = [
        ("/vehicle/ulc/report", quiet, 0.0),
        ("/vehicle/steering/report", timed_out, 1.25),
        ("/vehicle/ulc/report", overridden, 2.0),
    ]
    timeout = judge(NoDbwTimeout(kind="no_dbw_timeout"), messages, 3.0)
    assert (timeout.passed, timeout.value) == (False, 1)
    assert "first at 1.250 s" in timeout.rule
    override = judge(NoDbwOverride(kind="no_dbw_override"), messages, 3.0)
    assert (override.passed, override.value) == (False, 1)
    assert judge(NoDbwTimeout(kind="no_dbw_timeout"), messages[:1], 3.0).passed


def test_topic_rate_counts_in_simulated_time_from_after_s():
    messages = [("/vehicle/ulc/cmd", object(), t / 50) for t in range(500)]  # 50 Hz for 10 s
    rate = judge(
        TopicRate(kind="topic_rate", topic="/vehicle/ulc/cmd", min_hz=50, after_s=2.0), messages, 10.0
    )
    assert (rate.passed, rate.value) == (True, 50.0)
    assert not judge(TopicRate(kind="topic_rate", topic="/vehicle/ulc/cmd", min_hz=51), messages, 10.0).passed


def state(**values):
    return String(data=json.dumps(values))


def test_implement_state_at_the_end_and_always():
    topic = "implement/state"
    messages = [
        (topic, state(pto_on=False, hitch_lever=0.2), 0.5),
        (topic, state(pto_on=True, hitch_lever=0.6), 2.0),
    ]
    at_end = ImplementState(kind="implement_state", key="pto_on", equals=True)
    assert judge(at_end, messages, 3.0, "maxxum").passed
    always = ImplementState(kind="implement_state", key="pto_on", equals=True, at="always")
    result = judge(always, messages, 3.0, "maxxum")
    assert (result.passed, result.value) == (False, False)
    after = ImplementState(kind="implement_state", key="pto_on", equals=True, at="always", after_s=1.0)
    assert judge(after, messages, 3.0, "maxxum").passed
    lever = ImplementState(kind="implement_state", key="hitch_lever", min=0.5, max=0.7)
    assert judge(lever, messages, 3.0, "maxxum").passed
    assert not judge(lever, messages[:1], 3.0, "maxxum").passed


def test_implement_state_never_seen_or_unreadable_fails():
    spec = ImplementState(kind="implement_state", key="raised", equals=False)
    assert not judge(spec, [], 1.0, "maxxum").passed
    assert not judge(spec, [("implement/state", String(data="not json"), 0.1)], 1.0, "maxxum").passed
    one = judge(spec, [("implement/state", state(raised=0), 0.1)], 1.0, "maxxum")
    assert not one.passed  # 0 is no false: the type counts


def test_a_criterion_that_read_nothing_is_not_judged_and_says_so():
    """The finding: with no ground truth at all, max_speed passed."""
    result = judge(MaxSpeed(kind="max_speed", max_mps=3.0), [], 5.0)
    assert result.unjudged == f"no message on {ODOM} in 5 s of simulated time"
    assert result.evidence == (
        {"topic": ODOM, "messages": 0, "from_s": None, "to_s": None, "longest_gap_s": 0.0},
    )


def test_a_criterion_states_the_evidence_it_judged():
    messages = [(ODOM, odometry(0.0, 0.0, vx=1.0), n / 100) for n in range(501)]  # 100 Hz, 0 .. 5 s
    result = judge(MaxSpeed(kind="max_speed", max_mps=3.0), messages, 5.0)
    assert (result.passed, result.unjudged) == (True, None)
    assert result.evidence == (
        {"topic": ODOM, "messages": 501, "from_s": 0.0, "to_s": 5.0, "longest_gap_s": 0.01},
    )
    assert result.as_dict()["evidence"] == list(result.evidence)


@pytest.mark.parametrize(
    ("times", "why"),
    [
        ([n / 100 for n in range(501) if not 200 < n < 300], "silent for 1.000 s from 2.000 s"),
        ([n / 100 for n in range(200, 501)], "silent for 2.000 s from 0.000 s"),
        ([n / 100 for n in range(401)], "silent for 1.000 s from 4.000 s"),
    ],
)
def test_a_silence_of_more_than_a_few_periods_leaves_a_criterion_unjudged(times, why):
    messages = [(ODOM, odometry(0.0, 0.0), t) for t in times]
    result = judge(MaxSpeed(kind="max_speed", max_mps=3.0), messages, 5.0)
    assert result.unjudged is not None
    assert why in result.unjudged
    assert "a message every 0.01 s is due" in result.unjudged


def test_the_first_message_may_wait_for_a_first_fix():
    late = [(ODOM, odometry(0.0, 0.0), n / 100) for n in range(100, 501)]  # from 1 s on
    assert judge(MaxSpeed(kind="max_speed", max_mps=3.0), late, 5.0).unjudged is None


def test_a_silence_within_a_few_periods_is_evidence_enough():
    times = [n / 100 for n in range(501) if n % 5]  # every fifth message lost: gaps of 2 periods
    result = judge(
        MaxSpeed(kind="max_speed", max_mps=3.0), [(ODOM, odometry(0.0, 0.0), t) for t in times], 5.0
    )
    assert result.unjudged is None


def test_every_drive_by_wire_report_must_come():
    reports = [(topic, SteeringReport(), n / 50) for n in range(251) for topic in DBW_REPORT_TOPICS[:3]]
    result = judge(NoDbwTimeout(kind="no_dbw_timeout"), reports, 5.0)
    assert result.passed
    assert result.unjudged == "no message on /vehicle/ulc/report in 5 s of simulated time"


def test_a_rate_criterion_judges_the_silence_of_its_topic_itself():
    spec = TopicRate(kind="topic_rate", topic="/vehicle/ulc/cmd", min_hz=10.0)
    silent = judge(spec, [], 5.0)
    assert (silent.passed, silent.value, silent.unjudged) == (False, 0.0, None)  # a FAIL, on 5 s
    late = TopicRate(kind="topic_rate", topic="/vehicle/ulc/cmd", min_hz=10.0, after_s=5.0)
    assert judge(late, [], 5.0).unjudged == "no simulated time after 5 s was run"
