"""What the other nodes share: publishers and subscriptions from msg_profiles rows, parameters, main()."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.signals import SignalHandlerOptions
from rclpy.subscription import Subscription
from rclpy.utilities import try_shutdown

from acres_bridge.errors import AcresBridgeError, ParameterError
from acres_bridge.nodes.base import profiles
from acres_bridge.shutdown import StopRequest, finished, spin_until_stopped

__all__ = ["finite_parameter", "publisher", "run", "subscription", "take_pending"]


def publisher(node: Node, table: str, name: str) -> Publisher:
    """A publisher with the name, type and QoS of a msg_profiles row.

    The row may be one the bridge subscribes to (the Polaris's command topics): a node that sends
    commands publishes with the QoS the bridge's subscription has.
    """
    made: Publisher = profiles().topic(table, name).create_publisher(node)
    return made


def subscription(node: Node, table: str, name: str, callback: Callable[[Any], None]) -> Subscription:
    """A subscription with the name, type and QoS of a msg_profiles row."""
    made: Subscription = profiles().topic(table, name).create_subscription(node, callback)
    return made


def take_pending(subscriptions: Sequence[Subscription]) -> int:
    """Hand every message the readers of `subscriptions` hold to their callbacks now, in order;
    how many there were.

    A tick computes from the newest data this way: rclpy's executor hands a subscription one
    message per wait and runs the timers a wait finds ready first, so a node that lags behind its
    input would tick on a message that is not its newest. In lockstep, where a step's data reaches
    the node's readers before the step's clock (the bridge's acked_clock), a timer that takes what
    is pending computes at each tick from the data of that step, on any machine.
    """
    taken = 0
    for made in subscriptions:
        with made.handle:
            while (pending := made.handle.take_message(made.msg_type, made.raw)) is not None:
                made.callback(pending[0])
                taken += 1
    return taken


def finite_parameter(
    node: Node, name: str, default: float, description: str, *, valid: Callable[[float], bool], expected: str
) -> float:
    """Declare a read-only number parameter and check it; an integer on the command line is accepted.

    Raises ValueError naming the parameter, the value and ``expected`` (e.g. "above 0") when the
    value is not a finite number for which ``valid`` holds.
    """
    descriptor = ParameterDescriptor(description=description, dynamic_typing=True, read_only=True)
    value = node.declare_parameter(name, default, descriptor).value
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not valid(float(value))
    ):
        raise ParameterError(f"parameter {name} must be a finite number {expected}, found {value!r}")
    return float(value)


def run(node_class: Callable[[], Node], argv: Sequence[str] | None = None) -> int:
    """Build one node and spin it until SIGINT or SIGTERM; 2 when its parameters are refused.

    The stop is the container's (acres_bridge.shutdown): the signal only asks the executor to
    stop, then the node is destroyed while the context is valid, and the context shut down last.
    rclpy's own handlers shut the context down under a spinning executor, which could end the
    process with a segmentation fault instead of status 0."""
    name = getattr(node_class, "DEFAULT_NODE_NAME", "node")
    args = list(sys.argv if argv is None else ["node", *argv])
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = StopRequest(name)
    try:
        try:
            node = node_class()
        except (ValueError, AcresBridgeError) as error:
            print(f"{name}: {error}", file=sys.stderr)
            return 2
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            spin_until_stopped(executor, stop)
        finally:
            node.destroy_node()
            executor.shutdown()
        return 0
    finally:
        try_shutdown()
        finished()
