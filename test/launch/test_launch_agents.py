"""Several agents through launch: two bridges of one session, and one bridge for every agent.

"two": the first bridge (a container) in the namespace /first serves agent 0 and /clock; a
second launch of the same file serves agent 1 in /second with the frame prefix second/, without
/clock and without the simulation services. "auto": vehicle:=auto agents:=auto serves a Polaris
and a Maxxum from one bridge, the Maxxum in /maxxum with the frame prefix maxxum/.
"""

from __future__ import annotations

import pytest

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

import unittest

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from integration.conftest import Ros
from launch_common import (
    TIMEOUT_S,
    TestExit,  # noqa: F401  (launch_testing runs it after the launch)
    bridge_launch,
    simulator_process,
    wait_connected,
)
from nav_msgs.msg import Odometry

from acres_bridge.processes import free_port
from launch import LaunchDescription


@pytest.mark.launch_test
@launch_testing.parametrize("case", ["two", "auto"])
def generate_test_description(case: str) -> LaunchDescription:
    port = free_port()
    if case == "two":
        agents = ("--agent", "first:polaris", "--agent", "second:polaris")
        bridges = [
            bridge_launch({"control_port": str(port), "namespace": "/first"}),
            bridge_launch(
                {
                    "control_port": str(port),
                    "agents": "1",
                    "namespace": "/second",
                    "frame_prefix": "second/",
                    "publish_clock": "false",
                    "simulation_control": "false",
                }
            ),
        ]
    else:
        agents = ("--agent", "polaris:polaris", "--agent", "maxxum:maxxum")
        bridges = [bridge_launch({"control_port": str(port), "vehicle": "auto", "agents": "auto"})]
    return LaunchDescription(
        [simulator_process(port, *agents), *bridges, launch_testing.actions.ReadyToTest()]
    )


EXPECTED = {
    "two": {"/first/vehicle/odom": "base_footprint", "/second/vehicle/odom": "second/base_footprint"},
    "auto": {"/vehicle/odom": "base_footprint", "/maxxum/odom": "maxxum/base_footprint"},
}


class TestAgents(unittest.TestCase):
    def test_each_agent_in_its_namespace_with_its_frames(self, case: str) -> None:
        ros = Ros()
        try:
            odom = {topic: ros.collect(Odometry, topic, 1000) for topic in EXPECTED[case]}
            wait_connected(ros)
            for topic in odom:
                ros.wait_until(lambda t=topic: ros.node.count_publishers(t) > 0, topic, TIMEOUT_S)

            def delivered() -> bool:
                ros.step(12)
                return all(len(messages) >= 10 for messages in odom.values())

            ros.wait_until(delivered, "odometry of both agents", TIMEOUT_S)
            ros.settle()
            for topic, child in EXPECTED[case].items():
                assert {(m.header.frame_id, m.child_frame_id) for m in odom[topic]} == {("utm", child)}, topic
            assert ros.node.count_publishers("/clock") == 1
            services = [name for name, _ in ros.node.get_service_names_and_types()]
            assert services.count("/step_simulation") == 1
            first, second = (odom[t][-1] for t in EXPECTED[case])
            assert first.header.stamp == second.header.stamp  # one session, one clock
            assert first.pose.pose.position != second.pose.pose.position  # two vehicles
        finally:
            ros.shutdown()
