"""LIDAR and CAMERA frames of a sensor stream, and the sensor settings of SENSOR_META.

Both payloads are the data exactly as the ROS message carries it, followed by a fixed
little-endian trailer of 28 bytes. Data first: the array a large payload is received into
(acres_bridge.wire.frames) loses its trailer in place and becomes the message's data as it is,
so the bridge never copies, let alone reads, a point or a pixel.

    LIDAR   columns x rings points of float32 x, y, z, intensity in the sensor's frame, point
            (column c, ring r) at byte (c * rings + r) * 16; then step uint64, stamp_ns int64,
            sensor uint16, point_step uint16 (16), columns uint32, rings uint32.
    CAMERA  height rows of width x 3 bytes (B, G, R), top row first; then step uint64, stamp_ns
            int64, sensor uint16, encoding uint16 (1 = bgr8), width uint32, height uint32.

`sensor` is the index of the sensor in the agent's SENSOR_META list. A payload whose size
disagrees with its trailer is refused with ProtocolError before anything reads it.
"""

from __future__ import annotations

import math
import struct
from array import array
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import FrameKind, encode_frame
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.messages import SensorMount

__all__ = [
    "LIDAR_POINT_STEP",
    "TRAILER_SIZE",
    "CameraImage",
    "CameraIntrinsics",
    "ImageEncoding",
    "LidarLayout",
    "LidarScan",
    "camera_intrinsics",
    "camera_payload",
    "decode_camera",
    "decode_lidar",
    "encode_camera",
    "encode_camera_frame",
    "encode_lidar",
    "encode_lidar_frame",
    "lidar_layout",
    "lidar_payload",
]

LIDAR_POINT_STEP: Final = 16  # float32 x, y, z, intensity
MAX_LIDAR_POINTS: Final = 4_000_000
MAX_IMAGE_SIDE: Final = 16_384
_LIDAR = struct.Struct("<QqHHII")
_CAMERA = struct.Struct("<QqHHII")
TRAILER_SIZE: Final = _LIDAR.size  # 28, the same for both


class ImageEncoding(IntEnum):
    """The pixel encodings of CAMERA frames, with their sensor_msgs/Image names."""

    BGR8 = 1

    @property
    def ros_name(self) -> str:
        return "bgr8"

    @property
    def bytes_per_pixel(self) -> int:
        return 3


@dataclass(frozen=True, slots=True)
class LidarScan:
    """One organised LiDAR cloud: `points` is columns x rings x 16 bytes, PointCloud2's data."""

    step: int
    stamp_ns: int
    sensor: int
    columns: int
    rings: int
    points: array[int]  # typecode 'B'


@dataclass(frozen=True, slots=True)
class CameraImage:
    """One camera image: `pixels` is height rows of width x bytes_per_pixel bytes, Image's data."""

    step: int
    stamp_ns: int
    sensor: int
    encoding: ImageEncoding
    width: int
    height: int
    pixels: array[int]  # typecode 'B'

    @property
    def row_step(self) -> int:
        return self.width * self.encoding.bytes_per_pixel


def _check_header(what: str, step: int, stamp_ns: int) -> None:
    if not 0 <= stamp_ns <= MAX_STAMP_NS:
        raise ProtocolError(f"{what}: stamp_ns {stamp_ns} is outside 0..{MAX_STAMP_NS}")
    if step < 0:
        raise ProtocolError(f"{what}: step {step} is negative")


def _trailer(what: str, layout: struct.Struct, payload: bytes | array[int]) -> tuple[Any, ...]:
    if len(payload) < layout.size:
        raise ProtocolError(
            f"{what}: payload of {len(payload)} bytes is shorter than its trailer ({layout.size})"
        )
    return layout.unpack_from(payload, len(payload) - layout.size)


def _data(payload: bytes | array[int], size: int) -> array[int]:
    """The first `size` bytes as an array('B'): the payload itself, cut, when it is an array."""
    if isinstance(payload, array) and payload.typecode == "B":
        del payload[size:]  # the decoder takes over an array the frame reader made for it
        return payload
    data: array[int] = array("B")
    data.frombytes(memoryview(payload)[:size])
    return data


