"""A viewer's commands with foxglove_allow_publish:=true, under launch_testing.

The viewer enables the drive-by-wire from the Foxglove app's publish panel: its /vehicle/enable
reaches the ROS topic and the simulator (the report says enabled), as any command does, through
the fence's gate. A channel on a topic that is no command (/vehicle/odom) is refused and gets no
publisher; a payload that is not the type's CDR is refused; the bridge goes on stepping.
"""

from __future__ import annotations

import pytest

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

import unittest
from typing import Any

from ds_dbw_msgs.msg import UlcCmd
from integration.conftest import Ros
from launch_common import (
    TestExit,  # noqa: F401  (launch_testing runs it after the launch)
    live_view_launch,
    wait_connected,
)
from rclpy.serialization import serialize_message
from std_msgs.msg import Bool, Empty

from acres_bridge.live_view.viewer import open_viewer
from launch import LaunchDescription

PERIOD_STEPS = 12  # 0.1 simulated s: one camera frame and one scan


@pytest.mark.launch_test
def generate_test_description() -> tuple[LaunchDescription, dict[str, Any]]:
    return live_view_launch(perception=False, foxglove_allow_publish="true")


class TestViewerPublish(unittest.TestCase):
    def test_a_viewer_enables_the_drive_by_wire_and_nothing_else_gets_through(
        self, view_port: int, proc_output: Any
    ) -> None:
        ros = Ros()
        viewer = None
        try:
            enables = ros.collect(Empty, "/vehicle/enable", 10)
            enabled = ros.collect(Bool, "/vehicle/dbw_enabled", 1000)
            wait_connected(ros)
            viewer = open_viewer(view_port)
            assert "clientPublish" in viewer.info["capabilities"]
            assert "cdr" in viewer.info["supportedEncodings"]

            odom = viewer.advertise("/vehicle/odom", "nav_msgs/msg/Odometry")
            viewer.publish(odom, serialize_message(Empty()))
            proc_output.assertWaitFor("not a command topic", timeout=30)
            ulc = viewer.advertise("/vehicle/ulc/cmd", "ds_dbw_msgs/msg/UlcCmd")
            viewer.publish(ulc, b"\x00\x01\x00\x00\x07")  # a CDR header and one byte: no UlcCmd
            ulc_commands = ros.collect(UlcCmd, "/vehicle/ulc/cmd", 10)

            channel = viewer.advertise("/vehicle/enable", "std_msgs/msg/Empty")
            for _ in range(50):  # until the command came through and the report says so
                viewer.publish(channel, serialize_message(Empty()))
                ros.step(PERIOD_STEPS)
                if enables and enabled and enabled[-1].data:
                    break
            assert enables, "the viewer's /vehicle/enable never reached the topic"
            assert enabled[-1].data is True
            # The viewer's requests are served in order: the two refused ones came before.
            assert ros.node.count_publishers("/vehicle/odom") == 1  # the bridge's own, no other
            assert ros.node.count_publishers("/vehicle/ulc/cmd") == 0
            assert ulc_commands == []
        finally:
            if viewer is not None:
                viewer.close()
            ros.shutdown()
