"""One subsystem node in a context of its own, fed as the ingest feeds it, watched by a probe node.

The rig stands in for an ingest in the same process: it registers as the producer of the node's
channels on the process's SampleBus (in a namespace of its own, so tests never share keys),
hands samples over with `feed`, and keeps what the node sends to the simulator (`sent`). The
probe subscribes to and publishes on the node's ROS topics with the QoS of msg_profiles.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy

from acres_bridge.ingest.bus import BUS, BusSubscription
from acres_bridge.ingest.channels import IngestChannel
from acres_bridge.msg_profiles import load_profiles

__all__ = ["NodeRig", "node_rig"]

PROFILES = load_profiles()
TIMEOUT_S = 10.0


class NodeRig:
    """The node under test, its probe and the bus ends of its channels."""

    def __init__(self, node: Any, probe: Node, namespace: str, executor: SingleThreadedExecutor) -> None:
        self.node = node
        self.probe = probe
        self.namespace = namespace
        self.executor = executor
        self.sent: list[Any] = []  # what the node sent on the channels to the simulator

    def feed(self, channel: IngestChannel[Any], sample: Any, agent: int = 0) -> None:
        """Hand a sample to the node as the ingest does (synchronously, in this thread)."""
        BUS.publish(channel.key(self.namespace, agent), sample)

    def received(self, table: str, topic: str, *, depth: int = 100) -> list[Any]:
        """A list that fills with the node's messages on a topic of msg_profiles' `table`."""
        spec = PROFILES.topic(table, topic)
        assert spec.qos is not None
        qos = spec.qos.to_rclpy()
        qos = QoSProfile(depth=max(depth, qos.depth), reliability=qos.reliability, durability=qos.durability)
        messages: list[Any] = []
        self.probe.create_subscription(spec.message_class(), spec.ros_name, messages.append, qos)
        self.spin_until(
            lambda: self.node.count_subscribers(self._absolute(spec.ros_name)) > 0, f"{topic}'s probe"
        )
        return messages

    def publisher(self, table: str, topic: str, *, reliability: ReliabilityPolicy | None = None) -> Any:
        """A probe publisher on one of the node's command topics (with the profile's QoS, or
        another reliability), once the node subscribes."""
        spec = PROFILES.topic(table, topic)
        assert spec.qos is not None
        qos = spec.qos.to_rclpy()
        if reliability is not None:
            qos.reliability = reliability
        publisher = self.probe.create_publisher(spec.message_class(), spec.ros_name, qos)
        self.spin_until(lambda: publisher.get_subscription_count() > 0, f"the node on {topic}")
        return publisher

    def spin_until(self, condition: Callable[[], object], what: str, timeout_s: float = TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def _absolute(self, name: str) -> str:
        return name if name.startswith("/") else f"{self.namespace}/{name}"


@contextmanager
def node_rig(
    node_class: type,
    *,
    vehicle: str = "polaris",
    parameters: Sequence[Parameter] = (),
    feeds: Sequence[IngestChannel[Any]] = (),
    sends: Sequence[IngestChannel[Any]] = (),
    before_node: Callable[[], None] | None = None,
) -> Iterator[NodeRig]:
    """The node with `parameters`, fed on `feeds`, its samples to the simulator on `sends` kept.
    `before_node` runs after the context is up, before the node is made (to change the environment
    the node reads, such as the DDS fence, without the context's discovery)."""
    context = Context()
    rclpy.init(context=context, args=[])
    if before_node is not None:
        before_node()
    namespace = f"/rig_{uuid.uuid4().hex[:8]}"
    produced = [(channel.key(namespace, 0), channel.latched) for channel in feeds]
    for key, latched in produced:  # an ingest in this process: the node takes its samples from the bus
        BUS.register_producer(key, latched=latched)
    rig_node: Any = None
    probe: Node | None = None
    taken: list[BusSubscription] = []
    executor = SingleThreadedExecutor(context=context)
    try:
        rig_node = node_class(
            context=context,
            namespace=namespace,
            parameter_overrides=[Parameter("vehicle", value=vehicle), *parameters],
        )
        probe = Node("probe", namespace=namespace, context=context)
        executor.add_node(rig_node)
        executor.add_node(probe)
        rig = NodeRig(rig_node, probe, namespace, executor)
        taken = [BUS.subscribe(channel.key(namespace, 0), rig.sent.append) for channel in sends]
        yield rig
    finally:
        for subscription in taken:
            subscription.close()
        if rig_node is not None:
            rig_node.destroy_node()
        if probe is not None:
            probe.destroy_node()
        executor.shutdown()
        for key, _ in produced:
            BUS.unregister_producer(key)
        context.try_shutdown()
