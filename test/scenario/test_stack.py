"""The stack under test as the command line it runs."""

from __future__ import annotations

import sys
from pathlib import Path

from acres_bridge.scenario.schema import StackSpec
from acres_bridge.scenario.stack import stack_command


def test_a_launch_stack_gets_its_arguments_and_sim_time():
    command = stack_command(
        StackSpec(launch="my_pkg follow.launch.py", args={"speed": 2.5, "log": True}), Path(".")
    )
    assert command is not None
    assert command[1:] == [
        "launch",
        "my_pkg",
        "follow.launch.py",
        "use_sim_time:=true",
        "speed:=2.5",
        "log:=true",
    ]


def test_a_run_stack_gets_parameters():
    command = stack_command(StackSpec(run="my_pkg follower", args={"gain": 3}, use_sim_time=False), Path("."))
    assert command is not None
    assert command[1:] == ["run", "my_pkg", "follower", "--ros-args", "-p", "gain:=3"]


def test_a_python_stack_runs_its_callable_with_its_path_resolved(tmp_path):
    spec = StackSpec(python="my_stack:build", python_path=["stacks"], args={"name": "a b"})
    assert stack_command(spec, tmp_path) == [
        sys.executable,
        "-m",
        "acres_bridge.scenario.entry_point",
        "my_stack:build",
        "--path",
        str(tmp_path / "stacks"),
        "--ros-args",
        "-p",
        "use_sim_time:=true",
        "-p",
        "name:=a b",
    ]


def test_builtins():
    driver = stack_command(StackSpec(builtin="dbw_demo_driver", args={"speed_mps": 2.0}), Path("."))
    assert driver is not None
    assert driver[1:3] == ["-m", "acres_bridge.other.dbw_demo_driver"]
    assert driver[-2:] == ["-p", "speed_mps:=2.0"]
    assert stack_command(StackSpec(builtin="autopilot"), Path(".")) is None
    assert stack_command(StackSpec(builtin="none"), Path(".")) is None
