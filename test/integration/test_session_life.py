"""Sessions over time: the first samples without a fix, a simulator that restarts, the spec's
example readers, the SimulateSteps action, a custom node in another process, and composition
into the running bridge."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from acres_interfaces.msg import Episode
from composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType
from rclpy.action import ActionClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result
from tf2_msgs.msg import TFMessage

from .conftest import LATCHED, START_UTC, Processes, Ros, free_port, step_in_pace

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
NS_PER_S = 1_000_000_000
PERIOD_NS = 50_000_000  # the custom INS node's 20 Hz


def stamp_ns(message: Any) -> int:
    stamp = message.clock if isinstance(message, Clock) else message.header.stamp
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def connect(processes: Processes, ros: Ros, **bridge_parameters: Any) -> int:
    """A fresh lockstep simulator and a bridge; returns the control port once the bridge serves steps."""
    port = free_port()
    processes.simulator(port)
    processes.bridge(port, **bridge_parameters)
    episodes = ros.collect(Episode, "/sim/episode", LATCHED)
    ros.wait_until(lambda: episodes, "the bridge's first /sim/episode")
    return port


def test_no_pose_before_the_first_sample_with_a_position(processes: Processes, ros: Ros) -> None:
    imu = ros.collect(Imu, "/oxts/imu", 1000)
    odom = ros.collect(Odometry, "/vehicle/odom", 1000)
    tf = ros.collect(TFMessage, "/tf", 1000)
    truth = ros.collect(Odometry, "/sim/ground_truth/odom", 1000)
    connect(processes, ros)
    ros.wait_until(lambda: ros.node.count_publishers("/oxts/imu") > 0, "the INS publishers")
    # Step in small requests until the IMU delivers, so discovery cannot hide the first samples.
    steps = 0
    while not imu:
        ros.step(1)
        steps += 1
        ros.spin_for(0.02)
        assert steps < 600, "no IMU message in 5 simulated seconds"
    ros.step(60)
    ros.wait_until(lambda: odom and tf and truth, "the first pose messages")
    fix_ns = NS_PER_S // 4
    assert all(stamp_ns(m) >= fix_ns for m in odom)
    assert all(stamp_ns(m) >= fix_ns for m in truth)
    assert all(stamp_ns(m.transforms[0]) >= fix_ns for m in tf)
    if stamp_ns(imu[0]) < fix_ns:  # the IMU did deliver without a fix: odometry waited for it
        assert stamp_ns(odom[0]) > stamp_ns(imu[0])


def test_bridge_reconnects_to_a_restarted_simulator(processes: Processes, ros: Ros) -> None:
    episodes = ros.collect(Episode, "/sim/episode", LATCHED)
    clock = ros.collect(Clock, "/clock", 1000)
    port = free_port()
    first = processes.simulator(port, seed=1)
    processes.bridge(port)
    ros.wait_until(lambda: episodes and episodes[-1].seed == 1, "the first session's episode")
    ros.step(12)
    # The newest clock of a request is the one a depth-10 writer never evicts: it must arrive.
    ros.wait_until(lambda: clock and stamp_ns(clock[-1]) == 12 * NS_PER_S // 120, "the first session's clock")
    assert first.stop() == 0
    second = processes.simulator(port, "--start-utc", "20261003T080000", seed=2)
    ros.wait_until(lambda: episodes[-1].seed == 2, "the restarted session's episode")
    assert episodes[-1].episode_id == "20261003T080000-0000"
    clock.clear()
    ros.step(24)
    ros.wait_until(
        lambda: clock and stamp_ns(clock[-1]) == 24 * NS_PER_S // 120,
        "the restarted session's clock of step 24",
    )
    assert second.popen.poll() is None


ODOM_READER = """
import rclpy
from nav_msgs.msg import Odometry

rclpy.init()
node = rclpy.create_node("odom_reader")

def on_odom(msg):
    p = msg.pose.pose.position
    print(p.x, p.y, msg.twist.twist.linear.x)

