"""Run a Python stack: a ``module:callable`` that returns an rclpy node, spun until SIGINT or SIGTERM.

    python -m acres_bridge.scenario.entry_point my_stack:build_node --path DIR --ros-args -p speed:=2.0

rclpy is initialised (with the ``--ros-args``) before the callable is called, so it builds its node
as any ROS 2 program does; exit status 0 after a stop, 2 when the callable cannot be found or
refuses its parameters.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from rclpy.node import Node

from acres_bridge.other._wiring import run

__all__ = ["main"]


def _factory(target: str) -> Callable[[], Node]:
    module_name, _, attribute = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    if not callable(factory):
        raise TypeError(f"{target} is not callable")
    return factory  # type: ignore[no-any-return]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    ros_args = args[args.index("--ros-args") :] if "--ros-args" in args else []
    own = args[: len(args) - len(ros_args)]
    parser = argparse.ArgumentParser(
        prog="acres_bridge.scenario.entry_point", description=__doc__.splitlines()[0]
    )
    parser.add_argument("target", help="module:callable returning an rclpy Node")
    parser.add_argument("--path", action="append", default=[], help="a folder put first on sys.path (repeat)")
    options = parser.parse_args(own)
    sys.path[:0] = options.path
    try:
        factory = _factory(options.target)
    except (ImportError, AttributeError, TypeError) as error:
        print(f"entry_point: {options.target}: {error}", file=sys.stderr)
        return 2
    return run(factory, ros_args)


if __name__ == "__main__":
    sys.exit(main())
