"""A Node whose publishers have no QoS-event handlers: the base of the container's nodes.

rclpy gives a publisher two event handlers unless told otherwise (an incompatible QoS, an
incompatible type). Each is a waitable that rclpy's executor enters, counts, adds to its wait set
and checks on every spin, in Python; a bridge's container has dozens of publishers, so these
handlers cost about 7 % of the bridge's CPU in a one-step lockstep call. What they would report
is reported anyway: the subscription that asks for a QoS or a type a bridge publisher does not
offer logs it on its own side (rclcpp's and rclpy's default subscription handlers), where the
person who can fix it reads it.
"""

from __future__ import annotations

from typing import Any

from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile

__all__ = ["NodeWithoutPublisherEvents"]


class NodeWithoutPublisherEvents(Node):
    """A Node whose every publisher, its /parameter_events one included, is made without the
    default QoS-event handlers, unless the caller gives event callbacks of its own."""

    def create_publisher(
        self,
        msg_type: Any,
        topic: str,
        qos_profile: QoSProfile | int,
        *,
        event_callbacks: PublisherEventCallbacks | None = None,
        **options: Any,
    ) -> Publisher:
        callbacks = event_callbacks or PublisherEventCallbacks(use_default_callbacks=False)
        return super().create_publisher(msg_type, topic, qos_profile, event_callbacks=callbacks, **options)
