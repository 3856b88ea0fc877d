"""The QoS-event callbacks of the bridge's publishers: none.

rclpy gives a publisher two event handlers unless told otherwise (an incompatible QoS, an
incompatible type). Each is a waitable that rclpy's executor enters, counts, adds to its wait set
and checks on every spin, in Python; a bridge's container has dozens of publishers, so these
handlers cost about 7 % of the bridge's CPU in a one-step lockstep call. What they would report is
reported anyway: the subscription that asks for a QoS or a type a bridge publisher does not offer
logs it on its own side (rclcpp's and rclpy's default subscription handlers), where the person who
can fix it reads it.
"""

from __future__ import annotations

from rclpy.event_handler import PublisherEventCallbacks

__all__ = ["no_publisher_events"]


def no_publisher_events() -> PublisherEventCallbacks:
    """event_callbacks for create_publisher that add no handler to the executor's wait set."""
    return PublisherEventCallbacks(use_default_callbacks=False)
