"""LIDAR and CAMERA payloads and the sensor settings of SENSOR_META: round trips and every refusal."""

from __future__ import annotations

import struct
from array import array

import numpy as np
import pytest

from acres_bridge.wire import FrameKind, FrameReader, ProtocolError, SensorMount, decode, encode
from acres_bridge.wire.perception import (
    TRAILER_SIZE,
    CameraImage,
    CameraIntrinsics,
    ImageEncoding,
    LidarLayout,
    LidarScan,
    camera_intrinsics,
    camera_payload,
    decode_camera,
    decode_lidar,
    encode_camera_frame,
    encode_lidar_frame,
    lidar_layout,
    lidar_payload,
)

K = (599.5261980366653, 0.0, 440.1304622044219, 0.0, 592.3778194293697, 270.80532448208777, 0.0, 0.0, 1.0)
D = (
    -0.5538868812746999,
    0.40841873696727643,
    -0.009978535293476691,
    0.004423926017374143,
    -0.16673270849069252,
)


def _cloud(columns: int = 5, rings: int = 3) -> np.ndarray:
    return np.arange(columns * rings * 4, dtype=np.float32).reshape(columns, rings, 4)


def _frames(data: bytes) -> list:
    reader = FrameReader()
    reader.feed(data)
    return list(reader.frames())


def test_lidar_frame_round_trips_the_array_bytes():
    cloud = _cloud()
    (frame,) = _frames(
        encode_lidar_frame(step=12, stamp_ns=100_000_000, sensor=2, columns=5, rings=3, points=cloud)
    )
    assert frame.kind is FrameKind.LIDAR
    scan = decode(frame)
    assert isinstance(scan, LidarScan)
    assert (scan.step, scan.stamp_ns, scan.sensor, scan.columns, scan.rings) == (12, 100_000_000, 2, 5, 3)
    assert bytes(scan.points) == cloud.tobytes()
    assert decode(_frames(encode(scan))[0]) == scan


def test_a_bytes_payload_is_copied_and_an_array_payload_taken_over():
    payload = lidar_payload(step=12, stamp_ns=0, sensor=0, columns=5, rings=3, points=_cloud())
    from_bytes = decode_lidar(payload)
    assert isinstance(from_bytes.points, array)
    assert len(payload) == 5 * 3 * 16 + TRAILER_SIZE  # untouched
    owned = array("B", payload)
    from_array = decode_lidar(owned)
    assert from_array.points is owned
    assert len(owned) == 5 * 3 * 16
    assert from_array == from_bytes


def test_camera_frame_round_trips_the_image_bytes():
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    (frame,) = _frames(
        encode_camera_frame(step=24, stamp_ns=200_000_000, sensor=1, width=6, height=4, pixels=image)
    )
    decoded = decode(frame)
    assert isinstance(decoded, CameraImage)
    assert (decoded.width, decoded.height, decoded.encoding, decoded.row_step) == (
        6,
        4,
        ImageEncoding.BGR8,
        18,
    )
    assert decoded.encoding.ros_name == "bgr8"
    assert bytes(decoded.pixels) == image.tobytes()
    assert decode(_frames(encode(decoded))[0]) == decoded


def test_encoders_refuse_a_buffer_of_the_wrong_size():
    with pytest.raises(ValueError, match="LIDAR points of 240 bytes for 4 x 3 points"):
        lidar_payload(step=1, stamp_ns=0, sensor=0, columns=4, rings=3, points=_cloud())
    with pytest.raises(ValueError, match="CAMERA pixels of 10 bytes for a 2 x 2 bgr8 image"):
        camera_payload(step=1, stamp_ns=0, sensor=0, width=2, height=2, pixels=bytes(10))


