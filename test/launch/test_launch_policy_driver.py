"""policy_driver under launch_testing: the simulator in lockstep, the launch file's bridge, and the
node driving the Polaris with the route follower, as `ros2 run acres_bridge policy_driver` would.

The test steps one control period (12 steps) at a time and, once the node commands, waits for its
command of each period before the next: what a stack on the vehicle does in real time, judged in
simulated time. The node enables the drive-by-wire and shifts to L, then each period sends exactly
the action the policy gives for the observation the environment's Drive builds from that period's
odometry; and the route it drives is the one the environment drives with the same policy.
"""

from __future__ import annotations

import pytest

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

import time
import unittest
from datetime import UTC, datetime

import launch_ros.actions
import launch_testing
import launch_testing.actions
import numpy as np
from ds_dbw_msgs.msg import GearCmd, SteeringCmd, UlcCmd
from integration.conftest import START_UTC, Ros
from launch_common import (
    TestExit,  # noqa: F401  (launch_testing runs it after the launch)
    bridge_launch,
    simulator_process,
    wait_connected,
)
from nav_msgs.msg import Odometry
from std_msgs.msg import Empty

from acres_bridge.gym.drive import GEAR_L, PolarisDrive
from acres_bridge.gym.env import PolarisRouteEnv
from acres_bridge.gym.policy import ROUTE_FOLLOWER_SPEED_MPS, route_follower
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import free_port
from launch import LaunchDescription

PERIOD_STEPS = 12
PERIOD_NS = 100_000_000
DRIVING_PERIODS = 40
FIRST_COMMAND_WAIT_S = 2.0  # per period, until the node has discovered the bridge and commands
WARM_UP_COMMANDS = 2  # then every period brings one command, and the test waits for it


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    port = free_port()
    driver = launch_ros.actions.Node(
        package="acres_bridge",
        executable="policy_driver",
        parameters=[
            {"use_sim_time": True, "policy": "acres_bridge.gym.policy:route_follower", "resend_s": 0.0}
        ],
        output="screen",
    )
    return LaunchDescription(
        [
            simulator_process(port, "--vehicle", "polaris"),
            bridge_launch({"control_port": str(port), "vehicle": "polaris"}),
            driver,
            launch_testing.actions.ReadyToTest(),
        ]
    )


def _stamp_ns(message: Odometry) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


class TestPolicyDriver(unittest.TestCase):
    def test_it_engages_then_sends_the_policy_s_action_each_period_and_drives_as_the_environment(
        self,
    ) -> None:
        ros = Ros()
        try:
            qos = load_profiles().topic("polaris", "/vehicle/odom").qos
            assert qos is not None
            deep = qos.to_rclpy()
            deep.depth = 1000
            odom = ros.collect(Odometry, "/vehicle/odom", deep)
            ulc = ros.collect(UlcCmd, "/vehicle/ulc/cmd", 1000)
            steering = ros.collect(SteeringCmd, "/vehicle/steering/cmd", 1000)
            enables = ros.collect(Empty, "/vehicle/enable", 1000)
            gears = ros.collect(GearCmd, "/vehicle/gear/cmd", 1000)
            wait_connected(ros)
            ros.wait_until(lambda: ros.node.count_publishers("/vehicle/ulc/cmd") > 0, "the policy node")

            drive = PolarisDrive()
            node_seen: list[tuple[float, float]] = []  # (progress m, cross-track m) at each action
            period = 0
            driving = 0
            while driving < DRIVING_PERIODS:
                period += 1
                assert period < 200, "the node never drove"
                before = len(ulc)
                ros.step(PERIOD_STEPS)
                if len(ulc) < WARM_UP_COMMANDS:
                    # The node and this test may still be discovering the bridge (a message sent
                    # before that is not delivered): step on once a command came or after a while.
                    deadline = time.monotonic() + FIRST_COMMAND_WAIT_S
                    while len(ulc) == before and time.monotonic() < deadline:
                        ros.executor.spin_once(timeout_sec=0.01)
                    continue
                end_ns = period * PERIOD_NS
                ros.wait_until(
                    lambda e=end_ns: odom and _stamp_ns(odom[-1]) >= e, f"the odometry of {end_ns} ns"
                )
                last = odom[-1]
                assert _stamp_ns(last) == end_ns  # the period ends with an odometry message
                ros.wait_until(
                    lambda b=before: len(ulc) > b and len(steering) > b, f"the command of period {period}"
                )
                assert len(ulc) == before + 1  # one command per period
                if ulc[-1].cmd == 0.0:
                    continue  # still engaging
                driving += 1
                action = route_follower(drive.observe({"/vehicle/odom": last}))
                node_seen.append((drive.observer.travelled_m, float(drive.state[0])))
                assert ulc[-1].cmd == pytest.approx(ROUTE_FOLLOWER_SPEED_MPS)
                assert steering[-1].cmd == float(np.float32(action[1]))  # the same numbers, bit for bit

            assert len(enables) >= 1
            assert gears
            assert {g.cmd.value for g in gears} == {GEAR_L}
        finally:
            ros.shutdown()

        start_utc = datetime.strptime(START_UTC, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
        env = PolarisRouteEnv(start_utc=start_utc)
        try:
            observation, _ = env.reset(seed=42)
            env_seen: list[tuple[float, float]] = []
            for _ in range(DRIVING_PERIODS):
                env_seen.append((env.observer.travelled_m, float(observation["state"][0])))
                observation, *_ = env.step(route_follower(observation))
        finally:
            env.close()
        # The same policy on the same route from the same start: the same path, to within what a
        # start a few periods later changes (the node engages once it has discovered the bridge).
        node_path, env_path = np.array(node_seen), np.array(env_seen)
        assert node_path[-1, 0] > 4.0  # it drove along the route (from rest, in 4 s)
        assert np.abs(node_path[:, 0] - env_path[:, 0]).max() < 0.5
        assert np.abs(node_path[:, 1] - env_path[:, 1]).max() < 0.1
