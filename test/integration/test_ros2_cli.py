"""The `ros2` command line against a bridge started with `ros2 launch`, as docs/ros2_tools.md shows.

Each command runs as a process, bounded in time, against the lockstep simulator and
`ros2 launch acres_bridge sim_bridge.launch.py`. Commands that wait for data (echo, hz) run
while the test steps the simulation; none is judged by a wall-clock rate. The ros2 daemon that
the commands start is stopped at the end of the module.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("ros2cli", reason="the ros2 command line is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

from std_msgs.msg import Bool

from acres_bridge.msg_profiles import Direction, load_profiles
from acres_bridge.plan import BridgeConfig
from acres_bridge.processes import ChildProcess, localhost_environment

from .conftest import TIMEOUT_S, Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

ROS2 = str(Path(sys.executable).parent / "ros2")
COMMAND_TIMEOUT_S = 60.0
INTERFACE_PACKAGES = (
    "acres_interfaces",
    "can_msgs",
    "composition_interfaces",
    "ds_dbw_msgs",
    "simulation_interfaces",
    "tf2_msgs",
)


def ros2(*args: str, timeout_s: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run `ros2 ARGS` to its end (bounded); stdout and stderr together in .stdout."""
    return subprocess.run(
        [ROS2, *args],
        env=localhost_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def ok(*args: str) -> str:
    """The output of a ros2 command that must succeed."""
    result = ros2(*args)
    assert result.returncode == 0, f"ros2 {' '.join(args)} exited {result.returncode}:\n{result.stdout}"
    return result.stdout


def wait_until_listed(ros: Ros, nodes: set[str]) -> None:
    """Wait (bounded) until `ros2 node list` names every node: the daemon that the first command
    starts discovers the graph anew, and a command such as `ros2 param get` that asks it before
    then answers "Node not found"."""
    ros.wait_until(
        lambda: nodes <= set(ok("node", "list").splitlines()), f"{sorted(nodes)} in ros2 node list"
    )


def param_get(ros: Ros, node: str, name: str) -> str:
    """`ros2 param get NODE NAME`, asked again (bounded) while the command's own node has not yet
    discovered NODE: each ros2 command discovers the graph anew ("Node not found")."""
    answers: list[str] = []

    def got() -> bool:
        result = ros2("param", "get", node, name)
        answers.append(result.stdout.strip())
        return result.returncode == 0 or "Node not found" not in result.stdout

    ros.wait_until(got, f"ros2 param get {node} {name} to find the node")
    return answers[-1]


@pytest.fixture(scope="module")
def launched(module_processes: Processes) -> Iterator[ChildProcess]:
    """The simulator and `ros2 launch` of the bridge; the launch, the module's last test ends it."""
    port = free_port()
    module_processes.simulator(port)
    launch = module_processes.script(
        "ros2 launch", [ROS2, "launch", "acres_bridge", "sim_bridge.launch.py", f"control_port:={port}"]
    )
    wait_for_line(launch, "Loaded node '/reset'")
    yield launch
    ros2("daemon", "stop", timeout_s=30)


@pytest.fixture(scope="module")
def cli_ros(launched: ChildProcess, module_ros: Ros) -> Ros:
    """The test's node once the launched bridge serves steps."""
    module_ros.step(1)
    wait_until_listed(module_ros, {"/ingest", "/ins", "/dbw", "/reset"})
    return module_ros


def step_until(ros: Ros, done: Callable[[], bool], what: str) -> None:
    """Step 0.1 simulated s at a time until done() (bounded)."""

    def stepped() -> bool:
        ros.step(12)
        return done()

    ros.wait_until(stepped, what, TIMEOUT_S)


def test_topic_list_shows_every_topic_of_the_polaris_with_its_type(cli_ros: Ros) -> None:
    wanted = {
        f"{spec.name} [{spec.type_name}]"
        for spec in load_profiles().table("polaris")
        if spec.name != "/tf_static"  # the Polaris's description publishes it, not the bridge
    }
    listed: set[str] = set()

    def all_listed() -> bool:  # the daemon that the first command starts discovers the graph anew
        listed.update(ok("topic", "list", "-t").splitlines())
        return wanted <= listed

    cli_ros.wait_until(all_listed, "every topic in ros2 topic list", TIMEOUT_S)
    # The ingest's internal channels are hidden topics: listed only when asked for.
    assert not [line for line in listed if "acres_ingest" in line]
    hidden = ok("topic", "list", "--include-hidden-topics").splitlines()
    assert "/_acres_ingest/clock" in hidden
    assert "/_acres_ingest/agent_0/dbw_command" in hidden
    assert not [name for name in hidden if "maxxum" in name or "can_" in name]  # a Polaris session


def test_topic_echo_once_prints_the_clock(cli_ros: Ros) -> None:
    echo = ChildProcess.start(
        "ros2 topic echo", [ROS2, "topic", "echo", "--once", "/clock", "rosgraph_msgs/msg/Clock"]
    )
    try:
        step_until(cli_ros, lambda: echo.popen.poll() is not None, "ros2 topic echo --once to end")
        assert echo.stop() == 0, echo.output
        assert "clock:" in echo.output
        assert "nanosec:" in echo.output
    finally:
        echo.stop()


def test_topic_hz_measures_the_clock(cli_ros: Ros) -> None:
    hz = ChildProcess.start("ros2 topic hz", [ROS2, "topic", "hz", "/clock"])
    try:
        step_until(cli_ros, lambda: "average rate:" in hz.output, "ros2 topic hz to print a rate")
    finally:
        hz.stop()  # ros2 ends a command on SIGINT with exit status 2
    assert "Traceback" not in hz.output


def test_topic_info_verbose_shows_the_spec_qos(cli_ros: Ros) -> None:
    spec = load_profiles().topic("polaris", "/vehicle/odom")
    assert spec.qos is not None
    out = ok("topic", "info", "-v", "/vehicle/odom")
    assert "Type: nav_msgs/msg/Odometry" in out
    assert "Node name: ins" in out
    assert f"Reliability: {spec.qos.reliability.upper()}" in out
    assert f"Durability: {spec.qos.durability.upper()}" in out
    # History (Depth) shows UNKNOWN: DDS discovery does not carry a remote writer's history


COMMANDS = [
    (spec.name, spec.type_name)
    for spec in load_profiles().table("polaris")
    if spec.direction is Direction.SUBSCRIBE
]


@pytest.mark.parametrize(("topic", "type_name"), COMMANDS)
def test_topic_pub_reaches_the_bridge_with_every_command_type(
    cli_ros: Ros, topic: str, type_name: str
) -> None:
    # -w 1: publish once the bridge's subscription matches (same type, compatible QoS)
    out = ok("topic", "pub", "--once", "-w", "1", topic, type_name, "{}")
    assert "publishing #1" in out


# Publish once both of the bridge's readers of the topic match (reliable and best effort), and
# stay up long enough for reliable delivery: with the default 0.1 s the CLI can exit before a
# loaded machine delivered the message (docs/ros2_tools.md).
DELIVERED_ONCE = ("--once", "-w", "2", "--keep-alive", "3")


def test_topic_pub_of_enable_engages_the_drive_by_wire(cli_ros: Ros) -> None:
    enabled = cli_ros.collect(Bool, "/vehicle/dbw_enabled", 1000)
    ok("topic", "pub", *DELIVERED_ONCE, "/vehicle/enable", "std_msgs/msg/Empty", "{}")
    step_until(cli_ros, lambda: bool(enabled) and enabled[-1].data, "/vehicle/dbw_enabled true")
    ok("topic", "pub", *DELIVERED_ONCE, "/vehicle/disable", "std_msgs/msg/Empty", "{}")
    step_until(cli_ros, lambda: not enabled[-1].data, "/vehicle/dbw_enabled false")


def test_service_calls_of_the_simulation_interfaces(cli_ros: Ros) -> None:
    state = ok("service", "call", "/get_simulation_state", "simulation_interfaces/srv/GetSimulationState")
    assert "SimulationState(state=2" in state  # STATE_PAUSED: lockstep waits for steps
    step = ok(
        "service", "call", "/step_simulation", "simulation_interfaces/srv/StepSimulation", "{steps: 12}"
    )
    assert "Result(result=1" in step  # RESULT_OK
    features = ok(
        "service", "call", "/get_simulator_features", "simulation_interfaces/srv/GetSimulatorFeatures"
    )
    assert "custom_info=" in features


def test_the_simulate_steps_action(cli_ros: Ros) -> None:
    out = ok(
        "action",
        "send_goal",
        "--feedback",
        "/simulate_steps",
        "simulation_interfaces/action/SimulateSteps",
        "{steps: 24}",
    )
    assert "Goal finished with status: SUCCEEDED" in out
    # One feedback per step, each with completed + remaining = 24, in order. The result can reach the
    # command before the last feedback messages do (another topic), so the tail may not be printed.
    completed = [int(n) for n in re.findall(r"completed_steps: (\d+)", out)]
    remaining = [int(n) for n in re.findall(r"remaining_steps: (\d+)", out)]
    assert completed, out
    assert completed == sorted(set(completed)), out
    assert completed[-1] <= 24, out
    assert [c + r for c, r in zip(completed, remaining, strict=True)] == [24] * len(completed), out


def test_component_list_load_unload_and_types(cli_ros: Ros) -> None:
    listed = ok("component", "list")
    assert listed.splitlines()[0] == "/sim_bridge"
    assert {line.split()[-1] for line in listed.splitlines()[1:]} >= {"/ingest", "/clock_tf", "/ins", "/dbw"}
    loaded = ok("component", "load", "/sim_bridge", "acres_bridge", "acres_bridge::Heartbeat")
    assert "into '/sim_bridge' container node as '/heartbeat'" in loaded
    uid = loaded.split("Loaded component ")[1].split()[0]
    cli_ros.wait_until(lambda: "heartbeat" in cli_ros.node.get_node_names(), "the loaded node")
    assert f"Unloaded component {uid} from '/sim_bridge' container node" in ok(
        "component", "unload", "/sim_bridge", uid
    )
    assert "  acres_bridge::Ingest" in ok("component", "types").splitlines()


def test_param_list_and_get(cli_ros: Ros) -> None:
    assert "  control_port" in ok("param", "list", "/ingest").splitlines()
    assert param_get(cli_ros, "/ins", "utm_frame") == "String value is: utm"


def test_node_list_pkg_executables_and_interfaces(cli_ros: Ros) -> None:
    nodes = ok("node", "list").splitlines()
    assert {"/sim_bridge", "/ingest", "/ins", "/dbw"} <= set(nodes)
    assert "acres_bridge sim_bridge" in ok("pkg", "executables", "acres_bridge").splitlines()
    assert "usage: acres_sim" in ok("run", "acres_bridge", "acres_sim", "--help")
    assert "acres_bridge" in ok("pkg", "list").splitlines()
    for package in INTERFACE_PACKAGES:
        interfaces = ok("interface", "package", package).split()
        assert interfaces, package
        assert ok("interface", "show", interfaces[0]).strip()


def test_show_args_lists_every_parameter_of_the_bridge() -> None:
    shown = ok("launch", "acres_bridge", "sim_bridge.launch.py", "--show-args")
    for name in (*BridgeConfig.parameter_defaults(), "namespace"):
        assert f"'{name}':" in shown


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("vehicle:=tractor", "launch argument vehicle must be one of polaris, maxxum, auto; found 'tractor'"),
        ("ins:=maybe", "launch argument ins: expected true or false, found 'maybe'"),
        ("control_port:=70000", "launch argument control_port must be a TCP port (1..65535); found 70000"),
        ("can_udp_port:=-1", "launch argument can_udp_port must be a UDP port"),
        ("speed_kp:=fast", "launch argument speed_kp: expected a number, found 'fast'"),
        ("perception_hz:=5", "unknown launch argument perception_hz"),
    ],
)
def test_a_bad_launch_argument_fails_before_any_process_starts(argument: str, message: str) -> None:
    result = ros2("launch", "acres_bridge", "sim_bridge.launch.py", argument)
    assert result.returncode == 1
    assert message in result.stdout
    assert "process started" not in result.stdout


def end_launch(launch: ChildProcess, signum: signal.Signals) -> str:
    """Send `signum` to a `ros2 launch`, check that it and its processes ended cleanly (exit 0, no
    escalation, no traceback), and return its output. The time is reported, not judged: a child
    that ignored SIGINT would make launch escalate to SIGTERM after 5 s, and say so."""
    started = time.monotonic()
    launch.popen.send_signal(signum)
    returncode = launch.popen.wait(TIMEOUT_S)
    print(f"ros2 launch ended {time.monotonic() - started:.2f} s after {signum.name}")
    launch.stop()
    output = launch.output
    assert returncode == 0, output
    unclean = ("Traceback", "sending signal 'SIGTERM'", "process has died", "did not end within", "orphaned")
    for line in unclean:
        assert line not in output, output
    assert "process has finished cleanly" in output
    return output


def test_sigint_ends_the_launch_cleanly(cli_ros: Ros, launched: ChildProcess) -> None:
    end_launch(launched, signal.SIGINT)  # the module's last test: the launch is ended here
