"""launch/sim_bridge.launch.py with launch_testing, where the launch framework exists.

The pip-only path has no launch framework (launch, launch_ros and launch_testing are not on
PyPI), so there this module is skipped with that reason; the same plan is tested through the
sim_bridge executable in test/integration. With a ROS 2 installation it starts the simulator
and the launch file's container, and checks that /clock and /vehicle/odom arrive.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

launch_ros = pytest.importorskip("launch_ros", reason="launch_ros is not installed (pip-only ROS 2)")
launch = pytest.importorskip("launch", reason="the launch framework is not installed (pip-only ROS 2)")
pytest.importorskip("launch_testing", reason="launch_testing is not installed (pip-only ROS 2)")

import launch_testing.actions  # noqa: E402
import rclpy  # noqa: E402
from launch.actions import ExecuteProcess, IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from simulation_interfaces.srv import StepSimulation  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[2] / "launch" / "sim_bridge.launch.py"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


PORT = _free_port()


@pytest.mark.launch_test
def generate_test_description() -> Any:
    simulator = ExecuteProcess(
        cmd=[sys.executable, "-m", "acres_sim.cli", "--lockstep", "--port", str(PORT)], output="screen"
    )
    bridge = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
        launch_arguments={"vehicle": "polaris", "control_port": str(PORT)}.items(),
    )
    return launch.LaunchDescription([simulator, bridge, launch_testing.actions.ReadyToTest()])


def test_the_launched_bridge_publishes_odometry() -> None:
    rclpy.init()
    node = rclpy.create_node("launch_test_probe")
    try:
        odom: list[Odometry] = []
        node.create_subscription(Odometry, "/vehicle/odom", odom.append, 100)
        client = node.create_client(StepSimulation, "/step_simulation")
        assert client.wait_for_service(timeout_sec=30)
        deadline = time.monotonic() + 30
        while not odom and time.monotonic() < deadline:
            future = client.call_async(StepSimulation.Request(steps=12))
            rclpy.spin_until_future_complete(node, future, timeout_sec=10)
            rclpy.spin_once(node, timeout_sec=0.1)
        assert odom, "no /vehicle/odom from the launched bridge"
        assert odom[-1].header.frame_id == "utm"
    finally:
        node.destroy_node()
        rclpy.shutdown()
