"""Swapping a subsystem for one's own node through launch: ins:=false and examples/custom_ins.py,
once as a ComposableNode loaded into the bridge's container, once as a Node in its own process.

The composable case registers the example as a user's package would: a distribution `my_ins`
whose entry point in the group acres_bridge.components names the class (here a dist-info folder
on PYTHONPATH, as pip would write it). In both cases /vehicle/odom comes from custom_ins only, at
its 20 Hz with its covariance floor, and the bridge's own INS topics are gone.
"""

from __future__ import annotations

import pytest

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from integration.conftest import Ros, step_in_pace
from launch.actions import SetEnvironmentVariable
from launch_common import (
    TIMEOUT_S,
    TestExit,  # noqa: F401  (launch_testing runs it after the launch)
    bridge_launch,
    simulator_process,
    wait_connected,
)
from launch_ros.actions import LoadComposableNodes, Node
from launch_ros.descriptions import ComposableNode
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

from acres_bridge.processes import free_port
from launch import LaunchDescription

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NS_PER_S = 1_000_000_000
PERIOD_NS = 50_000_000  # custom_ins's 20 Hz


def stamp_ns(message: Any) -> int:
    return int(message.header.stamp.sec) * NS_PER_S + int(message.header.stamp.nanosec)


def _user_package() -> Path:
    """A site folder holding `my_ins`, a distribution whose component is examples/custom_ins.py."""
    site = Path(tempfile.mkdtemp(prefix="my_ins_site_"))
    info = site / "my_ins-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my_ins\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text(
        "[acres_bridge.components]\nmy_ins::CustomIns = custom_ins:CustomIns\n"
    )
    return site


@pytest.mark.launch_test
@launch_testing.parametrize("how", ["composable", "process"])
def generate_test_description(how: str) -> LaunchDescription:
    port = free_port()
    actions: list[Any] = [simulator_process(port), bridge_launch({"control_port": str(port), "ins": "false"})]
    if how == "composable":
        path = f"{_user_package()}:{EXAMPLES}"
        actions.insert(0, SetEnvironmentVariable("PYTHONPATH", path))
        actions.append(
            LoadComposableNodes(
                target_container="/sim_bridge",
                composable_node_descriptions=[
                    ComposableNode(package="my_ins", plugin="my_ins::CustomIns", name="custom_ins")
                ],
            )
        )
    else:
        actions.append(
            Node(
                executable=sys.executable,
                arguments=[str(EXAMPLES / "custom_ins.py")],
                name="custom_ins",
                output="screen",
            )
        )
    return LaunchDescription([*actions, launch_testing.actions.ReadyToTest()])


class TestSwap(unittest.TestCase):
    def test_odometry_comes_from_the_custom_node_only(self, how: str) -> None:
        ros = Ros()
        try:
            odom = ros.collect(Odometry, "/vehicle/odom", 1000)
            imu = ros.collect(Imu, "/oxts/imu", 1000)
            wait_connected(ros)
            ros.wait_until(lambda: ros.node.count_publishers("/vehicle/odom") > 0, "custom_ins", TIMEOUT_S)

            steps = 0

            def delivered() -> bool:
                nonlocal steps
                ros.step(12)  # 0.1 s: 10 INS samples, 2 odometry messages of the custom node
                steps += 12
                return bool(odom)

            ros.wait_until(delivered, "odometry from custom_ins", TIMEOUT_S)
            # In its own process custom_ins is a plain subscriber of the internal INS topic: step
            # in its pace, so that no sample is evicted before it has it.
            paced = step_in_pace(ros, odom, stamp_ns, steps_done=steps, period_ns=PERIOD_NS, requests=4)
            ros.settle()
            ros.wait_until(  # the graph names a publisher's node some time after its data arrives
                lambda: (
                    [p.node_name for p in ros.node.get_publishers_info_by_topic("/vehicle/odom")]
                    == ["custom_ins"]
                ),
                "custom_ins as the one publisher of /vehicle/odom",
            )
            assert ros.node.count_publishers("/oxts/imu") == 0
            assert imu == []
            assert [stamp_ns(m) for m in paced] == [
                stamp_ns(paced[0]) + k * PERIOD_NS for k in range(len(paced))
            ]  # 20 Hz, on the multiples of 50 ms
            assert stamp_ns(paced[0]) % PERIOD_NS == 0
            assert len(paced) == 9
            assert all(m.pose.covariance[0] >= 0.25 for m in odom)
        finally:
            ros.shutdown()
