"""The Polaris's drive-by-wire through the bridge, as an autonomy stack uses it (spec: Drive-by-Wire).

The simulator runs in lockstep; the test publishes commands like the spec's example node (at
50 Hz of simulation time: between two step requests of 2 or 3 steps) and reads the reports.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from acres_interfaces.msg import Episode
from ds_dbw_msgs.msg import (
    GearCmd,
    GearReport,
    SteeringCmd,
    SteeringReport,
    ThrottleCmd,
    UlcCmd,
    UlcReport,
)
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.duration import Duration
from std_msgs.msg import Bool, Empty

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import ChildProcess
from acres_bridge.wire import DbwCommand, DbwTarget
from acres_bridge.wire.dbw import COMMAND_FLAG_ENABLE
from acres_sim.world.model import World

from .conftest import LATCHED, START_UTC, Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

PROFILES = load_profiles()
STEPS_PER_TICK = (2, 3, 2, 3, 2)  # 12 steps per 5 ticks: 50 Hz on the 120 Hz physics clock


class Driver:
    """The spec's example command node, ticking in simulation time."""

    def __init__(self, ros: Ros, bridge: ChildProcess) -> None:
        self.ros = ros
        self.bridge = bridge
        self.publishers = {
            name: ros.node.create_publisher(
                spec.message_class(), spec.ros_name, spec.qos.to_rclpy() if spec.qos else 10
            )
            for name, spec in ((s.name, s) for s in PROFILES.table("polaris"))
            if spec.direction.value == "subscribe" and name.startswith("/vehicle/")
        }
        self.ticks = 0

    def publish(self, name: str, message: Any) -> None:
        self.publishers[name].publish(message)

    def wait_for_bridge(self) -> None:
        for name in self.publishers:
            self.ros.wait_until(
                lambda name=name: self.publishers[name].get_subscription_count() > 0, f"the bridge on {name}"
            )

    def tick(self, *messages: tuple[str, Any]) -> None:
        """Publish, then advance the simulation by one 50 Hz tick."""
        for name, message in messages:
            self.publish(name, message)
        self.ros.spin_for(0.002)  # let the samples leave before the step request
        self.ros.step(STEPS_PER_TICK[self.ticks % len(STEPS_PER_TICK)])
        self.ticks += 1


def low_gear() -> GearCmd:
    gear = GearCmd()
    gear.cmd.value = gear.cmd.LOW
    return gear


def spec_example(curvature: float = 0.02) -> tuple[tuple[str, Any], ...]:
    return (
        ("/vehicle/enable", Empty()),
        ("/vehicle/gear/cmd", low_gear()),
        (
            "/vehicle/steering/cmd",
            SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True),
        ),
        ("/vehicle/ulc/cmd", UlcCmd(cmd=1.5, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)),
    )


@pytest.fixture
def driven(processes: Processes, ros: Ros) -> Driver:
    port = free_port()
    processes.simulator(port)
    driver = Driver(ros, processes.bridge(port))
    driver.wait_for_bridge()
    return driver


def circle_radius(points: np.ndarray) -> float:
    """Least-squares radius of a circle through 2-D points (algebraic fit, centred: UTM is far from 0)."""
    centred = points - points.mean(axis=0)
    x, y = centred[:, 0], centred[:, 1]
    a = np.column_stack([x, y, np.ones_like(x)])
    b = x * x + y * y
    cx2, cy2, c = np.linalg.lstsq(a, b, rcond=None)[0]
    cx, cy = cx2 / 2, cy2 / 2
    return float(math.sqrt(c + cx * cx + cy * cy))


