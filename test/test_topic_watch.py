"""The demo's accounting of a topic in simulated time: rates, OK, LOW and who skipped, HIGH; and
the stamps it reads from raw CDR bytes. Times are given by the test."""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry, Path
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.other.paths import OdomTrail
from acres_bridge.topic_watch import (
    LATE_S,
    ClockHistory,
    SimulatorSkips,
    Status,
    TopicWatch,
    inputs_reader,
    path_poses_since,
    stamp_reader,
)

PROFILES = load_profiles(check_types=False)
NS = 1_000_000_000


def watch_of(topic: str) -> TopicWatch:
    return TopicWatch(PROFILES.topic("polaris", topic))


def feed(watch: TopicWatch, rate_hz: float, seconds: float, *, skip: set[int] | None = None) -> int:
    """Messages at rate_hz of simulated time for `seconds`, arriving 0.1 s of wall time each second
    later than they were made (a slow machine); the simulated time of the last one."""
    skip = skip or set()
    last = 0
    for k in range(round(rate_hz * seconds)):
        last = round(k * NS / rate_hz)
        if k not in skip:
            watch.record(wall_ns=int(last * 1.1), sim_ns=last)
    return last


def test_every_message_is_ok_whatever_the_wall_clock_says() -> None:
    watch = watch_of("/vehicle/odom")
    last = feed(watch, 100.0, 10.0)
    clock = last + round(0.5 * LATE_S * NS)
    verdict = watch.verdict(clock)
    assert verdict.status is Status.OK
    assert verdict.expected == verdict.received == 1000
    assert watch.sim_rate_hz(clock) == pytest.approx(100.0, abs=0.6)
    assert watch.wall_rate_hz(int(last * 1.1)) == pytest.approx(100.0 / 1.1, abs=1.0)


def test_messages_still_on_their_way_are_not_missing_but_late() -> None:
    watch = watch_of("/vehicle/odom")
    last = feed(watch, 100.0, 5.0)
    # the latest clock is 0.3 s past the last odometry that arrived: those are in flight, not lost
    assert watch.verdict(last + round(0.3 * NS)).status is Status.OK
    # 2 s: the topic's data waits somewhere, or it has stopped
    assert watch.verdict(last + 2 * NS).text() == "LATE: newest 2.0 s behind /clock"


def test_missing_messages_are_low_and_blamed_on_the_bridge() -> None:
    watch = watch_of("/vehicle/odom")
    last = feed(watch, 100.0, 10.0, skip={100, 200, 300})
    assert watch.verdict(last, SimulatorSkips(10, last)).reason == "not published by the bridge"
    verdict = watch.verdict(last + round(0.5 * LATE_S * NS))
    assert verdict.status is Status.LOW
    assert verdict.text() == "LOW: 3 of 1000 not published by the bridge"


def test_clouds_the_simulator_skipped_are_blamed_on_it() -> None:
    watch = watch_of("/lidar/points")
    last = feed(watch, 10.0, 10.0, skip={10, 11, 40})
    clock = last + round(0.5 * LATE_S * NS)
    skips = SimulatorSkips(count=5, until_ns=clock)
    assert watch.verdict(clock, skips).text() == "LOW: 3 of 100 skipped by the simulator"
    assert watch.verdict(clock, SimulatorSkips(1, clock)).reason == "not published by the bridge"


def test_skips_are_compared_up_to_the_time_of_the_simulators_report() -> None:
    # The simulator said at 5 s that it had skipped 2 steps; the clouds of 4.0 and 4.1 s are missing
    # then, and two more after its report, which it has not spoken of yet.
    watch = watch_of("/lidar/points")
    last = feed(watch, 10.0, 10.0, skip={40, 41, 80, 81})
    clock = last + round(0.5 * LATE_S * NS)
    assert watch.verdict(clock, SimulatorSkips(2, 5 * NS)).reason == "skipped by the simulator"
    assert watch.verdict(clock, SimulatorSkips(1, 5 * NS)).reason == "not published by the bridge"
    assert watch.verdict(clock).reason == "not published by the bridge"


def test_a_topic_published_twice_is_high() -> None:
    watch = watch_of("/vehicle/ulc/report")
    last = feed(watch, 50.0, 4.0)
    feed(watch, 50.0, 4.0)
    verdict = watch.verdict(last + round(0.5 * LATE_S * NS))
    assert verdict.status is Status.HIGH
    assert verdict.text() == "HIGH: 400 for 200 due"


