"""Heartbeat: a small component that shows a container is alive.

It publishes std_msgs/String on ``heartbeat`` at ``rate_hz`` (default 1.0), each text naming the
node and counting up, e.g. ``/ns/heartbeat alive 3``. Load it with::

    ros2 component load /ComponentManager acres_bridge acres_bridge::Heartbeat -p rate_hz:=5.0
"""

from __future__ import annotations

import math
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from std_msgs.msg import String

from acres_bridge.errors import ParameterError

__all__ = ["Heartbeat"]


class Heartbeat(Node):
    """Publishes ``<full node name> alive <count>`` on ``heartbeat`` at ``rate_hz``."""

    DEFAULT_NODE_NAME = "heartbeat"

    def __init__(self, *, node_name: str = DEFAULT_NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        # Dynamic typing so that `-p rate_hz:=5` (an integer on the command line) is accepted too.
        descriptor = ParameterDescriptor(
            description="messages per second on heartbeat", dynamic_typing=True, read_only=True
        )
        rate_hz = self.declare_parameter("rate_hz", 1.0, descriptor).value
        if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | float) or not 0 < rate_hz < math.inf:
            raise ParameterError(f"rate_hz must be a number above 0, got {rate_hz!r}")
        self._count = 0
        self._publisher = self.create_publisher(String, "heartbeat", 10)
        self._timer = self.create_timer(1.0 / rate_hz, self._beat)

    def _beat(self) -> None:
        self._count += 1
        self._publisher.publish(String(data=f"{self.get_fully_qualified_name()} alive {self._count}"))