def test_the_spec_example_drives_a_circle_of_50_m_at_1_5_m_s(driven: Driver, ros: Ros) -> None:
    ulc = ros.collect(UlcReport, "/vehicle/ulc/report", 5000)
    gear = ros.collect(GearReport, "/vehicle/gear/report", 5000)
    enabled = ros.collect(Bool, "/vehicle/dbw_enabled", 5000)
    truth = ros.collect(Odometry, "/sim/ground_truth/odom", 5000)
    for _ in range(50 * 20):  # 20 simulated seconds
        driven.tick(*spec_example())
    ros.settle()
    assert enabled[-1].data is True
    assert gear[-1].gear.value == 5  # L
    speeds = [m.vel_meas for m in ulc[-250:]]  # the last 5 s
    assert np.mean(speeds) == pytest.approx(1.5, abs=0.05)
    assert max(abs(s - 1.5) for s in speeds) < 0.1
    assert ulc[-1].vel_ref == pytest.approx(1.5, abs=0.01)
    assert ulc[-1].enabled
    # The last 10 s of the ground truth lie on a circle of radius 1 / 0.02 = 50 m.
    points = np.array([(m.pose.pose.position.x, m.pose.pose.position.y) for m in truth[-1000:]])
    assert circle_radius(points) == pytest.approx(50.0, abs=3.0)


def test_a_subsystem_without_commands_for_0_1_s_stops_and_disable_stops_all(driven: Driver, ros: Ros) -> None:
    steering = ros.collect(SteeringReport, "/vehicle/steering/report", 5000)
    ulc = ros.collect(UlcReport, "/vehicle/ulc/report", 5000)
    enabled = ros.collect(Bool, "/vehicle/dbw_enabled", 5000)
    for _ in range(100):
        driven.tick(*spec_example())
    ros.settle()
    assert steering[-1].enabled
    assert not steering[-1].timeout
    # Steering commands stop, the ULC's go on: after 0.1 s (12 steps) the steering times out.
    for _ in range(10):
        driven.tick(("/vehicle/ulc/cmd", UlcCmd(cmd=1.5, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)))
    ros.settle()
    assert steering[-1].timeout
    assert not steering[-1].enabled
    assert ulc[-1].enabled
    # Disable stops all.
    driven.tick(("/vehicle/disable", Empty()))
    for _ in range(5):
        driven.tick()
    ros.settle()
    assert enabled[-1].data is False
    assert not ulc[-1].enabled


def test_a_refused_command_never_reaches_the_vehicle(driven: Driver, ros: Ros) -> None:
    steering = ros.collect(SteeringReport, "/vehicle/steering/report", 5000)
    for _ in range(20):
        driven.tick(
            ("/vehicle/enable", Empty()),
            ("/vehicle/steering/cmd", SteeringCmd(cmd=90.0, cmd_type=SteeringCmd.CMD_ANGLE, enable=True)),
        )
    ros.settle()
    assert steering[-1].cmd == pytest.approx(90.0)
    for bad in (
        SteeringCmd(cmd=math.nan, cmd_type=SteeringCmd.CMD_ANGLE, enable=True),
        SteeringCmd(cmd=10.0, cmd_type=SteeringCmd.CMD_TORQUE, enable=True),
        SteeringCmd(cmd=900.0, cmd_type=SteeringCmd.CMD_ANGLE, enable=True),
    ):
        for _ in range(3):
            driven.tick(
                ("/vehicle/steering/cmd", bad), ("/vehicle/throttle/cmd", ThrottleCmd(cmd=0.0, cmd_type=14))
            )
    ros.settle()
    # No good steering command for 9 ticks: the steering timed out; its last command is still the good one.
    assert steering[-1].cmd == pytest.approx(90.0)
    assert steering[-1].cmd_type == SteeringCmd.CMD_ANGLE
    assert steering[-1].timeout