def test_a_burst_topic_is_counted_in_bursts() -> None:
    watch = TopicWatch(PROFILES.topic("maxxum", "can/rx"))
    for period in range(50):  # 13 frames every 0.1 s
        for _ in range(13):
            watch.record(wall_ns=period * NS // 10, sim_ns=period * NS // 10)
    verdict = watch.verdict(49 * NS // 10 + round(0.5 * LATE_S * NS))
    assert verdict.status is Status.OK
    assert verdict.expected == 650


def test_before_the_first_clock_there_is_no_verdict() -> None:
    watch = watch_of("/vehicle/odom")
    watch.record(wall_ns=1, sim_ns=None)
    assert watch.verdict(None).status is Status.WAIT
    assert watch.sim_rate_hz(None) is None


def test_stamps_are_read_from_the_cdr_bytes() -> None:
    cloud = PointCloud2()
    cloud.header.stamp.sec, cloud.header.stamp.nanosec = 12, 345
    assert stamp_reader(PointCloud2)(serialize_message(cloud)) == 12 * NS + 345  # type: ignore[misc]
    clock = Clock()
    clock.clock.sec = 7
    assert stamp_reader(Clock)(serialize_message(clock)) == 7 * NS  # type: ignore[misc]
    tf = TFMessage()
    assert stamp_reader(TFMessage)(serialize_message(tf)) is None  # type: ignore[misc]
    tf.transforms.append(TransformStamped())
    tf.transforms[0].header.stamp.sec = 3
    assert stamp_reader(TFMessage)(serialize_message(tf)) == 3 * NS  # type: ignore[misc]
    assert stamp_reader(Bool) is None


def test_a_message_without_a_stamp_is_placed_by_its_source_timestamp() -> None:
    clocks = ClockHistory()
    assert clocks.sim_at(5) is None
    for k in range(1, 121):  # a clock every 8.3 ms of wall time, simulated k / 120 s
        clocks.record(source_ns=k * NS // 120, sim_ns=k * NS // 120)
    assert clocks.sim_at(NS // 2 + 1) == 60 * NS // 120  # published just after the clock of step 60
    assert clocks.sim_at(NS // 2 - 1) == 59 * NS // 120
    clocks.record(source_ns=0, sim_ns=7)  # out of order: ignored, the history stays sorted
    assert clocks.sim_at(NS) == NS


def test_a_message_between_clocks_this_reader_lost_is_placed_by_interpolation() -> None:
    clocks = ClockHistory()
    clocks.record(source_ns=NS, sim_ns=NS)
    clocks.record(source_ns=2 * NS, sim_ns=3 * NS)  # the clocks in between were lost here
    assert clocks.sim_at(NS + NS // 4) == NS + NS // 2  # a quarter of the way: 0.5 simulated s on
    assert clocks.sim_at(3 * NS) == 3 * NS  # after the newest clock: its time


def test_messages_published_but_lost_to_the_reader_are_noted_not_blamed() -> None:
    watch = watch_of("/vehicle/odom")
    for k in range(500):
        if k not in (10, 11, 12):
            watch.record(wall_ns=k * NS // 100, sim_ns=k * NS // 100, seq=k + 1)
    verdict = watch.verdict(499 * NS // 100 + round(0.5 * LATE_S * NS))
    assert verdict.text() == "OK (+3 published, not received here)"
    assert watch.unreceived == 3


def test_the_simulated_rate_is_what_was_published_not_what_this_reader_kept() -> None:
    numbered, unnumbered = watch_of("/vehicle/odom"), watch_of("/vehicle/odom")
    for k in range(500):
        if k % 5:  # the reader lost one in five
            numbered.record(wall_ns=k * NS // 100, sim_ns=k * NS // 100, seq=k + 1)
            unnumbered.record(wall_ns=k * NS // 100, sim_ns=k * NS // 100)
    clock = 499 * NS // 100
    assert numbered.sim_rate_hz(clock) == pytest.approx(100.0, abs=1.0)
    assert unnumbered.sim_rate_hz(clock) == pytest.approx(80.0, abs=1.0)


def test_both_at_once() -> None:
    watch = watch_of("/vehicle/odom")
    seq = 0
    for k in range(500):
        if k in (100, 101, 102, 103):  # never published
            continue
        seq += 1
        if k not in (10, 11):  # published, lost to the reader
            watch.record(wall_ns=k * NS // 100, sim_ns=k * NS // 100, seq=seq)
    verdict = watch.verdict(499 * NS // 100 + round(0.5 * LATE_S * NS))
    assert verdict.text() == "LOW: 4 of 500 not published by the bridge (+2 published, not received here)"


def test_a_topic_of_another_node_blames_that_node() -> None:
    watch = TopicWatch(PROFILES.topic("other_nodes", "/Demo/status"))
    last = feed(watch, 50.0, 4.0, skip={5, 6, 7})
    assert watch.verdict(last + round(0.5 * LATE_S * NS)).reason == "not published by dbw_demo_driver"


def test_an_unstamped_topic_is_judged_only_as_finely_as_its_placement_is_known() -> None:
    # 100 samples of a 50 Hz topic, all placed within 1 simulated s (the clocks around them were
    # lost, so each could be up to 1 s off): not HIGH, because the span is not known better.
    watch = TopicWatch(PROFILES.topic("polaris", "/vehicle/dbw_enabled"), stamped=False)
    for k in range(100):
        watch.record(k, k * NS // 100, k + 1, uncertainty_ns=NS)
    assert watch.verdict(NS).status is Status.OK
    exact = TopicWatch(PROFILES.topic("polaris", "/vehicle/dbw_enabled"), stamped=False)
    for k in range(100):
        exact.record(k, k * NS // 100, k + 1)
    assert exact.verdict(NS).status is Status.HIGH  # known placements: twice the rate is HIGH


def _odometry(k: int) -> Odometry:
    """The k-th odometry of a 100 Hz trail."""
    message = Odometry()
    message.header.stamp = Time(sec=k // 100, nanosec=(k % 100) * NS // 100)
    message.header.frame_id = "utm"
    message.pose.pose.position.x = float(k)
    message.pose.pose.orientation.w = 1.0
    return message


def _trail_feed(watch: TopicWatch, steps: int, *, not_received: set[int], not_published: set[int]) -> int:
    """odom_path over `steps` odometry at 100 Hz: those in not_received never reach it, and for those
    in not_published it publishes no path; the demo gets every path it publishes. The last stamp."""
    trail = OdomTrail(frame="odom_origin", max_poses=10_000)
    seq, last = 0, 0
    for k in range(steps):
        if k in not_received:
            continue
        odometry = _odometry(k)
        trail.add(odometry)
        if k in not_published:
            continue
        seq += 1
        last = k * NS // 100
        data = trail.serialized_path(odometry.header.stamp)
        watch.record(wall_ns=last, sim_ns=last, seq=seq)
        watch.record_inputs(data)
    return last


def test_the_poses_of_a_path_are_read_from_its_cdr_bytes() -> None:
    trail = OdomTrail(frame="odom_origin", max_poses=10_000)
    for k in range(50):
        trail.add(_odometry(k))
    stamp = Time(sec=0, nanosec=49 * NS // 100)
    for data in (trail.serialized_path(stamp), serialize_message(trail.path(stamp))):
        assert path_poses_since(data, 0) == 50
        assert path_poses_since(data, 20 * NS // 100) == 30  # the poses of 0.20 s on
        assert path_poses_since(data, 20 * NS // 100 + 1) == 29
        assert path_poses_since(data, NS) == 0
        assert path_poses_since(data, -1) is None  # the path may have dropped poses before that
    assert path_poses_since(serialize_message(Path()), 0) == 0
    assert path_poses_since(b"\x00\x01\x00\x00", 0) is None
    assert inputs_reader(Path) is path_poses_since
    assert inputs_reader(Odometry) is None


def test_inputs_lost_before_a_derived_topics_node_are_noted_not_blamed_on_it() -> None:
    watch = TopicWatch(PROFILES.topic("other_nodes", "/vehicle/odom/path"))
    watch.inputs = path_poses_since
    last = _trail_feed(watch, 1000, not_received={300, 301, 302, 303, 304}, not_published=set())
    verdict = watch.verdict(last)
    assert verdict.status is Status.OK
    assert verdict.text() == "OK (5 inputs lost on the way to odom_path)"


def test_a_derived_topic_its_node_did_not_publish_is_low_and_blamed_on_the_node() -> None:
    watch = TopicWatch(PROFILES.topic("other_nodes", "/vehicle/odom/path"))
    watch.inputs = path_poses_since
    last = _trail_feed(watch, 1000, not_received={300, 301}, not_published={500, 501, 502, 503})
    # the four it took and published nothing for look, by their sequence numbers, like messages
    # this reader lost: they are not. The poses say what it took: 998 inputs, 994 paths.
    verdict = watch.verdict(last)
    assert verdict.status is Status.LOW
    assert verdict.text().startswith("LOW: 4 of 998 not published by odom_path")
