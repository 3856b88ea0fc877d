"""The line follower against the ACRES simulator under launch_testing: the simulator and the bridge
from acres_bridge's test kit, the stack from this package's own launch file."""

import os
import unittest

import launch_testing
import launch_testing.actions
import launch_testing.asserts
import pytest
from ament_index_python.packages import get_package_share_directory
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from acres_bridge.testing import (
    Sim,
    assert_no_dbw_timeout,
    assert_within_route,
    simulation_launch_description,
)
from launch import LaunchDescription


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    stack = os.path.join(get_package_share_directory("my_stack"), "launch", "follower.launch.py")
    return LaunchDescription(
        [
            simulation_launch_description(vehicle="polaris", seed=7),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(stack), launch_arguments={"use_sim_time": "true"}.items()
            ),
            launch_testing.actions.ReadyToTest(),
        ]
    )


class TestLineFollower(unittest.TestCase):
    def test_the_follower_holds_the_polaris_on_the_route(self) -> None:
        with Sim.connect(vehicle="polaris", stack_rates={"/vehicle/ulc/cmd": 50}) as sim:
            sim.wait_for_stack()
            sim.step(seconds=20)
            assert_within_route(sim, max_xte=0.3)
            assert_no_dbw_timeout(sim)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info: launch_testing.ProcInfoHandler) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
