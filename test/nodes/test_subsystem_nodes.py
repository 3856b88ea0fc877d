"""The clock_tf, ins, episode, reset and dbw nodes in process: samples in on the bus as the ingest
hands them over, messages out on their topics with the names, frames and stamps of the spec, and
commands out to the ingest, checked and counted."""

from __future__ import annotations

import math
from typing import Any

import pytest
import samples
from ds_dbw_msgs.msg import GearCmd, SteeringCmd
from rclpy.duration import Duration
from rclpy.parameter import Parameter

from acres_bridge.ingest.channels import (
    AGENT_RESET,
    CLOCK,
    DBW_COMMAND,
    DBW_REPORT,
    EPISODE,
    INS,
    SESSION,
    Session,
)
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.nodes.clock_tf import ClockTf
from acres_bridge.nodes.dbw import Dbw
from acres_bridge.nodes.episode import EpisodeClock
from acres_bridge.nodes.ins import Ins
from acres_bridge.nodes.publish_taps import TAPS
from acres_bridge.nodes.reset import PoseReset
from acres_bridge.pending_commands import take_pending_commands
from acres_bridge.wire import AgentReset, Clock, DbwTarget
from nodes.node_rig import node_rig


def stamp_ns(message: object) -> int:
    header = message.header  # type: ignore[attr-defined]
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def test_clock_tf_publishes_each_clock_and_the_pose_of_each_sample_with_a_position() -> None:
    with node_rig(ClockTf, feeds=(CLOCK, INS)) as rig:
        clocks = rig.received("polaris", "/clock")
        tf = rig.received("polaris", "/tf")
        for step in (1, 2, 3):
            rig.feed(CLOCK, Clock(step=step, stamp_ns=step * 8_333_333))
        rig.feed(INS, samples.ins_sample(2, has_position=False))
        rig.feed(INS, samples.ins_sample(3))
        rig.spin_until(lambda: len(clocks) == 3 and tf, "the clocks and the transform")
        rig.executor.spin_once(timeout_sec=0.1)
        assert [c.clock.nanosec for c in clocks] == [8_333_333, 16_666_666, 24_999_999]
        (message,) = tf
        (transform,) = message.transforms
        assert (transform.header.frame_id, transform.child_frame_id) == ("utm", "base_footprint")
        assert stamp_ns(transform) == 3 * 1_000_000_000 // 120
        assert transform.transform.translation.x == pytest.approx(500438.1)


def test_clock_tf_of_a_second_bridge_leaves_clock_alone() -> None:
    with node_rig(ClockTf, parameters=[Parameter("publish_clock", value=False)], feeds=(CLOCK, INS)) as rig:
        assert rig.node.count_publishers("/clock") == 0
        assert rig.node.count_publishers("/tf") == 1


