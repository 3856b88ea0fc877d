"""examples/my_stack as a user runs it: pip install of the package into the environment, then
pytest in its own folder. Its pytest test (the acres_sim fixture) and its launch_testing test
pass; a follower with a steering trim (a calibration bug) makes both fail with a message naming
the criterion, the topic and the value; no process of either run is left behind."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from user_env import user_environment

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "my_stack"
_MARK = "ACRES_EXAMPLE_RUN"


def _install(package: Path) -> None:
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", "--force-reinstall", str(package)], check=True)
    link = [sys.executable, "-m", "acres_bridge.tools.link_executables", "--package", "my_stack"]
    subprocess.run(link, check=True, capture_output=True)


def _run_tests(folder: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """pytest in the package's folder, as its author runs it; (the run, its mark)."""
    mark = uuid.uuid4().hex
    env = user_environment(**{_MARK: mark})
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return run, mark


def _marked_processes(mark: str) -> list[int]:
    """The live processes started by the run with this mark (they inherit its environment)."""
    found = []
    needle = f"{_MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def test_the_example_s_tests_pass_and_a_broken_follower_fails_both_with_the_topic_and_value(tmp_path: Path):
    broken = tmp_path / "my_stack"
    shutil.copytree(EXAMPLE, broken, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    follower = broken / "my_stack" / "follower.py"
    source = follower.read_text()
    assert "STEERING_TRIM = 0.0 " in source
    follower.write_text(source.replace("STEERING_TRIM = 0.0 ", "STEERING_TRIM = 0.05 "))
    try:
        _install(broken)
        failed, mark = _run_tests(broken)
        assert _marked_processes(mark) == []
        assert failed.returncode == 1, failed.stdout[-3000:]
        assert "2 failed" in failed.stdout, failed.stdout[-3000:]
        found = re.findall(r"max_cross_track_error: ([0-9.]+) on /sim/ground_truth/odom", failed.stdout)
        assert found, failed.stdout[-3000:]
        assert all(float(value) > 0.3 for value in found)
    finally:
        _install(EXAMPLE)
    passed, mark = _run_tests(EXAMPLE)
    assert _marked_processes(mark) == []
    assert passed.returncode == 0, passed.stdout[-3000:]
    assert "2 passed" in passed.stdout, passed.stdout[-3000:]
