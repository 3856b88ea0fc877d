"""component_container: a process that loads registered node classes on request.

    component_container
    component_container --ros-args -r __node:=my_container -r __ns:=/robot
    component_container --types      # list the loadable node classes and exit

The container node is named ``ComponentManager`` unless remapped. It runs until SIGINT or SIGTERM,
then unloads its nodes and exits with status 0.

Shutdown is in order, whatever the process is doing: the signal only asks the executor to stop
(rclpy's own handlers, which shut the context down at once under running threads, are not
installed); then every node is destroyed while the context is still valid, oldest first, and the
context is shut down last. A second signal meanwhile changes nothing; a teardown that has not
ended STOP_DEADLINE_S after the signal ends the process with a message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args, try_shutdown

from acres_bridge.container.manager import ComponentManager
from acres_bridge.container.registry import ComponentType, component_types
from acres_bridge.container.transport import use_bridge_transport
from acres_bridge.shutdown import StopRequest, finished, spin_until_stopped

__all__ = ["format_types", "init_ros", "main", "run_container"]


def init_ros(args: Sequence[str]) -> StopRequest:
    """rclpy.init without its signal handlers, and ours in their place, on the bridge's DDS
    transport (acres_bridge.container.transport)."""
    use_bridge_transport()
    rclpy.init(args=list(args), signal_handler_options=SignalHandlerOptions.NO)
    return StopRequest()


def format_types(types: Sequence[ComponentType]) -> str:
    """Registered node classes as ``ros2 component types`` prints them: each package, then its plugins."""
    lines: list[str] = []
    for package in sorted({entry.package for entry in types}):
        lines.append(package)
        lines += [f"  {entry.plugin}" for entry in types if entry.package == package]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a container until SIGINT or SIGTERM; ``argv`` excludes the program name."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="component_container",
        description="Load registered node classes (entry-point group acres_bridge.components) on request.",
        epilog="ROS arguments follow --ros-args, e.g. --ros-args -r __node:=my_container",
    )
    parser.add_argument("--types", action="store_true", help="list the registered node classes and exit")
    if parser.parse_args(remove_ros_args(args=args)).types:
        print(format_types(component_types()))
        return 0

    stop = init_ros(args)
    try:
        return run_container(ComponentManager, stop)
    finally:
        try_shutdown()
        finished()


def run_container(
    make_manager: Callable[[SingleThreadedExecutor], ComponentManager], stop: StopRequest | None = None
) -> int:
    """Build a container with its executor and spin it until `stop` is requested (or the context
    shuts down), then destroy its nodes while the context is still valid.

    Single-threaded, like rclcpp_components' component_container (the default executable of
    launch_ros's ComposableNodeContainer): a LoadNode/UnloadNode callback never runs while a
    callback of a loaded node does, so unloading cannot pull a node from under its own callback,
    and the GIL would serialise Python callbacks across threads anyway. make_manager may raise
    before anything spins; the executor is shut down either way.
    """
    executor = SingleThreadedExecutor()
    try:
        manager = make_manager(executor)
    except BaseException:
        executor.shutdown()
        raise
    executor.add_node(manager)
    try:
        spin_until_stopped(executor, stop)
    finally:
        manager.destroy_node()
        executor.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