def test_a_command_before_a_step_request_applies_from_its_first_step(driven: Driver, ros: Ros) -> None:
    steering = ros.collect(SteeringReport, "/vehicle/steering/report", 5000)
    enable = driven.publishers["/vehicle/enable"]
    command = driven.publishers["/vehicle/steering/cmd"]
    enable.publish(Empty())
    assert enable.wait_for_all_acked(Duration(seconds=10))  # the bridge's reader holds it
    ros.step(12)
    command.publish(SteeringCmd(cmd=200.0, cmd_type=SteeringCmd.CMD_ANGLE, enable=True))
    assert command.wait_for_all_acked(Duration(seconds=10))
    ros.step(1)  # the command must act from this step on ...
    ros.step(2)  # ... so the report of step 15 shows three steps of steering motion
    ros.wait_until(
        lambda: steering and _stamp_ns(steering[-1]) == 15 * 1_000_000_000 // 120, "the report of step 15"
    )
    # The same commands before the same steps, in a simulator of our own.
    world = World(
        seed=42,
        start_utc=datetime.strptime(START_UTC, "%Y%m%dT%H%M%S").replace(tzinfo=UTC),
        lockstep=True,
        perception=False,
    )
    world.apply_dbw_command(0, DbwCommand(seq=1, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0))
    for _ in range(12):
        world.advance()
    world.apply_dbw_command(
        0, DbwCommand(seq=2, target=DbwTarget.STEERING, cmd_type=2, flags=COMMAND_FLAG_ENABLE, cmd=200.0)
    )
    for _ in range(3):
        world.advance()
    expected = world.dbw_report(0).steering_wheel_angle_deg
    assert expected > 1.0
    assert steering[-1].steering_wheel_angle == pytest.approx(expected, rel=1e-4)


def _stamp_ns(message: Any) -> int:
    return int(message.header.stamp.sec) * 1_000_000_000 + int(message.header.stamp.nanosec)


def test_sim_reset_moves_the_vehicle_once_the_ins_has_a_position(driven: Driver, ros: Ros) -> None:
    odom = ros.collect(Odometry, "/vehicle/odom", 5000)
    truth = ros.collect(Odometry, "/sim/ground_truth/odom", 5000)
    episodes = ros.collect(Episode, "/sim/episode", LATCHED)
    reset = ros.node.create_publisher(
        PoseStamped, "/sim/reset", PROFILES.topic("polaris", "/sim/reset").qos.to_rclpy()
    )
    ros.wait_until(lambda: reset.get_subscription_count() > 0, "the bridge on /sim/reset")
    ros.wait_until(lambda: episodes, "the first episode")

    def pose(x: float, y: float) -> PoseStamped:
        message = PoseStamped()
        message.header.frame_id = "utm"
        message.pose.position.x, message.pose.position.y = x, y
        message.pose.orientation.z, message.pose.orientation.w = math.sin(math.pi / 4), math.cos(math.pi / 4)
        return message

    # Before the first sample with a position (the first 0.25 s): ignored.
    reset.publish(pose(500438.1, 4479970.0))
    # Acknowledged means received, not handled: the bridge's warning says it has handled it.
    wait_for_line(
        driven.bridge, "refused a /sim/reset pose (1 so far): ignored: no INS sample with a position"
    )
    ros.step(60)
    ros.wait_until(lambda: truth, "the ground truth")
    ros.settle()
    assert episodes[-1].reset_epoch == 0
    start = truth[-1].pose.pose.position
    assert math.hypot(start.x - 500438.1, start.y - 4479970.0) > 5.0
    # After it: the vehicle goes there, at rest, heading north, in a new episode.
    reset.publish(pose(500438.1, 4479970.0))
    assert reset.wait_for_all_acked(Duration(seconds=10))
    ros.step(1)
    ros.wait_until(lambda: episodes[-1].reset_epoch == 1, "the reset's new episode")
    ros.step(12)
    ros.settle()
    moved = truth[-1]
    assert moved.pose.pose.position.x == pytest.approx(500438.1, abs=1e-6)
    assert moved.pose.pose.position.y == pytest.approx(4479970.0, abs=1e-6)
    assert moved.twist.twist.linear.x == pytest.approx(0.0, abs=1e-9)
    q = moved.pose.pose.orientation
    assert math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)) == pytest.approx(
        math.pi / 2
    )
    reported = odom[-1].pose.pose.position  # what /vehicle/odom then reports: within the INS error
    assert math.hypot(reported.x - 500438.1, reported.y - 4479970.0) < 1.0
