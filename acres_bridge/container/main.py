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
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import ok, remove_ros_args, try_shutdown

from acres_bridge.container.manager import ComponentManager
from acres_bridge.container.registry import ComponentType, component_types
from acres_bridge.container.transport import use_bridge_transport
from acres_bridge.shutdown import request_shutdown

__all__ = [
    "STOP_DEADLINE_S",
    "StopRequest",
    "finished",
    "format_types",
    "init_ros",
    "main",
    "run_container",
    "spin_until_stopped",
]

STOP_DEADLINE_S = 1.8  # after SIGINT or SIGTERM the process is gone within this
_SPIN_S = 0.1  # the executor looks at the stop request at least this often


class StopRequest:
    """SIGINT and SIGTERM as a flag the process's loop reads, and a deadline for the teardown."""

    def __init__(self, process: str = "container") -> None:
        """`process`: the name the deadline's message gives the process."""
        self.requested = threading.Event()
        self.signal_name = ""
        self._process = process
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.requested.is_set():
            return  # a second signal while tearing down: the first one is being served
        self.signal_name = signal.Signals(signum).name
        self.requested.set()
        request_shutdown()  # unblocks callbacks that wait (a step request) so the executor can stop
        threading.Thread(target=self._deadline, name="stop-deadline", daemon=True).start()

    def _deadline(self) -> None:
        """Last resort: a teardown that hangs must not keep the process past the deadline."""
        if not _finished.wait(STOP_DEADLINE_S):
            print(
                f"{self._process}: the teardown after {self.signal_name} did not end within "
                f"{STOP_DEADLINE_S:g} s; exiting",
                file=sys.stderr,
                flush=True,
            )
            os._exit(0)


_finished = threading.Event()  # set once the teardown is over


def finished() -> None:
    """The teardown is over: the deadline need not end the process."""
    _finished.set()


def init_ros(args: Sequence[str]) -> StopRequest:
    """rclpy.init without its signal handlers, and ours in their place, on the bridge's DDS
    transport (acres_bridge.container.transport)."""
    use_bridge_transport()
    rclpy.init(args=list(args), signal_handler_options=SignalHandlerOptions.NO)
    return StopRequest()


def spin_until_stopped(executor: Executor, stop: StopRequest | None) -> None:
    """Spin `executor` until `stop` is requested or the context shuts down (from elsewhere)."""
    try:
        while ok() and not (stop is not None and stop.requested.is_set()):
            executor.spin_once(timeout_sec=_SPIN_S)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # A context shut down from elsewhere may make rclpy's executor fail on it (building its
        # wait set) instead of raising ExternalShutdownException: that is the way out, not an error.
        if ok():
            raise


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
