"""SIGTERM to `ros2 launch acres_bridge sim_bridge.launch.py`, what `docker stop`, systemd and
Kubernetes send: the launch stops its processes as for Ctrl-C and exits 0, and none of them
outlives it. (SIGINT: test_ros2_cli.) A file of its own: its bridge must not meet another."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

pytest.importorskip("ros2cli", reason="the ros2 command line is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

from .conftest import Processes, free_port, wait_for_line
from .test_ros2_cli import ROS2, end_launch

pytestmark = pytest.mark.integration


def test_sigterm_ends_the_launch_and_every_process_it_started(processes: Processes) -> None:
    port = free_port()
    processes.simulator(port)
    launch = processes.script(
        "ros2 launch", [ROS2, "launch", "acres_bridge", "sim_bridge.launch.py", f"control_port:={port}"]
    )
    wait_for_line(launch, "Loaded node '/reset'")
    started = [int(pid) for pid in re.findall(r"process started with pid \[(\d+)\]", launch.output)]
    assert started, launch.output
    end_launch(launch, signal.SIGTERM)
    alive = [pid for pid in started if Path(f"/proc/{pid}").exists()]
    assert not alive, f"processes of the launch still running after it ended: {alive}"
