"""The package as ament_python installs it: its executables where `ros2 run` and launch_ros look."""

from __future__ import annotations

import os
import sys
from importlib.metadata import distribution
from pathlib import Path

PREFIX = Path(sys.prefix)


def test_every_console_script_is_in_lib_of_the_package() -> None:
    scripts = sorted(
        ep.name for ep in distribution("acres_bridge").entry_points if ep.group == "console_scripts"
    )
    libexec = PREFIX / "lib" / "acres_bridge"
    assert "sim_bridge" in scripts
    for name in scripts:
        path = libexec / name
        assert path.exists(), f"{path} is missing: ros2 run acres_bridge {name} would not find it"
        assert os.access(path, os.X_OK), path


def test_the_venv_is_an_ament_prefix_with_the_package() -> None:
    assert (PREFIX / "share" / "ament_index" / "resource_index" / "packages" / "acres_bridge").exists()
    assert (PREFIX / "share" / "acres_bridge" / "launch" / "sim_bridge.launch.py").exists()
    # activating the venv makes it an ament prefix (make exports the same for its commands)
    assert "export AMENT_PREFIX_PATH=" in (PREFIX / "bin" / "activate").read_text()


def test_the_ament_index_lists_every_node_class_for_ros2_component_types() -> None:
    index = PREFIX / "share" / "ament_index" / "resource_index" / "rclcpp_components" / "acres_bridge"
    listed = dict(line.split(";") for line in index.read_text().splitlines())
    registered = {
        ep.name: ep.value
        for ep in distribution("acres_bridge").entry_points
        if ep.group == "acres_bridge.components"
    }
    assert listed == registered
