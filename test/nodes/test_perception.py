"""The perception node in one process with a real rclpy context: topics, frames, the 4-frame queue.

The samples go in on the process's SampleBus, as the ingest hands them over; the messages come
out on real ROS topics read by a subscriber of the test.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from wire.test_codec import hello

from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import CAMERA, LIDAR, SESSION, Session
from acres_bridge.nodes.perception import Perception
from acres_bridge.wire import SensorMeta, SensorMount
from acres_bridge.wire.perception import CameraImage, CameraIntrinsics, ImageEncoding, LidarLayout, LidarScan
from nodes.node_rig import NodeRig, node_rig

K = (120.0, 0.0, 32.0, 0.0, 120.0, 24.0, 0.0, 0.0, 1.0)
D = (-0.1, 0.01, 0.0, 0.0, 0.0)
WIDTH, HEIGHT, COLUMNS, RINGS = 64, 48, 180, 8
TIMEOUT = 10.0


def _mount(name: str, kind: str, settings: dict[str, Any], parent: str = "base_footprint") -> SensorMount:
    return SensorMount(
        name=name,
        kind=kind,
        frame=name,
        parent=parent,
        xyz_m=(1.0, 0.0, 2.0),
        rpy_rad=(0.0, 0.0, 0.0),
        rate_hz=0.0 if kind == "frame" else 10.0,
        settings=settings,
    )


META = SensorMeta(
    agent=0,
    vehicle="maxxum",
    utm_epsg=32616,
    world_origin_utm=(500400.0, 4479900.0, 181.5),
    sensors=(
        _mount("imu_link", "ins", {}),
        _mount("lidar", "lidar", LidarLayout(COLUMNS, RINGS).settings()),
        _mount("camera", "camera", CameraIntrinsics(WIDTH, HEIGHT, K, D).settings()),
        _mount("camera_optical", "frame", {}, parent="camera"),
    ),
)


def _scan(step: int, sensor: int = 1, columns: int = COLUMNS) -> LidarScan:
    points = np.full((columns, RINGS, 4), step, dtype=np.float32)
    return LidarScan(step, step * 8_333_333, sensor, columns, RINGS, array("B", points.tobytes()))


def _image(step: int, sensor: int = 2, width: int = WIDTH) -> CameraImage:
    pixels = np.full((HEIGHT, width, 3), step % 256, dtype=np.uint8)
    return CameraImage(
        step, step * 8_333_333, sensor, ImageEncoding.BGR8, width, HEIGHT, array("B", pixels.tobytes())
    )


@dataclasses.dataclass
class Rig:
    """The perception node of a Maxxum in its rig, with the clouds, images and infos received."""

    nodes: NodeRig
    clouds: list[PointCloud2]
    images: list[Image]
    infos: list[CameraInfo]

    @property
    def node(self) -> Perception:
        node: Perception = self.nodes.node
        return node

    def session(self, *, lockstep: bool) -> None:
        session = Session(
            connected=True, hello=dataclasses.replace(hello(), lockstep=lockstep), sensor_meta=(META,)
        )
        self.nodes.feed(SESSION, session)

    def feed(self, sample: LidarScan | CameraImage) -> None:
        self.nodes.feed(LIDAR if isinstance(sample, LidarScan) else CAMERA, sample)

    def spin_until(self, condition: Any, what: str) -> None:
        self.nodes.spin_until(condition, what)


@pytest.fixture
def rig() -> Iterator[Rig]:
    with node_rig(Perception, vehicle="maxxum", feeds=(SESSION, LIDAR, CAMERA)) as nodes:
        clouds = nodes.received("maxxum", "lidar/points")
        images = nodes.received("maxxum", "camera/image_raw")
        infos = nodes.received("maxxum", "camera/camera_info")
        yield Rig(nodes, clouds, images, infos)


def test_clouds_images_and_camera_info_reach_their_topics_with_the_rig_frames(rig):
    rig.session(lockstep=False)
    rig.feed(_scan(12))
    rig.feed(_image(12))
    rig.spin_until(lambda: rig.clouds and rig.images and rig.infos, "a cloud, an image and its camera_info")
    cloud, image, info = rig.clouds[0], rig.images[0], rig.infos[0]
    assert (cloud.height, cloud.width, cloud.header.frame_id) == (COLUMNS, RINGS, "lidar")
    assert (image.width, image.height, image.encoding, image.header.frame_id) == (
        WIDTH,
        HEIGHT,
        "bgr8",
        "camera_optical",
    )
    assert info.header.frame_id == "camera_optical"
    assert info.header.stamp == image.header.stamp == cloud.header.stamp
    assert list(info.k) == list(K)
    assert list(info.p) == [K[0], 0.0, K[2], 0.0, 0.0, K[4], K[5], 0.0, 0.0, 0.0, 1.0, 0.0]


def test_free_run_drops_and_counts_what_the_queue_has_no_room_for(rig):
    rig.session(lockstep=False)
    release = threading.Event()
    publish = rig.node._publish

    def stalled(frame: Any) -> None:
        release.wait(TIMEOUT)
        publish(frame)

    rig.node._publish = stalled  # the publishing thread stalls on its first frame
    rig.feed(_scan(12))
    rig.spin_until(lambda: rig.node.queue.waiting("lidar") == 0, "the first cloud to be taken")
    for step in range(24, 24 + 12 * 9, 12):
        rig.feed(_scan(step))
    assert rig.node.queue.waiting("lidar") == 4
    assert rig.node.queue.dropped["lidar"] == 5  # 10 clouds: one in flight, 4 waiting, 5 dropped
    release.set()
    rig.spin_until(lambda: len(rig.clouds) == 5, "the 5 clouds that found room")
    assert [c.header.stamp.nanosec for c in rig.clouds] == [s * 8_333_333 for s in (12, 24, 36, 48, 60)]
    assert rig.node.published["lidar"] == 5


def test_lockstep_waits_for_room_and_drain_waits_for_publishing(rig):
    rig.session(lockstep=True)
    publish = rig.node._publish

    def slow(frame: Any) -> None:
        time.sleep(0.02)
        publish(frame)

    rig.node._publish = slow
    feeder = threading.Thread(target=lambda: [rig.feed(_scan(12 * (n + 1))) for n in range(12)])
    feeder.start()
    feeder.join(TIMEOUT)
    assert BUS.drain(TIMEOUT)  # what the ingest does before acknowledging a step
    assert rig.node.published["lidar"] == 12
    assert rig.node.queue.dropped["lidar"] == 0
    rig.spin_until(lambda: len(rig.clouds) == 12, "all 12 clouds")


@pytest.mark.parametrize(
    ("sample", "reason"),
    [
        (_scan(12, sensor=2), "sensor"),
        (_image(12, sensor=1), "sensor"),
        (_image(12, width=WIDTH // 2), "size"),
        (dataclasses.replace(_scan(12), columns=COLUMNS + 1), "size"),
        (dataclasses.replace(_image(12), pixels=array("B", bytes(10))), "size"),
    ],
    ids=["cloud-of-another-sensor", "image-of-another-sensor", "image-size", "cloud-size", "image-bytes"],
)
def test_a_bad_frame_is_dropped_and_counted_and_the_next_good_one_published(rig, sample, reason):
    rig.session(lockstep=False)
    rig.feed(sample)
    assert rig.node.bad_frames[reason] == 1
    rig.feed(_scan(24))
    rig.spin_until(lambda: rig.clouds, "the next good cloud")
    assert rig.clouds[0].header.stamp.nanosec == 24 * 8_333_333
    assert not rig.images
