"""A vehicle's sensor rig (SENSOR_META's mounts) as static transforms. Pure: no node, no I/O.

Each mount has a frame, a parent frame (``base_footprint`` or another mount) and a pose in it,
``xyz_m`` and ``rpy_rad`` (R = Rz(yaw) Ry(pitch) Rx(roll), the URDF convention).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped

from acres_bridge.convert.frame_names import FrameNames
from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.wire.messages import SensorMount

__all__ = ["ROOT_FRAME", "check_rig", "mount_transforms"]

ROOT_FRAME = "base_footprint"


def check_rig(sensors: Sequence[SensorMount]) -> None:
    """Raise ValueError, naming the mount, unless the rig is a tree below base_footprint.

    Each frame must be unique and not base_footprint, each parent base_footprint or another
    mount's frame without a cycle, and each pose finite.
    """
    frames = [mount.frame for mount in sensors]
    for mount in sensors:
        if not mount.frame or mount.frame == ROOT_FRAME or frames.count(mount.frame) > 1:
            raise ValueError(
                f"rig mount {mount.name!r}: frame {mount.frame!r} is empty, the root or repeated"
            )
        if mount.parent != ROOT_FRAME and mount.parent not in frames:
            raise ValueError(
                f"rig mount {mount.name!r}: parent {mount.parent!r} is neither {ROOT_FRAME} nor a mount"
            )
        if not all(math.isfinite(v) for v in (*mount.xyz_m, *mount.rpy_rad)):
            raise ValueError(f"rig mount {mount.name!r}: pose {mount.xyz_m} {mount.rpy_rad} is not finite")
    parents = {mount.frame: mount.parent for mount in sensors}
    for frame in frames:
        seen = {frame}
        above = parents[frame]
        while above != ROOT_FRAME:
            if above in seen:
                raise ValueError(f"rig mounts {sorted(seen)}: their parents form a cycle")
            seen.add(above)
            above = parents[above]


def mount_transforms(
    mounts: Sequence[SensorMount], *, frames: FrameNames, stamp: Time
) -> list[TransformStamped]:
    """A transform parent -> frame for each mount, with the vehicle's frame prefix applied."""
    transforms = []
    for mount in mounts:
        transform = TransformStamped()
        transform.header.stamp = stamp
        transform.header.frame_id = frames.apply(mount.parent)
        transform.child_frame_id = frames.apply(mount.frame)
        t, q = transform.transform.translation, transform.transform.rotation
        t.x, t.y, t.z = (float(v) for v in mount.xyz_m)
        q.x, q.y, q.z, q.w = quaternion_from_rpy(*mount.rpy_rad)
        transforms.append(transform)
    return transforms
