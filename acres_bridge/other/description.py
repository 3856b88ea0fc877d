"""The Polaris description from the sensor rig: URDF text and static transforms. Pure: no node, no I/O.

The rig is the SENSOR_META of a session (``SensorMeta.sensors``): each mount has a frame, a parent
frame (``base_footprint`` or another mount) and a pose in it, ``xyz_m`` and ``rpy_rad``
(R = Rz(yaw) Ry(pitch) Rx(roll), the URDF convention). The URDF has ``base_footprint`` as its root,
a link for each mount and a fixed joint for each, like the description that robot_state_publisher
would publish.

The static transforms are those of the spec's Polaris description: one for each mount except the
INS's (``imu_link``), whose frame belongs to the INS and has no frame prefix on the Polaris (spec:
Frames), so several vehicles of a session could not each give it a parent. As robot_state_publisher
does with its frame_prefix, the URDF keeps the rig's frame names and the transforms carry the prefixed
names.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped

from acres_bridge.convert.frame_names import FrameNames
from acres_bridge.convert.rig import ROOT_FRAME, check_rig, mount_transforms
from acres_bridge.wire.messages import SensorMount
from acres_bridge.wire.vocabulary import SensorKind

__all__ = ["ROOT_FRAME", "check_rig", "static_transforms", "tf_mounts", "urdf"]


def _numbers(values: Sequence[float]) -> str:
    # repr: the shortest text that reads back as the same float.
    return " ".join(repr(float(v)) for v in values)


def urdf(sensors: Sequence[SensorMount], *, robot_name: str = "polaris") -> str:
    """The URDF text of the rig: base_footprint and a link and a fixed joint for each mount.

    Raises ValueError (from check_rig) for a rig that is not a tree below base_footprint.
    """
    check_rig(sensors)
    robot = ET.Element("robot", name=robot_name)
    ET.SubElement(robot, "link", name=ROOT_FRAME)
    for mount in sensors:
        ET.SubElement(robot, "link", name=mount.frame)
    for mount in sensors:
        joint = ET.SubElement(robot, "joint", name=f"{mount.frame}_joint", type="fixed")
        ET.SubElement(joint, "parent", link=mount.parent)
        ET.SubElement(joint, "child", link=mount.frame)
        ET.SubElement(joint, "origin", xyz=_numbers(mount.xyz_m), rpy=_numbers(mount.rpy_rad))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def tf_mounts(sensors: Sequence[SensorMount]) -> tuple[SensorMount, ...]:
    """The mounts that get a static transform: all but the INS's."""
    return tuple(mount for mount in sensors if mount.kind != SensorKind.INS)


def static_transforms(
    sensors: Sequence[SensorMount], *, frames: FrameNames, stamp: Time
) -> list[TransformStamped]:
    """The static transforms parent -> frame of tf_mounts(sensors), with the vehicle's frame prefix.

    Raises ValueError (from check_rig) for a rig that is not a tree below base_footprint.
    """
    check_rig(sensors)
    return mount_transforms(tf_mounts(sensors), frames=frames, stamp=stamp)
