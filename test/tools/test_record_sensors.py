"""Parity of the sensor topics: a recording of the LiDAR and the camera of a Polaris, and of a
Maxxum's own topics, compared with msg_profiles by check_topic_parity.

Counts are not the point here (a lockstep burst may cost a starved reader a message); each topic's
type, QoS and frames are.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from integration.conftest import Processes, Ros, free_port

from .conftest import REPO, recorder

pytestmark = pytest.mark.integration

TIMEOUT_S = 30.0
SENSORS = ("/lidar/points", "/camera/image_raw", "/camera/camera_info")
MAXXUM = ("engine_rpm", "steering_angle", "implement/state", "can/rx", "odom", "imu/data", "lidar/points")


def _record(
    processes: Processes, ros: Ros, bag: Path, topics: tuple[str, ...], *sim_args: str, **bridge: str
) -> None:
    port = free_port()
    processes.simulator(port, *sim_args, perception=True)
    processes.bridge(port, **bridge)
    process = recorder("acres_record", ["--topics", *topics, "-o", str(bag)])
    processes.started.append(process)
    for name in topics:
        process.wait_for_line(f"recording /{name.lstrip('/')} ", TIMEOUT_S)
    for _ in range(20):  # 2 simulated seconds
        ros.step(12)
        ros.spin_for(0.05)
    ros.spin_for(0.5)
    assert process.stop() == 0, process.output


def _parity(bag: Path, vehicle: str, *extra: str) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acres_bridge.tools.check_topic_parity",
            str(bag),
            "--vehicle",
            vehicle,
            *extra,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\d+ common topic checks, 0 differences$", done.stdout.splitlines()[-1])
    return done.stdout.splitlines()


def test_the_lidar_and_camera_of_the_polaris_match_the_table(processes, ros, tmp_path):
    bag = tmp_path / "sensors.mcap"
    _record(processes, ros, bag, SENSORS)
    lines = _parity(bag, "polaris")
    lidar = r"OK   /lidar/points\s+sensor_msgs/msg/PointCloud2\s+qos \(1, 2\) / \(1, 2\)  frames "
    assert any(re.fullmatch(lidar + r"\['lidar'\] / \['lidar'\]", x) for x in lines), "\n".join(lines)
    for topic in ("/camera/image_raw", "/camera/camera_info"):
        assert any(
            x.startswith(f"OK   {topic} ")
            and x.endswith("frames ['reolink_camera_optical'] / ['reolink_camera_optical']")
            for x in lines
        ), "\n".join(lines)


def test_the_topics_of_the_maxxum_match_its_table(processes, ros, tmp_path):
    bag = tmp_path / "maxxum.mcap"
    topics = tuple(f"/{name}" for name in MAXXUM)  # a bridge in the root namespace
    _record(processes, ros, bag, topics, "--vehicle", "maxxum", vehicle="maxxum")
    lines = _parity(bag, "maxxum")
    assert any(
        x.startswith("OK   /can/rx ") and "qos (1, 2) / (1, 2)" in x and "['can']" in x for x in lines
    ), "\n".join(lines)
    assert any(x.startswith("OK   /implement/state ") for x in lines), "\n".join(lines)
