"""The `ros2` command line against a Maxxum bridge launched with the speed controller's and the CAN
transport's launch arguments: every tractor command type published, the parameters as given, and
can/rx from a CAN port that the simulator does not announce."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("ros2cli", reason="the ros2 command line is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

from can_msgs.msg import Frame

from acres_bridge.msg_profiles import Direction, load_profiles
from acres_bridge.processes import ChildProcess, free_udp_port

from .conftest import TIMEOUT_S, Processes, Ros, free_port, wait_for_line
from .test_ros2_cli import ROS2, ok, param_get, ros2, wait_until_listed

pytestmark = pytest.mark.integration

LAUNCH_ARGUMENTS = {"speed_kp": "0.8", "speed_ki": "0.2", "max_speed_mps": "5.0", "cmd_timeout_s": "1.0"}


@pytest.fixture(scope="module")
def maxxum(module_processes: Processes, module_ros: Ros) -> Iterator[Ros]:
    port, can_port = free_port(), free_udp_port()
    module_processes.simulator(port, "--vehicle", "maxxum", "--can-udp-port", str(can_port))
    arguments = {
        "vehicle": "maxxum",
        "control_port": str(port),
        "can_udp_port": str(can_port),
        **LAUNCH_ARGUMENTS,
    }
    launch: ChildProcess = module_processes.script(
        "ros2 launch",
        [
            ROS2,
            "launch",
            "acres_bridge",
            "sim_bridge.launch.py",
            *(f"{k}:={v}" for k, v in arguments.items()),
        ],
    )
    wait_for_line(launch, "Loaded node '/can'")
    module_ros.step(1)
    wait_until_listed(module_ros, {"/ingest", "/maxxum", "/can"})
    yield module_ros
    ros2("daemon", "stop", timeout_s=30)


@pytest.mark.parametrize(("name", "value"), LAUNCH_ARGUMENTS.items())
def test_the_speed_controller_takes_its_launch_arguments(maxxum: Ros, name: str, value: str) -> None:
    assert param_get(maxxum, "/maxxum", name) == f"Double value is: {value}"


COMMANDS = [
    (f"/{spec.name}", spec.type_name)
    for spec in load_profiles().table("maxxum")
    if spec.direction is Direction.SUBSCRIBE
]


@pytest.mark.parametrize(("topic", "type_name"), COMMANDS)
def test_topic_pub_reaches_the_bridge_with_every_tractor_command_type(
    maxxum: Ros, topic: str, type_name: str
) -> None:
    assert "publishing #1" in ok("topic", "pub", "--once", "-w", "1", topic, type_name, "{}")


def test_can_rx_comes_from_the_can_udp_port_given_at_launch(maxxum: Ros) -> None:
    frames = maxxum.collect(Frame, "/can/rx", 1000)

    def group() -> bool:
        maxxum.step(12)  # 0.1 simulated s: one group of 13 frames
        return len(frames) >= 13

    maxxum.wait_until(group, "frames on /can/rx", TIMEOUT_S)
