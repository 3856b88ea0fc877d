"""The stepping client against the real bridge and simulator: every message of every step arrives.

50 requests of random sizes (1 to 240 steps) with the full Polaris set and with a Maxxum, from a
process that works between requests. What the client hands over is checked against what the
timing rule (acres_bridge.wire.clock) and the reference simulator's GNSS fix delay say each step
makes, independently of the bridge's delivery report: the count of every topic, each message's
stamp equal to its step's, and the steps in order.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from acres_bridge.errors import SteppingError
from acres_bridge.lockstep import StepBatch, SteppingClient
from acres_bridge.lockstep.batch import message_stamp_ns
from acres_bridge.nodes.dbw import REPORT_TOPICS
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST, is_due, step_stamp_ns
from acres_sim.vehicles.ins import InsParams

from .conftest import Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PHYSICS_HZ = 120
REQUESTS = 50
MAX_STEPS = 240
FIX_DELAY_NS = InsParams().fix_delay_ns  # the reference simulator's INS has no position before it


def ins_with_position(step: int) -> int:
    return int(is_due(step, 100, PHYSICS_HZ) and step_stamp_ns(step, PHYSICS_HZ) >= FIX_DELAY_NS)


def every(rate_hz: int, burst: int = 1) -> Callable[[int], int]:
    return lambda step: burst * int(is_due(step, rate_hz, PHYSICS_HZ))


# What each step makes, per topic: the full Polaris set, and a Maxxum's topics.
POLARIS: dict[str, Callable[[int], int]] = {
    "/clock": every(120),
    "/tf": ins_with_position,
    "/vehicle/odom": ins_with_position,
    "/oxts/imu": every(100),
    "/oxts/velocity": every(100),
    "/oxts/fix": ins_with_position,
    "/sim/ground_truth/odom": ins_with_position,
    "/lidar/points": every(10),
    "/camera/image_raw": every(10),
    "/camera/camera_info": every(10),
    **{topic: every(50) for topic in REPORT_TOPICS},
    "/sim/episode": lambda _step: 0,
}
MAXXUM: dict[str, Callable[[int], int]] = {
    "/clock": every(120),
    "/tf": ins_with_position,
    "odom": ins_with_position,
    "ground_truth/odom": ins_with_position,
    "imu/data": every(100),
    "gnss/fix": ins_with_position,
    "lidar/points": every(10),
    "camera/image_raw": every(10),
    "camera/camera_info": every(10),
    "engine_rpm": every(10),
    "steering_angle": every(10),
    "implement/state": every(10),
    "can/rx": every(10, burst=13),
}
UNSTAMPED = {"/vehicle/dbw_enabled", "engine_rpm", "steering_angle", "implement/state"}


@pytest.fixture
def ros_client(processes: Processes, ros: Ros, request: pytest.FixtureRequest) -> Iterator[SteppingClient]:
    vehicle = request.param
    port = free_port()
    processes.simulator(port, "--vehicle", vehicle, perception=True)
    processes.bridge(port, vehicle=vehicle)
    topics = POLARIS if vehicle == "polaris" else MAXXUM
    client = SteppingClient(ros.node, list(topics), vehicle=vehicle, executor=ros.executor)
    yield client
    client.destroy()


def other_work(batch: StepBatch) -> None:
    """What a training loop does between requests: some numpy on the observations, some Python."""
    clocks = np.array([message_stamp_ns(m) for m in batch.messages("/clock")], dtype=np.int64)
    assert np.all(np.diff(clocks) > 0)
    deadline = time.monotonic() + 0.005
    while time.monotonic() < deadline:
        sum(range(1000))


def check(batch: StepBatch, steps: int, first: int, expected: dict[str, Callable[[int], int]]) -> None:
    assert (batch.first_step, batch.last_step) == (first, first + steps - 1)
    numbers = [s.step for s in batch.steps]
    assert numbers == list(range(first, first + steps))
    for step in batch.steps:
        for topic, makes in expected.items():
            name = topic if topic.startswith("/") else f"/{topic}"
            messages = step[name]
            assert len(messages) == makes(step.step), (topic, step.step, len(messages))
            if topic not in UNSTAMPED:
                assert all(message_stamp_ns(m) == step_stamp_ns(step.step, PHYSICS_HZ) for m in messages), (
                    topic,
                    step.step,
                )


@pytest.mark.timeout(900)  # about 6,000 steps with perception: minutes on a busy machine
@pytest.mark.parametrize("ros_client", ["polaris", "maxxum"], indirect=True)
def test_every_message_of_50_random_requests_arrives_in_step_order(ros_client: SteppingClient) -> None:
    sizes = random.Random(15).choices(range(1, MAX_STEPS + 1), k=REQUESTS)
    expected = POLARIS if "/vehicle/odom" in ros_client.topics else MAXXUM
    first = 1
    for steps in sizes:
        batch = ros_client.step(steps)
        check(batch, steps, first, expected)
        other_work(batch)
        first += steps


@pytest.mark.parametrize("ros_client", ["polaris"], indirect=True)
def test_a_reset_between_requests_changes_no_count(ros_client: SteppingClient) -> None:
    first = 1
    for steps in (40, 7, 120):
        check(ros_client.step(steps), steps, first, POLARIS)
        ros_client.reset()  # its /sim/episode comes between two requests: in neither
        first += steps


@pytest.mark.parametrize("ros_client", ["polaris"], indirect=True)
def test_a_step_count_the_bridge_would_refuse_is_an_error_and_changes_nothing(
    ros_client: SteppingClient,
) -> None:
    for steps in (0, MAX_STEPS_PER_REQUEST + 1):
        with pytest.raises(ValueError, match="steps must be"):
            ros_client.step(steps)
    check(ros_client.step(1), 1, 1, POLARIS)


def test_a_topic_the_bridge_does_not_publish_is_named(processes: Processes, ros: Ros) -> None:
    port = free_port()
    processes.simulator(port)
    processes.bridge(port, perception=False)
    client = SteppingClient(ros.node, ["/clock", "/lidar/points"], executor=ros.executor, timeout_s=5.0)
    with pytest.raises(SteppingError, match="no publisher matched /lidar/points"):
        client.step(1)
    client.destroy()


def test_a_name_that_is_no_topic_of_the_vehicle_is_refused(ros: Ros) -> None:
    with pytest.raises(ValueError, match="odom"):
        SteppingClient(ros.node, ["odom"], vehicle="polaris", executor=ros.executor)


def test_the_example_receives_every_message_of_its_steps(processes: Processes) -> None:
    port = free_port()
    processes.simulator(port, perception=True)
    processes.bridge(port)
    example = processes.script(
        "lockstep_client",
        [
            sys.executable,
            str(REPO / "examples" / "lockstep_client.py"),
            "--steps",
            "250",
            "--per-call",
            "100",
        ],
    )
    wait_for_line(example, "250 steps:", timeout_s=120.0)
    assert example.popen.wait(30.0) == 0, example.output
    odometry = sum(ins_with_position(step) for step in range(1, 251))
    frames = sum(every(10)(step) for step in range(1, 251))
    line = (
        f"250 steps: /clock 250, /vehicle/odom {odometry}, /lidar/points {frames}, /camera/image_raw {frames}"
    )
    assert line in example.output


def test_the_first_step_waits_for_the_bridge_to_meet_its_simulator(processes: Processes, ros: Ros) -> None:
    """A bridge and a simulator started together (as a launch file starts them) take a moment to
    meet: the first step waits for that rather than being refused as "not connected"."""
    port = free_port()
    processes.bridge(port, perception=False)
    later = threading.Timer(1.0, processes.simulator, args=(port,))
    later.start()
    client = SteppingClient(ros.node, ["/clock"], executor=ros.executor, timeout_s=60.0)
    try:
        batch = client.step(12)
    finally:
        later.join()
        client.destroy()
    assert len(batch.steps) == 12
    assert batch.count("/clock") == 12