def _lidar(
    columns: int = 5, rings: int = 3, *, point_step: int = 16, stamp_ns: int = 0, extra: int = 0
) -> bytes:
    body = bytes(max(0, columns * rings * 16 + extra))
    return body + struct.pack("<QqHHII", 1, stamp_ns, 0, point_step, columns, rings)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x00" * 10, "shorter than its trailer"),
        (_lidar(extra=-1), "need 268"),
        (_lidar(extra=16), "need 268"),
        (_lidar(point_step=12), "point_step 12, expected 16"),
        (_lidar(columns=0), "0 columns x 3 rings"),
        (_lidar(columns=4_000_000, rings=2, extra=-(8_000_000 * 16)), "expected 1..4000000 points"),
        (_lidar(stamp_ns=-5), "stamp_ns -5 is outside"),
    ],
)
def test_lidar_decoder_refuses_a_payload_that_disagrees_with_its_header(payload, message):
    with pytest.raises(ProtocolError, match=message):
        decode_lidar(payload)


def _camera(width: int = 4, height: int = 2, *, code: int = 1, extra: int = 0) -> bytes:
    size = max(0, width * height * 3 + extra)
    return bytes(size) + struct.pack("<QqHHII", 1, 0, 0, code, width, height)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x01", "shorter than its trailer"),
        (_camera(extra=-3), "but 4 x 2 needs 52"),
        (_camera(extra=1), "but 4 x 2 needs 52"),
        (_camera(width=3, height=2, extra=6), "but 3 x 2 needs 46"),
        (_camera(code=7), "unknown encoding 7"),
        (_camera(width=0), "image of 0 x 2"),
        (_camera(width=20_000, height=1, extra=-60_000), "image of 20000 x 1"),
    ],
)
def test_camera_decoder_refuses_a_payload_that_disagrees_with_its_header(payload, message):
    with pytest.raises(ProtocolError, match=message):
        decode_camera(payload)


def _mount(kind: str, settings: dict) -> SensorMount:
    return SensorMount(
        name=kind,
        kind=kind,
        frame=kind,
        xyz_m=(0.0, 0.0, 0.0),
        rpy_rad=(0.0, 0.0, 0.0),
        rate_hz=10.0,
        settings=settings,
    )


def test_camera_intrinsics_from_settings_and_p_from_k():
    intrinsics = CameraIntrinsics(width=896, height=512, k=K, d=D)
    parsed = camera_intrinsics(_mount("camera", intrinsics.settings()))
    assert parsed == intrinsics
    assert parsed.p == (K[0], 0.0, K[2], 0.0, 0.0, K[4], K[5], 0.0, 0.0, 0.0, 1.0, 0.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"distortion_model": "equidistant"}, "distortion_model must be 'plumb_bob'"),
        ({"k": [1.0] * 8}, r"settings.k must be 9 finite numbers"),
        ({"k": [*K[:8], float("nan")]}, r"settings.k must be 9 finite numbers"),
        ({"k": [*K[:8], 2.0]}, "is not a camera matrix"),
        ({"k": [-1.0, *K[1:]]}, "is not a camera matrix"),
        ({"d": [0.0] * 4}, r"settings.d must be 5 finite numbers"),
        ({"d": [0.0, 0.0, 0.0, 0.0, True]}, r"settings.d must be 5 finite numbers"),
        ({"width": 0}, r"settings.width must be an integer in 1..16384"),
        ({"height": 2.5}, r"settings.height must be an integer"),
    ],
)
def test_camera_intrinsics_refuse_unusable_settings(change, message):
    settings = {**CameraIntrinsics(width=896, height=512, k=K, d=D).settings(), **change}
    with pytest.raises(ProtocolError, match=message):
        camera_intrinsics(_mount("camera", settings))


def test_lidar_layout_from_settings_and_refusals():
    assert lidar_layout(_mount("lidar", LidarLayout(1800, 32).settings())) == LidarLayout(1800, 32)
    with pytest.raises(ProtocolError, match=r"settings.rings must be an integer"):
        lidar_layout(_mount("lidar", {"columns": 1800}))
    with pytest.raises(ProtocolError, match="exceed 4000000"):
        lidar_layout(_mount("lidar", {"columns": 4000, "rings": 4000}))
