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
from sensor_msgs.msg import PointCloud2

from .conftest import START_UTC, Processes, Ros
from .test_perception import Perception

pytestmark = pytest.mark.integration


def _ranges(cloud: PointCloud2) -> np.ndarray:
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(cloud.height, cloud.width, 4)
    return np.linalg.norm(points[..., :3], axis=-1)


def _session(processes: Processes, ros: Ros, *, core: bool) -> Perception:
    session = Perception(processes, ros, *(("--core",) if core else ()))
    session.warm_up(images=not core)
    return session


@pytest.fixture
def core(processes: Processes, ros: Ros) -> Perception:
    return _session(processes, ros, core=True)


def test_camera_topics_exist_but_no_message_arrives(core):
    # Three simulated seconds, one cloud's 12 steps a request, each cloud waited for: the clouds
    # show that the session runs, so none may be lost to a busy reader (docs/simulation_control.md).
    before = len(core.clouds)
    for cloud in range(1, 31):
        core.advance(12)
        core.ros.wait_until(lambda n=cloud: len(core.clouds) >= before + n, f"cloud {cloud}")
    core.ros.settle()
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
        session = _session(processes, ros, core=core)
        assert session.step < 600
        session.advance(600 - session.step)  # to 5 simulated seconds: the 50th cloud of both sessions
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
