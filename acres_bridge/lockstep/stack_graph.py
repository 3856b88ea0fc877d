"""Is the stack under test there, and on simulated time? Read from the ROS graph, before stepping.

A stack stepped at its declared rates (acres_bridge.lockstep.stack_pace) must have made its timers
before simulated time runs, and run them on /clock. The stepper therefore waits, without stepping,
until every declared command topic has a publisher whose node subscribes /clock (an rclpy or rclcpp
node with use_sim_time does), and names a publisher whose node does not: its timers run on the
wall clock and cannot keep a rate of simulated time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from rclpy.node import Node

from acres_bridge.errors import AcresBridgeError

__all__ = ["CLOCK_GRACE_S", "CLOCK_TOPIC", "StackGraph", "StackNotOnSimTimeError", "wait_for_paced_stack"]

CLOCK_TOPIC: Final = "/clock"
_POLL_S: Final = 0.05
CLOCK_GRACE_S: Final = 3.0  # how long a publishing node may take to show its /clock subscription


class StackNotOnSimTimeError(AcresBridgeError):
    """A node publishes a command topic with a declared rate but does not subscribe /clock."""


@dataclass(frozen=True)
class StackGraph:
    """Per declared topic, the nodes that publish it, and which of them subscribe /clock."""

    publishers: dict[str, list[str]]  # resolved topic -> "namespace/name" of each publishing node
    clocked: frozenset[str]  # the nodes that subscribe /clock

    @classmethod
    def read(cls, node: Node, topics: Sequence[str]) -> StackGraph:
        def named(info: object) -> str:
            namespace = getattr(info, "node_namespace", "").rstrip("/")
            return f"{namespace}/{getattr(info, 'node_name', '')}"

        own = named_node(node)
        publishers = {
            topic: [n for n in map(named, node.get_publishers_info_by_topic(topic)) if n != own]
            for topic in topics
        }
        clocked = frozenset(named(info) for info in node.get_subscriptions_info_by_topic(CLOCK_TOPIC))
        return cls(publishers, clocked)

    def ready(self) -> bool:
        """Every topic has a publisher, and each of those subscribes /clock."""
        return all(self.publishers.values()) and not self.clockless()

    def clockless(self) -> list[str]:
        """'node (topic)' for each publisher of a declared topic that does not subscribe /clock."""
        return [f"{n} ({t})" for t, nodes in self.publishers.items() for n in nodes if n not in self.clocked]


def named_node(node: Node) -> str:
    """The "namespace/name" of `node`, as StackGraph names nodes."""
    return f"{node.get_namespace().rstrip('/')}/{node.get_name()}"


def wait_for_paced_stack(
    node: Node, topics: Sequence[str], timeout_s: float, check: Callable[[], None] = lambda: None
) -> StackGraph:
    """Wait (at most `timeout_s`, calling `check` between looks) until StackGraph.ready; the graph
    last seen. StackNotOnSimTimeError when a publisher of a topic has not subscribed /clock
    CLOCK_GRACE_S after it showed; a topic without a publisher is let be (it owes nothing before
    its first message)."""
    until = time.monotonic() + timeout_s
    graph = StackGraph.read(node, topics)
    clockless_since: float | None = None
    while not graph.ready() and time.monotonic() < until:
        if not graph.clockless():
            clockless_since = None
        elif clockless_since is None:
            clockless_since = time.monotonic()
        elif time.monotonic() - clockless_since > CLOCK_GRACE_S:
            break
        check()
        time.sleep(_POLL_S)
        graph = StackGraph.read(node, topics)
    if graph.clockless():
        raise StackNotOnSimTimeError(
            "the stack's command publishers do not subscribe /clock, so their timers do not run on "
            f"simulated time and cannot keep a declared rate: {', '.join(graph.clockless())}; "
            "start the stack with use_sim_time:=true"
        )
    return graph
