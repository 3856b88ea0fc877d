"""LiDAR clouds and camera images -> sensor_msgs messages. Pure functions, no node.

The wire already carries the data bytes in the layout of the ROS message (docs/protocol.md),
and the ingest receives them into an `array.array('B')` (acres_bridge.wire.frames), so a
conversion only sets the header fields and hands that array to a message made with
check_fields=True: rosidl's setter then keeps the array as it is. (Without field checks it
copies whatever it is given into a new array; with checks, any other sequence would be checked
element by element in Python.)
"""

from __future__ import annotations

from sensor_msgs.msg import CameraInfo, Image, PointCloud2, PointField

from acres_bridge.convert.stamps import stamp
from acres_bridge.wire.perception import LIDAR_POINT_STEP, CameraImage, CameraIntrinsics, LidarScan

__all__ = ["POINT_FIELDS", "camera_info", "image", "point_cloud"]

_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _point_fields() -> list[PointField]:
    return [
        PointField(name=name, offset=4 * index, datatype=PointField.FLOAT32, count=1)
        for index, name in enumerate(("x", "y", "z", "intensity"))
    ]


POINT_FIELDS = _point_fields()
"""x, y, z, intensity: float32 each, at offsets 0, 4, 8, 12 (point_step 16)."""


def point_cloud(scan: LidarScan, frame_id: str) -> PointCloud2:
    """The organised cloud: height = columns, width = rings, is_dense false (NaN for no return)."""
    message = PointCloud2(
        check_fields=True,
        height=scan.columns,
        width=scan.rings,
        fields=POINT_FIELDS,
        is_bigendian=False,
        point_step=LIDAR_POINT_STEP,
        row_step=scan.rings * LIDAR_POINT_STEP,
        is_dense=False,
    )
    message.header.stamp = stamp(scan.stamp_ns)
    message.header.frame_id = frame_id
    message.data = scan.points
    return message


def image(frame: CameraImage, frame_id: str) -> Image:
    """The raw image in its encoding (bgr8), rows top first without padding."""
    message = Image(
        check_fields=True,
        height=frame.height,
        width=frame.width,
        encoding=frame.encoding.ros_name,
        is_bigendian=0,
        step=frame.row_step,
    )
    message.header.stamp = stamp(frame.stamp_ns)
    message.header.frame_id = frame_id
    message.data = frame.pixels
    return message


def camera_info(intrinsics: CameraIntrinsics, frame_id: str, stamp_ns: int) -> CameraInfo:
    """K and D as the simulator gives them, R the identity, P made from K ([K | 0])."""
    message = CameraInfo(
        height=intrinsics.height,
        width=intrinsics.width,
        distortion_model=intrinsics.distortion_model,
        d=list(intrinsics.d),
        k=intrinsics.k,
        r=_IDENTITY,
        p=intrinsics.p,
    )
    message.header.stamp = stamp(stamp_ns)
    message.header.frame_id = frame_id
    return message
