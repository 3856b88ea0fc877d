"""Fixtures of the tool tests: those of the integration tests (the simulator and the bridge as
processes, the test's own ROS node), and the recorder as a process run from the source tree."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from integration.conftest import module_processes, module_ros, processes, ros

from acres_bridge.processes import ChildProcess, localhost_environment

__all__ = ["REPO", "module_processes", "module_ros", "processes", "recorder", "ros"]

REPO = Path(__file__).resolve().parents[2]


def recorder(name: str, args: Sequence[str]) -> ChildProcess:
    """acres_record (``python -m acres_bridge.tools.record``) of this source tree, as a child process."""
    env = localhost_environment()
    env["PYTHONPATH"] = str(REPO)
    return ChildProcess.start(name, [sys.executable, "-m", "acres_bridge.tools.record", *args], env=env)
