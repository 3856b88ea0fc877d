"""What every subsystem node shares: its agent, its frames, msg_profiles, its ingest channels.

Parameters of every subsystem node:
  vehicle          polaris | maxxum: which table of msg_profiles names the topics
  agent            the agent index this node serves (0 = agent 0)
  ingest_namespace the namespace of the ingest node ("" = this node's own namespace)
  frame_prefix     prefix of this vehicle's frames, e.g. "polaris2/" (spec: Frames)
  utm_frame        the name of the utm frame
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from rclpy.node import Node
from rclpy.publisher import Publisher

from acres_bridge.convert.frames import FrameNames, frame_names
from acres_bridge.errors import ParameterError
from acres_bridge.ingest.channels import IngestChannel, SampleSubscription
from acres_bridge.msg_profiles import Direction, MsgProfiles, TopicSpec, load_profiles
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["SubsystemNode", "profiles"]

S = TypeVar("S")


@cache
def profiles() -> MsgProfiles:
    """msg_profiles, loaded and validated once per process."""
    return load_profiles()


class SubsystemNode(Node):
    """A node of one subsystem of one vehicle: publishers from msg_profiles, samples from the ingest."""

    DEFAULT_NODE_NAME = "subsystem"

    def __init__(self, **node_options: Any) -> None:
        node_options.setdefault("node_name", self.DEFAULT_NODE_NAME)
        super().__init__(**node_options)
        vehicle = str(self.declare_parameter("vehicle", str(Vehicle.POLARIS)).value)
        if vehicle not in tuple(Vehicle):
            raise ParameterError(f"parameter vehicle must be polaris or maxxum, found {vehicle!r}")
        self.vehicle = Vehicle(vehicle)
        self.agent = int(self.declare_parameter("agent", 0).value)
        ingest_namespace = str(self.declare_parameter("ingest_namespace", "").value)
        self.ingest_namespace = ingest_namespace or self.get_namespace()
        self.frames: FrameNames = frame_names(
            vehicle=vehicle,
            frame_prefix=str(self.declare_parameter("frame_prefix", "").value),
            utm_frame=str(self.declare_parameter("utm_frame", "utm").value),
        )
        self._sources: list[SampleSubscription[Any]] = []

    def topic(self, name: str) -> TopicSpec:
        """This vehicle's msg_profiles row of a topic."""
        return profiles().topic(self.vehicle, name)

    def publisher(self, name: str) -> Publisher:
        """A publisher with the name, type and QoS that msg_profiles gives this vehicle's topic."""
        spec = self.topic(name)
        if spec.direction is not Direction.PUBLISH or spec.qos is None:
            raise ValueError(f"{name} is not a topic the bridge publishes ({spec.direction.value})")
        return self.create_publisher(spec.message_class(), spec.ros_name, spec.qos.to_rclpy())

    def subscription(self, name: str, callback: Callable[[Any], None]) -> Any:
        """A subscription with the name, type and QoS that msg_profiles gives this vehicle's topic."""
        spec = self.topic(name)
        if spec.direction is not Direction.SUBSCRIBE or spec.qos is None:
            raise ValueError(f"{name} is not a topic the bridge subscribes to ({spec.direction.value})")
        return self.create_subscription(spec.message_class(), spec.ros_name, callback, spec.qos.to_rclpy())

    def samples(
        self, channel: IngestChannel[S], callback: Callable[[S], None], *, agent: int | None = None
    ) -> None:
        """Deliver a channel of the ingest to callback (in-process when the ingest is here)."""
        source = SampleSubscription(
            self,
            channel,
            callback,
            namespace=self.ingest_namespace,
            agent=self.agent if agent is None else agent,
        )
        self._sources.append(source)

    def destroy_node(self) -> None:
        for source in self._sources:
            source.close()
        self._sources.clear()
        super().destroy_node()
