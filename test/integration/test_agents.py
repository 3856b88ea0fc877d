"""Several agents in one bridge (spec: Several Agents): a Polaris, "polaris 2" and a Maxxum.

One simulator session with the three agents, one bridge with vehicle:=auto agents:=auto. Agent 0
is in the bridge's (root) namespace with no frame prefix and the only /clock; the others under
/<name> with the frame prefix <name>/, their names sanitised. Lockstep keeps the checks exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from ds_dbw_msgs.msg import GearCmd
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, PointCloud2
from std_msgs.msg import Bool, Empty
from tf2_msgs.msg import TFMessage

from acres_bridge.msg_profiles import load_profiles
from acres_sim.vehicles.params import POLARIS

from .conftest import Processes, Ros, free_port

pytestmark = pytest.mark.integration

PROFILES = load_profiles()
AGENTS = ("--agent", "polaris:polaris", "--agent", "polaris 2:polaris", "--agent", "maxxum:maxxum")
FLAT = ("--scene", "flat")
BODIES = {
    "base_footprint",
    "polaris_2/base_footprint",
    "maxxum/base_footprint",
}  # nothing but flat ground: any return above it is another vehicle


def stamp_ns(message: Clock) -> int:
    return int(message.clock.sec) * 10**9 + int(message.clock.nanosec)


def qos(topic: str, vehicle: str = "polaris") -> Any:
    profile = PROFILES.topic(vehicle, topic).qos.to_rclpy()
    profile.depth = 1000
    return profile


class ThreeAgents:
    def __init__(self, processes: Processes, ros: Ros) -> None:
        port = free_port()
        self.simulator = processes.simulator(port, *AGENTS, *FLAT, perception=True)
        self.bridge = processes.bridge(port, vehicle="auto", agents="auto")
        self.ros = ros
        self.odom = ros.collect(Odometry, "/vehicle/odom", qos("/vehicle/odom"))
        self.odom_2 = ros.collect(Odometry, "/polaris_2/vehicle/odom", qos("/vehicle/odom"))
        self.odom_maxxum = ros.collect(Odometry, "/maxxum/odom", qos("odom", "maxxum"))
        self.imu_2 = ros.collect(Imu, "/polaris_2/oxts/imu", qos("/oxts/imu"))
        self.imu_maxxum = ros.collect(Imu, "/maxxum/imu/data", qos("imu/data", "maxxum"))
        self.clouds_2 = ros.collect(PointCloud2, "/polaris_2/lidar/points", qos("/lidar/points"))
        self.clock = ros.collect(Clock, "/clock", qos("/clock"))
        self.tf = ros.collect(TFMessage, "/tf", qos("/tf"))
        self.enabled = ros.collect(Bool, "/vehicle/dbw_enabled", qos("/vehicle/dbw_enabled"))
        self.enabled_2 = ros.collect(Bool, "/polaris_2/vehicle/dbw_enabled", qos("/vehicle/dbw_enabled"))
        topics = ("/maxxum/odom", "/polaris_2/vehicle/odom", "/polaris_2/vehicle/dbw_enabled")
        for topic in topics:
            ros.wait_until(lambda t=topic: ros.node.count_publishers(t) > 0, f"the bridge's {topic}", 60.0)
        self.step_until(
            lambda: (
                self.odom
                and self.odom_2
                and self.odom_maxxum
                and self.clouds_2
                and self._tf_children() >= BODIES
            ),
            "every agent",
        )

    def _tf_children(self) -> set[str]:
        return {t.child_frame_id for message in self.tf for t in message.transforms}

    def step_until(self, condition: Any, what: str) -> None:
        for _ in range(200):
            if condition():
                return
            self.ros.step(12)
            self.ros.spin_for(0.02)
        pytest.fail(f"no data from {what} after 200 step requests")


@pytest.fixture(scope="module")
def three(module_processes: Processes, module_ros: Ros) -> ThreeAgents:
    return ThreeAgents(module_processes, module_ros)


def test_each_agent_has_its_namespace_and_agent_0_the_root(three):
    expected = ("/maxxum/implement/state", "/maxxum/can/rx", "/polaris_2/lidar/points", "/maxxum/imu/data")
    # the graph shows each publisher once discovery has reached it: later on a busy machine
    three.ros.wait_until(
        lambda: set(expected) <= set(dict(three.ros.node.get_topic_names_and_types())),
        "every agent's topics in the graph",
        60.0,
    )
    names = dict(three.ros.node.get_topic_names_and_types())
    assert names["/vehicle/odom"] == ["nav_msgs/msg/Odometry"]
    assert names["/polaris_2/vehicle/odom"] == ["nav_msgs/msg/Odometry"]
    assert names["/polaris_2/vehicle/steering/report"] == ["ds_dbw_msgs/msg/SteeringReport"]
    assert names["/polaris_2/lidar/points"] == ["sensor_msgs/msg/PointCloud2"]
    assert names["/maxxum/odom"] == ["nav_msgs/msg/Odometry"]
    assert names["/maxxum/imu/data"] == ["sensor_msgs/msg/Imu"]
    assert names["/maxxum/implement/state"] == ["std_msgs/msg/String"]  # vehicle:=auto: the tractor's nodes
    assert names["/maxxum/can/rx"] == ["can_msgs/msg/Frame"]
    assert "/polaris_2/can/rx" not in names
    assert "/maxxum/vehicle/odom" not in names  # a Maxxum has no Polaris topics
    assert "/polaris 2/vehicle/odom" not in names
    assert not any(name.startswith("/polaris/") for name in names)  # agent 0 is in the root


def test_frames_carry_the_agent_prefix_except_the_unprefixed_ones(three):
    assert three.odom[-1].child_frame_id == "base_footprint"
    assert three.odom_2[-1].child_frame_id == "polaris_2/base_footprint"
    assert three.odom_2[-1].header.frame_id == "utm"
    assert three.odom_maxxum[-1].child_frame_id == "maxxum/base_footprint"
    assert three.imu_2[-1].header.frame_id == "imu_link"  # the Polaris's imu_link has no prefix
    assert three.imu_maxxum[-1].header.frame_id == "maxxum/imu_link"
    assert three.clouds_2[-1].header.frame_id == "polaris_2/lidar"
    assert three._tf_children() >= BODIES  # all agents on the one /tf


def test_only_agent_0_publishes_the_clock(three):
    assert three.ros.node.count_publishers("/clock") == 1
    three.ros.settle()  # the clocks of the steps before this test are all in (late on a busy machine)
    before = len(three.clock)
    first = stamp_ns(three.clock[-1]) if three.clock else 0
    three.ros.step(24)
    three.ros.wait_until(
        lambda: len(three.clock) > before and stamp_ns(three.clock[-1]) > first, "new clocks"
    )
    three.ros.settle()
    stamps = [stamp_ns(message) for message in three.clock[before:]]
    # One message per step, not one per agent: no stamp twice, each the stamp of one of the 24 steps.
    assert len(stamps) == len(set(stamps)) <= 24
    first_step = round(first * 120 / 10**9)
    steps = [round(stamp * 120 / 10**9) for stamp in stamps]
    assert all(first_step < step <= first_step + 24 for step in steps)
    assert stamps == [step * 10**9 // 120 for step in steps]


def _yaw(odometry: Odometry) -> float:
    q = odometry.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_the_agents_see_each_other_in_their_lidar(three):
    # Where the odometry puts agent 0 as seen from "polaris 2", its LiDAR has returns well above the
    # flat ground, at about that distance: the body of agent 0.
    me, other = three.odom_2[-1], three.odom[-1]
    dx = other.pose.pose.position.x - me.pose.pose.position.x
    dy = other.pose.pose.position.y - me.pose.pose.position.y
    distance = math.hypot(dx, dy)
    bearing = math.degrees(math.atan2(dy, dx) - _yaw(me)) % 360.0
    assert 10.0 < distance < 40.0
    cloud = three.clouds_2[-1]
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(cloud.height, cloud.width, 4)
    column = round(bearing / (360.0 / cloud.height))
    around = points[np.arange(column - 20, column + 21) % cloud.height]  # +-4 deg of azimuth
    xyz = around[..., :3][~np.isnan(around[..., 0])]
    above_ground = xyz[xyz[:, 2] > -POLARIS.mount("lidar").z + 0.4]
    assert len(above_ground) > 10, f"no returns from agent 0 at {bearing:.1f} deg, {distance:.1f} m"
    seen = np.hypot(above_ground[:, 0], above_ground[:, 1]).min()
    assert distance - 5.0 < seen < distance + 1.0


def test_a_command_reaches_only_its_own_agent(three):
    ros = three.ros
    enable = ros.node.create_publisher(Empty, "/polaris_2/vehicle/enable", 10)
    gear = ros.node.create_publisher(GearCmd, "/polaris_2/vehicle/gear/cmd", 10)
    ros.wait_until(lambda: enable.get_subscription_count() > 0, "the bridge on /polaris_2/vehicle/enable")
    low = GearCmd()
    low.cmd.value = low.cmd.LOW
    for _ in range(30):
        enable.publish(Empty())
        gear.publish(low)
        ros.spin_for(0.005)
        ros.step(3)
        if three.enabled_2 and three.enabled_2[-1].data:
            break
    ros.step(12)
    ros.settle()
    assert three.enabled_2[-1].data is True
    assert three.enabled[-1].data is False  # agent 0's drive-by-wire never saw the command
