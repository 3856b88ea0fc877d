"""LiDAR and camera through the simulator and the bridge as processes (spec: LiDAR and Camera).

Lockstep makes the counts exact: one simulated second gives exactly 10 clouds and 10 images. A
flat scene (`acres_sim --scene flat`) makes the geometry exact: every return of the LiDAR lies
on the ground plane, and the camera's horizon sits where K and the mount pose put it.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from acres_interfaces.msg import Episode
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, PointCloud2, PointField

from acres_bridge.msg_profiles import load_profiles
from acres_sim.sensors.camera import POLARIS_CAMERA, Camera, camera_mount
from acres_sim.sensors.lidar import POLARIS_LIDAR
from acres_sim.vehicles.params import POLARIS

from .conftest import LATCHED, Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

NS_PER_S = 1_000_000_000
PROFILES = load_profiles()
K = (599.5261980366653, 0.0, 440.1304622044219, 0.0, 592.3778194293697, 270.80532448208777, 0.0, 0.0, 1.0)
D = (
    -0.5538868812746999,
    0.40841873696727643,
    -0.009978535293476691,
    0.004423926017374143,
    -0.16673270849069252,
)


def stamp_ns(message: Any) -> int:
    return int(message.header.stamp.sec) * NS_PER_S + int(message.header.stamp.nanosec)


def step_stamp_ns(step: int) -> int:
    return step * NS_PER_S // 120


def deep(topic: str) -> QoSProfile:
    """The bridge's QoS with a deep reader history, so a lockstep burst never overruns the test."""
    qos = PROFILES.topic("polaris", topic).qos.to_rclpy()
    qos.depth = 100
    return qos


class Perception:
    """A lockstep session (one Polaris) with the bridge's perception topics collected."""

    def __init__(self, processes: Processes, ros: Ros, *extra: str) -> None:
        port = free_port()
        self.simulator = processes.simulator(port, *extra, perception=True)
        self.bridge = processes.bridge(port)
        self.ros = ros
        self.clouds: list[PointCloud2] = ros.collect(PointCloud2, "/lidar/points", deep("/lidar/points"))
        self.images: list[Image] = ros.collect(Image, "/camera/image_raw", deep("/camera/image_raw"))
        self.infos: list[CameraInfo] = ros.collect(
            CameraInfo, "/camera/camera_info", deep("/camera/camera_info")
        )
        self.episodes: list[Episode] = ros.collect(Episode, "/sim/episode", LATCHED)
        ros.wait_until(lambda: self.episodes, "the bridge to connect to the simulator")
        self.step = 0

    def advance(self, steps: int) -> None:
        self.ros.step(steps)
        self.step += steps

    def stop(self) -> None:
        self.bridge.stop()
        self.simulator.stop()

    def warm_up(self, *, images: bool = True) -> None:
        """Step until the subscriptions have delivered once: discovery is complete after that."""
        self.ros.wait_until(
            lambda: self.ros.node.count_publishers("/lidar/points") > 0,
            "the bridge's /lidar/points publisher",
        )
        deadline = time.monotonic() + 30.0
        while not (self.clouds and (self.images or not images)):
            assert time.monotonic() < deadline, "no cloud (or image) arrived while stepping"
            self.advance(12)
            self.ros.spin_for(0.05)


@pytest.fixture
def flat(processes: Processes, ros: Ros) -> Perception:
    session = Perception(processes, ros, "--scene", "flat")
    session.warm_up()
    return session


def test_one_simulated_second_gives_exactly_ten_clouds_and_ten_images_with_their_stamps(flat):
    flat.ros.settle()  # the warm-up's last frames may still be on their way
    first = flat.step
    clouds, images, infos = len(flat.clouds), len(flat.images), len(flat.infos)
    flat.advance(120)  # acknowledged only once every frame of these steps is published
    # 10 of each through depth-10 writers: none is evicted before this reader has it, however
    # long the 13 MB of images take to reach it on a busy machine
    flat.ros.wait_until(
        lambda: (
            len(flat.clouds) >= clouds + 10
            and len(flat.images) >= images + 10
            and len(flat.infos) >= infos + 10
        ),
        "the second's frames",
    )
    flat.ros.settle()
    due = [step for step in range(first + 1, first + 121) if step % 12 == 0]
    assert [stamp_ns(m) for m in flat.clouds[clouds:]] == [step_stamp_ns(s) for s in due]
    assert [stamp_ns(m) for m in flat.images[images:]] == [step_stamp_ns(s) for s in due]
    assert [stamp_ns(m) for m in flat.infos[infos:]] == [step_stamp_ns(s) for s in due]


def _points(cloud: PointCloud2) -> np.ndarray:
    return np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(cloud.height, cloud.width, 4)


