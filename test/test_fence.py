"""The DDS loopback fence: the bridge forwards drive-by-wire commands only behind it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import rclpy
from ds_dbw_msgs.msg import SteeringCmd
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from acres_bridge.fence import fence_state
from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import DBW_COMMAND
from acres_bridge.nodes.dbw import Dbw
from acres_bridge.wire import DbwCommand

SETUP_ENV = Path(__file__).resolve().parent.parent / "env" / "setup_env.sh"


@pytest.mark.parametrize(
    ("environment", "fenced"),
    [
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, True),
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "localhost"}, True),
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"}, True),
        ({"ROS_LOCALHOST_ONLY": "1"}, True),
        ({}, False),
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, False),
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}, False),
        ({"ROS_LOCALHOST_ONLY": "0"}, False),
        ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "192.168.1.20"}, False),
    ],
)
def test_the_fence_is_up_only_when_discovery_stays_on_the_machine(
    environment: dict[str, str], fenced: bool
) -> None:
    state = fence_state(environment)
    assert state.fenced is fenced
    assert state.reason


@pytest.mark.parametrize("distro", ["jazzy", "humble"])
def test_setup_env_raises_the_fence(distro: str) -> None:
    script = f'export ROS_DISTRO={distro} ROS_STATIC_PEERS=10.0.0.9; source "{SETUP_ENV}"; env'
    output = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    environment = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    assert fence_state(environment).fenced
    assert environment["ROS_DOMAIN_ID"] == "73"
    assert "ROS_STATIC_PEERS" not in environment


@pytest.fixture
def ros() -> Iterator[tuple[Node, SingleThreadedExecutor]]:
    context = Context()
    rclpy.init(context=context, args=[])
    node = Node("fence_test", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    yield node, executor
    executor.shutdown()
    node.destroy_node()
    context.try_shutdown()


def _forwarded(
    ros: tuple[Node, SingleThreadedExecutor], monkeypatch: pytest.MonkeyPatch, discovery: str, *, allow: bool
) -> list[DbwCommand]:
    """Start a dbw node under this discovery range, send it a steering command, return what it forwarded."""
    node, executor = ros
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", discovery)  # read when the dbw node starts
    monkeypatch.delenv("ROS_LOCALHOST_ONLY", raising=False)
    dbw = Dbw(
        node_name="dbw_under_test",
        namespace="/fence_test",
        context=node.context,
        parameter_overrides=[Parameter("allow_unfenced_commands", value=allow)],
    )
    executor.add_node(dbw)
    forwarded: list[DbwCommand] = []
    subscription = BUS.subscribe(DBW_COMMAND.key("/fence_test"), forwarded.append)
    publisher = node.create_publisher(SteeringCmd, "/fence_test/vehicle/steering/cmd", 10)
    try:
        for _ in range(200):
            if publisher.get_subscription_count():
                break
            executor.spin_once(timeout_sec=0.01)
        for _ in range(5):
            publisher.publish(SteeringCmd(cmd=0.02, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True))
            for _ in range(20):
                executor.spin_once(timeout_sec=0.01)
        assert dbw.forwarded + sum(dbw.refused.values()) == 5  # every command was received
        return forwarded
    finally:
        subscription.close()
        executor.remove_node(dbw)
        dbw.destroy_node()


def test_fenced_commands_are_forwarded(ros, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert len(_forwarded(ros, monkeypatch, "LOCALHOST", allow=False)) == 5


def test_unfenced_commands_are_refused(ros, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert _forwarded(ros, monkeypatch, "SUBNET", allow=False) == []


def test_the_override_forwards_unfenced_commands(ros, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert len(_forwarded(ros, monkeypatch, "SUBNET", allow=True)) == 5
