"""Perception: what a cloud and an image cost the bridge, next to what rclpy itself costs.

The bridge's path for one frame: the frame's bytes into the ingest's FrameReader as the link
receives them (pieces of 256 KiB, the rest of a large payload copied straight into the buffer it
is assembled in, where the link's recv_into lets the kernel put it), the frame decoded, the
sensor_msgs message made and published. The reference: rclpy publishing a
message of the same size that was made beforehand. Both publish to the same topic, read by a
subscriber in another process (bench/_sink.py), and alternate call by call, so load from
elsewhere falls on both alike; figures are medians of per-frame wall times in this process.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, PointCloud2

from acres_bridge.convert import perception as convert
from acres_bridge.wire import FrameReader, decode
from acres_bridge.wire.perception import CameraImage, LidarScan, encode_camera_frame, encode_lidar_frame
from bench._processes import START_TIMEOUT_S, Children
from bench._ros import BenchNode
from bench._sink import READY_LINE
from bench._stats import median
from bench.core import Benchmark, Outcome, Row, Settings
from bench.errors import BenchError

__all__ = ["BENCHMARK", "run"]

CLOUD = "cloud 1800 x 32 (921,600 B): wire bytes -> published"
CLOUD_REFERENCE = "cloud: rclpy publish of a pre-built message"
CLOUD_RATIO = "cloud: bridge / rclpy publish"
IMAGE = "image 896 x 512 bgr8 (1,376,256 B): wire bytes -> published"
IMAGE_REFERENCE = "image: rclpy publish of a pre-built message"
IMAGE_RATIO = "image: bridge / rclpy publish"

ROWS = (
    (CLOUD, "ms"),
    (CLOUD_REFERENCE, "ms"),
    (CLOUD_RATIO, "x"),
    (IMAGE, "ms"),
    (IMAGE_REFERENCE, "ms"),
    (IMAGE_RATIO, "x"),
)
_CLOUD_TOPIC = "/bench/lidar/points"
_IMAGE_TOPIC = "/bench/camera/image_raw"


def _cloud_frame() -> bytes:
    points = np.random.default_rng(7).normal(size=(1800, 32, 4)).astype(np.float32)
    return encode_lidar_frame(step=12, stamp_ns=100_000_000, sensor=0, columns=1800, rings=32, points=points)


def _image_frame() -> bytes:
    pixels = np.random.default_rng(7).integers(0, 256, size=(512, 896, 3), dtype=np.uint8)
    return encode_camera_frame(step=12, stamp_ns=100_000_000, sensor=1, width=896, height=512, pixels=pixels)


def _timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _compare(
    bridge_path: Callable[[], None], reference: Callable[[], None], frames: int
) -> tuple[float, float]:
    """Median seconds per frame of the two, called alternately."""
    bridge, plain = [], []
    for _ in range(frames):
        bridge.append(_timed(bridge_path))
        plain.append(_timed(reference))
    return median(bridge), median(plain)


def run(settings: Settings) -> Outcome:
    frames = settings.pick(300, 40)
    with Children() as children, BenchNode() as ros:
        sink = children.start("sink", [sys.executable, "-m", "bench._sink", _CLOUD_TOPIC, _IMAGE_TOPIC])
        sink.wait_for_line(READY_LINE, START_TIMEOUT_S)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        clouds = ros.node.create_publisher(PointCloud2, _CLOUD_TOPIC, qos)
        images = ros.node.create_publisher(Image, _IMAGE_TOPIC, qos)
        ros.wait_until(
            lambda: clouds.get_subscription_count() > 0 and images.get_subscription_count() > 0,
            "the sink's subscriptions",
            START_TIMEOUT_S,
            watch=[sink],
        )
        reader = FrameReader()
        cloud_bytes, image_bytes = _cloud_frame(), _image_frame()

        def bridge_cloud() -> None:
            for frame in reader.receive(cloud_bytes):
                scan = decode(frame)
                if not isinstance(scan, LidarScan):
                    raise BenchError(f"expected a LIDAR frame, decoded {type(scan).__name__}")
                clouds.publish(convert.point_cloud(scan, "lidar"))

        def bridge_image() -> None:
            for frame in reader.receive(image_bytes):
                image = decode(frame)
                if not isinstance(image, CameraImage):
                    raise BenchError(f"expected a CAMERA frame, decoded {type(image).__name__}")
                images.publish(convert.image(image, "reolink_camera_optical"))

        reader.feed(cloud_bytes)
        built_cloud = convert.point_cloud(decode(next(iter(reader.frames()))), "lidar")  # type: ignore[arg-type]
        reader.feed(image_bytes)
        built_image = convert.image(decode(next(iter(reader.frames()))), "reolink_camera_optical")  # type: ignore[arg-type]
        _compare(bridge_cloud, lambda: clouds.publish(built_cloud), 5)  # warm-up
        cloud, cloud_reference = _compare(bridge_cloud, lambda: clouds.publish(built_cloud), frames)
        image, image_reference = _compare(bridge_image, lambda: images.publish(built_image), frames)
    note = f"median of {frames} frames each, alternating with the reference"
    return Outcome(
        rows=(
            Row(name=CLOUD, value=cloud * 1e3, unit="ms", notes=note),
            Row(name=CLOUD_REFERENCE, value=cloud_reference * 1e3, unit="ms"),
            Row(name=CLOUD_RATIO, value=cloud / cloud_reference, unit="x", notes="aim: 1.5 or less"),
            Row(name=IMAGE, value=image * 1e3, unit="ms", notes=note),
            Row(name=IMAGE_REFERENCE, value=image_reference * 1e3, unit="ms"),
            Row(name=IMAGE_RATIO, value=image / image_reference, unit="x", notes="aim: 1.5 or less"),
        )
    )


BENCHMARK = Benchmark(key="perception", rows=ROWS, run=run)
