"""What the launch_testing modules share: the simulator and the installed launch file as launch
actions, which topics each subsystem owns, and checks judged in lockstep.

The launch file is taken from the package's share directory, found through the ament index, as
`ros2 launch acres_bridge sim_bridge.launch.py` finds it. Each check steps the simulator through
/step_simulation and waits for events with bounded timeouts; none depends on wall-clock rates.
"""

from __future__ import annotations

import unittest
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from ament_index_python.packages import get_package_share_directory
from integration.conftest import START_UTC, Ros
from launch.actions import ExecuteProcess, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from simulation_interfaces.msg import SimulationState
from simulation_interfaces.srv import GetSimulationState

from acres_bridge.msg_profiles import Direction, load_profiles
from acres_bridge.processes import free_port, simulator_command
from launch import LaunchDescription

__all__ = [
    "BRIDGE_TOPICS",
    "SUBSYSTEM_NODES",
    "TestExit",
    "bridge_launch",
    "launch_file",
    "live_view_launch",
    "publish_topics",
    "simulator_process",
    "step_until_each_has",
    "subscribe_all",
    "wait_connected",
]

# The bridge's topics of each subsystem, as a user sees them (publishers and subscriptions).
BRIDGE_TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "polaris": {
        "clock_tf": ("/clock", "/tf"),
        "ins": ("/vehicle/odom", "/oxts/imu", "/oxts/velocity", "/oxts/fix", "/sim/ground_truth/odom"),
        "perception": ("/lidar/points", "/camera/image_raw", "/camera/camera_info"),
        "episode": ("/sim/episode",),
        "dbw": (
            "/vehicle/steering/report",
            "/vehicle/throttle/report",
            "/vehicle/brake/report",
            "/vehicle/gear/report",
            "/vehicle/ulc/report",
            "/vehicle/vehicle_velocity",
            "/vehicle/dbw_enabled",
            "/vehicle/steering/cmd",
            "/vehicle/throttle/cmd",
            "/vehicle/brake/cmd",
            "/vehicle/gear/cmd",
            "/vehicle/ulc/cmd",
            "/vehicle/enable",
            "/vehicle/disable",
        ),
        "reset": ("/sim/reset",),
    },
    "maxxum": {
        "clock_tf": ("/clock", "/tf"),
        "ins": ("/odom", "/ground_truth/odom", "/imu/data", "/gnss/fix"),
        "perception": ("/lidar/points", "/camera/image_raw", "/camera/camera_info"),
        "episode": ("/sim/episode",),
        "reset": ("/sim/reset",),
        "maxxum": (
            "/tf_static",
            "/engine_rpm",
            "/steering_angle",
            "/implement/state",
            "/cmd_vel",
            "/guidance/curvature_cmd",
            "/speed_cmd",
            "/hitch/lever_cmd",
            "/hitch/raise_cmd",
            "/pto/cmd",
            "/hand_throttle_cmd",
            "/implement/cmd",
        ),
        "can": ("/can/rx", "/can/tx"),
    },
}
SUBSYSTEM_NODES = {vehicle: ("ingest", *topics) for vehicle, topics in BRIDGE_TOPICS.items()}
TIMEOUT_S = 60.0


def launch_file() -> str:
    """The installed launch file, found through the ament index."""
    return str(Path(get_package_share_directory("acres_bridge")) / "launch" / "sim_bridge.launch.py")


def simulator_process(port: int, *extra: str, perception: bool = False) -> ExecuteProcess:
    """The reference simulator in lockstep as a launch action."""
    flag = "--perception" if perception else "--no-perception"
    cmd = simulator_command(port, seed=42, lockstep=True, start_utc=START_UTC, extra=(*extra, flag))
    return ExecuteProcess(cmd=cmd, name="acres_sim", output="screen")


def bridge_launch(arguments: Mapping[str, str]) -> IncludeLaunchDescription:
    """sim_bridge.launch.py with these launch arguments."""
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource(launch_file()), launch_arguments=dict(arguments).items()
    )


def live_view_launch(*, perception: bool, **arguments: str) -> tuple[LaunchDescription, dict[str, Any]]:
    """A lockstep Polaris session with the bridge's live view on a free port (its launch
    arguments besides these), ready to test; the test gets the port as `view_port`."""
    port, view_port = free_port(), free_port()
    bridge = {
        "control_port": str(port),
        "vehicle": "polaris",
        "foxglove": "true",
        "foxglove_port": str(view_port),
    }
    description = LaunchDescription(
        [
            simulator_process(port, "--vehicle", "polaris", perception=perception),
            bridge_launch({**bridge, **arguments}),
            launch_testing.actions.ReadyToTest(),
        ]
    )
    return description, {"view_port": view_port}


def publish_topics(vehicle: str, namespace: str = "") -> dict[str, Any]:
    """The spec's published topics of a vehicle (and /sim/episode), each with its message class and
    QoS, by the name a user sees in `namespace`."""
    profiles = load_profiles()
    rows = [*profiles.table(vehicle), profiles.topic("session", "/sim/episode")]
    topics = {}
    for spec in rows:
        if spec.direction is not Direction.PUBLISH:
            continue
        relative = spec.ros_name
        name = relative if relative.startswith("/") else f"{namespace.rstrip('/')}/{relative}"
        topics[name] = spec
    return topics


def step_until_each_has(ros: Ros, collected: Mapping[str, list[Any]], topics: Iterable[str]) -> None:
    """Step 0.2 simulated s at a time until each of `topics` has a message (bounded)."""
    wanted = tuple(topics)
    wait_connected(ros)

    def done() -> bool:
        ros.step(24)
        ros.settle()
        return all(collected[t] for t in wanted)

    ros.wait_until(done, f"a message on each of {', '.join(wanted)}", TIMEOUT_S)


def wait_connected(ros: Ros) -> None:
    """Wait until the bridge says the lockstep simulation is paused: connected, ready to step."""

    def paused() -> bool:
        response = ros.call(GetSimulationState, "/get_simulation_state", GetSimulationState.Request())
        return bool(response.state.state == SimulationState.STATE_PAUSED)

    ros.wait_until(paused, "the bridge's connection to the simulator", TIMEOUT_S)


def subscribe_all(ros: Ros, topics: Mapping[str, Any]) -> dict[str, list[Any]]:
    """A list per topic that fills with its messages, at the spec's QoS with a deep history."""
    collected = {}
    for name, spec in topics.items():
        qos = spec.qos.to_rclpy()
        qos.depth = max(qos.depth, 1000)
        collected[name] = ros.collect(spec.message_class(), name, qos)
    return collected


@launch_testing.post_shutdown_test()
class TestExit(unittest.TestCase):
    """Imported into each launch test module, where launch_testing runs it once the launch has
    ended: every process exited with 0 (SIGINT from launch's shutdown ended them cleanly)."""

    def test_every_process_exits_with_0(self, proc_info: Any) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