def test_the_cloud_has_the_spec_layout(flat):
    cloud = flat.clouds[-1]
    assert (cloud.height, cloud.width) == (1800, 32)
    assert [(f.name, f.offset, f.datatype, f.count) for f in cloud.fields] == [
        ("x", 0, PointField.FLOAT32, 1),
        ("y", 4, PointField.FLOAT32, 1),
        ("z", 8, PointField.FLOAT32, 1),
        ("intensity", 12, PointField.FLOAT32, 1),
    ]
    assert (cloud.point_step, cloud.row_step, len(cloud.data)) == (16, 512, 921_600)
    assert cloud.is_dense is False
    assert cloud.is_bigendian is False
    assert cloud.header.frame_id == "lidar"


def test_points_of_a_flat_scene_lie_on_the_ground_and_upward_beams_have_no_return(flat):
    points = _points(flat.clouds[-1])
    mount = POLARIS.mount("lidar")
    returns = ~np.isnan(points[..., 0])
    assert returns.sum() > 1800 * 10  # the lower rings hit the ground all around
    # The vehicle stands level on z = 0 and the LiDAR is mounted without rotation: the ground is
    # at z = -mount height in the lidar frame; a return is off by at most its range noise.
    z = points[..., 2][returns]
    assert np.all(np.abs(z + mount.z) < 0.15), f"z of the returns: {z.min()} .. {z.max()}"
    elevation = np.linspace(POLARIS_LIDAR.lower_fov_deg, POLARIS_LIDAR.upper_fov_deg, POLARIS_LIDAR.rings)
    upward = elevation >= 0.0
    assert np.isnan(points[:, upward, :3]).all()  # nothing above the horizon in a flat scene
    assert (points[:, upward, 3] == 0.0).all()
    ranges = np.linalg.norm(points[..., :3][returns], axis=-1)
    assert ranges.max() <= POLARIS_LIDAR.max_range_m + 0.1


def test_the_image_has_the_horizon_where_k_and_the_mount_put_it(flat):
    image = flat.images[-1]
    assert (image.width, image.height, image.encoding, image.step) == (896, 512, "bgr8", 2688)
    assert image.header.frame_id == "reolink_camera_optical"
    pixels = np.frombuffer(bytes(image.data), dtype=np.uint8).reshape(512, 896, 3).astype(np.int32)
    assert pixels.std() > 5.0  # not a constant image
    # A point on the ground far ahead projects just below the horizon, the same point high up
    # just above: along the principal column the colour changes between the two.
    height = POLARIS.mount("reolink_camera").z
    camera = Camera(POLARIS_CAMERA, camera_mount(POLARIS))
    below = camera.project(np.array([[0.0, height, 500.0]]))  # optical frame: y down
    above = camera.project(np.array([[0.0, -50.0, 500.0]]))
    column = round(K[2])
    sky_row, ground_row = math.floor(above[1][0]) - 2, math.ceil(below[1][0]) + 2
    assert sky_row < K[5] < ground_row
    sky, ground = pixels[: sky_row + 1, column], pixels[ground_row:, column]
    assert sky.mean(axis=0)[0] > sky.mean(axis=0)[2], "the sky is blue (B > R in bgr8)"
    assert np.abs(sky.mean(axis=0) - ground.mean(axis=0)).sum() > 60, "ground and sky differ"


def test_camera_info_carries_the_spec_k_d_and_p_from_k(flat):
    info = flat.infos[-1]
    assert (info.width, info.height, info.distortion_model) == (896, 512, "plumb_bob")
    assert info.header.frame_id == "reolink_camera_optical"
    assert list(info.k) == pytest.approx(K, abs=1e-9)
    assert list(info.d) == pytest.approx(D, abs=1e-12)
    assert list(info.r) == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert list(info.p) == pytest.approx([K[0], 0.0, K[2], 0.0, 0.0, K[4], K[5], 0.0, 0.0, 0.0, 1.0, 0.0])


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        match = re.search(r"VmRSS:\s+(\d+) kB", status.read())
    assert match is not None
    return int(match.group(1)) / 1024.0


# The slow subscriber takes one cloud each time the fast one has had FAST_PER_SLOW, SLOW_TAKES times:
# more takes than its reader history holds, so the later ones need clouds that came after it fell
# behind, and it gets them only if the bridge goes on publishing to it too.
SLOW_DEPTH = 10
SLOW_TAKES = 12
FAST_PER_SLOW = 8
WARM_UP_CLOUDS = 20  # the bridge's queue, its writer's history and the DDS pools are in use by then
CLOUD_BYTES = 1800 * 32 * 16
# Growth allowed after the warm-up: twice the 4 frames the queue holds and the one being published.
# A cloud kept of every 8 published (12 of the 96 measured) exceeds it.
RSS_BOUND_MB = 2 * (4 + 1) * CLOUD_BYTES / 2**20


