"""odom_path: the path of the vehicle for RViz (spec: Topics of the Other Nodes).

Subscribes /vehicle/odom (utm) and publishes, on each odometry message (100 Hz),
/vehicle/odom/path: every pose so far relative to the first one, in the frame ``odom_origin``
(the first position subtracted, the orientation kept), at most ``max_poses`` of them, the oldest
dropped first.

At the first pose it also publishes the static transform utm -> odom_origin on /tf_static (the
first position, no rotation). The spec's table names no transform of odom_path; but without one
RViz can show the path only with odom_origin as its fixed frame, and the demo driver's route frame
is placed the same way (the spec's parity report shows its utm -> demo_route_origin). Set
``publish_origin_tf`` false to keep /tf_static to the description alone.

Parameters (besides those of every subsystem node; ``frame_prefix`` prefixes odom_origin):
  max_poses          the longest path (default 10000; each message carries all of them, each
                     pose serialized only once, so a full path costs well under 1 ms)
  publish_origin_tf  publish utm -> odom_origin on /tf_static (default true)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from tf2_msgs.msg import TFMessage

from acres_bridge.errors import ParameterError
from acres_bridge.nodes.base import SubsystemNode, profiles
from acres_bridge.other import _wiring
from acres_bridge.other.paths import OdomTrail, origin_transform
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["OdomPath", "main"]

PATH_TOPIC = "/vehicle/odom/path"


class OdomPath(SubsystemNode):
    """Publishes the vehicle's path relative to its first pose, and that pose as a frame."""

    DEFAULT_NODE_NAME = "odom_path"
    SERVES = (Vehicle.POLARIS, "odom_path follows the Polaris's /vehicle/odom; vehicle is '{vehicle}'")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        read_only = ParameterDescriptor(read_only=True)
        max_poses = self.declare_parameter("max_poses", 10000, read_only).value
        if isinstance(max_poses, bool) or not isinstance(max_poses, int) or max_poses < 1:
            raise ParameterError(f"parameter max_poses must be a positive integer, found {max_poses!r}")
        self.publish_origin_tf = bool(self.declare_parameter("publish_origin_tf", True, read_only).value)
        spec = profiles().topic("other_nodes", PATH_TOPIC)
        self.trail = OdomTrail(frame=self.frames.apply(spec.frame or "odom_origin"), max_poses=max_poses)
        self._path = _wiring.publisher(self, "other_nodes", PATH_TOPIC)
        self._tf_static = (
            _wiring.publisher(self, "other_nodes", "/tf_static") if self.publish_origin_tf else None
        )
        self._odom = _wiring.subscription(self, "polaris", "/vehicle/odom", self._on_odom)

    def _on_odom(self, message: Odometry) -> None:
        first = self.trail.origin is None
        if self.trail.add(message) is None:
            self.get_logger().warning(
                f"dropped odometry with a non-finite pose ({self.trail.refused} so far)",
                throttle_duration_sec=5.0,
            )
            return
        if first:
            assert self.trail.origin is not None
            self.get_logger().info(
                f"{self.trail.frame} is at {self.trail.origin} in {self.trail.origin_frame}"
            )
            if self._tf_static is not None:
                transform = origin_transform(
                    parent=self.trail.origin_frame or self.frames.utm,
                    child=self.trail.frame,
                    origin=self.trail.origin,
                    stamp=message.header.stamp,
                )
                self._tf_static.publish(TFMessage(transforms=[transform]))
        self._path.publish(self.trail.serialized_path(message.header.stamp))


def main(argv: Sequence[str] | None = None) -> int:
    """Run odom_path until SIGINT or SIGTERM."""
    return _wiring.run(OdomPath, argv)


if __name__ == "__main__":
    sys.exit(main())