def test_ins_publishes_the_polaris_topics_in_the_frames_of_msg_profiles_with_the_prefix() -> None:
    with node_rig(Ins, parameters=[Parameter("frame_prefix", value="polaris2/")], feeds=(INS,)) as rig:
        topics = ("/vehicle/odom", "/oxts/imu", "/oxts/fix", "/oxts/velocity", "/sim/ground_truth/odom")
        received = {topic: rig.received("polaris", topic) for topic in topics}
        rig.feed(INS, samples.ins_sample(5))
        rig.spin_until(lambda: all(received.values()), "a message on every INS topic")
        frames = {topic: messages[0].header.frame_id for topic, messages in received.items()}
        assert frames == {
            "/vehicle/odom": "utm",
            "/oxts/imu": "imu_link",  # never prefixed on the Polaris (spec: Frames)
            "/oxts/fix": "polaris2/navsat_link",
            "/oxts/velocity": "oxts_link",
            "/sim/ground_truth/odom": "utm",
        }
        assert received["/vehicle/odom"][0].child_frame_id == "polaris2/base_footprint"
        assert {stamp_ns(messages[0]) for messages in received.values()} == {5 * 1_000_000_000 // 120}


def test_a_tap_on_an_ins_topic_sees_the_message_a_subscriber_receives() -> None:
    # The INS topics go out serialized (acres_bridge.convert.ins_cdr); a tap (the live view) gets
    # the same message as an object, made only for it.
    with node_rig(Ins, feeds=(INS,)) as rig:
        odom, imu = rig.received("polaris", "/vehicle/odom"), rig.received("polaris", "/oxts/imu")
        tapped: list[Any] = []
        tap, topic = tapped.append, rig.node.get_namespace().rstrip("/") + "/vehicle/odom"
        TAPS.add(topic, tap)
        try:
            rig.feed(INS, samples.ins_sample(7, velocity=(4.5, 0.1, 0.0)))
            rig.spin_until(lambda: odom and imu, "/vehicle/odom and /oxts/imu")
        finally:
            TAPS.remove(topic, tap)
        assert tapped == odom
        assert odom[0].twist.twist.linear.x == 4.5


def test_ins_without_a_position_publishes_only_what_needs_none() -> None:
    with node_rig(Ins, feeds=(INS,)) as rig:
        odom, imu = rig.received("polaris", "/vehicle/odom"), rig.received("polaris", "/oxts/imu")
        fix = rig.received("polaris", "/oxts/fix")
        rig.feed(INS, samples.ins_sample(1, has_position=False))
        rig.feed(INS, samples.ins_sample(2))
        rig.spin_until(lambda: len(imu) == 2 and odom and fix, "the second sample's odometry")
        assert [stamp_ns(m) for m in odom] == [stamp_ns(m) for m in fix] == [2 * 1_000_000_000 // 120]


def test_ins_of_a_maxxum_uses_its_own_topics_and_frames() -> None:
    with node_rig(Ins, vehicle="maxxum", feeds=(INS,)) as rig:
        imu, fix = rig.received("maxxum", "imu/data"), rig.received("maxxum", "gnss/fix")
        rig.feed(INS, samples.ins_sample(3))
        rig.spin_until(lambda: imu and fix, "imu/data and gnss/fix")
        assert (imu[0].header.frame_id, fix[0].header.frame_id) == ("imu_link", "gnss_link")
        assert rig.node.count_publishers("/oxts/velocity") == 0


def test_the_episode_is_latched_for_a_late_subscriber() -> None:
    with node_rig(EpisodeClock, feeds=(EPISODE,)) as rig:
        rig.feed(EPISODE, samples.episode(step=240, episode=3))
        rig.executor.spin_once(timeout_sec=0.05)
        late = rig.received("session", "/sim/episode")  # subscribes after the message was published
        rig.spin_until(lambda: late, "the latched episode")
        (message,) = late
        assert (message.episode, message.step, message.source) == (3, 240, "unreal")


def _session() -> Session:
    return Session(
        connected=True, hello=samples.hello(samples.agent(0)), sensor_meta=(samples.sensor_meta(),)
    )


def test_reset_waits_for_a_position_then_sends_the_pose_in_the_world_frame() -> None:
    with node_rig(PoseReset, feeds=(SESSION, INS), sends=(AGENT_RESET,)) as rig:
        reset = rig.publisher("polaris", "/sim/reset")
        rig.feed(SESSION, _session())
        reset.publish(samples.reset_pose(500438.1, 4479970.0))
        rig.spin_until(lambda: rig.node.refused["pose"] == 1, "the refusal before any position")
        assert rig.sent == []
        rig.feed(INS, samples.ins_sample(30))
        reset.publish(samples.reset_pose(500438.1, 4479970.0))
        rig.spin_until(lambda: rig.sent, "the reset to the ingest")
        (sent,) = rig.sent
        assert isinstance(sent, AgentReset)
        assert (sent.x_m, sent.y_m, sent.yaw_rad) == pytest.approx((38.1, 70.0, math.pi / 2))


def test_reset_refuses_a_pose_in_another_frame_and_counts_it() -> None:
    with node_rig(PoseReset, feeds=(SESSION, INS), sends=(AGENT_RESET,)) as rig:
        reset = rig.publisher("polaris", "/sim/reset")
        rig.feed(SESSION, _session())
        rig.feed(INS, samples.ins_sample(30))
        reset.publish(samples.reset_pose(500438.1, 4479970.0, frame="map"))
        rig.spin_until(lambda: rig.node.refused["pose"] == 1, "the refusal")
        assert rig.sent == []


def test_dbw_fills_the_seven_report_topics_from_one_report_line() -> None:
    with node_rig(Dbw, feeds=(DBW_REPORT,), sends=(DBW_COMMAND,)) as rig:
        topics = (
            "/vehicle/steering/report",
            "/vehicle/throttle/report",
            "/vehicle/brake/report",
            "/vehicle/gear/report",
            "/vehicle/ulc/report",
            "/vehicle/vehicle_velocity",
            "/vehicle/dbw_enabled",
        )
        received = {topic: rig.received("polaris", topic) for topic in topics}
        rig.feed(DBW_REPORT, samples.dbw_report(6))
        rig.spin_until(lambda: all(received.values()), "every report topic")
        assert received["/vehicle/dbw_enabled"][0].data is True
        assert received["/vehicle/gear/report"][0].gear.value == 5
        assert stamp_ns(received["/vehicle/steering/report"][0]) == 50_000_000


def test_dbw_forwards_a_good_command_and_refuses_a_bad_one_with_a_count() -> None:
    with node_rig(Dbw, feeds=(DBW_REPORT,), sends=(DBW_COMMAND,)) as rig:
        steering = rig.publisher("polaris", "/vehicle/steering/cmd")
        enable = rig.publisher("polaris", "/vehicle/enable")
        # 600 deg is beyond the steering wheel's 487 deg: refused; the next one goes on
        steering.publish(SteeringCmd(cmd=600.0, cmd_type=SteeringCmd.CMD_ANGLE, enable=True))
        steering.publish(SteeringCmd(cmd=90.0, cmd_type=SteeringCmd.CMD_ANGLE, enable=True))
        enable.publish(enable.msg_type())
        rig.spin_until(lambda: len(rig.sent) == 2, "the good steering command and the enable")
        assert rig.node.refused == {"SteeringCmd": 1}
        by_target = {command.target: command for command in rig.sent}  # two topics: either may come first
        steered = by_target[DbwTarget.STEERING]
        assert (steered.cmd_type, steered.cmd) == (SteeringCmd.CMD_ANGLE, 90.0)
        assert set(by_target) == {DbwTarget.STEERING, DbwTarget.ENABLE}


def test_dbw_takes_an_enable_before_the_commands_that_came_with_it() -> None:
    # A stack's tick sends the enable, then its first gear command; the simulator refuses a gear
    # command before the enable. Held together (before a step, or ready in one wait of the
    # executor), they are taken enable first, then disable (which wins), then the commands.
    with node_rig(Dbw, feeds=(DBW_REPORT,), sends=(DBW_COMMAND,)) as rig:
        gear = rig.publisher("polaris", "/vehicle/gear/cmd")
        enable = rig.publisher("polaris", "/vehicle/enable")
        disable = rig.publisher("polaris", "/vehicle/disable")
        low = GearCmd()
        low.cmd.value = low.cmd.LOW
        for _ in range(3):  # arrival in the worst order: the command first, the enable last
            gear.publish(low)
            disable.publish(disable.msg_type())
            enable.publish(enable.msg_type())
            for publisher in (gear, disable, enable):  # acknowledged: in the node's readers now
                assert publisher.wait_for_all_acked(Duration(seconds=30))
            assert take_pending_commands() >= 3  # as the step service takes them, the executor idle
            assert [command.target for command in rig.sent] == [
                DbwTarget.ENABLE,
                DbwTarget.DISABLE,
                DbwTarget.GEAR,
            ]
            rig.sent.clear()


class FaultyClock(SubsystemNode):
    """A node whose clock callback fails on every second sample, as a bug or a bad input would."""

    DEFAULT_NODE_NAME = "faulty_clock"

    def __init__(self, **node_options: object) -> None:
        super().__init__(**node_options)
        self.steps: list[int] = []
        self.samples(CLOCK, self._on_clock)

    def _on_clock(self, clock: Clock) -> None:
        if clock.step % 2 == 0:
            raise RuntimeError(f"cannot take step {clock.step}")
        self.steps.append(clock.step)


def test_an_error_in_a_callback_is_refused_and_counted_and_the_node_goes_on() -> None:
    with node_rig(FaultyClock, feeds=(CLOCK,)) as rig:
        for step in (1, 2, 3, 4, 5):
            rig.feed(CLOCK, Clock(step=step, stamp_ns=step * 8_333_333))
        assert rig.node.steps == [1, 3, 5]
        assert rig.node.refused == {"error": 2}
