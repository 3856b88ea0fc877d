"""BridgeTally over real DDS: the stepper goes on once the bridge has told it took the newest
command the stepper saw on each topic, and a command the bridge never takes costs a bounded wait."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import rclpy
from acres_interfaces.msg import CommandTaken
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from acres_bridge.ingest.commands_taken import COMMANDS_TAKEN, COMMANDS_TAKEN_QOS
from acres_bridge.lockstep.stack_reply import BridgeTally


@pytest.fixture
def ros() -> Iterator[tuple[Node, Node, SingleThreadedExecutor]]:
    context = Context()
    rclpy.init(context=context)
    stepper = Node("stepper", context=context)
    bridge = Node("bridge", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(stepper)
    executor.add_node(bridge)
    yield stepper, bridge, executor
    executor.shutdown()
    stepper.destroy_node()
    bridge.destroy_node()
    context.try_shutdown()


def test_the_wait_ends_when_the_bridge_took_the_newest_command_seen(ros) -> None:
    stepper, bridge, executor = ros
    tally = BridgeTally(stepper)
    told = bridge.create_publisher(CommandTaken, COMMANDS_TAKEN, COMMANDS_TAKEN_QOS)
    deadline = time.monotonic() + 10.0
    while told.get_subscription_count() == 0 and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    assert tally.holds()  # nothing seen: nothing to wait for
    tally.saw("/vehicle/ulc/cmd", {"source_timestamp": 200})
    tally.saw("/vehicle/steering/cmd", {"source_timestamp": 210})
    tally.saw("/vehicle/ulc/cmd", {"source_timestamp": 100})  # older than the newest: changes nothing
    assert not tally.holds()
    told.publish(CommandTaken(topic="/vehicle/ulc/cmd", source_timestamp_ns=200, taken=1))
    assert not tally.wait(executor, limit_s=0.3)  # the steering command is not taken yet
    assert tally.unconfirmed == 1
    assert tally.taken == {"/vehicle/ulc/cmd": 200}
    told.publish(CommandTaken(topic="/vehicle/steering/cmd", source_timestamp_ns=210, taken=1))
    assert tally.wait(executor, limit_s=10.0)
    assert tally.unconfirmed == 1


def test_a_command_the_bridge_never_takes_costs_the_bound_and_no_more(ros) -> None:
    stepper, _bridge, executor = ros
    tally = BridgeTally(stepper)
    tally.saw("/vehicle/enable", {"source_timestamp": 5})
    started = time.monotonic()
    assert not tally.wait(executor, limit_s=0.2)
    assert time.monotonic() - started < 5.0  # bounded (a loose bound: the machine may be busy)
    assert tally.unconfirmed == 1