node.create_subscription(Odometry, "/vehicle/odom", on_odom, 10)
rclpy.spin(node)
"""

EPISODE_READER = """
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from acres_interfaces.msg import Episode

rclpy.init()
node = rclpy.create_node("episode_reader")
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
episodes = []
node.create_subscription(Episode, "/sim/episode", episodes.append, latched)
while not episodes:
    rclpy.spin_once(node, timeout_sec=1.0)
print(episodes[-1].episode_id, episodes[-1].source)
"""


def test_the_spec_example_readers_work_unchanged(processes: Processes, ros: Ros, tmp_path: Path) -> None:
    connect(processes, ros)
    (tmp_path / "episode_reader.py").write_text(textwrap.dedent(EPISODE_READER))
    (tmp_path / "odom_reader.py").write_text(textwrap.dedent(ODOM_READER))
    episode_reader = processes.script("episode_reader", [sys.executable, str(tmp_path / "episode_reader.py")])
    episode_reader.popen.wait(60)
    assert episode_reader.popen.returncode == 0, episode_reader.output
    ros.wait_until(lambda: episode_reader.lines, "the episode reader's line")
    assert episode_reader.lines[-1] == f"{START_UTC}-0000 unreal"

    odom_reader = processes.script("odom_reader", [sys.executable, str(tmp_path / "odom_reader.py")])
    ros.wait_until(lambda: ros.node.count_subscribers("/vehicle/odom") > 0, "the odom reader")

    def printed() -> bool:
        ros.step(12)
        return len(odom_reader.lines) >= 5

    ros.wait_until(printed, "five lines of the odom reader")
    easting, northing, speed = (float(v) for v in odom_reader.lines[-1].split())
    assert 500_000 < easting < 501_000
    assert 4_479_000 < northing < 4_481_000
    assert -20 < speed < 20


def test_simulate_steps_action_gives_feedback_per_step(processes: Processes, ros: Ros) -> None:
    clock = ros.collect(Clock, "/clock", 1000)
    # The feedback as published, with the DDS publication sequence number of each message: what a
    # reader starved of CPU does not get (a depth-10 writer) does not hide what the bridge sent.
    published: list[tuple[int, int, int]] = []  # (sequence number, completed, remaining)
    ros.node.create_subscription(
        SimulateSteps.Impl.FeedbackMessage,
        "/simulate_steps/_action/feedback",
        lambda message, info: published.append(
            (
                int(info["publication_sequence_number"]),
                message.feedback.completed_steps,
                message.feedback.remaining_steps,
            )
        ),
        1000,
    )
    connect(processes, ros)
    client = ActionClient(ros.node, SimulateSteps, "/simulate_steps")
    ros.wait_until(client.server_is_ready, "the /simulate_steps action server")

    def simulate(steps: int) -> Any:
        goal_future = client.send_goal_async(SimulateSteps.Goal(steps=steps))
        ros.wait_until(goal_future.done, "the goal to be accepted")
        goal = goal_future.result()
        assert goal.accepted
        result_future = goal.get_result_async()
        ros.wait_until(result_future.done, f"the result of {steps} steps")
        return result_future.result().result

    # Feedback travels on a topic: keep simulating single steps until its first message gets through.
    def connected() -> bool:
        simulate(1)
        return bool(published)

    ros.wait_until(connected, "the feedback topic to connect")
    ros.settle(published)
    before = published[-1][0]
    published.clear()
    start = len(clock)
    ros.wait_until(lambda: clock and stamp_ns(clock[-1]) == start * NS_PER_S // 120, "the warm-up clock")
    result = simulate(10)
    assert result.result.result == Result.RESULT_OK
    simulate(1)  # its feedback comes after every one of the 10
    ros.wait_until(lambda: published and published[-1][2] == 0 and published[-1][1] == 1, "the last feedback")
    ten = published[:-1]
    assert published[-1][0] - before == 11  # published: one feedback per step, 10 + 1
    assert ten, "none of the 10 feedback messages received"
    # each received one says where its goal was: completed + remaining = 10, counted by its number
    assert [(completed, remaining) for _, completed, remaining in ten] == [
        (seq - before, 10 - (seq - before)) for seq, _, _ in ten
    ]
    last = (start + 11) * NS_PER_S // 120
    ros.wait_until(lambda: stamp_ns(clock[-1]) == last, "the /clock of the 11th step")
    stamps = [stamp_ns(m) for m in clock[start:]]
    assert stamps == sorted(set(stamps))  # one per step, in order (a starved reader may miss one)
    assert set(stamps) <= {k * NS_PER_S // 120 for k in range(start + 1, start + 12)}


def test_a_custom_node_in_another_process_replaces_a_subsystem(processes: Processes, ros: Ros) -> None:
    odom = ros.collect(Odometry, "/vehicle/odom", 1000)
    imu = ros.collect(Imu, "/oxts/imu", 1000)
    connect(processes, ros, ins=False)
    processes.script("custom_ins", [sys.executable, str(REPO / "examples" / "custom_ins.py")])
    ros.wait_until(lambda: ros.node.count_publishers("/vehicle/odom") > 0, "the custom node's publisher")

    steps = 0

    def delivered() -> bool:
        nonlocal steps
        ros.step(60)
        steps += 60
        return bool(odom)

    ros.wait_until(delivered, "odometry from the custom node")
    # The custom node reads the internal INS topic as any plain subscriber: step in its pace, so
    # that no sample is evicted before the node has it.
    paced = step_in_pace(ros, odom, stamp_ns, steps_done=steps, period_ns=PERIOD_NS, requests=20)
    ros.settle(odom)
    ros.wait_until(  # the graph names a publisher's node some time after its data arrives
        lambda: (
            [p.node_name for p in ros.node.get_publishers_info_by_topic("/vehicle/odom")] == ["custom_ins"]
        ),
        "custom_ins as the one publisher of /vehicle/odom",
    )
    assert [stamp_ns(m) for m in paced] == [stamp_ns(paced[0]) + k * PERIOD_NS for k in range(41)]  # 20 Hz
    assert stamp_ns(paced[0]) % PERIOD_NS == 0
    assert all(m.pose.covariance[0] >= 0.25 for m in odom)
    assert not imu  # the bridge's own INS node is off


def _parameter(name: str, value: str) -> Parameter:
    parameter = Parameter(name=name)
    parameter.value.type = ParameterType.PARAMETER_STRING
    parameter.value.string_value = value
    return parameter


def test_a_bridge_node_loads_into_and_unloads_from_the_running_bridge(processes: Processes, ros: Ros) -> None:
    connect(processes, ros)
    request = LoadNode.Request(
        package_name="acres_bridge",
        plugin_name="acres_bridge::Ins",
        node_name="ins_again",
        node_namespace="/second",
        parameters=[_parameter("ingest_namespace", "/")],
    )
    loaded = ros.call(LoadNode, "/sim_bridge/_container/load_node", request)
    assert loaded.success, loaded.error_message
    assert loaded.full_node_name == "/second/ins_again"
    odom = ros.collect(Odometry, "/second/vehicle/odom", 1000)

    def delivered() -> bool:
        ros.step(12)
        return bool(odom)

    ros.wait_until(delivered, "odometry from the loaded node")
    listed = ros.call(ListNodes, "/sim_bridge/_container/list_nodes", ListNodes.Request())
    assert "/second/ins_again" in listed.full_node_names
    unloaded = ros.call(
        UnloadNode, "/sim_bridge/_container/unload_node", UnloadNode.Request(unique_id=loaded.unique_id)
    )
    assert unloaded.success, unloaded.error_message
    ros.wait_until(
        lambda: ("ins_again", "/second") not in ros.node.get_node_names_and_namespaces(), "the node to leave"
    )
