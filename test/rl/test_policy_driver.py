"""Policies by name or saved model, and what policy_driver does with a policy's bad action or a
bad parameter (the node's wire is in test/launch/test_launch_policy_driver.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import rclpy
from ds_dbw_msgs.msg import GearReport
from nav_msgs.msg import Odometry
from rclpy.context import Context
from std_msgs.msg import Bool

from acres_bridge.gym.drive import GEAR_L, PolarisDrive
from acres_bridge.gym.policy import Policy, PolicyError, load_policy, route_follower
from acres_bridge.other.policy_driver import PolicyDriver


def test_a_policy_is_named_module_colon_callable():
    policy = load_policy("acres_bridge.gym.policy:route_follower")
    assert policy is route_follower
    state = np.array([0.0, 0.0, 0.0, 0.0, 0.1], np.float32)
    assert route_follower({"state": state}).tolist() == pytest.approx([3.0, 0.1])
    assert len(route_follower({"state": state, "implement": np.zeros(4, np.float32)})) == 3


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("route_follower", "expected module:callable or a Stable-Baselines3 .zip"),
        ("no_such_module_here:policy", "No module named 'no_such_module_here'"),
        ("acres_bridge.gym.policy:nothing", "has no attribute 'nothing'"),
        ("acres_bridge.gym.policy:ROUTE_FOLLOWER_SPEED_MPS", "is not callable"),
        ("/no/such/model.zip", "no such file"),
    ],
)
def test_a_policy_that_cannot_be_loaded_is_a_clear_error(name, message):
    with pytest.raises(PolicyError, match=message):
        load_policy(name)


def test_a_stable_baselines3_zip_is_a_deterministic_policy(tmp_path: Path):
    sb3 = pytest.importorskip("stable_baselines3")
    drive = PolarisDrive()
    gym = pytest.importorskip("gymnasium")

    class Spaces(gym.Env):  # the spaces of the environment, for a model that is saved untrained
        observation_space = drive.observation_space
        action_space = drive.action_space

    model = sb3.PPO("MultiInputPolicy", Spaces(), n_steps=8, batch_size=8, device="cpu", seed=0)
    model.save(tmp_path / "route.zip")
    policy = load_policy(str(tmp_path / "route.zip"))
    observation = {"state": np.array([0.1, -0.05, 2.0, 0.0, 0.02], np.float32)}
    first, second = np.asarray(policy(observation)), np.asarray(policy(observation))
    assert first.shape == (2,)
    assert first.tolist() == second.tolist()
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    with pytest.raises(PolicyError, match="not a PPO model"):
        load_policy(str(tmp_path / "broken.zip"))
    with pytest.raises(PolicyError, match="no algorithm 'PPX'"):
        load_policy(str(tmp_path / "route.zip"), algorithm="PPX")


def _odometry(stamp_ns: int) -> Odometry:
    message = Odometry()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.pose.pose.orientation.w = 1.0
    return message


class _Recorder:
    def __init__(self, topic: str, sent: list[tuple[str, object]]) -> None:
        self.topic, self.sent = topic, sent

    def publish(self, message: object) -> None:
        self.sent.append((self.topic, message))


@pytest.fixture
def engaged_driver() -> Iterator[Callable[[Policy], tuple[PolicyDriver, list[tuple[str, object]]]]]:
    """A PolicyDriver in a context of its own whose Polaris reports engaged, and what it sends."""
    context = Context()
    rclpy.init(context=context, args=[])
    made: list[PolicyDriver] = []

    def make(policy: Policy) -> tuple[PolicyDriver, list[tuple[str, object]]]:
        node = PolicyDriver(policy=policy, context=context)
        made.append(node)
        sent: list[tuple[str, object]] = []
        node._commands = {topic: _Recorder(topic, sent) for topic in node._commands}
        gear = GearReport()
        gear.gear.value = GEAR_L
        node.latest.update({"/vehicle/dbw_enabled": Bool(data=True), "/vehicle/gear/report": gear})
        return node, sent

    try:
        yield make
    finally:
        for node in made:
            node.destroy_node()
        context.try_shutdown()


@pytest.mark.parametrize(
    "bad", [lambda _: np.array([np.nan, 0.0]), lambda _: np.zeros(3), lambda _: [9.0, 0.0], lambda _: 1 / 0]
)
def test_a_bad_action_of_the_policy_is_counted_and_sends_nothing(engaged_driver, bad):
    node, sent = engaged_driver(bad)
    for stamp_ns in (50_000_000, 100_000_000, 150_000_000, 200_000_000):
        node._on_odometry(_odometry(stamp_ns))
    assert node.periods == 2  # the odometry of 0.1 s and 0.2 s ended a period each
    assert node.bad_actions == 2
    assert node.actions == 0
    assert sent == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "parameter policy is required"),
        (["-p", "policy:=nowhere:policy"], "No module named 'nowhere'"),
        (
            ["-p", "policy:=acres_bridge.gym.policy:route_follower", "-p", "vehicle:=combine"],
            "polaris or maxxum",
        ),
        (
            ["-p", "policy:=acres_bridge.gym.policy:route_follower", "-p", "observations:=[radar]"],
            "observations of a polaris must be some of",
        ),
    ],
)
def test_a_bad_parameter_stops_the_node_with_status_2_and_says_why(arguments, message):
    done = subprocess.run(
        [sys.executable, "-m", "acres_bridge.other.policy_driver", "--ros-args", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_period_s_commands_are_re_sent_each_resend_s_of_odometry_and_a_new_action_each_period(
    engaged_driver,
):
    node, sent = engaged_driver(route_follower)
    for stamp_ms in range(10, 301, 10):
        node._on_odometry(_odometry(stamp_ms * 1_000_000))
    ulc = [message for topic, message in sent if topic == "/vehicle/ulc/cmd"]
    # New actions at 0.1, 0.2 and 0.3 s; the held ones again at 0.12 .. 0.18 and 0.22 .. 0.28 s.
    assert (node.periods, node.actions, len(ulc)) == (3, 3, 11)
    assert {topic for topic, _ in sent} == {"/vehicle/ulc/cmd", "/vehicle/steering/cmd"}