@pytest.fixture
def slow_ros() -> Iterator[Ros]:
    """A second node of the test, in a DDS participant of its own. It takes a message only when the
    test spins it, so it is exactly as slow as the test makes it, whatever the machine's speed."""
    node = Ros()
    yield node
    node.shutdown()


def test_free_run_with_a_slow_subscriber_keeps_publishing_in_bounded_memory(
    processes: Processes, ros: Ros, slow_ros: Ros
) -> None:
    """In free run a reliable subscriber that takes one cloud for every 8 a fast one gets does not
    hold the bridge up: the fast one's clouds keep coming, along the simulated clock; the slow one
    gets a newer cloud each time it takes one; the bridge's memory does not grow with the clouds
    it publishes. Judged by counts and stamps: a busy machine only makes it take longer."""
    port = free_port()
    processes.simulator(port, "--autopilot", lockstep=False, perception=True)
    bridge = processes.bridge(port)
    fast: list[int] = []  # stamps only: the test keeps none of the 900 kB clouds
    slow: list[int] = []
    ros.node.create_subscription(
        PointCloud2, "/lidar/points", lambda m: fast.append(stamp_ns(m)), deep("/lidar/points")
    )
    slow_qos = QoSProfile(depth=SLOW_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
    slow_ros.node.create_subscription(
        PointCloud2, "/lidar/points", lambda m: slow.append(stamp_ns(m)), slow_qos
    )

    def fast_has(count: int) -> Callable[[], bool]:
        return lambda: len(fast) >= count

    def take_slow() -> None:
        """One spin of the slow node after another until it has taken a cloud (one callback each)."""
        taken = len(slow)
        slow_ros.wait_until(lambda: len(slow) > taken, f"cloud {taken + 1} of the slow subscriber")

    take_slow()  # matched: from now on its reader history holds what it has not taken
    ros.wait_until(fast_has(WARM_UP_CLOUDS), "the warm-up's clouds")
    start = len(fast)
    baseline = _rss_mb(bridge.pid)
    rss: list[float] = []
    for take in range(SLOW_TAKES):
        for cloud in range(FAST_PER_SLOW):
            count = start + take * FAST_PER_SLOW + cloud + 1
            ros.wait_until(fast_has(count), f"cloud {count} of the fast subscriber")
            rss.append(_rss_mb(bridge.pid))
        take_slow()

    # The simulated clock advanced with every cloud, on the LiDAR's schedule (every 12th step).
    assert all(stamp % step_stamp_ns(12) == 0 for stamp in fast), "a cloud off the LiDAR's schedule"
    assert all(a < b for a, b in itertools.pairwise(fast)), "the clouds' stamps did not advance"
    assert all(a < b for a, b in itertools.pairwise(slow)), f"the slow subscriber's stamps: {slow}"
    grown = max(rss) - baseline
    assert grown < RSS_BOUND_MB, (
        f"bridge RSS grew by {grown:.1f} MB over {len(rss)} clouds "
        f"(from {baseline:.0f} MB), more than {RSS_BOUND_MB:.1f} MB"
    )
    if os.environ.get("ACRES_TEST_VERBOSE"):
        span_s = (fast[-1] - fast[start - 1]) / NS_PER_S
        print(f"bridge RSS {baseline:.1f} -> {max(rss):.1f} MB over {len(rss)} clouds, {span_s:.1f} s")
        print(f"slow subscriber: {len(slow)} clouds, stamped {[s / NS_PER_S for s in slow]}")


def test_the_simulator_casts_rays_only_for_the_sensors_someone_reads(processes: Processes, ros: Ros):
    port = free_port()
    simulator = processes.simulator(port, perception=True)
    processes.bridge(port)
    episodes = ros.collect(Episode, "/sim/episode", LATCHED)
    ros.wait_until(lambda: episodes, "the bridge to connect to the simulator")
    wait_for_line(simulator, "agent 0: frames wanted of no sensor")  # nobody reads the cloud or the image
    ros.step(24)  # steps 12 and 24: a cloud and an image due at each, none made
    clouds = ros.collect(PointCloud2, "/lidar/points", deep("/lidar/points"))
    wait_for_line(simulator, "agent 0: frames wanted of lidar")  # the bridge saw the subscriber
    ros.step(12)  # within one period: the cloud of step 36, on the LiDAR's own schedule
    ros.wait_until(lambda: clouds, "the cloud of step 36")
    ros.settle()
    assert [stamp_ns(m) for m in clouds] == [step_stamp_ns(36)]
    simulator.stop()
    # One scan cast (1800 x 32 beams; the Polaris stands); two clouds and three images not made.
    assert "perception: agent 0: 57600 rays cast, 5 frames not wanted" in simulator.output