def decode_lidar(payload: bytes | array[int]) -> LidarScan:
    """A LIDAR payload; ProtocolError when its size or layout disagrees with its trailer.

    An array payload (a large frame as FrameReader assembles it) is taken over: it becomes the
    scan's points, without its trailer.
    """
    step, stamp_ns, sensor, point_step, columns, rings = _trailer("LIDAR", _LIDAR, payload)
    _check_header("LIDAR", step, stamp_ns)
    if point_step != LIDAR_POINT_STEP:
        raise ProtocolError(f"LIDAR: point_step {point_step}, expected {LIDAR_POINT_STEP}")
    if columns == 0 or rings == 0 or columns * rings > MAX_LIDAR_POINTS:
        raise ProtocolError(
            f"LIDAR: {columns} columns x {rings} rings, expected 1..{MAX_LIDAR_POINTS} points"
        )
    size = columns * rings * LIDAR_POINT_STEP
    if len(payload) != size + TRAILER_SIZE:
        raise ProtocolError(
            f"LIDAR: payload of {len(payload)} bytes, but {columns} columns x {rings} rings "
            f"need {size + TRAILER_SIZE}"
        )
    return LidarScan(step, stamp_ns, sensor, columns, rings, _data(payload, size))


def decode_camera(payload: bytes | array[int]) -> CameraImage:
    """A CAMERA payload; ProtocolError when its size or layout disagrees with its trailer.

    An array payload is taken over, as by decode_lidar.
    """
    step, stamp_ns, sensor, code, width, height = _trailer("CAMERA", _CAMERA, payload)
    _check_header("CAMERA", step, stamp_ns)
    try:
        encoding = ImageEncoding(code)
    except ValueError:
        raise ProtocolError(f"CAMERA: unknown encoding {code}, expected 1 (bgr8)") from None
    if not (0 < width <= MAX_IMAGE_SIDE and 0 < height <= MAX_IMAGE_SIDE):
        raise ProtocolError(f"CAMERA: image of {width} x {height}, expected sides of 1..{MAX_IMAGE_SIDE}")
    size = width * height * encoding.bytes_per_pixel
    if len(payload) != size + TRAILER_SIZE:
        raise ProtocolError(
            f"CAMERA: payload of {len(payload)} bytes, but {width} x {height} needs {size + TRAILER_SIZE}"
        )
    return CameraImage(step, stamp_ns, sensor, encoding, width, height, _data(payload, size))


def _bytes_of(buffer: Any) -> memoryview:
    view = memoryview(buffer)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def lidar_payload(*, step: int, stamp_ns: int, sensor: int, columns: int, rings: int, points: Any) -> bytes:
    """A LIDAR payload; `points` is any C-contiguous buffer of columns x rings x 16 bytes (numpy)."""
    data = _bytes_of(points)
    if data.nbytes != columns * rings * LIDAR_POINT_STEP:
        raise ValueError(f"LIDAR points of {data.nbytes} bytes for {columns} x {rings} points")
    return b"".join((data, _LIDAR.pack(step, stamp_ns, sensor, LIDAR_POINT_STEP, columns, rings)))


def camera_payload(*, step: int, stamp_ns: int, sensor: int, width: int, height: int, pixels: Any) -> bytes:
    """A CAMERA payload of a bgr8 image; `pixels` is any C-contiguous buffer of height x width x 3."""
    data = _bytes_of(pixels)
    if data.nbytes != width * height * ImageEncoding.BGR8.bytes_per_pixel:
        raise ValueError(f"CAMERA pixels of {data.nbytes} bytes for a {width} x {height} bgr8 image")
    return b"".join((data, _CAMERA.pack(step, stamp_ns, sensor, ImageEncoding.BGR8, width, height)))


def encode_lidar_frame(
    *, step: int, stamp_ns: int, sensor: int, columns: int, rings: int, points: Any
) -> bytes:
    """A whole LIDAR frame (header and payload), straight from the simulator's array."""
    payload = lidar_payload(
        step=step, stamp_ns=stamp_ns, sensor=sensor, columns=columns, rings=rings, points=points
    )
    return encode_frame(FrameKind.LIDAR, payload)


