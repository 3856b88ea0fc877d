"""LiDAR scans and camera images -> PointCloud2, Image and CameraInfo as the spec's table says."""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import CameraInfo, Image, PointCloud2, PointField

from acres_bridge.convert.perception import camera_info, image, point_cloud
from acres_bridge.wire.perception import CameraImage, CameraIntrinsics, ImageEncoding, LidarScan

K = (599.5261980366653, 0.0, 440.1304622044219, 0.0, 592.3778194293697, 270.80532448208777, 0.0, 0.0, 1.0)
D = (
    -0.5538868812746999,
    0.40841873696727643,
    -0.009978535293476691,
    0.004423926017374143,
    -0.16673270849069252,
)
STAMP_NS = 33_108_335_060


def _scan(columns: int = 1800, rings: int = 32) -> tuple[LidarScan, np.ndarray]:
    rng = np.random.default_rng(1)
    points = rng.normal(size=(columns, rings, 4)).astype(np.float32)
    points[0, 0, :3] = np.nan
    return LidarScan(3973, STAMP_NS, 0, columns, rings, array("B", points.tobytes())), points


def test_point_cloud_is_the_spec_layout():
    scan, points = _scan()
    message = deserialize_message(serialize_message(point_cloud(scan, "lidar")), PointCloud2)
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (33, 108_335_060)
    assert message.header.frame_id == "lidar"
    assert (message.height, message.width, message.point_step, message.row_step) == (1800, 32, 16, 512)
    assert [(f.name, f.offset, f.datatype, f.count) for f in message.fields] == [
        ("x", 0, PointField.FLOAT32, 1),
        ("y", 4, PointField.FLOAT32, 1),
        ("z", 8, PointField.FLOAT32, 1),
        ("intensity", 12, PointField.FLOAT32, 1),
    ]
    assert message.is_bigendian is False
    assert message.is_dense is False
    assert len(message.data) == 921_600
    back = np.frombuffer(bytes(message.data), dtype="<f4").reshape(1800, 32, 4)
    np.testing.assert_array_equal(back, points)  # NaN where the beam had no return


def test_image_is_bgr8_without_padding():
    pixels = np.arange(512 * 896 * 3, dtype=np.uint32).astype(np.uint8).reshape(512, 896, 3)
    frame = CameraImage(3973, STAMP_NS, 1, ImageEncoding.BGR8, 896, 512, array("B", pixels.tobytes()))
    message = deserialize_message(serialize_message(image(frame, "reolink_camera_optical")), Image)
    assert (message.height, message.width, message.encoding, message.step) == (512, 896, "bgr8", 2688)
    assert message.header.frame_id == "reolink_camera_optical"
    assert message.header.stamp.nanosec == 108_335_060
    assert len(message.data) == 1_376_256
    assert bytes(message.data) == pixels.tobytes()


def test_camera_info_has_k_d_identity_r_and_p_from_k():
    info = camera_info(CameraIntrinsics(896, 512, K, D), "reolink_camera_optical", STAMP_NS)
    message = deserialize_message(serialize_message(info), CameraInfo)
    assert (message.width, message.height, message.distortion_model) == (896, 512, "plumb_bob")
    assert list(message.k) == list(K)
    assert list(message.d) == list(D)
    assert list(message.r) == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert list(message.p) == [K[0], 0.0, K[2], 0.0, 0.0, K[4], K[5], 0.0, 0.0, 0.0, 1.0, 0.0]
    assert message.header.frame_id == "reolink_camera_optical"
    assert message.header.stamp.sec == 33


@pytest.mark.parametrize(("columns", "rings"), [(180, 8), (1, 1)])
def test_point_cloud_of_other_rigs(columns, rings):
    scan, _ = _scan(columns, rings)
    message = point_cloud(scan, "maxxum/lidar")
    assert (message.height, message.width, message.row_step) == (columns, rings, rings * 16)
    assert message.header.frame_id == "maxxum/lidar"
