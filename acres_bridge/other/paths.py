"""nav_msgs/Path building and origin frames for odom_path and dbw_demo_driver. Pure: no node, no I/O.

Both nodes publish a path in a frame of its own whose origin is a point of the utm frame, with the
utm axes (the rotation utm -> origin frame is the identity): the poses are utm poses with the
origin's translation subtracted and their orientation kept. ``origin_transform`` is the static
transform that places such a frame in utm.
"""

from __future__ import annotations

import itertools
import math
from collections import deque

from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, TransformStamped
from nav_msgs.msg import Odometry, Path
from rclpy.serialization import serialize_message

from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.geo.route import Route

__all__ = ["OdomTrail", "Vec3", "origin_transform", "route_path"]

Vec3 = tuple[float, float, float]
_ENCAPSULATION = 4  # the bytes of the CDR encapsulation header that open a serialized message


def origin_transform(*, parent: str, child: str, origin: Vec3, stamp: Time) -> TransformStamped:
    """The transform parent -> child of a frame at ``origin`` (in parent) with the parent's axes."""
    transform = TransformStamped()
    transform.header.stamp = stamp
    transform.header.frame_id = parent
    transform.child_frame_id = child
    t = transform.transform.translation
    t.x, t.y, t.z = (float(v) for v in origin)
    transform.transform.rotation.w = 1.0
    return transform


class OdomTrail:
    """The poses of the odometry relative to the first one, at most ``max_poses`` (oldest dropped).

    The first odometry with a finite pose fixes the origin: its position in the odometry's frame
    (normally utm). Each pose keeps its orientation and the stamp of its odometry. Odometry with a
    non-finite position or orientation is refused (``add`` returns None) and counted.

    ``serialized_path`` gives the path ready to publish without converting every pose again: each
    pose is serialized once, when it is added. A full trail of 10000 poses takes about 50 ms to
    convert, so at 100 Hz ``path`` alone would need five CPU cores; ``serialized_path`` takes well
    under 1 ms.
    """

    def __init__(self, *, frame: str, max_poses: int) -> None:
        if isinstance(max_poses, bool) or not isinstance(max_poses, int) or max_poses < 1:
            raise ValueError(f"max_poses must be a positive integer, found {max_poses!r}")
        self.frame = frame
        self.max_poses = max_poses
        self.origin: Vec3 | None = None
        self.origin_frame: str | None = None  # the frame of the odometry that gave the origin
        self.refused = 0
        self._poses: deque[PoseStamped] = deque(maxlen=max_poses)
        # Each pose in CDR as it is laid out from an offset that is a multiple of 8 (all but
        # possibly the first pose of a path are: see serialized_path).
        self._encoded: deque[bytes] = deque(maxlen=max_poses)

    def __len__(self) -> int:
        return len(self._poses)

    def add(self, odometry: Odometry) -> PoseStamped | None:
        """Append the pose of one odometry message, relative to the origin; None if refused."""
        pose = odometry.pose.pose
        p, q = pose.position, pose.orientation
        if not all(math.isfinite(v) for v in (p.x, p.y, p.z, q.x, q.y, q.z, q.w)):
            self.refused += 1
            return None
        if self.origin is None:
            self.origin = (p.x, p.y, p.z)
            self.origin_frame = odometry.header.frame_id
        ox, oy, oz = self.origin
        relative = PoseStamped()
        stamp = odometry.header.stamp
        relative.header.stamp = Time(sec=stamp.sec, nanosec=stamp.nanosec)
        relative.header.frame_id = self.frame
        position, orientation = relative.pose.position, relative.pose.orientation
        position.x, position.y, position.z = p.x - ox, p.y - oy, p.z - oz
        orientation.x, orientation.y, orientation.z, orientation.w = q.x, q.y, q.z, q.w
        self._poses.append(relative)
        self._encoded.append(serialize_message(relative)[_ENCAPSULATION:])
        return relative

    def path(self, stamp: Time) -> Path:
        """The trail as a nav_msgs/Path in ``frame``, oldest pose first."""
        message = Path()
        message.header.stamp = stamp
        message.header.frame_id = self.frame
        message.poses = list(self._poses)
        return message

    def serialized_path(self, stamp: Time) -> bytes:
        """``self.path(stamp)`` in CDR, from the poses serialized when they were added.

        It reads back as the same message as ``serialize_message(self.path(stamp))``, with the same
        length (the padding bytes, which the serializer leaves unset, may differ).

        In CDR a PoseStamped of this trail has the same length whatever its content (its frame is
        the trail's), and it ends on a multiple of 8: after the header (12 bytes and the frame
        name) come seven float64 aligned to 8. So every pose after the first starts on a multiple of
        8, where its bytes are those it has alone. Only the first pose may start at 4 modulo 8; it
        is serialized again, in place, with the path's header.
        """
        header = Path()
        header.header.stamp = stamp
        header.header.frame_id = self.frame
        empty = serialize_message(header)  # ... the header, then the pose count 0 (uint32)
        if not self._poses:
            return empty
        header.poses = [self._poses[0]]
        first = serialize_message(header)[len(empty) :]
        # The CDR encapsulation's second byte: 1 little-endian, 0 big-endian.
        count = len(self._poses).to_bytes(4, "little" if empty[1] & 1 else "big")
        rest = itertools.islice(self._encoded, 1, None)
        return b"".join((empty[:-4], count, first, *rest))


def route_path(route: Route, *, frame: str, stamp: Time) -> Path:
    """A route as a nav_msgs/Path relative to its first point: the first pose is at (0, 0, 0).

    Each pose has the route's heading at its point (yaw counter-clockwise from grid east, the same
    number in the world and the utm frame) and ``stamp``.
    """
    message = Path()
    message.header.stamp = stamp
    message.header.frame_id = frame
    x0, y0 = (float(v) for v in route.xy[0])
    poses = []
    for (x, y), yaw in zip(route.xy.tolist(), route.yaw.tolist(), strict=True):
        pose = PoseStamped()
        pose.header.stamp = stamp
        pose.header.frame_id = frame
        pose.pose.position.x, pose.pose.position.y = x - x0, y - y0
        q = pose.pose.orientation
        q.x, q.y, q.z, q.w = quaternion_from_rpy(0.0, 0.0, yaw)
        poses.append(pose)
    message.poses = poses
    return message
