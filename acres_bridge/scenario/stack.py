"""The stack under test as a command line, and the check that it exists before anything starts.

    launch: "my_pkg follow.launch.py"  ros2 launch my_pkg follow.launch.py use_sim_time:=true speed:=2.0
    run: "my_pkg follower"             ros2 run my_pkg follower --ros-args -p use_sim_time:=true -p speed:=2.0
    python: "my_module:build_node"     python -m acres_bridge.scenario.entry_point my_module:build_node ...
    builtin: dbw_demo_driver           python -m acres_bridge.other.dbw_demo_driver --ros-args ...

The stack runs in the session's environment (its DDS domain, the fence, ACRES_DOMAIN_ID,
ACRES_NAMESPACE, ACRES_SESSION_DIR) with the scenario file's folder as its working directory.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from acres_bridge.scenario.errors import ScenarioFileError
from acres_bridge.scenario.schema import Scalar, StackSpec

__all__ = ["check_stack", "ros2_executable", "stack_command"]


def _text(value: Scalar) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _parameters(stack: StackSpec, args: Mapping[str, Scalar]) -> list[str]:
    """``--ros-args -p name:=value ...`` with use_sim_time first."""
    values: dict[str, Scalar] = {"use_sim_time": True} if stack.use_sim_time else {}
    values.update(args)
    out = ["--ros-args"]
    for name, value in values.items():
        out += ["-p", f"{name}:={_text(value)}"]
    return out


def ros2_executable() -> str | None:
    """The ``ros2`` command of this Python's environment, else the one on PATH, else None."""
    beside = Path(sys.executable).parent / "ros2"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("ros2")


def stack_command(stack: StackSpec, scenario_dir: Path) -> list[str] | None:
    """The stack's command line; None for a stack without a process (autopilot, none)."""
    if stack.launch is not None:
        package, file = stack.launch.split()
        args: dict[str, Scalar] = {"use_sim_time": True} if stack.use_sim_time else {}
        args.update(stack.args)
        return [
            ros2_executable() or "ros2",
            "launch",
            package,
            file,
            *(f"{k}:={_text(v)}" for k, v in args.items()),
        ]
    if stack.run is not None:
        package, executable = stack.run.split()
        return [ros2_executable() or "ros2", "run", package, executable, *_parameters(stack, stack.args)]
    if stack.python is not None:
        paths: list[str] = []
        for folder in stack.python_path:
            paths += ["--path", str((scenario_dir / folder).resolve())]
        return [
            sys.executable,
            "-m",
            "acres_bridge.scenario.entry_point",
            stack.python,
            *paths,
            *_parameters(stack, stack.args),
        ]
    if stack.builtin == "dbw_demo_driver":
        return [sys.executable, "-m", "acres_bridge.other.dbw_demo_driver", *_parameters(stack, stack.args)]
    return None


def check_stack(stack: StackSpec, scenario_dir: Path, file: str) -> None:
    """ScenarioFileError (naming the file and the field) when the stack's command cannot start:
    no ``ros2``, no such package, executable or launch file, no such module or callable."""
    if stack.launch is not None or stack.run is not None:
        if ros2_executable() is None:
            raise ScenarioFileError(
                f"{file}: stack: the ros2 command is not installed (launch and run need it)"
            )
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix  # noqa: PLC0415

        field, text = ("stack.launch", stack.launch) if stack.launch is not None else ("stack.run", stack.run)
        assert text is not None
        package, name = text.split()
        try:
            prefix = Path(get_package_prefix(package))
        except (PackageNotFoundError, ValueError, OSError):
            raise ScenarioFileError(f"{file}: {field}: no package {package!r} is installed") from None
        if stack.run is not None:
            if not (prefix / "lib" / package / name).is_file():
                raise ScenarioFileError(f"{file}: {field}: package {package} has no executable {name!r}")
        elif not any((prefix / "share" / package).rglob(name)):
            raise ScenarioFileError(f"{file}: {field}: package {package} has no launch file {name!r}")
    if stack.python is not None:
        module_name, _, attribute = stack.python.partition(":")
        folders = [str((scenario_dir / folder).resolve()) for folder in stack.python_path]
        for folder in folders:
            if not _is_folder(folder):
                raise ScenarioFileError(f"{file}: stack.python_path: no folder {folder}")
        sys.path[:0] = folders
        try:
            module = importlib.import_module(module_name)
        except Exception as error:  # the module's own code runs: whatever it raises, the file names it
            why = str(error) if isinstance(error, ImportError) else f"{type(error).__name__}: {error}"
            raise ScenarioFileError(f"{file}: stack.python: cannot import {module_name}: {why}") from None
        finally:
            del sys.path[: len(folders)]
        if not callable(getattr(module, attribute, None)):
            raise ScenarioFileError(f"{file}: stack.python: {module_name} has no callable {attribute!r}")


def _is_folder(path: str) -> bool:
    """True for an existing folder; False for anything else, a name too long for the file system too."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False
