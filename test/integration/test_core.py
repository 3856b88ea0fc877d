"""ACRES Core sessions (`acres_sim --core`): the spec's "Differences in ACRES Core" table, row by row.

| /camera/image_raw, /camera/camera_info | the topics exist, but no message arrives |
| /lidar/points | ray-cast: terrain, buildings, other agents, not the crop |
| /sim/episode | source is core |
| Maxxum topics | ACRES Core has only the Polaris |
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from acres_interfaces.msg import Episode
from sensor_msgs.msg import CameraInfo, Image, PointCloud2

from acres_bridge.msg_profiles import load_profiles

from .conftest import LATCHED, START_UTC, Processes, Ros, free_port

pytestmark = pytest.mark.integration

PROFILES = load_profiles()


def _deep(topic: str) -> object:
    qos = PROFILES.topic("polaris", topic).qos.to_rclpy()
    qos.depth = 100
    return qos


class Session:
    """A lockstep session of one Polaris, Core or not, with its perception topics collected."""

    def __init__(self, processes: Processes, ros: Ros, *, core: bool) -> None:
        port = free_port()
        extra = ("--core",) if core else ()
        self.simulator = processes.simulator(port, *extra, perception=True)
        self.bridge = processes.bridge(port, vehicle="auto")
        self.ros = ros
        self.clouds: list[PointCloud2] = ros.collect(PointCloud2, "/lidar/points", _deep("/lidar/points"))
        self.images: list[Image] = ros.collect(Image, "/camera/image_raw", _deep("/camera/image_raw"))
        self.infos: list[CameraInfo] = ros.collect(
            CameraInfo, "/camera/camera_info", _deep("/camera/camera_info")
        )
        self.episodes: list[Episode] = ros.collect(Episode, "/sim/episode", LATCHED)
        ros.wait_until(lambda: self.episodes, "the bridge to connect to the simulator")
        ros.wait_until(lambda: ros.node.count_publishers("/lidar/points") > 0, "the bridge's /lidar/points")
        self.steps = 0
        while not self.clouds:  # discovery complete once a cloud has arrived
            assert self.steps < 1200, "no cloud in 10 simulated seconds"
            self.step(12)

    def step(self, steps: int) -> None:
        self.ros.step(steps)
        self.steps += steps
        self.ros.spin_for(0.05)

    def stop(self) -> None:
        self.bridge.stop()
        self.simulator.stop()


def _ranges(cloud: PointCloud2) -> np.ndarray:
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(cloud.height, cloud.width, 4)
    return np.linalg.norm(points[..., :3], axis=-1)


@pytest.fixture
def core(processes: Processes, ros: Ros) -> Session:
    return Session(processes, ros, core=True)


def test_camera_topics_exist_but_no_message_arrives(core):
    for _ in range(3):  # three simulated seconds
        core.step(120)
    core.ros.spin_for(0.5)
    assert len(core.clouds) >= 30
    assert core.images == []
    assert core.infos == []
    names = dict(core.ros.node.get_topic_names_and_types())
    assert names["/camera/image_raw"] == ["sensor_msgs/msg/Image"]
    assert names["/camera/camera_info"] == ["sensor_msgs/msg/CameraInfo"]


def test_the_episode_source_is_core(core):
    assert core.episodes[-1].source == "core"


def test_the_lidar_sees_no_crop(processes, ros):
    # The same seed, pose and steps in a Core and a game session: the same beams and the same
    # noise. The crop can only cut a beam short, so wherever both have a return the Core range is
    # never shorter, and where the crop stands it is longer.
    ranges = {}
    for core in (True, False):
        session = Session(processes, ros, core=core)
        assert session.steps < 600
        session.step(600 - session.steps)  # to 5 simulated seconds: the 50th cloud of both sessions
        session.ros.wait_until(lambda s=session: s.clouds[-1].header.stamp.sec == 5, "the cloud of step 600")
        ranges[core] = _ranges(session.clouds[-1])
        session.stop()
        ros.wait_until(lambda: ros.node.count_publishers("/lidar/points") == 0, "the bridge to go away")
    both = ~np.isnan(ranges[True]) & ~np.isnan(ranges[False])
    assert both.sum() > 10_000
    shorter_in_core = ranges[True][both] < ranges[False][both] - 1e-3
    assert not shorter_in_core.any()
    cut_by_crop = (ranges[True] > ranges[False] + 0.5) | (np.isnan(ranges[True]) & ~np.isnan(ranges[False]))
    assert cut_by_crop.sum() > 100, "the game session's cloud shows crop that the Core cloud does not"


def test_acres_core_has_only_the_polaris():
    command = [sys.executable, "-m", "acres_sim.cli", "--core", "--vehicle", "maxxum", "--port", "0"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "ACRES Core has only the Polaris" in result.stderr
    mixed = [sys.executable, "-m", "acres_sim.cli", "--core", "--port", "0", "--start-utc", START_UTC]
    mixed += ["--agent", "polaris:polaris", "--agent", "m:maxxum"]
    result = subprocess.run(mixed, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "['m']" in result.stderr