def encode_camera_frame(
    *, step: int, stamp_ns: int, sensor: int, width: int, height: int, pixels: Any
) -> bytes:
    """A whole CAMERA frame (header and payload), straight from the simulator's array."""
    payload = camera_payload(
        step=step, stamp_ns=stamp_ns, sensor=sensor, width=width, height=height, pixels=pixels
    )
    return encode_frame(FrameKind.CAMERA, payload)


def encode_lidar(scan: LidarScan) -> bytes:
    return lidar_payload(
        step=scan.step,
        stamp_ns=scan.stamp_ns,
        sensor=scan.sensor,
        columns=scan.columns,
        rings=scan.rings,
        points=scan.points,
    )


def encode_camera(image: CameraImage) -> bytes:
    return camera_payload(
        step=image.step,
        stamp_ns=image.stamp_ns,
        sensor=image.sensor,
        width=image.width,
        height=image.height,
        pixels=image.pixels,
    )


# ---- sensor settings in SENSOR_META ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CameraIntrinsics:
    """What camera_info carries: the image size, K (row-major 3x3) and the plumb_bob D."""

    width: int
    height: int
    k: tuple[float, ...]
    d: tuple[float, ...]
    distortion_model: str = "plumb_bob"

    @property
    def p(self) -> tuple[float, ...]:
        """The 3x4 projection matrix made from K: [K | 0], row-major."""
        k = self.k
        return (k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, k[6], k[7], k[8], 0.0)

    def settings(self) -> dict[str, Any]:
        """The `settings` object of the camera's SENSOR_META entry."""
        return {
            "width": self.width,
            "height": self.height,
            "k": list(self.k),
            "d": list(self.d),
            "distortion_model": self.distortion_model,
        }


@dataclass(frozen=True, slots=True)
class LidarLayout:
    """The organisation of a LiDAR's clouds: azimuth columns and rings (beams)."""

    columns: int
    rings: int

    def settings(self) -> dict[str, Any]:
        """The `settings` object of the LiDAR's SENSOR_META entry."""
        return {"columns": self.columns, "rings": self.rings}


def _numbers(where: str, settings: dict[str, Any], key: str, count: int) -> tuple[float, ...]:
    values = settings.get(key)
    if (
        not isinstance(values, list)
        or len(values) != count
        or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
        )
    ):
        raise ProtocolError(f"{where}: settings.{key} must be {count} finite numbers, found {values!r}")
    return tuple(float(v) for v in values)


def _positive(where: str, settings: dict[str, Any], key: str, limit: int) -> int:
    value = settings.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit:
        raise ProtocolError(f"{where}: settings.{key} must be an integer in 1..{limit}, found {value!r}")
    return value


def camera_intrinsics(mount: SensorMount) -> CameraIntrinsics:
    """The intrinsics in a camera's SENSOR_META settings; ProtocolError when they are unusable."""
    where = f"SENSOR_META camera {mount.name!r}"
    settings = mount.settings
    model = settings.get("distortion_model", "plumb_bob")
    if model != "plumb_bob":
        raise ProtocolError(f"{where}: settings.distortion_model must be 'plumb_bob', found {model!r}")
    k = _numbers(where, settings, "k", 9)
    if k[0] <= 0 or k[4] <= 0 or k[6:] != (0.0, 0.0, 1.0):
        raise ProtocolError(f"{where}: settings.k is not a camera matrix (fx, fy > 0, last row 0 0 1): {k}")
    return CameraIntrinsics(
        width=_positive(where, settings, "width", MAX_IMAGE_SIDE),
        height=_positive(where, settings, "height", MAX_IMAGE_SIDE),
        k=k,
        d=_numbers(where, settings, "d", 5),
    )


def lidar_layout(mount: SensorMount) -> LidarLayout:
    """The columns and rings in a LiDAR's SENSOR_META settings; ProtocolError when unusable."""
    where = f"SENSOR_META lidar {mount.name!r}"
    columns = _positive(where, mount.settings, "columns", MAX_LIDAR_POINTS)
    rings = _positive(where, mount.settings, "rings", MAX_LIDAR_POINTS)
    if columns * rings > MAX_LIDAR_POINTS:
        raise ProtocolError(f"{where}: {columns} x {rings} points exceed {MAX_LIDAR_POINTS}")
    return LidarLayout(columns, rings)
